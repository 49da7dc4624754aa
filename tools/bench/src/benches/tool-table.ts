/**
 * Tokens of `step.tools` (o200k, the JSON of the request's tools) at 10 / 100 / 1,000 / 10,000
 * tools in direct (provider with tool_search), code-mode and code-mode-only, with default options
 * and with every tool deferred. The reference of each figure is the same session with the budget
 * off (`toolBudget: { tokens: Infinity }`, the behaviour before the budget) measured in this run;
 * the note carries the issue's figure for the same cell, measured before the budget existed.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ToolMode } from '@switchyard/protocol';
import { createCodeMode } from '@switchyard/code-mode';
import { createPlanCache, planTools } from '@switchyard/planner';
import { createSession } from '@switchyard/session';
import { compare, timeMedian, type Bench, type BenchFigure } from '../harness';
import { catalogCorpus } from '../tool-corpus';

const SIZES = [10, 100, 1_000, 10_000];
const MODES: ToolMode[] = ['direct', 'code-mode', 'code-mode-only'];

/** The issue's table (o200k tokens of step.tools before the budget): [direct, code-mode-only, direct deferred, code-mode-only deferred]. */
const ISSUE: Record<number, [number, number, number, number]> = {
  10: [1_312, 2_014, 224, 847],
  100: [10_942, 12_994, 224, 847],
  1_000: [107_242, 122_794, 224, 847],
};

function issueFigure(size: number, mode: ToolMode, deferred: boolean): number | undefined {
  const row = ISSUE[size];
  if (!row) return undefined;
  if (mode === 'direct') return deferred ? row[2] : row[0];
  if (mode === 'code-mode-only') return deferred ? row[3] : row[1];
  return undefined;
}

async function stepTokens(mode: ToolMode, size: number, deferred: boolean, budgetOff: boolean): Promise<number> {
  const session = createSession({
    toolMode: mode,
    tools: catalogCorpus(size, deferred ? 'deferred' : undefined),
    provider: { toolSearch: true },
    ...(budgetOff ? { toolBudget: { tokens: Infinity } } : {}),
  });
  const turn = session.beginTurn();
  const step = await turn.step();
  const tokens = countTokens(JSON.stringify(step.tools));
  await turn.end();
  await session.shutdown();
  return tokens;
}

const bench: Bench = {
  name: 'tool table (o200k tokens of step.tools)',
  async run(): Promise<BenchFigure[]> {
    const figures: BenchFigure[] = [];
    for (const deferred of [false, true]) {
      for (const mode of MODES) {
        for (const size of SIZES) {
          const value = await stepTokens(mode, size, deferred, false);
          const before = await stepTokens(mode, size, deferred, true);
          const issue = issueFigure(size, mode, deferred);
          figures.push({
            name: `${mode}${mode === 'direct' ? ' (tool_search)' : ''}, ${size.toLocaleString('en')} tools, ${deferred ? 'all deferred' : 'default options'}`,
            value,
            unit: 'tokens',
            reference: { name: 'budget off', value: before },
            ratio: value / before,
            note: issue === undefined ? '' : `issue's figure before: ${issue.toLocaleString('en')}`,
          });
        }
      }
    }
    // What the budget costs per step: planTools of the same 10,000 tools, budget on vs off.
    const codeMode = createCodeMode({ runtime: { openSession: () => { throw new Error('not used'); } } as never });
    const tools = catalogCorpus(10_000);
    for (const mode of MODES) {
      // a session's steps: each series re-plans with one plan cache, as a session does
      const plan = (budget: { tokens: number } | undefined, cache = createPlanCache()) => () =>
        planTools({ toolMode: mode, provider: { namespaceTools: true, toolSearch: true } }, { executors: tools, codeMode, budget }, { cache });
      const on = await timeMedian(plan(undefined), 7, 2);
      const off = await timeMedian(plan({ tokens: Infinity }), 7, 2);
      figures.push(compare(`planTools per step, ${mode}, 10,000 tools (same executors)`, on, 'ms', { name: 'budget off', value: off }, { note: 'median of 7' }));
    }
    return figures;
  },
};

export default bench;
