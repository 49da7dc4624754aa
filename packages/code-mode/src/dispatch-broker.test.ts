import { describe, expect, it } from 'vitest';
import { toolName, type NestedToolDefinition, type ToolCall, type ToolOutput } from '@switchyard/protocol';
import { JsonToolOutput } from '@switchyard/kit';
import { AbortedToolOutput } from '@switchyard/kit/internal';
import { DispatchBroker, type NestedWorker } from './dispatch-broker';

const noop: NestedToolDefinition = { toolName: toolName('noop'), codeModeName: 'noop', description: 'd', kind: 'function', deferred: false };

/** A worker answering `{ n }` per call, or hanging until the call's signal aborts (then after `teardownMs`). */
function worker(options: { hang?: boolean; teardownMs?: number } = {}) {
  const calls: ToolCall[] = [];
  const handle: NestedWorker['handle'] = (call, { signal }) => {
    calls.push(call);
    if (!options.hang) return Promise.resolve({ output: new JsonToolOutput({ n: calls.length }) as ToolOutput, success: true });
    return new Promise((resolve) => {
      signal?.addEventListener('abort', () => {
        setTimeout(() => resolve({ output: new AbortedToolOutput('aborted by user'), success: undefined }), options.teardownMs ?? 0);
      });
    });
  };
  return { calls, handle };
}

const brokerRequest = (cellId: string, signal: AbortSignal, runtimeToolCallId = 'tool-1') => ({ cellId, runtimeToolCallId, tool: 'noop', input: {}, signal });

/** Creates a cell through the broker the way `exec` does; resolves with the id the broker chose. */
async function openCell(broker: DispatchBroker, execCallId = 'exec-1'): Promise<string> {
  const created = await broker.createCell([noop], execCallId, async (cellId) => ({ cellId }));
  return created.cellId;
}

