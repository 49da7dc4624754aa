/**
 * A hostile or careless MCP server against the host (issue 47, rows 7 and 13), each a real server
 * process reached through `mcpTools` and a session with a scripted model:
 * - a streamable-HTTP server whose URL holds secrets in its path and query answers HTTP 403 and
 *   echoes the URL: the model's next request and the saved history held both secrets. Model-visible
 *   errors and events must name the server, never its URL's path or query;
 * - a server sends 43 elicitations at once with no call of it in flight, and 43 more during a call,
 *   with `javascript:`, `file:`, `data:` and `http:` URLs among them: all reached the host's handler.
 *   Elicitations must come only while a call of that server is in flight, bounded in number (no more
 *   waiting for the host than calls in flight), URL elicitations `https:` only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpTools, type McpElicitationRequest, type McpTools, type McpWarning } from '@switchyard/mcp';
import { createSession, type SessionEvent } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import type { ResponseItem } from '@switchyard/protocol';
import { sleep, texts } from './helpers';
import { report } from '../src/profile';

const SECRET_URL_SERVER = fileURLToPath(new URL('./fixtures/secret-url-mcp-server.mjs', import.meta.url));
const ELICITING_SERVER = fileURLToPath(new URL('./fixtures/eliciting-mcp-server.mjs', import.meta.url));

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A direct call of MCP tool `name` of `server`, as the model sends it (the server's namespace). */
const mcpCall = (callId: string, server: string, name: string, args: unknown): ResponseItem => ({
  type: 'function_call',
  call_id: callId,
  namespace: `mcp__${server}__`,
  name,
  arguments: JSON.stringify(args),
});

/** Starts the HTTP fixture; resolves with its port and the request lines it logged. */
async function startHttpServer(env: Record<string, string> = {}): Promise<{ port: number; seen: string[] }> {
  const child: ChildProcess = spawn(process.execPath, [SECRET_URL_SERVER], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => child.kill('SIGKILL'));
  const seen: string[] = [];
  child.stderr!.on('data', (data: Buffer) => seen.push(...data.toString('utf8').split('\n').filter(Boolean)));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (data: Buffer) => resolve(Number(/PORT (\d+)/.exec(data.toString('utf8'))?.[1])));
    child.once('exit', (code) => reject(new Error(`the MCP server exited with ${code}`)));
  });
  return { port, seen };
}

/** Both secrets of the path and the query, and the URL that carries them. */
const PATH_SECRET = 'p4th-s3cret-71c2';
const QUERY_SECRET = 'qk-9d4e11aa07';
const urlOf = (port: number) => `http://127.0.0.1:${port}/tenants/${PATH_SECRET}/mcp?api_key=${QUERY_SECRET}&region=eu`;

describe('a server URL with secrets answered 403 (issue 47, row 7)', () => {
  it('the model, the history and every event name the server, never its URL path or query', async () => {
    const vault = await startHttpServer();
    const gate = await startHttpServer({ GATE_ALL: '1' });
    const warnings: McpWarning[] = [];
    const mcp = await mcpTools({
      servers: { vault: { url: urlOf(vault.port) }, gate: { url: urlOf(gate.port) } },
      onWarning: (warning) => warnings.push(warning),
    });
    cleanups.push(() => mcp.close());
    const events: SessionEvent[] = [];
    const session = createSession({ tools: () => mcp.executors() });
    cleanups.push(() => session.shutdown());
    for (const type of ['tool-call-end', 'tool-output', 'warning', 'model-request'] as const) session.on(type, (event) => void events.push(event as SessionEvent));
    const model = createScriptedModel([[mcpCall('c1', 'vault', 'lookup', { key: 'db' })], [{ type: 'message', role: 'assistant', content: 'no access' }]]);
    await session.runTurn({ model, input: 'look it up' });

    // Control: the secrets were really on the wire (the server logged them) and the call was refused.
    expect(vault.seen.some((line) => line.includes(PATH_SECRET) && line.includes(QUERY_SECRET))).toBe(true);
    const output = texts(model.requests[1].input.find((item) => item.type === 'function_call_output')).join('\n');
    expect(output).toMatch(/MCP server `vault` refused access \(HTTP 403 Forbidden from http:\/\/127\.0\.0\.1:\d+\)/);
    expect(warnings.map((warning) => warning.server)).toContain('gate');

    const seenByModel = JSON.stringify(model.requests.map((request) => request.input));
    const places: Array<[string, string]> = [
      ['the next request', seenByModel],
      ['the saved history', JSON.stringify(session.history)],
      ['session events', JSON.stringify(events)],
      ['mcp warnings', JSON.stringify(warnings)],
      ['server states', JSON.stringify(mcp.servers())],
    ];
    for (const [where, text] of places) {
      expect(text, where).not.toContain(PATH_SECRET);
      expect(text, where).not.toContain(QUERY_SECRET);
    }
    report('mcp servers', `a 403 from a URL with secrets in its path and query (a call, and a start): ${places.map(([where]) => where).join(', ')} name the server and its origin only`);
  }, 60_000);
});

