import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { defineFunctionTool } from '@switchyard/kit';
import { createHookEngine, type HookEngine, type HookEngineOptions, type HttpHookConfig } from '@switchyard/hooks';
import { createMcpToolCaller } from '@switchyard/mcp';
import { createSession, type Session } from '@switchyard/session';
import { report } from '../src/profile';
import { respondJson, useCleanups } from '@switchyard/test-helpers';
import { callItem, texts } from './helpers';

// Attacks on the http and mcp_tool hook handlers, through a session: a policy server that hangs,
// answers garbage or 30 MB, redirects to a private address, a URL carrying credentials, an MCP
// server that dies mid-call. Every hook here is required, so each failure must block the call with
// the hook's name, and no header value may reach an event, a warning or the model.

const HOOK_SERVER = fileURLToPath(new URL('../../../packages/mcp/test/fixtures/hook-server.mjs', import.meta.url));
const SECRET = 'Bearer s3cr3t-hook-token-8d1f';
const held: string[] = [];
afterAll(() => report('hook handler attacks', `${held.length} attacks, each with its outcome:\n  - ${held.join('\n  - ')}`));

/** What the hostile policy server saw of each request, by path (this test's only). */
const seen = new Map<string, { closedEarly: boolean; bytesWritten: number }>();
// registered before the cleanups, so it runs after them (after-hooks run last registered first):
// a response closed by the server's close still finds its entry
afterEach(() => seen.clear());
const { defer } = useCleanups();