describe('DispatchBroker', () => {
  it('runs the calls of an open cell on the attached worker, each with its own exec call id', async () => {
    const broker = new DispatchBroker();
    const target = worker();
    broker.attachWorker(target);
    const c1 = await openCell(broker);
    expect(c1).toMatch(/^[0-9a-z]{16}$/);
    const signal = new AbortController().signal;
    expect(await broker.invoke(brokerRequest(c1, signal))).toEqual({ n: 1 });
    expect(await broker.invoke(brokerRequest(c1, signal, 'tool-2'))).toEqual({ n: 2 });
    expect(target.calls.map((call) => call.payload)).toEqual([
      { kind: 'function', arguments: '{}' },
      { kind: 'function', arguments: '{}' },
    ]);
    expect(new Set(target.calls.map((call) => call.callId)).size).toBe(2);
    expect(target.calls.every((call) => /^exec-[0-9a-f-]{36}$/.test(call.callId))).toBe(true);
  });

  it('keeps no results: a call asked again under the same runtimeToolCallId runs again (the runtime session\'s journal is the guard), and a closed cell\'s calls are refused', async () => {
    const broker = new DispatchBroker();
    const target = worker();
    broker.attachWorker(target);
    const cell = await openCell(broker);
    const signal = new AbortController().signal;
    const [first, again] = await Promise.all([broker.invokeJson(brokerRequest(cell, signal)), broker.invokeJson(brokerRequest(cell, signal))]);
    expect([first, again]).toEqual([{ json: '{"n":1}' }, { json: '{"n":2}' }]);
    expect(await broker.invoke(brokerRequest(cell, signal))).toEqual({ n: 3 });
    expect(target.calls).toHaveLength(3);
    broker.closeCell(cell);
    await expect(broker.invoke(brokerRequest(cell, signal))).rejects.toBe(`exec cell ${cell} not found`);
  });

  it('exports its open cells and dispatches a restored cell\'s calls as before (cell-start said again)', async () => {
    const started: string[] = [];
    const broker = new DispatchBroker();
    const cell = await openCell(broker, 'exec-7');
    const exported = broker.exportCells();
    expect(exported).toEqual([{ cellId: cell, execCallId: 'exec-7', tools: [{ codeModeName: 'noop', name: 'noop', kind: 'function' }] }]);
    const restored = new DispatchBroker({ onCellStart: (cellId, start) => void started.push(`${cellId} ${start.execCallId}`) });
    const target = worker();
    restored.attachWorker(target);
    restored.restoreCell(JSON.parse(JSON.stringify(exported[0])));
    expect(started).toEqual([`${cell} exec-7`]);
    expect(restored.execCallId(cell)).toBe('exec-7');
    expect(await restored.invoke(brokerRequest(cell, new AbortController().signal, 'tool-5'))).toEqual({ n: 1 });
    expect(target.calls[0]!.toolName).toEqual(toolName('noop'));
  });

  it('queues calls while no worker is attached and runs them on the next one', async () => {
    const broker = new DispatchBroker();
    const first = worker();
    const detach = broker.attachWorker(first);
    const c1 = await openCell(broker);
    detach();
    const pending = broker.invoke(brokerRequest(c1, new AbortController().signal));
    await new Promise((resolve) => setTimeout(resolve, 10));
    const next = worker();
    broker.attachWorker(next);
    expect(await pending).toEqual({ n: 1 });
    expect([first.calls.length, next.calls.length]).toEqual([0, 1]);
  });

  it('a call made while its cell is being created runs before createCell resolves (no deadlock)', async () => {
    const broker = new DispatchBroker();
    const target = worker();
    broker.attachWorker(target);
    const signal = new AbortController().signal;
    // The runtime's createCell resolves at the first observation, which here awaits the cell's first call.
    const created = await broker.createCell([noop], 'exec-1', async (cellId) => ({ cellId, first: await broker.invoke(brokerRequest(cellId, signal)) }));
    expect(created.first).toEqual({ n: 1 });
    expect(await broker.invoke(brokerRequest(created.cellId, signal, 'tool-2'))).toEqual({ n: 2 });
  });

  it('creations run concurrently: two cells being created at once each get their own calls and notify', async () => {
    const broker = new DispatchBroker();
    const target = worker();
    broker.attachWorker(target);
    const signal = new AbortController().signal;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ids: string[] = [];
    // The first creation waits until the second one has made its call: serialized creations would deadlock here.
    const first = broker.createCell([noop], 'exec-a', async (cellId) => {
      ids.push(cellId);
      await gate;
      broker.notify(cellId, 'from a');
      return { cellId, result: await broker.invoke(brokerRequest(cellId, signal)) };
    });
    const second = broker.createCell([noop], 'exec-b', async (cellId) => {
      ids.push(cellId);
      broker.notify(cellId, 'from b');
      const result = await broker.invoke(brokerRequest(cellId, signal));
      release();
      return { cellId, result };
    });
    const [a, b] = await Promise.all([first, second]);
    expect(new Set(ids).size).toBe(2);
    expect([a.cellId, b.cellId]).toEqual(ids);
    expect([b.result, a.result]).toEqual([{ n: 1 }, { n: 2 }]);
    expect(broker.takeInjected()).toEqual([
      { type: 'custom_tool_call_output', call_id: 'exec-b', name: 'exec', output: 'from b' },
      { type: 'custom_tool_call_output', call_id: 'exec-a', name: 'exec', output: 'from a' },
    ]);
  });

  it('refuses a tool the cell was not given, and a call from a cell it does not know', async () => {
    const broker = new DispatchBroker();
    const target = worker();
    broker.attachWorker(target);
    const c1 = await openCell(broker);
    const signal = new AbortController().signal;
    await expect(broker.invoke({ ...brokerRequest(c1, signal), tool: 'other' })).rejects.toBe('tool `other` is not enabled in exec');
    await expect(broker.invoke(brokerRequest('c2', signal))).rejects.toBe('exec cell c2 not found');
    expect(target.calls).toEqual([]);
  });

  it('forgets a cell whose creation failed, but keeps one whose first observation was cancelled (it still runs)', async () => {
    const broker = new DispatchBroker();
    broker.attachWorker(worker());
    const signal = new AbortController().signal;
    let refused = '';
    await expect(
      broker.createCell([noop], 'exec-1', async (cellId) => {
        refused = cellId;
        throw new Error('exec cell limit reached');
      }),
    ).rejects.toThrow('exec cell limit reached');
    await expect(broker.invoke(brokerRequest(refused, signal))).rejects.toBe(`exec cell ${refused} not found`);
    let cancelled = '';
    await expect(
      broker.createCell([noop], 'exec-2', async (cellId) => {
        cancelled = cellId;
        throw Object.assign(new Error('cancelled'), { cellId });
      }),
    ).rejects.toThrow('cancelled');
    expect(await broker.invoke(brokerRequest(cancelled, signal))).toEqual({ n: 1 });
  });

  it('rejects as soon as the call is cancelled, without waiting for the tool to tear down', async () => {
    const broker = new DispatchBroker();
    broker.attachWorker(worker({ hang: true, teardownMs: 10_000 }));
    const c1 = await openCell(broker);
    const controller = new AbortController();
    const started = Date.now();
    const pending = broker.invoke(brokerRequest(c1, controller.signal));
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    await expect(pending).rejects.toBe('nested tool call cancelled');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses an already-cancelled call before it reaches the worker', async () => {
    const broker = new DispatchBroker();
    const target = worker();
    broker.attachWorker(target);
    const c1 = await openCell(broker);
    await expect(broker.invoke(brokerRequest(c1, AbortSignal.abort('stopped')))).rejects.toBe('stopped');
    expect(target.calls).toEqual([]);
  });

  it('keeps no record of a cell that finished within its first observation, and says cell-start once', async () => {
    const started: string[] = [];
    const broker = new DispatchBroker({ onCellStart: (cellId) => started.push(cellId) });
    broker.attachWorker(worker());
    const signal = new AbortController().signal;
    // a cell that makes a nested call, then completes; the runtime closes it before createCell returns
    const c1 = await broker.createCell([noop], 'exec-1', async (cellId) => {
      await broker.invoke(brokerRequest(cellId, signal));
      broker.closeCell(cellId);
      return { cellId, observation: { kind: 'completed' } };
    });
    const c2 = await broker.createCell([noop], 'exec-2', async (cellId) => ({ cellId, observation: { kind: 'yielded' } }));
    expect(started).toEqual([c1.cellId, c2.cellId]);
    await expect(broker.invoke(brokerRequest(c1.cellId, signal))).rejects.toBe(`exec cell ${c1.cellId} not found`);
    expect(await broker.invoke(brokerRequest(c2.cellId, signal))).toEqual({ n: 2 });
  });
});
