import type { ServerResponse } from 'node:http';

/** Ends `response` with `body` as JSON (`content-type: application/json`) and `status`. */
export function respondJson(response: ServerResponse, body: unknown, status = 200): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
