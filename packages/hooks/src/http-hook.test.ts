import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { HookEndEvent } from '@switchyard/protocol';
import { createHookEngine, type HookEngineOptions } from './hook-engine';
import type { HttpHookConfig } from './hooks-config';
import { isListed, restrictedRange } from './http-url-policy';
import { respondJson } from '@switchyard/test-helpers';
import { preRequest } from '../test/helpers';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A real HTTP server on 127.0.0.1 answering with `answer`; records every request. */
async function serveHttp(answer: (request: Received, response: ServerResponse) => void): Promise<{ base: string; port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(entry);
      answer(entry, response);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, port, received };
}

const deny = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'prod is frozen' } };

function httpEngine(handler: Partial<HttpHookConfig> & { url: string }, options: HookEngineOptions = {}) {
  const engine = createHookEngine({ config: { hooks: { PreToolUse: [{ hooks: [{ type: 'http', timeout: 5, ...handler }] }] } }, ...options });
  const ends: HookEndEvent[] = [];
  engine.on('hook-end', (event) => ends.push(event));
  return { engine, ends };
}

describe('http hooks', () => {
  it('POSTs the stdin JSON to a listed loopback URL and blocks on its answer; headers read allowed environment variables only', async () => {
    const server = await serveHttp((_request, response) => respondJson(response, deny));
    const { engine } = httpEngine(
      { url: `${server.base}/hooks/pre?team=ops`, headers: { Authorization: 'Bearer $HOOK_TOKEN', 'X-Other': '${NOT_ALLOWED}-x' }, allowedEnvVars: ['HOOK_TOKEN'] },
      { allowedHttpHookUrls: [`${server.base}/hooks`], env: { HOOK_TOKEN: 'tok-123', NOT_ALLOWED: 'leak' } },
    );
    const outcome = await engine.runPreToolUse(preRequest({ toolInput: { command: 'deploy prod' } }));
    expect(outcome).toEqual({ blocked: true, reason: 'prod is frozen', additionalContexts: [], warnings: [] });
    expect(server.received).toHaveLength(1);
    const [request] = server.received;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/hooks/pre?team=ops');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers.authorization).toBe('Bearer tok-123');
    expect(request.headers['x-other']).toBe('-x');
    expect(JSON.parse(request.body)).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'deploy prod' }, tool_use_id: 'call-1', caller: { kind: 'direct' } });
  });

  it('a required hook that cannot reach its server blocks, naming itself (never its headers)', async () => {
    const server = await serveHttp((_request, response) => respondJson(response, {}));
    const port = server.port;
    await new Promise((resolve) => servers.pop()?.close(resolve));
    const { engine, ends } = httpEngine({ url: `http://127.0.0.1:${port}/gate`, required: true, headers: { 'X-Api-Key': 'sekret-value-42' } }, { allowedHttpHookUrls: [`http://127.0.0.1:${port}/`] });
    const outcome = await engine.runPreToolUse(preRequest());
    expect(outcome).toMatchObject({ blocked: true, reason: `required http hook http://127.0.0.1:${port}/gate (<config:0>) failed: http hook failed: connect ECONNREFUSED 127.0.0.1:${port}` });
    expect(JSON.stringify({ outcome, ends })).not.toContain('sekret-value-42');
  });

  it('refuses a name that resolves to a loopback address unless listed; a literal one is skipped at load', async () => {
    const server = await serveHttp((_request, response) => respondJson(response, deny));
    const named = `http://localhost:${server.port}/gate`;
    const refused = httpEngine({ url: named, required: true });
    const outcome = await refused.engine.runPreToolUse(preRequest());
    expect(outcome.blocked).toBe(true);
    // localhost resolves to 127.0.0.1 here; a machine listing ::1 first names that address
    expect(outcome.reason?.replace('resolved to ::1', 'resolved to 127.0.0.1')).toBe(
      `required http hook ${named} (<config:0>) failed: http hook refused: ${named} (resolved to 127.0.0.1) is a loopback address; list the URL in allowedHttpHookUrls to allow it`,
    );
    expect(server.received).toEqual([]);
    const listed = httpEngine({ url: named }, { allowedHttpHookUrls: [`http://localhost:${server.port}/`] });
    expect(await listed.engine.runPreToolUse(preRequest())).toMatchObject({ blocked: true, reason: 'prod is frozen' });
    expect(createHookEngine({ config: { hooks: { PreToolUse: [{ hooks: [{ type: 'http', url: `${server.base}/gate` }] }] } } }).warnings).toEqual([
      `skipping PreToolUse http hook in <config:0>: ${server.base}/gate is a loopback address; list the URL in allowedHttpHookUrls to allow it`,
    ]);
    expect(() => createHookEngine({ config: { hooks: { PreToolUse: [{ hooks: [{ type: 'http', url: `${server.base}/gate`, required: true }] }] } } })).toThrow(
      /createHookEngine: a required hook cannot be loaded: skipping PreToolUse http hook in <config:0>: http:\/\/127\.0\.0\.1:\d+\/gate is a loopback address/,
    );
  });

  it('with a list, only listed URLs load: a prefix covers its path and below, never a sibling or another port', () => {
    const allowed = [new URL('https://hooks.example.com/team')];
    expect(isListed(new URL('https://hooks.example.com/team'), allowed)).toBe(true);
    expect(isListed(new URL('https://hooks.example.com/team/pre?x=1'), allowed)).toBe(true);
    expect(isListed(new URL('https://HOOKS.example.com:443/team/../team/pre'), allowed)).toBe(true);
    expect(isListed(new URL('https://hooks.example.com/team-admin'), allowed)).toBe(false);
    expect(isListed(new URL('https://hooks.example.com/team/../admin'), allowed)).toBe(false);
    expect(isListed(new URL('https://hooks.example.com:8443/team'), allowed)).toBe(false);
    expect(isListed(new URL('http://hooks.example.com/team'), allowed)).toBe(false);
    expect(isListed(new URL('https://hooks.example.com.evil.test/team'), allowed)).toBe(false);
    const engine = createHookEngine({
      allowedHttpHookUrls: ['https://hooks.example.com/team'],
      config: { hooks: { PreToolUse: [{ hooks: [{ type: 'http', url: 'https://hooks.example.com/team-admin' }] }] } },
    });
    expect(engine.warnings).toEqual(['skipping PreToolUse http hook in <config:0>: https://hooks.example.com/team-admin is not in allowedHttpHookUrls']);
    expect(() => createHookEngine({ allowedHttpHookUrls: ['ftp://x/'] })).toThrow('createHookEngine: allowedHttpHookUrls[0] ftp://x/ is not an http or https URL');
  });

  it('classifies restricted addresses, IPv4-mapped and NAT64 forms included', () => {
    expect(restrictedRange('127.0.0.1')).toBe('a loopback address');
    expect(restrictedRange('::ffff:127.0.0.1')).toBe('a loopback address');
    expect(restrictedRange('::1')).toBe('a loopback address');
    expect(restrictedRange('10.1.2.3')).toBe('a private address');
    expect(restrictedRange('172.31.0.1')).toBe('a private address');
    expect(restrictedRange('fd00::1')).toBe('a private address');
    expect(restrictedRange('169.254.169.254')).toBe('a link-local address');
    expect(restrictedRange('100.64.0.1')).toBe('a shared (carrier-grade NAT) address');
    expect(restrictedRange('0.0.0.0')).toBe('an unspecified address');
    expect(restrictedRange('64:ff9b::a00:1')).toBe('a reserved address');
    expect(restrictedRange('93.184.216.34')).toBeUndefined();
    expect(restrictedRange('2606:4700::1111')).toBeUndefined();
  });

  it('an answer that is not 2xx fails open, or blocks a required hook; a 2xx plain-text answer is nothing', async () => {
    const server = await serveHttp((request, response) => {
      if (request.url === '/error') {
        response.writeHead(503);
        response.end('down for maintenance');
      } else {
        response.end('all good');
      }
    });
    const allowedHttpHookUrls = [`${server.base}/`];
    const open = httpEngine({ url: `${server.base}/error` }, { allowedHttpHookUrls });
    expect(await open.engine.runPreToolUse(preRequest())).toEqual({ blocked: false, additionalContexts: [], warnings: [`hook pre-tool-use:0:<config:0>:call-1 failed: http hook answered HTTP 503 Service Unavailable`] });
    const required = httpEngine({ url: `${server.base}/error`, required: true }, { allowedHttpHookUrls });
    expect(await required.engine.runPreToolUse(preRequest())).toMatchObject({ blocked: true, reason: `required http hook ${server.base}/error (<config:0>) failed: http hook answered HTTP 503 Service Unavailable` });
    const plain = httpEngine({ url: `${server.base}/plain` }, { allowedHttpHookUrls });
    expect(await plain.engine.runPreToolUse(preRequest())).toEqual({ blocked: false, additionalContexts: [], warnings: [] });
  });
});
