import { toWireTools, type ModelRequest, type ModelStreamEvent, type ResponseItem, type ToolSpec, type WireTool } from '@switchyard/protocol';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, expect } from 'vitest';
import { typecheckRequestBodies, type RecordedBody } from './request-body-types';

// Every body a client sends to a replay server in a test file is type-checked against the official
// `openai` request types once the file's tests are done (a failure fails the file).
const recordedBodies: RecordedBody[] = [];
afterAll(() => {
  const problems = typecheckRequestBodies(recordedBodies.splice(0));
  if (problems.length > 0) throw new Error(`request bodies that do not match the official openai types:\n${problems.join('\n')}`);
}, 120_000);

function recordBody(path: string, body: string): void {
  const kind = path.endsWith('/responses') ? 'responses' : path.endsWith('/chat/completions') ? 'chat' : undefined;
  if (!kind || body === '') return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return;
  }
  recordedBodies.push({ kind, label: `${expect.getState().currentTestName ?? 'unknown test'} ${path}`, body: parsed });
}

/** One scripted answer of the replay server, used for the next request in order. */
export interface ReplayStep {
  /** HTTP status. Default 200. */
  status?: number;
  /** Response headers. Default `content-type: text/event-stream` for fixtures. */
  headers?: Record<string, string>;
  /** A file under `test/fixtures/`, sent as the body. */
  fixture?: string;
  /** A literal body (instead of a fixture). */
  body?: string;
  /** Destroy the socket after writing the body, instead of ending the response. */
  cut?: boolean;
  /** Write the body, then keep the connection open until the client goes away. */
  hang?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ReplayServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  requests: RecordedRequest[];
  /** Resolves when the client closed a `hang` response. */
  clientClosed: Promise<void>;
  close(): Promise<void>;
}

export function fixture(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

/** A node:http server on 127.0.0.1 (port 0) replaying scripted responses and recording request bodies. */
const openServers = new Set<ReplayServer>();

/** Closes every replay server started so far (an `afterEach` hook). */
export async function closeReplayServers(): Promise<void> {
  const servers = [...openServers];
  openServers.clear();
  await Promise.all(servers.map((server) => server.close()));
}

export async function startReplayServer(steps: ReplayStep[]): Promise<ReplayServer> {
  const requests: RecordedRequest[] = [];
  let markClosed!: () => void;
  const clientClosed = new Promise<void>((resolve) => (markClosed = resolve));
  const queue = [...steps];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const sent = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: sent });
      recordBody(request.url ?? '', sent);
      const step = queue.shift();
      if (!step) {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end('{"error":{"message":"replay server: no scripted response left"}}');
        return;
      }
      const body = step.fixture ? fixture(step.fixture) : (step.body ?? '');
      const isJson = step.fixture?.endsWith('.json') || step.body !== undefined;
      response.writeHead(step.status ?? 200, {
        'content-type': isJson ? 'application/json' : 'text/event-stream',
        ...step.headers,
      });
      if (step.cut) {
        response.write(body);
        setTimeout(() => response.socket?.destroy(), 50);
      } else if (step.hang) {
        response.write(body);
        response.on('close', () => markClosed());
      } else {
        response.end(body);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const replay: ReplayServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    clientClosed,
    close: () =>
      new Promise<void>((resolve) => {
        openServers.delete(replay);
        if (!server.listening) return resolve();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  openServers.add(replay);
  return replay;
}

/** Collects every event of a stream, or the events so far plus the error that ended it. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<{ events: T[]; error?: unknown }> {
  const events: T[] = [];
  try {
    for await (const event of stream) events.push(event);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

/** The output items among stream events, in order. */
export function outputItems(events: readonly ModelStreamEvent[]): ResponseItem[] {
  return events.flatMap((event) => (event.type === 'output-item' ? [event.item] : []));
}

/** Retry timing for tests: records each requested sleep and returns at once; jitter factor 1.0. */
export function instantRetries(): { sleeps: number[]; sleep: (milliseconds: number) => Promise<void>; random: () => number } {
  const sleeps: number[] = [];
  return { sleeps, sleep: async (milliseconds) => void sleeps.push(milliseconds), random: () => 0.5 };
}

/** A replay server of `steps` and the client `make` builds for its URL with instant, recorded retries. */
export async function replayClient<C>(steps: ReplayStep[], make: (url: string, retries: { sleep: (milliseconds: number) => Promise<void>; random: () => number }) => C) {
  const server = await startReplayServer(steps);
  const { sleeps, sleep, random } = instantRetries();
  return { client: make(server.url, { sleep, random }), sleeps, server };
}

/** The user message the client tests start from. */
export const userMessage: ResponseItem = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Lisbon and the time?' }] };

/** A model request with a fresh signal; fields can be overridden. */
export function modelRequest(tools: WireTool[], input: ResponseItem[], overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { tools, input, parallelToolCalls: true, signal: new AbortController().signal, ...overrides };
}

/** Builds the requests of a test file whose model is offered `specs`: `request(input, overrides)`. */
export function requestsOffering(specs: ToolSpec[]): (input: ResponseItem[], overrides?: Partial<ModelRequest>) => ModelRequest {
  const tools = toWireTools(specs);
  return (input, overrides = {}) => modelRequest(tools, input, overrides);
}
