// A streamable HTTP front for one `switchyard mcp serve` process speaking the 2026-07-28 revision
// over stdio, for the conformance suite's server scenarios (the suite talks HTTP; serve is a stdio
// server). Stateless, as the revision is: every POST carries one JSON-RPC message, which goes to
// the same serve process (so its tasks outlive the request that created them); the answer comes
// back as JSON, or as an SSE stream for `subscriptions/listen` (its notifications, then its
// result). Message ids are renumbered on the way (the suite's connections number independently)
// and restored on the way back; nothing else in a message is changed, except that a `tools/call`
// of one of the suite's fixture tools becomes an `exec` of the script that plays it
// (`fixtureScript`). The HTTP binding itself (status codes, header checks) is not serve's: the
// relay answers 200 / 202 and checks no headers.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const SERVE = fileURLToPath(new URL('../../../packages/cli/test/fixtures/serve.ts', import.meta.url));
const TSX = pathToFileURL(require.resolve('tsx')).href;
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

type Message = { jsonrpc: '2.0'; id?: string | number; method?: string; params?: Record<string, unknown>; result?: unknown; error?: unknown };

/** The `exec` script that plays one of the suite's fixture tools, or `undefined` (passed on as sent). */
export type FixtureScript = (name: string, args: Record<string, unknown>) => string | undefined;

export interface ModernRelay {
  readonly url: string;
  /** Every line serve wrote on stderr. */
  readonly stderr: () => string;
  close(): Promise<void>;
}

/** Starts serve (`--approval-policy on-request` in `workspace`) and the HTTP front. */
export async function startModernRelay(workspace: string, fixtureScript: FixtureScript): Promise<ModernRelay> {
  const serve: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', TSX, SERVE, '--cwd', workspace, '--approval-policy', 'on-request'],
    { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  serve.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const pending = new Map<string, (message: Message) => void>();
  const streams = new Map<string, (message: Message) => void>();
  let buffer = '';
  serve.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line) as Message;
      if (message.id !== undefined && message.method === undefined) pending.get(String(message.id))?.(message);
      else {
        const subscription = (message.params?._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID];
        if (subscription !== undefined) streams.get(String(subscription))?.(message);
      }
    }
  });
  const send = (message: Message) => serve.stdin.write(`${JSON.stringify(message)}\n`);
  /** The suite's id of each request in flight → the id serve saw (for `notifications/cancelled`). */
  const inflight = new Map<string, string>();
  let sequence = 0;

  async function relay(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== 'POST') return void response.writeHead(405).end();
    let text = '';
    for await (const chunk of request) text += (chunk as Buffer).toString('utf8');
    const message = JSON.parse(text) as Message;
    if (message.id === undefined) {
      const cancelled = message.method === 'notifications/cancelled' ? inflight.get(String(message.params?.requestId)) : undefined;
      send(cancelled === undefined ? message : { ...message, params: { ...message.params, requestId: cancelled } });
      return void response.writeHead(202).end();
    }
    const originalId = message.id;
    const id = `relay-${++sequence}`;
    const outgoing: Message = { ...translate(message, fixtureScript), id };
    const restore = (answer: Message): Message => {
      const meta = answer.params?._meta as Record<string, unknown> | undefined;
      if (meta?.[SUBSCRIPTION_ID] === id) return { ...answer, params: { ...answer.params, _meta: { ...meta, [SUBSCRIPTION_ID]: originalId } } };
      return answer.id === id ? { ...answer, id: originalId } : answer;
    };
    const answered = new Promise<Message>((resolve) => pending.set(id, resolve));
    inflight.set(String(originalId), id);
    response.on('close', () => {
      if (inflight.get(String(originalId)) === id) inflight.delete(String(originalId));
      if (pending.delete(id)) send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the HTTP response stream closed' } });
      streams.delete(id);
    });
    if (message.method === 'subscriptions/listen') {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      streams.set(id, (notification) => response.write(`event: message\ndata: ${JSON.stringify(restore(notification))}\n\n`));
      send(outgoing);
      const result = await answered;
      pending.delete(id);
      response.end(`event: message\ndata: ${JSON.stringify(restore(result))}\n\n`);
      return;
    }
    send(outgoing);
    const result = await answered;
    pending.delete(id);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(restore(result)));
  }

  // A stdio connection settles on its protocol family with its first request other than
  // server/discover: the relay opens it with a 2026-07-28 tools/list, so the suite's deliberately
  // malformed requests (no `_meta`) reach a 2026-07-28 connection, as they would an HTTP server.
  const opened = new Promise<Message>((resolve) => pending.set('relay-open', resolve));
  send({ jsonrpc: '2.0', id: 'relay-open', method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } });
  const open = await opened;
  if (!open.result) throw new Error(`serve refused tools/list: ${JSON.stringify(open)}\n${stderr}`);

  const http: Server = createServer((request, response) => {
    relay(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`,
    stderr: () => stderr,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      serve.stdin.end();
      await new Promise((resolve) => (serve.exitCode !== null ? resolve(undefined) : serve.once('exit', resolve)));
    },
  };
}

/** A `tools/call` of a fixture tool as the `exec` of its script; any other message unchanged. */
function translate(message: Message, fixtureScript: FixtureScript): Message {
  if (message.method !== 'tools/call' || typeof message.params?.name !== 'string') return message;
  const script = fixtureScript(message.params.name, (message.params.arguments ?? {}) as Record<string, unknown>);
  return script === undefined ? message : { ...message, params: { ...message.params, name: 'exec', arguments: { code: script } } };
}
