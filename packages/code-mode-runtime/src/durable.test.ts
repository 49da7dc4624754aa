import { afterEach, describe, expect, it } from 'vitest';
import type { CellJournalRecord, CellJournalUpdate, CellToolDescriptor, CodeModeSession, CodeModeSessionState } from '@switchyard/protocol';
import { createCodeModeRuntime, type CodeModeRuntimeOptions } from './code-mode-runtime';
import { sealCellJournal } from './replay-cells';
import { createTestHost, fnDescriptor, isolation, until, type TestTool } from '../test/helpers';
import { cellTexts } from '@switchyard/test-helpers';

// Durable cells through the public contract, in the project's isolation: a session's state
// exported (`exportState`) and restored into a session of another runtime (`restore`), as a
// store does after its agent host restarted.

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

function openDurable(tools: Record<string, TestTool>, options: CodeModeRuntimeOptions = {}, journal?: (update: CellJournalUpdate) => void) {
  const runtime = createCodeModeRuntime({ isolation, ...options, ...(isolation === 'process' ? { workers: { shared: false, prewarm: false } } : {}) });
  cleanup.push(() => runtime.shutdown());
  const recorder = createTestHost(tools);
  const host = journal ? { ...recorder.host, journal } : recorder.host;
  const session: CodeModeSession & Required<Pick<CodeModeSession, 'exportState' | 'restore'>> = runtime.openSession(host) as never;
  return { runtime, session, ...recorder };
}

const SOURCE = `text('r=' + Math.random() + ' t=' + Date.now()); const a = await tools.count({ n: 1 }); text('a=' + a); yield_control();
  const b = await tools.count({ n: 2 }); const c = await tools.slow({}).catch((e) => 'failed: ' + e.message); text('b=' + b + ' c=' + c + ' r=' + Math.random());`;

/** A session whose cell is waiting on `slow` (in flight), with its state exported. */
async function exported(tools: CellToolDescriptor[] = [fnDescriptor('count'), fnDescriptor('slow')]) {
  let runs = 0;
  const parked: Array<() => void> = [];
  const first = openDurable({ count: () => ++runs, slow: () => new Promise((resolve) => parked.push(() => resolve('late'))) });
  const created = await first.session.createCell({ source: SOURCE, tools, yieldTimeMs: 30_000 });
  expect(created.observation.kind).toBe('yielded');
  await until(() => parked.length === 1, 'the parked call', 30_000);
  const state = JSON.parse(JSON.stringify(first.session.exportState())) as CodeModeSessionState;
  return { state, cellId: created.cellId, first: created.observation, runs: () => runs };
}

