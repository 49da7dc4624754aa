// MCP Tasks end to end: @switchyard/mcp's client (mcpTools) against `switchyard mcp serve` (a real
// server process over stdio, with exec_command asking approval for escalated commands). On the
// 2026-07-28 revision a cell that yields runs as a task of the extension: the client follows it to
// the end, and an approval inside the cell reaches the client's onElicitation as the task's input
// request, answered with tasks/update; the call's timeout waits while the user does. On
// 2025-11-25 the same exec is a plain call answered at the yield.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { displayName, type ToolExecutor } from '@switchyard/protocol';
import { invokeTool } from '@switchyard/registry/testing';
import { mcpTools, type McpElicitationRequest, type McpToolsEvent, type McpTools } from '@switchyard/mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const SERVE = fileURLToPath(new URL('../../../packages/cli/test/fixtures/serve.ts', import.meta.url));
const TSX = pathToFileURL(require.resolve('tsx')).href;
/** The call's own timeout: far shorter than the user takes to answer (wide margins: the machine may be loaded). */
const TOOL_TIMEOUT_MS = 8000;
const USER_MS = 16_000;

describe('mcpTools and mcp serve: MCP Tasks of both revisions', () => {
  let workspace: string;
  let mcp: McpTools;
  const asked: McpElicitationRequest[] = [];
  const tasks: Array<Extract<McpToolsEvent, { type: 'task-status' }>> = [];
  let answer: 'accept' | 'decline' = 'accept';

  beforeAll(async () => {
    workspace = mkdtempSync(join(tmpdir(), 'switchyard-mcp-tasks-'));
    const serve = (protocol?: 'legacy' | '2026-07-28') => ({
      command: process.execPath,
      args: ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', TSX, SERVE, '--cwd', workspace, '--approval-policy', 'on-request'],
      startupTimeoutMs: 120_000,
      toolTimeoutMs: TOOL_TIMEOUT_MS,
      ...(protocol ? { protocol } : {}),
    });
    mcp = await mcpTools({
      servers: { modern: serve('2026-07-28'), legacy: serve() },
      onElicitation: async (request) => {
        asked.push(request);
        await new Promise((resolve) => setTimeout(resolve, USER_MS));
        return { action: answer };
      },
    });
    mcp.on('task-status', (event) => void tasks.push(event));
    // A first cell starts a worker process: warm each server up before timing anything.
    for (const server of ['modern', 'legacy']) await run(server, 'text("warm")');
  }, 300_000);

  afterAll(async () => {
    await mcp?.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  const exec = (server: string): ToolExecutor => {
    const found = mcp.executors().find((executor) => displayName(executor.name) === `mcp__${server}__exec`);
    if (!found) throw new Error(`no exec of ${server}: ${JSON.stringify(mcp.servers())}`);
    return found;
  };
  const run = async (server: string, code: string) => {
    const result = await invokeTool(exec(server), { kind: 'function', arguments: JSON.stringify({ code }) }, { callId: `call-${server}-${code.length}`, hooks: false });
    return { success: result.output?.success, value: result.output?.codeModeResult({ kind: 'function', arguments: '{}' }) as { content: Array<{ text?: string }>; isError: boolean } };
  };
  // Each script yields with yield_control() once it has said what it must say before the yield
  // (a yield time would race the cell's start on a loaded machine).
  const yieldingScript = 'text("before"); yield_control(); await new Promise((resolve) => setTimeout(resolve, 1500)); text("after");';

  it('speaks each revision as configured', () => {
    expect(mcp.servers().map((server) => [server.name, server.state, server.protocol])).toEqual([
      ['modern', 'ready', 'modern'],
      ['legacy', 'ready', 'legacy'],
    ]);
  });

  it('2026-07-28: a yielding cell runs as a task, followed to its end; its status changes are reported', async () => {
    tasks.length = 0;
    const { success, value } = await run('modern', yieldingScript);
    expect(success).toBe(true);
    expect(value.content.map((block) => block.text?.split('\n')[0])).toEqual(['Script completed', 'before', 'after']);
    expect(tasks.length).toBeGreaterThan(0);
    expect(new Set(tasks.map((event) => event.taskId)).size).toBe(1);
    expect(tasks[0]).toMatchObject({ server: 'modern', tool: 'exec', status: 'working', statusMessage: expect.stringMatching(/^Script running with cell ID /) });
    expect(tasks.at(-1)).toMatchObject({ status: 'completed', statusMessage: 'Script completed' });
  }, 180_000);

  it('2025-11-25: the same exec is a plain call, answered at the yield', async () => {
    tasks.length = 0;
    const { success, value } = await run('legacy', yieldingScript);
    expect(success).toBe(true);
    expect(value.content[0].text).toMatch(/^Script running with cell ID \S+/);
    expect(value.content.slice(1).map((block) => block.text)).toEqual(['before']);
    expect(tasks).toEqual([]);
  }, 180_000);

  it('an approval inside a task cell reaches onElicitation; accepting runs the command, and the call outlives its timeout meanwhile', async () => {
    answer = 'accept';
    asked.length = 0;
    const started = Date.now();
    const script = 'yield_control();\nawait new Promise((resolve) => setTimeout(resolve, 500));\nconst ran = await tools.exec_command({ cmd: "touch approved.txt", sandbox_permissions: "require_escalated", justification: "mark it" });\ntext("exit " + ran.exit_code);';
    const { success, value } = await run('modern', script);
    expect(Date.now() - started).toBeGreaterThan(USER_MS);
    expect(success).toBe(true);
    expect(value.content.map((block) => block.text?.split('\n')[0])).toEqual(['Script completed', 'exit 0']);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ server: 'modern', mode: 'form', message: expect.stringMatching(/^Allow `exec_command` to run `touch approved\.txt` in \S+ outside the sandbox\? Reason: mark it$/) });
    expect(existsSync(join(workspace, 'approved.txt'))).toBe(true);
    expect(tasks.some((event) => event.status === 'input_required')).toBe(true);
  }, 180_000);

  it('declining denies the command: the script sees the refusal and nothing runs', async () => {
    answer = 'decline';
    asked.length = 0;
    const script = 'yield_control();\nawait new Promise((resolve) => setTimeout(resolve, 500));\nawait tools.exec_command({ cmd: "touch declined.txt", sandbox_permissions: "require_escalated", justification: "mark it" });';
    const { success, value } = await run('modern', script);
    expect(success).toBe(false);
    expect(value.content.map((block) => block.text)).toEqual([expect.stringMatching(/^Script failed\n/), 'Script error:\nexec command rejected by user']);
    expect(asked).toHaveLength(1);
    expect(existsSync(join(workspace, 'declined.txt'))).toBe(false);
  }, 180_000);
});
