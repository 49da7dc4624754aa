import { InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { cellHost, header } from '../test/cell-host';
import { serveCodeModeOverMcp, type CodeModeMcpServer } from './serve';

// The 2026-07-28 face of serve (stateless requests with the per-request `_meta` envelope, the
// Tasks extension `io.modelcontextprotocol/tasks`), driven over the wire by a raw JSON-RPC client
// so every assertion is about the messages themselves.

const TASKS = 'io.modelcontextprotocol/tasks';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

interface Capabilities {
  tasks?: boolean;
  elicitation?: boolean;
}

/** A raw 2026-07-28 client: each request carries the envelope with the capabilities asked for. */
async function rawClient(transport: InMemoryTransport) {
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  transport.onmessage = (message: JSONRPCMessage) => {
    const id = (message as { id?: number }).id;
    if (id !== undefined) waiting.get(id)?.(message as Record<string, unknown>);
  };
  await transport.start();
  let sequence = 0;
  return (method: string, params: Record<string, unknown> = {}, capabilities: Capabilities = { tasks: true, elicitation: true }, version = '2026-07-28') => {
    const id = ++sequence;
    const clientCapabilities = { ...(capabilities.elicitation ? { elicitation: {} } : {}), ...(capabilities.tasks ? { extensions: { [TASKS]: {} } } : {}) };
    const _meta = { 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': clientCapabilities };
    return new Promise<Record<string, any>>((resolve) => {
      waiting.set(id, resolve);
      void transport.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta } } as JSONRPCMessage);
    });
  };
}

const open: CodeModeMcpServer[] = [];
afterEach(async () => {
  for (const served of open.splice(0)) await served.close();
});

async function connectRaw(cell: ReturnType<typeof cellHost>) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const served = await serveCodeModeOverMcp({ host: cell.host, transport: serverSide });
  cell.attach(served);
  open.push(served);
  return { request: await rawClient(clientSide), served };
}

async function pollStatus(request: Awaited<ReturnType<typeof rawClient>>, taskId: string, status: string) {
  let task: Record<string, any> = {};
  await expect.poll(async () => (task = (await request('tasks/get', { taskId })).result).status).toBe(status);
  return task;
}

