import { createCodeModeRuntime } from '@switchyard/code-mode-runtime';
import { JsonToolOutput } from '@switchyard/kit';
import { toolName, type BackgroundCompletion, type CellJournalUpdate, type NestedToolDefinition, type ToolOutput } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { createCodeMode } from './index';
import type { NestedWorker } from './dispatch-broker';

const step: NestedToolDefinition = { toolName: toolName('step'), codeModeName: 'step', description: 'steps', kind: 'function', deferred: false };

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const done of cleanup.reverse()) await done();
  cleanup = [];
});

/** A Code Mode over an in-process runtime, with a worker answering `step` calls (`hang` parks the second). */
function codeMode(updates: CellJournalUpdate[] = [], hang = false) {
  const runtime = createCodeModeRuntime({ isolation: 'in-process', nodeSnapshotCheck: 'ignore' });
  const mode = createCodeMode({ runtime, journal: (_sessionId, update) => void updates.push(update) });
  cleanup.push(async () => {
    await mode.shutdown();
    await runtime.shutdown();
  });
  let calls = 0;
  const worker: NestedWorker = {
    handle: () => (++calls === 2 && hang ? new Promise(() => {}) : Promise.resolve({ output: new JsonToolOutput({ n: calls }) as ToolOutput, success: true })),
  };
  mode.attachWorker('s1', worker);
  return { mode, calls: () => calls };
}

