import { createCodeMode } from '@switchyard/code-mode';
import { createCodeModeRuntime, replayCells, sealCellJournal } from '@switchyard/code-mode-runtime';
import { defineFunctionTool } from '@switchyard/kit';
import type { CellJournalRecord } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { afterAll, describe, expect, it } from 'vitest';
import { report } from '../src/profile';
import { execItem, outcome, testTools } from './helpers';

// Offline replay of a recorded turn: the cells' journals, as the host received them when each cell
// closed (`cell-closed` journal updates), re-run against their recorded nested results in fresh
// isolates — no tool runs — and their outputs come out as the model saw them.

const figures: string[] = [];
afterAll(() => report('replay', figures.join('; ')));

const CELLS = [
  `const a = await tools.lookup({ id: 1 }); const b = await tools.lookup({ id: 2 }); text(a.name + ' ' + b.name);`,
  `const t0 = Date.now(); await new Promise((resolve) => setTimeout(resolve, 30)); text(JSON.stringify({ r: Math.random(), t0, later: Date.now() >= t0, when: new Date().toISOString().length })); notify('hello');`,
  `const xs = await Promise.all([3, 1, 2].map((id) => tools.lookup({ id }))); text(xs.map((x) => x.name).join(',')); console.log(Math.random());`,
  `await tools.fail({}).catch((e) => text('caught ' + e.message)); throw new Error('boom');`,
];

describe('replayCells: a recorded turn re-run offline', { timeout: 120_000 }, () => {
  it('reproduces every cell output with no tool run; an edited cell that calls another tool fails with the divergence', async () => {
    let runs = 0;
    const lookup = defineFunctionTool({
      name: 'lookup',
      description: 'Looks an id up.',
      parameters: { type: 'object', properties: { id: { type: 'number' } }, required: ['id'] },
      supportsParallelToolCalls: true,
      handle: async ({ args }) => {
        runs++;
        // answers arrive out of order: the replay must deliver them in the recorded order
        await new Promise((resolve) => setTimeout(resolve, 40 - 10 * (args.id as number)));
        return { name: `item-${args.id as number}-${Math.random().toString(36).slice(2, 6)}` };
      },
    });
    const records: CellJournalRecord[] = [];
    const runtime = createCodeModeRuntime({ workers: { shared: false } });
    const codeMode = createCodeMode({ runtime, journal: (_sessionId, update) => void (update.type === 'cell-closed' && records.push(update.record)) });
    const session = createSession({ toolMode: 'code-mode-only', tools: [...testTools(), lookup], codeMode });
    const turn = session.beginTurn();
    const step = await turn.step();
    const seen = [];
    for (let index = 0; index < CELLS.length; index++) seen.push(outcome(await step.dispatch(execItem(`exec-${index}`, CELLS[index]!))));
    await turn.end();
    await session.shutdown();
    await runtime.shutdown();
    const toolRuns = runs;
    expect(seen.map((cell) => cell.status)).toEqual(['completed', 'completed', 'completed', 'failed']);
    expect(records).toHaveLength(CELLS.length);

    // a fresh runtime, as a debugging or evaluation host would have
    const replayRuntime = createCodeModeRuntime({ workers: { shared: false } });
    try {
      const replayed = await replayCells(records, { runtime: replayRuntime });
      expect(runs).toBe(toolRuns);
      for (let index = 0; index < CELLS.length; index++) {
        const texts = replayed[index]!.items.map((item) => (item.type === 'input_text' ? item.text : item.image_url));
        expect(texts, `cell ${index}`).toEqual(seen[index]!.output);
        expect(replayed[index]!.error).toBe(seen[index]!.error);
        expect(replayed[index]!.unanswered).toEqual([]);
      }
      expect(replayed[1]!.notifies).toEqual(['hello']);
      expect(replayed[3]!.error).toMatch(/^Error: boom/);

      // a changed cell against the recorded results: its second call is another tool's
      const edited = sealCellJournal({ ...records[0]!, source: CELLS[0]!.replace('tools.lookup({ id: 2 })', 'tools.echo({ id: 2 })') });
      const [diverged] = await replayCells([edited], { runtime: replayRuntime });
      expect(diverged!.error).toBe(`cannot resume cell ${records[0]!.cellId}: it called tools.echo where its journal has tools.lookup (tool-2)`);
      expect(runs).toBe(toolRuns);
      // an edit without a new seal reads as corrupted
      await expect(replayCells([{ ...records[0]!, source: 'text(1)' }], { runtime: replayRuntime })).rejects.toMatchObject({ code: 'INVALID_JOURNAL' });
      figures.push(`${CELLS.length} recorded cells re-run offline: outputs identical, ${runs - toolRuns} tool runs, an edited cell failed "${diverged!.error!.slice(0, 60)}…"`);
    } finally {
      await replayRuntime.shutdown();
    }
  });
});