describe('serveCodeModeOverMcp, 2026-07-28 with the Tasks extension', () => {
  it('declares the extension in server/discover; a cell that ends within the call is a plain result', async () => {
    const cell = cellHost();
    const { request, served } = await connectRaw(cell);
    const discover = await request('server/discover');
    expect(discover.result).toMatchObject({ supportedVersions: ['2026-07-28'], capabilities: { tools: { listChanged: true }, extensions: { [TASKS]: {} } } });
    expect(discover.result.capabilities.tasks).toBeUndefined();
    expect(served.protocol()).toBe('modern');
    const greet = await request('tools/call', { name: 'exec', arguments: { code: 'quick' } });
    expect(greet.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: header('Script completed').text }, { type: 'text', text: 'Hello, World!' }] });
    expect(greet.result.taskId).toBeUndefined();
  });

  it('answers a later request claiming another revision with UnsupportedProtocolVersionError (-32022)', async () => {
    const { request } = await connectRaw(cellHost());
    await request('server/discover');
    for (const version of ['2099-01-01', '2025-11-25']) {
      const refused = await request('server/discover', {}, { tasks: true }, version);
      expect(refused.error).toEqual({ code: -32022, message: `Unsupported protocol version: ${version}`, data: { supported: ['2026-07-28'], requested: version } });
    }
    expect((await request('tools/list')).result.tools.map((tool: { name: string }) => tool.name)).toEqual(['exec', 'wait']);
  });

  it('serves a yielding cell as a task: a flat CreateTaskResult, working with the cell in tasks/get, then completed with the whole output inlined', async () => {
    const cell = cellHost();
    const { request } = await connectRaw(cell);
    const created = (await request('tools/call', { name: 'exec', arguments: { code: 'slow' } })).result;
    expect(created).toMatchObject({ resultType: 'task', taskId: expect.any(String), status: 'working', ttlMs: 3_600_000, pollIntervalMs: 500 });
    expect(created.createdAt).toMatch(ISO);
    expect(created.lastUpdatedAt).toMatch(ISO);
    for (const absent of ['task', 'result', 'error', 'inputRequests', 'content']) expect(created).not.toHaveProperty(absent);
    const working = await pollStatus(request, created.taskId, 'working');
    expect(working).toMatchObject({ resultType: 'complete', statusMessage: 'Script running with cell ID 7' });
    expect(working).not.toHaveProperty('result');
    await expect.poll(() => cell.received.length).toBe(2); // exec, then the server's own wait on cell 7
    cell.finish('completed');
    const done = await pollStatus(request, created.taskId, 'completed');
    expect(done.statusMessage).toBe('Script completed');
    expect(done.result.content.map((block: { text: string }) => block.text)).toEqual([header('Script completed').text, 'before', 'after']);
    expect(done.result.isError).toBeUndefined();
    expect(done.result.resultType).toBe('complete');
    expect(done).not.toHaveProperty('error');
  });

  it('a failed script completes the task with an isError result; a failing host fails it with a JSON-RPC error', async () => {
    const scripted = cellHost();
    const first = await connectRaw(scripted);
    const script = (await first.request('tools/call', { name: 'exec', arguments: { code: 'slow' } })).result;
    scripted.finish('failed');
    const completed = await pollStatus(first.request, script.taskId, 'completed');
    expect(completed.result).toMatchObject({ isError: true, content: [{ text: header('Script failed').text }, { text: 'before' }, { text: 'Script error:\nboom' }] });

    const broken = cellHost();
    const second = await connectRaw(broken);
    const hostTask = (await second.request('tools/call', { name: 'exec', arguments: { code: 'slow' } })).result;
    broken.finish('host-error');
    const failed = await pollStatus(second.request, hostTask.taskId, 'failed');
    expect(failed.error).toEqual({ code: -32603, message: 'exec failed: the runtime went away' });
    expect(failed).not.toHaveProperty('result');
  });

  it('an approval inside a task cell is input_required with an elicitation input request; tasks/update answers it', async () => {
    const cell = cellHost({ ask: true });
    const { request } = await connectRaw(cell);
    // The approval arrives before the exec answers: the call gets input_required first (MRTR)...
    const first = (await request('tools/call', { name: 'exec', arguments: { code: 'ask' } })).result;
    expect(first).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
    const [key] = Object.keys(first.inputRequests);
    expect(first.inputRequests[key]).toEqual({
      method: 'elicitation/create',
      params: { mode: 'form', message: 'Allow `exec_command` to run `rm notes.txt`?', requestedSchema: { type: 'object', properties: {} } },
    });
    // ...the retry answers it; the cell then yields and the retry's answer is the task.
    const created = (await request('tools/call', { name: 'exec', arguments: { code: 'ask' }, inputResponses: { [key]: { action: 'accept', content: {} } }, requestState: first.requestState })).result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(created).not.toHaveProperty('requestState');
    expect(cell.decisions).toEqual(['approved']);
  });

  it('an approval raised while a task follows the cell moves it to input_required; tasks/update resolves it and ignores unknown keys', async () => {
    const cell = cellHost();
    const { request, served } = await connectRaw(cell);
    const created = (await request('tools/call', { name: 'exec', arguments: { code: 'slow' } })).result;
    await pollStatus(request, created.taskId, 'working');
    const controller = new AbortController();
    const decision = served.requestApproval({ kind: 'tool', toolName: 'shop__buy', callId: 'nested-2', input: { item: 'lamp' }, signal: controller.signal }, { cellId: '7' });
    const asking = await pollStatus(request, created.taskId, 'input_required');
    const [key] = Object.keys(asking.inputRequests);
    expect(asking.inputRequests[key].params.message).toBe('Allow the call of `shop__buy` with {"item":"lamp"}?');
    expect(asking.statusMessage).toBe('Waiting for approval: Allow the call of `shop__buy` with {"item":"lamp"}?');
    expect((await request('tasks/update', { taskId: created.taskId, inputResponses: { 'approval-999': { action: 'accept' } } })).result).toMatchObject({ resultType: 'complete' });
    expect((await request('tasks/get', { taskId: created.taskId })).result.status).toBe('input_required');
    await request('tasks/update', { taskId: created.taskId, inputResponses: { [key]: { action: 'decline' } } });
    await expect(decision).resolves.toBe('denied');
    await pollStatus(request, created.taskId, 'working');
  });

  it('tasks/cancel acknowledges, cancels the task and terminates its cell; a finished task stays as it was', async () => {
    const cell = cellHost();
    const { request } = await connectRaw(cell);
    const created = (await request('tools/call', { name: 'exec', arguments: { code: 'slow' } })).result;
    await expect.poll(() => cell.received.length).toBe(2);
    const ack = (await request('tasks/cancel', { taskId: created.taskId })).result;
    expect(ack).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
    await pollStatus(request, created.taskId, 'cancelled');
    await expect.poll(() => cell.received.length).toBe(3);
    expect(cell.received[2]).toMatchObject({ type: 'function_call', name: 'wait', arguments: '{"cell_id":"7","terminate":true}' });
    expect((await request('tasks/cancel', { taskId: created.taskId })).result).toMatchObject({ resultType: 'complete' });
    expect((await request('tasks/get', { taskId: created.taskId })).result.status).toBe('cancelled');
  });

  it('refuses tasks/* from a client that did not declare the extension (-32021) and unknown task ids (-32602)', async () => {
    const cell = cellHost();
    const { request } = await connectRaw(cell);
    const created = (await request('tools/call', { name: 'exec', arguments: { code: 'slow' } })).result;
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const refused = await request(method, { taskId: created.taskId, inputResponses: {} }, { elicitation: true });
      expect(refused.error).toEqual({ code: -32021, message: 'Missing required client capability', data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
    }
    expect((await request('tasks/get', { taskId: 'nope' })).error).toMatchObject({ code: -32602, message: 'Failed to retrieve task: Task not found (nope)' });
    expect((await request('tasks/result', { taskId: created.taskId })).error).toMatchObject({ code: -32601 });
  });

  it('a client without the extension gets the yielded answer; a pending approval is asked on its next call to the cell', async () => {
    const cell = cellHost();
    const { request, served } = await connectRaw(cell);
    const noTasks = { elicitation: true };
    const yielded = (await request('tools/call', { name: 'exec', arguments: { code: 'slow' } }, noTasks)).result;
    expect(yielded).toMatchObject({ resultType: 'complete', content: [{ text: header('Script running with cell ID 7').text }, { text: 'before' }] });
    const decision = served.requestApproval({ kind: 'exec', toolName: 'exec_command', callId: 'nested-3', command: 'ls', signal: new AbortController().signal }, { cellId: '7' });
    const asked = (await request('tools/call', { name: 'wait', arguments: { cell_id: '7' } }, noTasks)).result;
    expect(asked.resultType).toBe('input_required');
    const [key] = Object.keys(asked.inputRequests);
    cell.finish('completed');
    const done = (await request('tools/call', { name: 'wait', arguments: { cell_id: '7' }, inputResponses: { [key]: { action: 'accept' } }, requestState: asked.requestState }, noTasks)).result;
    await expect(decision).resolves.toBe('approved');
    expect(done.content.map((block: { text: string }) => block.text)).toEqual([header('Script completed').text, 'after']);
    expect((await request('tools/call', { name: 'wait', arguments: { cell_id: '7' }, inputResponses: {}, requestState: asked.requestState }, noTasks)).error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
  });

  it('denies an approval at once when the call or task that would carry it comes from a client without elicitation', async () => {
    const cell = cellHost({ ask: true });
    const { request } = await connectRaw(cell);
    const answer = (await request('tools/call', { name: 'exec', arguments: { code: 'ask-then-finish' } }, { tasks: true })).result;
    expect(answer.content.map((block: { text: string }) => block.text)).toEqual([header('Script completed').text, 'denied']);
    expect(cell.decisions).toEqual(['denied']);
  });
});