describe('Code Mode sessions that outlive their process', () => {
  it('exports a session (its runtime journals and its cells) and restores it elsewhere; the cell ends in the background as its exec', async () => {
    const updates: CellJournalUpdate[] = [];
    const first = codeMode(updates, true);
    const session = first.mode.service.session('s1');
    const source = `const a = await tools.step({}); text('a=' + a.n); yield_control(); const b = await tools.step({}).catch((e) => e.message); text('b=' + b);`;
    const created = await session.broker.createCell([step], 'exec-1', (cellId) =>
      session.runtime.createCell({ cellId, source, tools: [{ name: 'step', description: 'steps', kind: 'function' }], yieldTimeMs: 10_000 }),
    );
    expect(created.observation).toMatchObject({ kind: 'yielded', items: [{ text: 'a=1' }] });
    while (first.calls() < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    // what a store saw: the cell opened, its calls issued before they ran, the first result, the output handed out
    expect(updates.map((update) => update.type)).toEqual(expect.arrayContaining(['cell-opened', 'call-issued', 'call-settled', 'output-observed']));
    expect(updates.findIndex((update) => update.type === 'call-issued')).toBeLessThan(updates.findIndex((update) => update.type === 'call-settled'));
    const state = JSON.parse(JSON.stringify(first.mode.exportState('s1')));
    expect(state).toMatchObject({ format: 'switchyard.code-mode', version: 1, cells: [{ cellId: created.cellId, execCallId: 'exec-1' }] });

    const second = codeMode();
    const delivered: BackgroundCompletion[] = [];
    const background = { complete: (completion: BackgroundCompletion) => void delivered.push(completion), signal: new AbortController().signal };
    expect(await second.mode.restoreSession('s1', state, { background })).toEqual({ cells: [{ cellId: created.cellId, resumed: true }] });
    while (delivered.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(delivered[0]).toMatchObject({ callId: 'exec-1', cellId: created.cellId, status: 'completed' });
    const output = JSON.stringify(delivered[0]!.item);
    expect(output).toContain('b=tool `step` was interrupted by a restart of its host');
    expect(output).not.toContain('a=1');
    expect(second.calls()).toBe(0);
  });

  it('restored with hostRestarted: false, the call in flight is asked again under its id and runs once in the new host', async () => {
    const first = codeMode([], true);
    const session = first.mode.service.session('s1');
    const source = `const a = await tools.step({}); text('a=' + a.n); yield_control(); const b = await tools.step({}); text('b=' + b.n);`;
    const created = await session.broker.createCell([step], 'exec-1', (cellId) =>
      session.runtime.createCell({ cellId, source, tools: [{ name: 'step', description: 'steps', kind: 'function' }], yieldTimeMs: 10_000 }),
    );
    while (first.calls() < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const state = JSON.parse(JSON.stringify(first.mode.exportState('s1')));

    const second = codeMode();
    expect(await second.mode.restoreSession('s1', state, { hostRestarted: false })).toEqual({ cells: [{ cellId: created.cellId, resumed: true }] });
    const end = await second.mode.service.session('s1').runtime.observe(created.cellId, { yieldTimeMs: 10_000 });
    expect(end).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'b=1' }] });
    expect(second.calls()).toBe(1);
  });

  it('a restore onto a session that already created a cell is refused (INVALID_INPUT) and leaves its cells as they were', async () => {
    const { mode } = codeMode();
    const session = mode.service.session('s1');
    const source = `const a = await tools.step({}); text('a=' + a.n); yield_control(); const b = await tools.step({}); text('b=' + b.n);`;
    const created = await session.broker.createCell([step], 'exec-1', (cellId) =>
      session.runtime.createCell({ cellId, source, tools: [{ name: 'step', description: 'steps', kind: 'function' }], yieldTimeMs: 10_000 }),
    );
    const state = JSON.parse(JSON.stringify(mode.exportState('s1')));
    state.cells[0].execCallId = 'exec-9';
    await expect(mode.restoreSession('s1', state)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: 'restore must come before the session creates its first cell' });
    expect(mode.exportState('s1')).toMatchObject({ cells: [{ cellId: created.cellId, execCallId: 'exec-1' }] });
    const end = await session.runtime.observe(created.cellId, { yieldTimeMs: 10_000 });
    expect(end).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'b=2' }] });
  });

  it('a restore onto a session whose cells have all ended is taken: the restored cell resumes there, and the stored values are the state\'s', async () => {
    const first = codeMode([], true);
    const elsewhere = first.mode.service.session('s1');
    const source = `store('k', 'restored'); const a = await tools.step({}); text('a=' + a.n); yield_control(); const b = await tools.step({}); text('b=' + b.n);`;
    const parked = await elsewhere.broker.createCell([step], 'exec-1', (cellId) =>
      elsewhere.runtime.createCell({ cellId, source, tools: [{ name: 'step', description: 'steps', kind: 'function' }], yieldTimeMs: 10_000 }),
    );
    while (first.calls() < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const state = JSON.parse(JSON.stringify(first.mode.exportState('s1')));

    const second = codeMode();
    const session = second.mode.service.session('s1');
    const ended = await session.broker.createCell([], 'exec-0', (cellId) => session.runtime.createCell({ cellId, source: `store('k', 'ended'); text('done')`, tools: [], yieldTimeMs: 10_000 }));
    expect(ended.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'done' }] });
    expect(await second.mode.restoreSession('s1', state, { hostRestarted: false })).toEqual({ cells: [{ cellId: parked.cellId, resumed: true }] });
    expect(second.mode.exportState('s1')).toMatchObject({ cells: [{ cellId: parked.cellId, execCallId: 'exec-1' }] });
    const end = await session.runtime.observe(parked.cellId, { yieldTimeMs: 10_000 });
    expect(end).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'b=1' }] });
    const loaded = await session.broker.createCell([], 'exec-2', (cellId) => session.runtime.createCell({ cellId, source: `text(load('k'))`, tools: [], yieldTimeMs: 10_000 }));
    expect(loaded.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'restored' }] });
  });

  it('a state that is not a Code Mode state is refused (INVALID_JOURNAL); nothing is opened', async () => {
    const { mode } = codeMode();
    await expect(mode.restoreSession('s2', { format: 'switchyard.code-mode', version: 2 } as never)).rejects.toMatchObject({ code: 'INVALID_JOURNAL' });
    await expect(mode.restoreSession('s2', null as never)).rejects.toMatchObject({ code: 'INVALID_JOURNAL' });
    expect(mode.exportState('s2')).toBeUndefined();
  });
});
