import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createHookEngine, type HookEngineOptions, type PostToolUseFailureHookInput } from '@switchyard/hooks';
import { createMcpToolCaller, mcpTools, type McpTools } from '@switchyard/mcp';
import { createSession, type Session } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { execTools } from '@switchyard/tool-exec';
import { call, exec, say, texts } from './helpers';
import { outputsOf, useCleanups } from '@switchyard/test-helpers';

// Hooks through a whole session: PostToolUseFailure for the failures it names, http and mcp_tool
// handlers blocking calls against real servers (a loopback HTTP server, an MCP server process).

const POLICY_SERVER = fileURLToPath(new URL('./fixtures/policy-server.mjs', import.meta.url));
const { defer, scratch: scratchDir } = useCleanups();
const track = <T extends Session | McpTools | Server>(thing: T): T => defer(thing, () => ('shutdown' in thing ? thing.shutdown() : 'close' in thing && 'listen' in thing ? new Promise((resolve) => thing.close(resolve)) : (thing as McpTools).close()));

/** A tool that throws, and one that records that it ran. */
function hostTools(ran: string[]) {
  return [
    defineFunctionTool({ name: 'deploy', description: 'Deploys.', parameters: { type: 'object', properties: { env: { type: 'string' } } }, handle: () => Promise.reject(new Error('quota exceeded')) }),
    defineFunctionTool({
      name: 'shell',
      description: 'Runs a command (records it instead).',
      parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
      handle: ({ args }) => (ran.push(args.command), 'ran'),
    }),
  ];
}

describe('PostToolUseFailure through a session', () => {
  it('fires for a failing handler, a sandbox denial and an MCP timeout — never for a success — with the error in the payload; its feedback is what the model reads', async () => {
    const dir = scratchDir('hook-handlers');
    const log = join(dir, 'failures.jsonl');
    const hooks = createHookEngine({
      config: { hooks: { PostToolUseFailure: [{ hooks: [{ type: 'command', command: `cat >> "${log}"; echo >> "${log}"`, timeout: 60 }] }] } },
      functionHooks: [{ event: 'PostToolUseFailure', matcher: 'deploy', run: () => ({ decision: 'block', reason: 'deploys are frozen until Monday; do not retry' }) }],
    });
    const mcp = track(await mcpTools({ servers: { policy: { command: process.execPath, args: [POLICY_SERVER], toolTimeoutMs: 300, startupTimeoutMs: 60_000 } } }));
    const ran: string[] = [];
    const escape = `/etc/switchyard-hook-test-${process.pid}`;
    const session = track(createSession({ tools: () => [...hostTools(ran), ...execTools({ sandbox: 'workspace-write', approvalPolicy: 'never' }), ...mcp.executors()], cwd: dir, hooks }));
    const model = createScriptedModel([
      [
        call('c-deploy', 'deploy', { env: 'prod' }),
        call('c-denied', 'exec_command', { cmd: `echo x > ${escape}` }),
        call('c-slow', 'slow', { ms: 10_000 }, 'mcp__policy__'),
        call('c-fine', 'shell', { command: 'ls' }),
      ],
      [say('done')],
    ]);
    const result = await session.runTurn({ model, input: 'ship it' });
    expect(existsSync(escape)).toBe(false);
    const failures = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as PostToolUseFailureHookInput);
    const byId = Object.fromEntries(failures.map((input) => [input.tool_use_id, input]));
    expect(Object.keys(byId).sort()).toEqual(['c-denied', 'c-deploy', 'c-slow']);
    expect(byId['c-deploy']).toMatchObject({ hook_event_name: 'PostToolUseFailure', tool_name: 'deploy', tool_input: { env: 'prod' }, error: 'tool deploy failed: quota exceeded', error_code: 'RESPOND_TO_MODEL', caller: { kind: 'direct' } });
    expect(byId['c-denied']).toMatchObject({ tool_name: 'Bash', tool_input: { command: `echo x > ${escape}` }, error_code: 'SANDBOX_DENIED' });
    expect(byId['c-denied'].error).toMatch(/Process exited with code 1\n[\s\S]*Read-only file system/);
    expect(byId['c-slow']).toMatchObject({ tool_name: 'mcp__policy__slow', tool_input: { ms: 10_000 }, error_code: 'TIMEOUT' });
    expect(byId['c-slow'].error).toContain('tool call error: timed out awaiting tools/call after 300ms');
    // the model reads the hook's text instead of the failure; the other outputs are the tools' own
    expect(texts(outputsOf(result.items, 'c-deploy')[0])).toEqual(['deploys are frozen until Monday; do not retry']);
    expect(texts(outputsOf(result.items, 'c-denied')[0])[0]).toContain('Read-only file system');
    expect(texts(outputsOf(result.items, 'c-fine')[0])).toEqual(['ran']);
    expect(ran).toEqual(['ls']);
  }, 120_000);

  it('fires for a nested call of a Code Mode cell, with the cell as caller; the cell still sees the original failure', async () => {
    const seen: PostToolUseFailureHookInput[] = [];
    const hooks = createHookEngine({
      functionHooks: [{ event: 'PostToolUseFailure', run: (input) => (seen.push(input as PostToolUseFailureHookInput), { decision: 'block', reason: 'replaced for the model' }) }],
    });
    const session = track(createSession({ toolMode: 'code-mode-only', tools: hostTools([]), hooks }));
    const cell = `try { await tools.deploy({ env: 'staging' }); } catch (error) { text('cell saw: ' + error.message); }`;
    const result = await session.runTurn({ model: createScriptedModel([[exec('e1', cell)], [say('ok')]]), input: 'go' });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ tool_name: 'deploy', tool_input: { env: 'staging' }, error: 'tool deploy failed: quota exceeded', error_code: 'RESPOND_TO_MODEL', caller: { kind: 'code-mode', cell_id: expect.any(String) } });
    expect(texts(outputsOf(result.items, 'e1')[0]).join('\n')).toContain('cell saw: tool deploy failed: quota exceeded');
  }, 120_000);
});

