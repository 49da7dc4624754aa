// mcpTools against a real 2025-11-25 Tasks server (the 1.x SDK's McpServer with its task store,
// test/fixtures/task-server.mjs): a tool whose `execution.taskSupport` is "required" is offered
// and runs as a task, followed to its result, its status changes reported and restarting the
// call's timeout; a plain tool on the same server is called directly.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, executor, functionOutputText } from '../test/helpers';
import { mcpTools, type McpToolsEvent, type McpTools } from './index';

const TASK_SERVER = fileURLToPath(new URL('../test/fixtures/task-server.mjs', import.meta.url));

describe('mcpTools and a 2025-11-25 Tasks server', () => {
  let mcp: McpTools;
  const statuses: Array<Extract<McpToolsEvent, { type: 'task-status' }>> = [];

  beforeAll(async () => {
    mcp = await mcpTools({ servers: { jobs: { command: process.execPath, args: [TASK_SERVER], startupTimeoutMs: 60_000, toolTimeoutMs: 5000 } } });
    mcp.on('task-status', (event) => void statuses.push(event));
  }, 60_000);
  afterAll(() => mcp.close());

  it('offers the tool that requires a task, with no warning', () => {
    expect(mcp.servers()).toMatchObject([{ name: 'jobs', state: 'ready', protocol: 'legacy', toolCount: 2 }]);
    expect(mcp.warnings).toEqual([]);
  });

  it('runs it as a task: the call resolves with the task\'s result, and its status changes are reported', async () => {
    // 6 s of work against a 5 s timeout: the status change at 3 s restarts it.
    const { output, item } = await call(executor(mcp, 'mcp__jobs__report'), { ms: 6000 }, { callId: 'call-report' });
    expect(output.success).toBe(true);
    expect(functionOutputText(item)).toContain('report written in 6000 ms');
    expect(new Set(statuses.map((event) => event.taskId)).size).toBe(1);
    expect(statuses[0]).toMatchObject({ server: 'jobs', tool: 'report', callId: 'call-report', status: 'working' });
    expect(statuses.map((event) => event.statusMessage)).toContain('halfway');
    expect(statuses.at(-1)).toMatchObject({ status: 'completed' });
  }, 60_000);

  it('calls a plain tool of the same server directly (no task)', async () => {
    statuses.length = 0;
    const { output, item } = await call(executor(mcp, 'mcp__jobs__quick'), {});
    expect(output.success).toBe(true);
    expect(functionOutputText(item)).toContain('quick answer');
    expect(statuses).toEqual([]);
  }, 60_000);
});
