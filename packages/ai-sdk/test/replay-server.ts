import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer: a server-sent event stream (the default) or a plain JSON error. */
export interface ReplayResponse {
  status?: number;
  /** SSE events as `{ event?, data }`; `data` is sent verbatim on one `data:` line. */
  events?: Array<{ event?: string; data: string }>;
  /** A non-streaming body (for error answers). */
  body?: string;
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/**
 * A loopback HTTP server (port 0) that answers each request with the next scripted response,
 * replaying recorded provider streams byte for byte, and records what the client sent.
 */
export async function startEventReplayServer(responses: ReplayResponse[]) {
  const requests: RecordedRequest[] = [];
  const queue = [...responses];
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // keep the raw text
      }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const next = queue.shift();
      if (!next) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'replay server: no scripted response left' } }));
        return;
      }
      if (next.events) {
        res.writeHead(next.status ?? 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...next.headers });
        for (const event of next.events) res.write(`${event.event ? `event: ${event.event}\n` : ''}data: ${event.data}\n\n`);
        res.end();
      } else {
        res.writeHead(next.status ?? 200, { 'content-type': 'application/json', ...next.headers });
        res.end(next.body ?? '');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    /** Scripted responses not consumed yet. */
    pending: () => queue.length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
