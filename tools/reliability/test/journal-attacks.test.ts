import { createCodeMode, type CodeModeState } from '@switchyard/code-mode';
import { createCodeModeRuntime, sealCellJournal } from '@switchyard/code-mode-runtime';
import { defineFunctionTool } from '@switchyard/kit';
import type { CellJournalRecord } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { afterAll, describe, expect, it } from 'vitest';
import { report } from '../src/profile';
import { execItem, outcome, sleep, testTools } from './helpers';

// A store hands back what it kept: the journals may be corrupted, belong to another session or
// cell, be of a newer version, or say impossible things. Each bad journal fails its own cell (a
// clear INVALID_JOURNAL), nothing runs twice, the good cell resumes, and another session of the
// same runtime never notices.

const figures: string[] = [];
afterAll(() => report('journal attacks', figures.join('; ')));

describe('bad journals fail their own cell only', { timeout: 120_000 }, () => {
  it('corrupted, another session\'s or cell\'s, a newer version, malformed entries, an impossible delivery', async () => {
    let runs = 0;
    const parked: Array<() => void> = [];
    const step = defineFunctionTool({
      name: 'step',
      description: 'Counts; the second call never answers.',
      parameters: { type: 'object' },
      supportsParallelToolCalls: true,
      handle: () => (++runs === 2 ? new Promise((resolve) => parked.push(() => resolve('late'))) : runs),
    });
    const firstRuntime = createCodeModeRuntime({ workers: { shared: false } });
    const first = createCodeMode({ runtime: firstRuntime });
    const session = createSession({ toolMode: 'code-mode-only', tools: [...testTools(), step], codeMode: first });
    const turn = session.beginTurn();
    const opened = await turn.step();
    const source = `const a = await tools.step({}); text('a=' + a); const b = await tools.step({}).catch((e) => e.message); text('b=' + b);`;
    const started = outcome(await opened.dispatch(execItem('exec-1', `// @exec: {"yield_time_ms": 500}\n${source}`)));
    expect(started.status).toBe('running');
    while (parked.length === 0) await sleep(10);
    const state = first.exportState(session.id) as CodeModeState;
    const good = state.runtime.cells[0]!;
    // what the first exec handed out is what the journal counts as observed
    const seenBefore = started.output.includes('a=1');
    expect(good.observed.items).toBe(seenBefore ? 1 : 0);
    const broker = state.cells[0]!;
    await turn.end();
    await session.shutdown();
    await firstRuntime.shutdown();

    const renamed = (cellId: string, record: Partial<CellJournalRecord>) => ({ ...good, ...record, cellId });
    const bad: Array<[string, CellJournalRecord]> = [
      ['corrupted', { ...renamed('corrupted', {}), check: sealCellJournal(renamed('corrupted', {})).check, source: source.slice(0, 40) }],
      // another cell's journal presented under this cell's id: its seal names the other cell
      ['swapped', { ...good, cellId: 'swapped' }],
      ['foreign', sealCellJournal(renamed('foreign', { session: 'another-session' }))],
      ['future', sealCellJournal(renamed('future', { version: 2 }))],
      ['garbled', sealCellJournal(renamed('garbled', { entries: `${good.entries},zz` }))],
      ['impossible', sealCellJournal(renamed('impossible', { entries: 'r9' }))],
    ];
    const hostile: CodeModeState = {
      ...state,
      runtime: { ...state.runtime, cells: [good, ...bad.map(([, record]) => record)] },
      cells: [broker, ...bad.map(([cellId]) => ({ ...broker, cellId }))],
    };

    const runtime = createCodeModeRuntime({ workers: { shared: false } });
    const restored = createCodeMode({ runtime });
    try {
      // another session of the same runtime, busy all along
      const bystander = restored.service.session('bystander');
      const busy = bystander.runtime.createCell({ source: `await new Promise((resolve) => setTimeout(resolve, 500)); text('bystander ok');`, tools: [], yieldTimeMs: 30_000 });
      const result = await restored.restoreSession(session.id, hostile);
      expect(result.cells.map((cell) => [cell.cellId, cell.resumed])).toEqual([[good.cellId, true], ...bad.map(([cellId]) => [cellId, false])]);
      const errors = Object.fromEntries(result.cells.filter((cell) => !cell.resumed).map((cell) => [cell.cellId, [(cell as { code: string }).code, (cell as { error: string }).error]]));
      expect(errors).toEqual({
        corrupted: ['INVALID_JOURNAL', 'cannot resume cell corrupted: its journal is corrupted (its fields do not match its check)'],
        swapped: ['INVALID_JOURNAL', 'cannot resume cell swapped: its journal is corrupted (its fields do not match its check)'],
        foreign: ['INVALID_JOURNAL', `cannot resume cell foreign: its journal belongs to another session ("another-session", not ${state.runtime.id})`],
        future: ['INVALID_JOURNAL', 'cannot resume cell future: its journal is of version 2, newer than this runtime reads (1)'],
        garbled: ['INVALID_JOURNAL', `cannot resume cell garbled: its journal is invalid (entry ${good.entries.split(',').length + 1} is "zz")`],
        impossible: ['INVALID_JOURNAL', 'cannot resume cell impossible: its journal is invalid (the result of tool-9 is delivered, but the journal has no such call)'],
      });
      const runtimeSession = restored.service.session(session.id).runtime;
      // a wait on a bad cell gets its failure once
      expect(await runtimeSession.observe('garbled', { yieldTimeMs: 0 })).toMatchObject({ kind: 'completed', items: [], error: errors.garbled![1] });
      // the good cell goes on: its first call answered from the journal, its second interrupted by the
      // restart; 'a=1' comes again only when the first exec had not handed it out yet (a loaded machine)
      const end = await runtimeSession.observe(good.cellId, { yieldTimeMs: 30_000 });
      const interrupted = { text: 'b=tool `step` was interrupted by a restart of its host: it may or may not have taken effect, and it was not run again' };
      expect(end).toMatchObject({ kind: 'completed', items: seenBefore ? [interrupted] : [{ text: 'a=1' }, interrupted] });
      expect(runs).toBe(2);
      expect((await busy).observation).toMatchObject({ kind: 'completed', items: [{ text: 'bystander ok' }] });
      // a state that is not one is refused whole
      await expect(restored.restoreSession('x', { ...hostile, format: 'nope' } as never)).rejects.toMatchObject({ code: 'INVALID_JOURNAL' });
      await expect(restored.restoreSession('y', { ...hostile, runtime: { ...hostile.runtime, version: 9 } })).rejects.toMatchObject({ code: 'INVALID_JOURNAL' });
      figures.push(`${bad.length} bad journals beside a good one: each failed alone with INVALID_JOURNAL, the good cell resumed, no tool ran twice, the bystander session finished`);
    } finally {
      await restored.shutdown();
      await runtime.shutdown();
    }
  });
});
