import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { HookEndEvent, PreToolUseRequest } from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';
import { createHookEngine, type HookEngine, type McpToolHookConfig } from '@switchyard/hooks';
import { createMcpToolCaller } from './hook-caller';

const HOOK_SERVER = fileURLToPath(new URL('../test/fixtures/hook-server.mjs', import.meta.url));
const engines: HookEngine[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An engine whose `guard` server is the fixture hook server (a real stdio process), logging every call to a file. */
function mcpHookEngine(handlers: Array<Omit<McpToolHookConfig, 'type' | 'server'> & { server?: string }>) {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-hooks-'));
  dirs.push(dir);
  const log = join(dir, 'calls.jsonl');
  const engine = createHookEngine({
    // a generous start: the machine running the tests may be loaded
    mcpServers: { guard: { command: process.execPath, args: [HOOK_SERVER], env: { HOOK_SERVER_LOG: log }, startupTimeoutMs: 60_000 } },
    mcpToolCaller: createMcpToolCaller,
    config: { hooks: { PreToolUse: [{ hooks: handlers.map((handler) => ({ type: 'mcp_tool' as const, server: 'guard', timeout: 90, ...handler })) }] } },
  });
  engines.push(engine);
  const ends: HookEndEvent[] = [];
  engine.on('hook-end', (event) => ends.push(event));
  const calls = () => readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { tool: string; pid: number; payload: Record<string, unknown> });
  return { engine, ends, calls };
}

function pre(command: string, callId = 'call-1'): PreToolUseRequest {
  return {
    toolName: 'Bash',
    toolInput: { command },
    toolUseId: callId,
    caller: { kind: 'code-mode', cell_id: 'cell-3' },
    step: createStepContext({ sessionId: 's-1', turnId: 't-1', cwd: '/tmp' }),
    signal: new AbortController().signal,
  };
}

describe('mcp_tool hooks through createMcpToolCaller (a real MCP server process)', () => {
  it('blocks a call on the tool’s answer; the tool receives the stdin object; one server serves every call', async () => {
    const { engine, calls } = mcpHookEngine([{ tool: 'guard' }]);
    expect(engine.warnings).toEqual([]);
    const blocked = await engine.runPreToolUse(pre('rm -rf /'));
    const pid = calls()[0].pid;
    expect(blocked).toEqual({ blocked: true, reason: `no rm -rf (checked by MCP server pid ${pid})`, additionalContexts: [], warnings: [] });
    expect(await engine.runPreToolUse(pre('ls', 'call-2'))).toEqual({ blocked: false, additionalContexts: [], warnings: [] });
    expect(calls().map((call) => [call.tool, call.pid])).toEqual([
      ['guard', pid],
      ['guard', pid],
    ]);
    expect(calls()[0].payload).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'rm -rf /' }, tool_use_id: 'call-1', caller: { kind: 'code-mode', cell_id: 'cell-3' } });
  }, 120_000);

  it('an error result, a garbage answer and an answer past the cap fail (open, or closed naming the hook when required)', async () => {
    const { engine } = mcpHookEngine([{ tool: 'refuse' }, { tool: 'garbage' }, { tool: 'huge', required: true }]);
    const outcome = await engine.runPreToolUse(pre('ls'));
    expect(outcome).toEqual({
      blocked: true,
      reason: 'required mcp_tool hook guard/huge (<config:0>) failed: mcp_tool hook guard/huge: the answer exceeded 1048576 bytes; output ignored',
      additionalContexts: [],
      warnings: [
        'hook pre-tool-use:0:<config:0>:call-1 failed: mcp_tool hook guard/refuse: the tool answered an error: policy store unavailable',
        'hook pre-tool-use:1:<config:0>:call-1 failed: hook returned invalid pre-tool-use JSON output',
      ],
    });
  }, 120_000);

  it('a server that dies mid-call blocks a required hook naming it; the next call starts the server again', async () => {
    const { engine, calls } = mcpHookEngine([{ tool: 'die', required: true }]);
    const first = await engine.runPreToolUse(pre('ls'));
    expect(first).toMatchObject({ blocked: true, reason: 'required mcp_tool hook guard/die (<config:0>) failed: mcp_tool hook guard/die failed: MCP server `guard` closed the connection during the call' });
    await engine.runPreToolUse(pre('ls', 'call-2'));
    const pids = calls().map((call) => call.pid);
    expect(pids).toHaveLength(2);
    expect(pids[0]).not.toBe(pids[1]);
  }, 240_000);

  it('a tool that never answers fails at the hook’s timeout, naming the hook in its hook-end', async () => {
    const { engine, ends } = mcpHookEngine([{ tool: 'hang', timeout: 1 }]);
    const outcome = await engine.runPreToolUse(pre('ls'));
    expect(outcome).toEqual({ blocked: false, additionalContexts: [], warnings: ['hook pre-tool-use:0:<config:0>:call-1 failed: hook timed out after 1s'] });
    expect(ends).toMatchObject([{ outcome: 'failed', error: 'hook timed out after 1s', hook: 'mcp_tool hook guard/hang (<config:0>)' }]);
  }, 120_000);

  it('refuses a server that is not configured, and mcpServers without a caller, with CONFIG for what is required', () => {
    const unknown = createHookEngine({ mcpServers: {}, mcpToolCaller: createMcpToolCaller, config: { hooks: { PreToolUse: [{ hooks: [{ type: 'mcp_tool', server: 'nope', tool: 'x' }] }] } } });
    expect(unknown.warnings).toEqual(['skipping PreToolUse mcp_tool hook in <config:0>: server "nope" is not one of the engine\'s mcpServers (none)']);
    expect(() => createHookEngine({ mcpServers: { guard: { command: 'x' } } })).toThrow(/createHookEngine: option `mcpServers` needs `mcpToolCaller`/);
    expect(() => createHookEngine({ mcpServers: { guard: { comand: 'x' } }, mcpToolCaller: createMcpToolCaller })).toThrow(/createHookEngine: option `mcpServers`: createMcpToolCaller: .*servers\.guard: unknown option `comand`; did you mean `command`\?/s);
    expect(() => createHookEngine({ config: { hooks: { Stop: [{ hooks: [{ type: 'mcp_tool', server: 'guard', tool: 'x', required: true }] }] } } })).toThrow(
      'createHookEngine: a required hook cannot be loaded: skipping Stop mcp_tool hook in <config:0>: server "guard" is not configured: the engine has no `mcpServers`',
    );
  });
});