// Each test starts worker processes (several, on a loaded machine): a generous bound.
describe('durable cells: exportState / restore', { timeout: 120_000 }, () => {
  it('a restored cell goes on where it was: journaled calls are answered from the journal, the clock and randomness as before, nothing emitted twice', async () => {
    const { state, cellId, first, runs } = await exported();
    expect(state).toMatchObject({ format: 'switchyard.code-mode-session', version: 1, cells: [{ cellId, committed: false }] });
    expect(state.cells[0]!.calls.map((call) => [call.id, call.tool, call.result])).toEqual([
      ['tool-1', 'count', { ok: true, json: '1' }],
      ['tool-2', 'count', { ok: true, json: '2' }],
      ['tool-3', 'slow', undefined],
    ]);
    expect(state.cells[0]!.observed.items).toBe(2);
    const second = openDurable({ count: () => 100, slow: () => 'ran again' });
    expect(await second.session.restore(state)).toEqual({ cells: [{ cellId, resumed: true }] });
    const end = await second.session.observe(cellId, { yieldTimeMs: 30_000 });
    // the call in flight when the host "restarted" fails as interrupted; the others came from the journal
    expect(end.kind).toBe('completed');
    expect(cellTexts(end)).toHaveLength(1);
    expect(cellTexts(end)[0]).toMatch(/^b=2 c=failed: tool `slow` was interrupted by a restart of its host: it may or may not have taken effect, and it was not run again r=0\.\d+$/);
    expect(second.calls).toEqual([]);
    expect(runs()).toBe(2);
    expect(cellTexts(first)[0]).toMatch(/^r=0\.\d+ t=\d+$/);
  });

  it('a call in flight of an idempotent tool runs again after a restart; without a restart (hostRestarted: false) the host is asked again under the same id', async () => {
    const idempotent = await exported([fnDescriptor('count'), { ...fnDescriptor('slow'), idempotent: true }]);
    const again = openDurable({ count: () => 100, slow: () => 'ran again' });
    await again.session.restore(idempotent.state);
    const end = await again.session.observe(idempotent.cellId, { yieldTimeMs: 30_000 });
    expect(cellTexts(end)[0]).toMatch(/^b=2 c=ran again r=/);
    expect(again.calls.map((call) => [call.runtimeToolCallId, call.tool])).toEqual([['tool-3', 'slow']]);

    const live = await exported();
    const joined = openDurable({ count: () => 100, slow: () => 'joined' });
    await joined.session.restore(live.state, { hostRestarted: false });
    const joinedEnd = await joined.session.observe(live.cellId, { yieldTimeMs: 30_000 });
    expect(cellTexts(joinedEnd)[0]).toMatch(/^b=2 c=joined r=/);
    expect(joined.calls.map((call) => [call.cellId, call.runtimeToolCallId])).toEqual([[live.cellId, 'tool-3']]);
  });

  it('bad journals fail their cell only (INVALID_JOURNAL): corrupted, of another session, of a newer version; the good cell resumes', async () => {
    const { state, cellId } = await exported();
    const good = state.cells[0]!;
    const bad = (cellIdOf: string, change: Partial<CellJournalRecord>): CellJournalRecord => ({ ...good, cellId: cellIdOf, ...change });
    const cells: CellJournalRecord[] = [
      good,
      // corrupted: the source changed, the seal not
      bad('corrupted', { check: sealCellJournal({ ...good, cellId: 'corrupted' }).check, source: 'text("evil")' }),
      // another session's journal, sealed for that session
      sealCellJournal({ ...good, cellId: 'foreign', session: 'another-session' }),
      sealCellJournal({ ...good, cellId: 'future', version: 2 }),
      { nonsense: true } as never,
    ];
    const restored = openDurable({ count: () => 100, slow: () => 'x' });
    const result = await restored.session.restore({ ...state, cells });
    expect(result.cells).toEqual([
      { cellId, resumed: true },
      { cellId: 'corrupted', resumed: false, code: 'INVALID_JOURNAL', error: 'cannot resume cell corrupted: its journal is corrupted (its fields do not match its check)' },
      { cellId: 'foreign', resumed: false, code: 'INVALID_JOURNAL', error: `cannot resume cell foreign: its journal belongs to another session ("another-session", not ${state.id})` },
      { cellId: 'future', resumed: false, code: 'INVALID_JOURNAL', error: 'cannot resume cell future: its journal is of version 2, newer than this runtime reads (1)' },
      { cellId: '#5', resumed: false, code: 'INVALID_JOURNAL', error: 'cannot resume cell #5 of the state: its journal names no valid cell id' },
    ]);
    // each failed cell ends once with its failure (a wait gets it); nothing of it ran
    expect(await restored.session.observe('corrupted', { yieldTimeMs: 0 })).toMatchObject({ kind: 'completed', error: (result.cells[1] as { error: string }).error });
    await expect(restored.session.observe('corrupted', { yieldTimeMs: 0 })).rejects.toMatchObject({ code: 'CELL_NOT_FOUND' });
    expect((await restored.session.observe(cellId, { yieldTimeMs: 30_000 })).kind).toBe('completed');
    expect(restored.calls).toEqual([]);
    // a whole state of another format or a newer version is refused
    await expect(openDurable({}).session.restore({ ...state, version: 3 })).rejects.toMatchObject({ code: 'INVALID_JOURNAL', message: 'cannot restore the session: its state is of version 3, newer than this runtime reads (1)' });
    await expect(openDurable({}).session.restore({ ...state, format: 'other' as never })).rejects.toMatchObject({ code: 'INVALID_JOURNAL' });
  });

  it('a state that holds a cell id twice fails the second journal only: the first cell keeps its journal, its open call is asked once', async () => {
    const { state, cellId } = await exported();
    const updates: CellJournalUpdate[] = [];
    const restored = openDurable({ count: () => 100, slow: () => 'joined' }, {}, (update) => void updates.push(update));
    const result = await restored.session.restore({ ...state, cells: [state.cells[0]!, state.cells[0]!] }, { hostRestarted: false });
    expect(result.cells).toEqual([
      { cellId, resumed: true },
      { cellId, resumed: false, code: 'INVALID_JOURNAL', error: `cannot resume cell ${cellId}: the state holds its journal twice` },
    ]);
    // the running cell's journal is still the session's (the duplicate closed nothing)
    expect(restored.session.exportState().cells.map((cell) => cell.cellId)).toEqual([cellId]);
    expect(updates.filter((update) => update.type === 'cell-closed')).toEqual([]);
    const end = await restored.session.observe(cellId, { yieldTimeMs: 30_000 });
    expect(cellTexts(end)[0]).toMatch(/^b=2 c=joined r=/);
    // its journaled calls came from the journal; the one left open was asked once, and journaled as it settled
    expect(restored.calls.map((call) => [call.cellId, call.runtimeToolCallId])).toEqual([[cellId, 'tool-3']]);
    expect(updates.flatMap((update) => (update.type === 'call-settled' ? [[update.id, update.result]] : []))).toEqual([['tool-3', { ok: true, json: '"joined"' }]]);
    // the duplicate left no end of its own behind
    await expect(restored.session.observe(cellId, { yieldTimeMs: 0 })).rejects.toMatchObject({ code: 'CELL_NOT_FOUND' });
  });

  it('a cell over maxJournalBytes runs on, is exported as unresumable, and a restore fails it saying why', async () => {
    const first = openDurable({ big: () => 'x'.repeat(5_000) }, { maxJournalBytes: 4_096 });
    const created = await first.session.createCell({ source: `const s = await tools.big({}); text(s.length); yield_control(); await new Promise(() => {});`, tools: [fnDescriptor('big')], yieldTimeMs: 30_000 });
    expect(cellTexts(created.observation)).toEqual(['5000']);
    const state = first.session.exportState();
    expect(state.cells[0]).toMatchObject({ unresumable: 'its journal passed 4096 bytes (maxJournalBytes)', entries: '', stored: [] });
    const second = openDurable({});
    expect((await second.session.restore(state)).cells).toEqual([
      { cellId: created.cellId, resumed: false, code: 'LIMIT_EXCEEDED', error: `cannot resume cell ${created.cellId}: its journal passed 4096 bytes (maxJournalBytes)` },
    ]);
  });
});

// The same refusal from both implementations of the contract: the in-process engine's session and
// the session over the runtime protocol (worker processes).
describe('restore after a cell', { timeout: 120_000 }, () => {
  it.each(['in-process', 'process'] as const)('is refused with INVALID_INPUT and the contract\'s text (%s), and the cell is untouched', async (mode) => {
    const runtime = createCodeModeRuntime({ isolation: mode, ...(mode === 'process' ? { workers: { shared: false, prewarm: false } } : {}) });
    cleanup.push(() => runtime.shutdown());
    const session = runtime.openSession(createTestHost().host) as CodeModeSession & Required<Pick<CodeModeSession, 'exportState' | 'restore'>>;
    const { cellId } = await session.createCell({ source: `store('k', 1); text('before'); yield_control(); text('after')`, tools: [], yieldTimeMs: 30_000 });
    const state = session.exportState();
    await expect(session.restore(state)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: 'restore must come before the session creates its first cell' });
    const end = await session.observe(cellId, { yieldTimeMs: 30_000 });
    expect({ kind: end.kind, texts: cellTexts(end) }).toEqual({ kind: 'completed', texts: ['after'] });
  });
});