/** A hostile policy server on 127.0.0.1: the path picks the attack. */
async function policyServer(): Promise<string> {
  const attacks: Record<string, (request: IncomingMessage, response: ServerResponse, base: string) => void> = {
    '/allowed/deny': (_request, response) => respondJson(response, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'denied by the policy server' } }),
    '/allowed/hang': () => undefined,
    '/allowed/garbage-json': (_request, response) => response.end('{"hookSpecificOutput": {"permissionDecision": '),
    '/allowed/garbage-bytes': (_request, response) => response.end(Buffer.from([0xff, 0xfe, 0x00, 0x9c, 0x41, 0x0a])),
    '/allowed/huge': (request, response) => {
      // 30 MB in 64 KiB writes, as fast as the socket takes them
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let left = 30 * 1024 * 1024;
      const entry = seen.get(request.url as string) as { closedEarly: boolean; bytesWritten: number };
      const pump = () => {
        while (left > 0 && !response.destroyed) {
          left -= chunk.length;
          entry.bytesWritten += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        if (!response.destroyed) response.end();
      };
      pump();
    },
    '/allowed/to-private': (_request, response) => redirect(response, 307, 'http://10.0.0.1/hook'),
    '/allowed/to-metadata': (_request, response) => redirect(response, 308, 'http://169.254.169.254/latest/meta-data/'),
    '/allowed/to-credentials': (_request, response, base) => redirect(response, 307, base.replace('http://', 'http://admin:hunter2@') + '/allowed/deny'),
    '/allowed/to-listed': (_request, response) => redirect(response, 307, '/allowed/deny'),
    '/allowed/found': (_request, response) => redirect(response, 302, '/allowed/deny'),
  };
  let base = '';
  const server: Server = createServer((request, response) => {
    seen.set(request.url as string, { closedEarly: false, bytesWritten: 0 });
    response.on('close', () => {
      if (!response.writableFinished) (seen.get(request.url as string) as { closedEarly: boolean }).closedEarly = true;
    });
    request.resume();
    request.on('end', () => (attacks[request.url as string] ?? ((_r, res) => respondJson(res, {}, 404)))(request, response, base));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  defer(server, (listening) => new Promise((resolve) => listening.close(resolve)));
  defer(server, (listening) => listening.closeAllConnections());
  return base;
}

function redirect(response: ServerResponse, status: number, location: string): void {
  response.writeHead(status, { location });
  response.end();
}

/** A direct session whose `shell` tool records what ran, with every event a host could log. */
function sessionWith(options: HookEngineOptions): { session: Session; hooks: HookEngine; ran: string[]; logged: unknown[] } {
  const hooks = createHookEngine(options);
  const ran: string[] = [];
  const shell = defineFunctionTool({
    name: 'shell',
    description: 'Records a command.',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    handle: ({ args }) => (ran.push(args.command), 'ran'),
  });
  const session = createSession({ tools: [shell], hooks });
  const logged: unknown[] = [...hooks.warnings];
  for (const type of ['hook-start', 'hook-end', 'warning', 'tool-call-blocked', 'tool-call-end'] as const) session.on(type, (event) => logged.push(event));
  defer(hooks, (engine) => engine.close());
  defer(session, (opened) => opened.shutdown());
  return { session, hooks, ran, logged };
}

/** Dispatches one `shell` call and answers what the model reads. */
async function attempt(session: Session, command: string, callId = 'c1'): Promise<string> {
  const turn = session.beginTurn();
  const step = await turn.step();
  const item = await step.dispatch(callItem(callId, 'shell', { command }));
  await turn.end();
  return texts(item).join('\n');
}

function httpHook(url: string, extra: Partial<HttpHookConfig> = {}): HookEngineOptions['config'] {
  return { hooks: { PreToolUse: [{ hooks: [{ type: 'http', url, required: true, timeout: 1, headers: { Authorization: SECRET }, ...extra }] }] } };
}
const blocked = (reason: string) => `Tool call blocked by PreToolUse hook: ${reason}. Tool: shell`;

describe('http hook attacks', () => {
  const cases: Array<{ name: string; path: string; outcome: (base: string) => string }> = [
    { name: 'a server that never answers', path: '/allowed/hang', outcome: () => 'hook timed out after 1s' },
    { name: 'an answer that looks like JSON but is not', path: '/allowed/garbage-json', outcome: () => 'hook returned invalid pre-tool-use JSON output' },
    { name: 'an answer of 30 MB', path: '/allowed/huge', outcome: () => 'http hook response exceeded 1048576 bytes; output ignored' },
    { name: 'a 307 redirect to a private address', path: '/allowed/to-private', outcome: () => 'http hook refused a redirect: http://10.0.0.1/hook is not in allowedHttpHookUrls' },
    { name: 'a 308 redirect to the cloud metadata address', path: '/allowed/to-metadata', outcome: () => 'http hook refused a redirect: http://169.254.169.254/latest/meta-data/ is not in allowedHttpHookUrls' },
    {
      name: 'a redirect to a URL carrying credentials',
      path: '/allowed/to-credentials',
      outcome: (base) => `http hook refused a redirect: ${base}/allowed/deny carries credentials in the URL (put them in \`headers\`, e.g. from an allowed environment variable)`,
    },
    { name: 'a 302 (a POST is not re-sent on it)', path: '/allowed/found', outcome: () => 'http hook answered HTTP 302 Found; only 307 and 308 redirects are followed (they keep the POST and its body)' },
  ];
  for (const attack of cases) {
    it(`${attack.name}: the required hook blocks the call, naming itself; no header value is logged`, async () => {
      const base = await policyServer();
      const { session, ran, logged } = sessionWith({ allowedHttpHookUrls: [`${base}/allowed`], config: httpHook(`${base}${attack.path}`) });
      const started = Date.now();
      const text = await attempt(session, 'ls');
      expect(text).toBe(blocked(`required http hook ${base}${attack.path} (<config:0>) failed: ${attack.outcome(base)}`));
      expect(ran).toEqual([]);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(JSON.stringify(logged) + text).not.toContain('s3cr3t-hook-token');
      expect(JSON.stringify(logged) + text).not.toContain('hunter2');
      if (attack.path === '/allowed/huge') {
        // the runner stopped reading at the cap and closed the connection: the server never finished
        await expect.poll(() => seen.get(attack.path)?.closedEarly, { timeout: 10_000 }).toBe(true);
        expect(seen.get(attack.path)?.bytesWritten).toBeLessThan(30 * 1024 * 1024);
      }
      if (attack.path === '/allowed/hang') await expect.poll(() => seen.get(attack.path)?.closedEarly, { timeout: 10_000 }).toBe(true);
      held.push(`${attack.name} → "${attack.outcome('<base>')}"`);
    });
  }

  it('controls: a 307 to a listed URL is followed and its answer blocks; random bytes are no decision (the call goes on, as for a command’s plain stdout)', async () => {
    const base = await policyServer();
    const followed = sessionWith({ allowedHttpHookUrls: [`${base}/allowed`], config: httpHook(`${base}/allowed/to-listed`) });
    expect(await attempt(followed.session, 'ls')).toBe(blocked('denied by the policy server'));
    const bytes = sessionWith({ allowedHttpHookUrls: [`${base}/allowed`], config: httpHook(`${base}/allowed/garbage-bytes`) });
    expect(await attempt(bytes.session, 'ls')).toBe('ran');
    held.push('307 to a listed URL → followed, blocked by its answer; 2xx random bytes → no decision, the call ran');
  });

  it('a URL with credentials is refused at load without echoing them; a name resolving to loopback is refused at the connection', async () => {
    const base = await policyServer();
    const withCredentials = base.replace('http://', 'http://admin:hunter2@') + '/allowed/deny';
    let refusal = '';
    try {
      createHookEngine({ allowedHttpHookUrls: [`${base}/allowed`], config: httpHook(withCredentials) });
    } catch (error) {
      refusal = (error as Error).message;
    }
    expect(refusal).toBe(
      `createHookEngine: a required hook cannot be loaded: skipping PreToolUse http hook in <config:0>: its url ${base}/allowed/deny carries credentials in the URL (put them in \`headers\`, e.g. from an allowed environment variable)`,
    );
    const lenient = createHookEngine({ allowedHttpHookUrls: [`${base}/allowed`], config: { hooks: { PreToolUse: [{ hooks: [{ type: 'http', url: withCredentials }] }] } } });
    expect(JSON.stringify(lenient.warnings)).not.toContain('hunter2');
    const named = base.replace('127.0.0.1', 'localhost') + '/allowed/deny';
    const { session, ran, logged } = sessionWith({ config: httpHook(named) });
    const text = (await attempt(session, 'ls')).replace('resolved to ::1', 'resolved to 127.0.0.1');
    expect(text).toBe(blocked(`required http hook ${named} (<config:0>) failed: http hook refused: ${named} (resolved to 127.0.0.1) is a loopback address; list the URL in allowedHttpHookUrls to allow it`));
    expect(ran).toEqual([]);
    expect(seen.has('/allowed/deny')).toBe(false);
    expect(JSON.stringify(logged)).not.toContain('s3cr3t-hook-token');
    held.push('credentials in the URL → CONFIG error (required) or a warning, neither echoing them; localhost not listed → refused at connect, the server never reached');
  });
});

describe('mcp_tool hook attacks', () => {
  it('an MCP server that dies mid-call: the required hook blocks, naming itself; the next call gets a new server process', async () => {
    const { session, ran } = sessionWith({
      mcpServers: { guard: { command: process.execPath, args: [HOOK_SERVER], startupTimeoutMs: 60_000 } },
      mcpToolCaller: createMcpToolCaller,
      config: { hooks: { PreToolUse: [{ matcher: 'shell', hooks: [{ type: 'mcp_tool', server: 'guard', tool: 'die', required: true, timeout: 90 }] }] } },
    });
    const outcome = 'mcp_tool hook guard/die failed: MCP server `guard` closed the connection during the call';
    expect(await attempt(session, 'ls')).toBe(blocked(`required mcp_tool hook guard/die (<config:0>) failed: ${outcome}`));
    expect(await attempt(session, 'ls', 'c2')).toBe(blocked(`required mcp_tool hook guard/die (<config:0>) failed: ${outcome}`));
    expect(ran).toEqual([]);
    held.push(`an MCP server dying mid-call → "${outcome}", twice (restarted for the second call)`);
  }, 240_000);

  it('an MCP tool that never answers: the required hook blocks at its timeout', async () => {
    const { session, ran } = sessionWith({
      mcpServers: { guard: { command: process.execPath, args: [HOOK_SERVER], startupTimeoutMs: 60_000 } },
      mcpToolCaller: createMcpToolCaller,
      config: { hooks: { PreToolUse: [{ hooks: [{ type: 'mcp_tool', server: 'guard', tool: 'hang', required: true, timeout: 2 }] }] } },
    });
    expect(await attempt(session, 'ls')).toBe(blocked('required mcp_tool hook guard/hang (<config:0>) failed: hook timed out after 2s'));
    expect(ran).toEqual([]);
    held.push('an MCP tool that never answers → "hook timed out after 2s"');
  }, 120_000);
});
