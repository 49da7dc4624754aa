// A mock Responses API on 127.0.0.1: it records every request body and answers each with the next
// scripted model response as server-sent events, the way Codex's own integration tests feed it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One item the scripted model emits (a Responses-API output item). */
export type ScriptItem = Record<string, unknown>;

/**
 * One scripted model response: its items, or a function of the request that makes them (to call
 * `write_stdin` with the session id the last output named, or `wait` with a cell id).
 */
export type ScriptStep = ScriptItem[] | ((request: RecordedRequest) => ScriptItem[]);

/** The parts of a request body the comparison reads. */
export interface RecordedRequest {
  input: Array<Record<string, unknown>>;
  tools: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

export interface MockResponses {
  /** `http://127.0.0.1:PORT/v1` */
  baseURL: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const FINAL: ScriptItem[] = [{ type: 'message', role: 'assistant', id: 'msg_final', content: [{ type: 'output_text', text: 'done' }] }];

/** Starts a server answering the steps in order, then a final assistant message for every later request. */
export async function startMockResponses(steps: readonly ScriptStep[]): Promise<MockResponses> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || !request.url?.endsWith('/responses')) {
        response.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RecordedRequest;
      const index = requests.push(body) - 1;
      const step = steps[index];
      let items: ScriptItem[];
      try {
        items = step === undefined ? FINAL : typeof step === 'function' ? step(body) : step;
      } catch (error) {
        items = [{ type: 'message', role: 'assistant', id: `msg_script_error_${index}`, content: [{ type: 'output_text', text: `script error: ${String(error)}` }] }];
      }
      writeStream(response, `resp_${index + 1}`, items);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function writeStream(response: import('node:http').ServerResponse, id: string, items: ScriptItem[]): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: Record<string, unknown>) => response.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
  send({ type: 'response.created', response: { id, object: 'response', status: 'in_progress', output: [] } });
  items.forEach((item, outputIndex) => {
    send({ type: 'response.output_item.added', output_index: outputIndex, item });
    send({ type: 'response.output_item.done', output_index: outputIndex, item });
  });
  const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 };
  send({ type: 'response.completed', response: { id, object: 'response', status: 'completed', output: items, usage } });
  response.end();
}
