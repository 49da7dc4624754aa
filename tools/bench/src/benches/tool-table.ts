/**
 * Tokens of `step.tools` (o200k, the JSON of the request's tools) at 10 / 100 / 1,000 / 10,000
 * tools in direct (provider with tool_search), code-mode and code-mode-only, with default options
 * and with every tool deferred. The reference of each figure is the same session with the budget
 * off (`toolBudget: { tokens: Infinity }`, the behaviour before the budget) measured in this run;
 * the note carries the issue's figure for the same cell, measured before the budget existed.
 *
 * Declarations: tokens of `step.tools` for a corpus whose schemas have unions, nested objects and
 * recursive `$ref`s (where the declaration renderer's shape matters), with the budget off so every
 * declaration is in the request, beside the same figure measured on the renderer before it rendered
 * unions bare and stopped indenting nested objects (commit 862117c, one run, in DECLARATIONS_BEFORE).
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ToolMode } from '@switchyard/protocol';
import { createCodeMode } from '@switchyard/code-mode';
import { createPlanCache, planTools } from '@switchyard/planner';
import { defineFunctionTool } from '@switchyard/kit';
import { codeModeDeclaration } from '@switchyard/kit/internal';
import { codeModeName, type JsonSchema, type ToolExecutor } from '@switchyard/protocol';
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

/** A search query: a leaf condition or a group of clauses, each clause holding a query again (recursive). */
const QUERY_DEFS: Record<string, JsonSchema> = {
  Clause: {
    type: 'object',
    properties: {
      occur: { type: 'string', enum: ['must', 'should', 'must_not'] },
      query: { $ref: '#/$defs/Query', description: 'Use a nested group for parenthesized expressions.' },
    },
    required: ['occur', 'query'],
    additionalProperties: false,
  },
  Query: {
    oneOf: [
      { $ref: '#/$defs/Leaf' },
      { type: 'object', properties: { clauses: { type: 'array', items: { $ref: '#/$defs/Clause' } } }, required: ['clauses'], additionalProperties: false },
    ],
  },
  Leaf: {
    type: 'object',
    properties: { field: { type: 'string', enum: ['title', 'body', 'author', 'status'] }, value: { type: 'string' } },
    required: ['field', 'value'],
    additionalProperties: false,
  },
};

const ENTITIES = ['invoice', 'customer', 'order', 'ticket', 'shipment', 'payment', 'contract', 'product', 'report', 'project'];

/** `count` search tools over 10 namespaces whose schemas have unions, nested described objects and recursive refs. */
function queryCorpus(count: number): ToolExecutor[] {
  return Array.from({ length: count }, (_, index) => {
    const entity = ENTITIES[index % ENTITIES.length];
    return defineFunctionTool({
      name: `search_${entity}s_${index}`,
      namespace: `svc${index % 10}__`,
      description: `Search ${entity} records with a structured query.`,
      parameters: {
        type: 'object',
        properties: {
          query: { $ref: '#/$defs/Query', description: `What to match in ${entity} records.` },
          page: {
            type: 'object',
            description: 'Paging.',
            properties: { size: { type: 'integer', description: 'Results per page.' }, cursor: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
          },
          sort: { anyOf: [{ type: 'object', properties: { by: { type: 'string', enum: ['relevance', 'date'] } }, required: ['by'] }, { type: 'null' }] },
        },
        required: ['query'],
        additionalProperties: false,
        $defs: QUERY_DEFS,
      },
      outputSchema: {
        type: 'object',
        properties: {
          results: { type: 'array', items: { anyOf: [{ type: 'object', properties: { id: { type: 'string' }, score: { type: 'number' } }, required: ['id', 'score'] }, { type: 'null' }] } },
          status: { oneOf: [{ const: 'complete' }, { type: 'object', properties: { partial: { type: 'boolean' }, reason: { type: 'string' } }, required: ['partial'] }] },
        },
        required: ['results', 'status'],
      },
      handle: () => ({ results: [], status: 'complete' }),
    });
  });
}

async function stepTokens(mode: ToolMode, size: number, deferred: boolean, budgetOff: boolean, corpus = catalogCorpus): Promise<number> {
  const session = createSession({
    toolMode: mode,
    tools: corpus(size, deferred ? 'deferred' : undefined),
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

/**
 * Tokens of the declaration corpus's `step.tools` (budget off) on the renderer before this one
 * (parenthesized union members, nested objects indented), measured once at commit 862117c:
 * [declarations alone, code-mode, code-mode-only] by size.
 */
const DECLARATIONS_BEFORE: Record<number, [number, number, number]> = {
  10: [2_426, 7_188, 4_088],
  100: [24_260, 60_486, 31_556],
  1_000: [242_600, 593_466, 306_237],
};

/** o200k tokens of the corpus's `declare const tools: …` lines alone, one per line. */
function declarationTokens(size: number): number {
  const lines = queryCorpus(size).map((tool) => {
    if (tool.spec.type !== 'function') throw new Error('query corpus holds function tools');
    return codeModeDeclaration({ codeModeName: codeModeName(tool.name), kind: 'function', description: tool.spec.description, inputSchema: tool.spec.parameters, outputSchema: tool.spec.outputSchema });
  });
  return countTokens(lines.join('\n'));
}

/** Declaration tokens of the query corpus now, beside the renderer before (one run each). */
async function declarationFigures(): Promise<BenchFigure[]> {
  const figures: BenchFigure[] = [];
  for (const [column, mode] of (['declarations alone', 'code-mode', 'code-mode-only'] as const).entries()) {
    for (const size of [10, 100, 1_000]) {
      const value = mode === 'declarations alone' ? declarationTokens(size) : await stepTokens(mode, size, false, true, queryCorpus);
      const before = DECLARATIONS_BEFORE[size][column];
      figures.push({
        name: `declarations, ${mode === 'declarations alone' ? 'the declaration lines alone' : `${mode} step.tools`}, ${size.toLocaleString('en')} tools with unions and nested objects${mode === 'declarations alone' ? '' : ' (budget off)'}`,
        value,
        unit: 'tokens',
        reference: { name: 'renderer before (862117c)', value: before },
        ratio: value / before,
        note: `saves ${(before - value).toLocaleString('en')} tokens (${(100 * (1 - value / before)).toFixed(1)}%)`,
      });
    }
  }
  return figures;
}

const bench: Bench = {
  name: 'tool table (o200k tokens of step.tools)',
  async run(): Promise<BenchFigure[]> {
    const figures: BenchFigure[] = await declarationFigures();
    if (process.env.BENCH_DECLARATIONS_ONLY) return figures;
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