describe('http and mcp_tool hooks through a session', () => {
  async function loopback(answer: (body: Record<string, unknown>) => unknown): Promise<string> {
    const server = track(
      createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify(answer(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>)));
        });
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  function sessionWith(hookOptions: HookEngineOptions, ran: string[]) {
    const hooks = defer(createHookEngine(hookOptions), (engine) => engine.close());
    return track(createSession({ tools: hostTools(ran), hooks }));
  }

  it('an http hook blocks a call through a real loopback server; an unreachable required http hook blocks, naming itself', async () => {
    const base = await loopback((body) =>
      String((body.tool_input as { command?: string }).command).includes('rm -rf')
        ? { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'the HTTP policy refuses rm -rf' } }
        : {},
    );
    const ran: string[] = [];
    const session = sessionWith({ allowedHttpHookUrls: [`${base}/`], config: { hooks: { PreToolUse: [{ matcher: 'shell', hooks: [{ type: 'http', url: `${base}/pre`, timeout: 30 }] }] } } }, ran);
    const result = await session.runTurn({ model: createScriptedModel([[call('h1', 'shell', { command: 'rm -rf /' }), call('h2', 'shell', { command: 'ls' })], [say('ok')]]), input: 'go' });
    expect(texts(outputsOf(result.items, 'h1')[0])).toEqual(['Tool call blocked by PreToolUse hook: the HTTP policy refuses rm -rf. Tool: shell']);
    expect(ran).toEqual(['ls']);

    // nothing listens on a port the test just released
    const probe = track(createServer());
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const url = `http://127.0.0.1:${port}/pre`;
    const strict = sessionWith({ allowedHttpHookUrls: [url], config: { hooks: { PreToolUse: [{ hooks: [{ type: 'http', url, required: true, timeout: 30 }] }] } } }, ran);
    const refused = await strict.runTurn({ model: createScriptedModel([[call('h3', 'shell', { command: 'ls -la' })], [say('ok')]]), input: 'go' });
    expect(texts(outputsOf(refused.items, 'h3')[0])).toEqual([
      `Tool call blocked by PreToolUse hook: required http hook ${url} (<config:0>) failed: http hook failed: connect ECONNREFUSED 127.0.0.1:${port}. Tool: shell`,
    ]);
    expect(ran).toEqual(['ls']);
  });

  it('an mcp_tool hook blocks a call through a real MCP server process', async () => {
    const ran: string[] = [];
    const session = sessionWith(
      {
        mcpServers: { policy: { command: process.execPath, args: [POLICY_SERVER], startupTimeoutMs: 60_000 } },
        mcpToolCaller: createMcpToolCaller,
        config: { hooks: { PreToolUse: [{ matcher: 'shell', hooks: [{ type: 'mcp_tool', server: 'policy', tool: 'guard', timeout: 60 }] }] } },
      },
      ran,
    );
    const result = await session.runTurn({ model: createScriptedModel([[call('m1', 'shell', { command: 'rm -rf ~' }), call('m2', 'shell', { command: 'pwd' })], [say('ok')]]), input: 'go' });
    expect(texts(outputsOf(result.items, 'm1')[0])).toEqual(['Tool call blocked by PreToolUse hook: the policy server refuses rm -rf. Tool: shell']);
    expect(ran).toEqual(['pwd']);
  }, 120_000);
});