describe('elicitation floods (issue 47, row 13)', () => {
  it('43 at once with no call in flight and 43 during a call: one https URL reaches the host, while the call runs', async () => {
    const asked: Array<Pick<McpElicitationRequest, 'mode' | 'url' | 'message'>> = [];
    const warnings: McpWarning[] = [];
    const mcp = await mcpTools({
      servers: { asker: { command: process.execPath, args: [ELICITING_SERVER] } },
      onWarning: (warning) => warnings.push(warning),
      onElicitation: async (request) => {
        asked.push({ mode: request.mode, url: request.url, message: request.message });
        await sleep(200);
        return { action: 'accept' };
      },
    });
    cleanups.push(() => mcp.close());
    await sleep(500);
    const idleAsked = asked.length;
    const session = createSession({ tools: () => mcp.executors() });
    cleanups.push(() => session.shutdown());
    const model = createScriptedModel([[mcpCall('c1', 'asker', 'ask', {})], [{ type: 'message', role: 'assistant', content: 'done' }]]);
    await session.runTurn({ model, input: 'ask' });
    const output = texts(model.requests[1].input.find((item) => item.type === 'function_call_output')).join('\n');
    // "Wall time: …\nOutput:\n" then the JSON of the result's content blocks
    const [block] = JSON.parse(output.slice(output.indexOf('\n[') + 1)) as Array<{ text: string }>;
    const replies = JSON.parse(block.text) as { idle: string[]; during: string[] };

    expect(idleAsked).toBe(0);
    expect(replies.idle).toEqual(Array(43).fill('decline'));
    // Control: the handler is reachable: the one https URL asked while the call ran got through.
    expect(asked).toEqual([{ mode: 'url', url: 'https://tickets.example.com/connect', message: 'Open link 0.' }]);
    expect(replies.during[0]).toBe('accept');
    expect(replies.during.slice(1)).toEqual(Array(42).fill('decline'));
    // one warning per way of refusing: no call in flight, each scheme that is not https:, too many at once
    expect(warnings.map((warning) => `${warning.kind}: ${warning.message}`).sort()).toEqual(
      [
        'a URL elicitation to a data: URL (https: only)',
        'a URL elicitation to a file: URL (https: only)',
        'a URL elicitation to a http: URL (https: only)',
        'a URL elicitation to a javascript: URL (https: only)',
        'an elicitation while no call of the server was in flight',
        'more elicitations waiting for the user than calls in flight (1)',
      ].map((reason) => `elicitation-refused: MCP server \`asker\`: declined ${reason}`),
    );
    report('mcp servers', `86 elicitations (43 idle, 43 during one call; javascript:, file:, data:, http: URLs among them): ${asked.length} reached the host (an https URL, during the call); ${warnings.length} warnings`);
  }, 60_000);
});
