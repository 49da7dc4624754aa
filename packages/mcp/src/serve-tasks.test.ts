import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema, TaskStatusNotificationSchema, type Task } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { cellHost as gatedCellHost, header } from '../test/cell-host';
import { serveCodeModeOverMcp, type CodeModeMcpHost, type CodeModeMcpServer } from './serve';
import { contentTexts } from '@switchyard/test-helpers';

const open: Array<{ client: Client; served: CodeModeMcpServer }> = [];
afterEach(async () => {
  for (const { client, served } of open.splice(0)) {
    await client.close();
    await served.close();
  }
});

async function connectTaskClient(host: CodeModeMcpHost, capabilities: Record<string, object> = {}) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const served = await serveCodeModeOverMcp({ host, transport: serverSide });
  const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities });
  const statuses: Task[] = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => void statuses.push(notification.params as Task));
  await client.connect(clientSide);
  open.push({ client, served });
  return { client, served, statuses };
}

const startTask = (client: Client, code: string) =>
  client.request({ method: 'tools/call', params: { name: 'exec', arguments: { code } } }, CreateTaskResultSchema, { task: { ttl: 60_000 } });

describe('serveCodeModeOverMcp with MCP Tasks (2025-11-25, the SDK client\'s experimental tasks API)', () => {
  it('declares task support for tools/call and marks exec optional', async () => {
    const { client } = await connectTaskClient(gatedCellHost().host);
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    expect(tools[0]).toMatchObject({ name: 'exec', execution: { taskSupport: 'optional' } });
    expect(tools[1].execution).toBeUndefined();
    await expect(client.request({ method: 'tools/call', params: { name: 'wait', arguments: { cell_id: '7' } } }, CreateTaskResultSchema, { task: {} })).rejects.toThrow(
      'MCP error -32601: wait cannot run as a task: only exec supports MCP Tasks',
    );
  });

  it('runs a yielding cell as a task: working while it runs, completed with the whole output, with status notifications', async () => {
    const cell = gatedCellHost();
    const { client, statuses } = await connectTaskClient(cell.host);
    const { task } = await startTask(client, 'text("before"); yield_control(); text("after")');
    expect(task).toMatchObject({ taskId: expect.any(String), status: 'working', ttl: 60_000, pollInterval: 500 });
    await expect.poll(() => cell.received.length).toBe(2); // exec, then the server's own wait on cell 7
    expect(cell.received[1]).toMatchObject({ type: 'function_call', name: 'wait', arguments: '{"cell_id":"7","yield_time_ms":1000}' });
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'working', statusMessage: 'Script running with cell ID 7' });
    expect((await client.experimental.tasks.listTasks()).tasks.map((listed) => listed.taskId)).toEqual([task.taskId]);

    cell.finish('completed');
    await expect.poll(async () => (await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(contentTexts(result)).toEqual([header('Script completed').text, 'before', 'after']);
    expect(result.isError).toBeUndefined();
    expect(result._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId: task.taskId } });
    await expect.poll(() => statuses.map((status) => status.status)).toEqual(['working', 'completed']);
    expect(statuses.map((status) => status.statusMessage)).toEqual(['Script running with cell ID 7', 'Script completed']);
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'completed', statusMessage: 'Script completed' });
    expect(cell.received).toHaveLength(2);
  });

  it('tasks/result blocks until the cell ends; a failed script ends the task failed with an error result', async () => {
    const cell = gatedCellHost();
    const { client } = await connectTaskClient(cell.host);
    const { task } = await startTask(client, 'yield_control(); throw new Error("boom")');
    const pending = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    await expect.poll(() => cell.received.length).toBe(2);
    cell.finish('failed');
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(contentTexts(result)).toEqual([header('Script failed').text, 'before', 'Script error:\nboom']);
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'failed', statusMessage: 'Script failed' });
  });

  it('a task-augmented exec without a code argument is a failed task with the usual error result', async () => {
    const cell = gatedCellHost();
    const { client } = await connectTaskClient(cell.host);
    const { task } = await client.request({ method: 'tools/call', params: { name: 'exec', arguments: { source: '1' } } }, CreateTaskResultSchema, { task: {} });
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'exec expects a `code` argument holding the JavaScript source as a string' }] });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('failed');
    expect(cell.received).toEqual([]);
  });

  it('callToolStream (the SDK client\'s task flow for a tool marked optional) ends with the result', async () => {
    const cell = gatedCellHost();
    const { client } = await connectTaskClient(cell.host);
    await client.listTools(); // the client learns exec's taskSupport here
    const seen: string[] = [];
    const stream = client.experimental.tasks.callToolStream({ name: 'exec', arguments: { code: 'yield_control()' } });
    setTimeout(() => cell.finish('completed'), 50);
    let last: unknown;
    for await (const message of stream) {
      seen.push(message.type === 'taskStatus' ? `taskStatus:${message.task.status}` : message.type);
      last = message;
    }
    expect(seen[0]).toBe('taskCreated');
    expect(seen.at(-1)).toBe('result');
    expect(seen).not.toContain('error');
    expect(contentTexts((last as { result: { content: Array<{ type: string; text?: string }> } }).result)).toEqual([header('Script completed').text, 'before', 'after']);
  });

  it('tasks/cancel cancels the task and terminates its cell', async () => {
    const cell = gatedCellHost();
    const { client } = await connectTaskClient(cell.host);
    const { task } = await startTask(client, 'yield_control(); await new Promise(() => {})');
    await expect.poll(() => cell.received.length).toBe(2);
    expect(await client.experimental.tasks.cancelTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    await expect.poll(() => cell.received.length).toBe(3);
    expect(cell.received[2]).toMatchObject({ type: 'function_call', name: 'wait', arguments: '{"cell_id":"7","terminate":true}' });
    cell.finish('completed'); // too late: a cancelled task keeps its status
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('cancelled');
  });

  it('a call without `task` gets today\'s exec/wait behaviour: the yielded answer, and the server waits on nothing', async () => {
    const cell = gatedCellHost();
    const { client, statuses } = await connectTaskClient(cell.host);
    const first = await client.callTool({ name: 'exec', arguments: { code: 'text("before"); yield_control()' } });
    expect(contentTexts(first as never)).toEqual([header('Script running with cell ID 7').text, 'before']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(cell.received).toHaveLength(1);
    cell.finish('completed');
    const done = await client.callTool({ name: 'wait', arguments: { cell_id: '7' } });
    expect(contentTexts(done as never)).toEqual([header('Script completed').text, 'after']);
    expect((await client.experimental.tasks.listTasks()).tasks).toEqual([]);
    expect(statuses).toEqual([]);
  });

  it('asks an approval of a task cell with elicitation/create; the task is input_required until the answer', async () => {
    const cell = gatedCellHost();
    const { client, served } = await connectTaskClient(cell.host, { elicitation: {} });
    const asked: Array<{ message: string }> = [];
    let answer!: (action: 'accept' | 'decline') => void;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as { message: string });
      return { action: await new Promise<'accept' | 'decline'>((resolve) => (answer = resolve)) };
    });
    const { task } = await startTask(client, 'yield_control(); await tools.exec_command({ cmd: "rm notes.txt" })');
    await expect.poll(() => cell.received.length).toBe(2);
    const decision = served.requestApproval({ kind: 'exec', toolName: 'exec_command', callId: 'nested-1', command: 'rm notes.txt', reason: 'tidy up', signal: new AbortController().signal }, { cellId: '7' });
    await expect.poll(() => asked.length).toBe(1);
    expect(asked[0]).toMatchObject({ mode: 'form', message: 'Allow `exec_command` to run `rm notes.txt`? Reason: tidy up', requestedSchema: { type: 'object', properties: {} } });
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'input_required' });
    answer('accept');
    await expect(decision).resolves.toBe('approved');
    await expect.poll(async () => (await client.experimental.tasks.getTask(task.taskId)).status).toBe('working');
  });

  it('denies approvals when the client did not declare elicitation', async () => {
    const cell = gatedCellHost();
    const { served } = await connectTaskClient(cell.host);
    await expect(served.requestApproval({ kind: 'tool', toolName: 'shop__buy', callId: 'nested-1', signal: new AbortController().signal }, { cellId: '7' })).resolves.toBe('denied');
  });
});
