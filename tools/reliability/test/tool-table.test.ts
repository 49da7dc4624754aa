import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { isSwitchyardError, type ToolExecutor } from '@switchyard/protocol';
import { defineFreeformTool, defineFunctionTool } from '@switchyard/kit';
import { estimateTokens } from '@switchyard/kit/internal';
import { createToolSearchExecutor } from '../../../packages/planner/src/tool-search';
import { invokeTool } from '@switchyard/registry/testing';
import { createPlanCache, planTools, type ToolPlan } from '@switchyard/planner';
import { createSession, type Session, type SessionOptions } from '@switchyard/session';
import { byProfile, report } from '../src/profile';

// The tool table at scale: hostile catalogs (one giant tool, thousands of namespaces, huge
// namespace descriptions, colliding names, a 1-token budget) and hostile tool_search queries.
// What must hold: the plan never throws, `step.tools` stays within the budget (by the planner's
// own counter), and every model query is answered with at most `limit` tools or a documented refusal.
const RUNS = byProfile(200, 5_000);

const sessions: Session[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.shutdown()));
});

async function stepTools(options: Partial<SessionOptions> & { tools: SessionOptions['tools'] }) {
  const session = createSession({ provider: { toolSearch: true }, ...options });
  sessions.push(session);
  const turn = session.beginTurn();
  const step = await turn.step();
  await turn.end();
  return step;
}

function idTool(name: string, options: { namespace?: string; namespaceDescription?: string; description?: string } = {}): ToolExecutor {
  return defineFunctionTool({
    name,
    namespace: options.namespace,
    namespaceDescription: options.namespaceDescription,
    description: options.description ?? `The ${name} tool.`,
    parameters: { type: 'object', properties: { id: { type: 'string', description: 'An id.' } }, required: ['id'] },
    handle: () => name,
  });
}

const filler = (n: number) => Array.from({ length: n }, (_, i) => idTool(`filler_${i}`, { namespace: `ns${i % 5}__` }));

const CATALOGS: Array<[string, () => ToolExecutor[]]> = [
  ['a 200 KB tool first in host order', () => [idTool('giant', { description: 'word '.repeat(40_000) }), ...filler(300)]],
  ['5,000 namespaces of one tool each', () => Array.from({ length: 5_000 }, (_, i) => idTool('only', { namespace: `server${i}__` }))],
  [
    'namespace descriptions of 20 KB without a sentence end',
    () => Array.from({ length: 400 }, (_, i) => idTool(`t${i}`, { namespace: `big${i % 40}__`, namespaceDescription: 'x'.repeat(20_000) })),
  ],
  ['names that normalize to the same identifier', () => [...Array.from({ length: 200 }, (_, i) => idTool(`get-thing-${i}`, { namespace: 'dash' })), ...Array.from({ length: 200 }, (_, i) => idTool(`get_thing_${i}`, { namespace: 'dash' }))]],
  ['freeform tools that can never be deferred', () => [...Array.from({ length: 60 }, (_, i) => defineFreeformTool({ name: `patch_${i}`, description: 'Edit. '.repeat(50), handle: () => '' })), ...filler(200)]],
  ['non-Latin names and descriptions', () => Array.from({ length: 500 }, (_, i) => idTool(`инструмент_${i}`, { namespace: `東京${i % 9}`, description: '天気予報を取得します。'.repeat(20) }))],
];

describe('hostile catalogs', () => {
  it.each(CATALOGS)('%s: every mode plans within the budget', async (_label, make) => {
    const lines: string[] = [];
    for (const toolMode of ['direct', 'code-mode', 'code-mode-only'] as const) {
      const step = await stepTools({ toolMode, tools: make() });
      const exec = step.tools.find((entry) => (entry as { name?: string }).name === 'exec') as { description: string } | undefined;
      if (toolMode === 'code-mode-only') {
        expect(estimateTokens(JSON.stringify(exec?.description))).toBeLessThanOrEqual(2_000);
      } else {
        const unavoidable = step.plan.modelVisibleSpecs.filter((spec) => spec.type === 'custom' && spec.name.startsWith('patch_'));
        // freeform tools cannot be deferred: only then may the table pass the budget
        if (unavoidable.length === 0) expect(estimateTokens(JSON.stringify(step.tools))).toBeLessThanOrEqual(2_000);
      }
      expect(JSON.parse(JSON.stringify(step.tools))).toEqual(step.tools);
      lines.push(`${toolMode}: ${step.tools.length} specs, ~${estimateTokens(JSON.stringify(step.tools))} tokens, ${step.plan.deferredByBudget.length} deferred by the budget`);
    }
    report('tool table', `${_label}: ${lines.join('; ')}`);
  });

  it('a 1-token budget still plans: the template, the note and a summary, nothing described', async () => {
    const step = await stepTools({ toolMode: 'code-mode-only', tools: filler(100), toolBudget: { tokens: 1 } });
    const description = (step.tools[0] as { description: string }).description;
    expect(description).toContain('Tool catalog: 0 of 100 nested tools are described below');
    expect(description).not.toContain('### `');
    const direct = await stepTools({ toolMode: 'direct', tools: filler(100), toolBudget: { tokens: 1 } });
    expect(direct.tools.map((entry) => entry.type)).toEqual(['tool_search']);
  });

  it('a host counter that throws or answers nonsense falls back to the estimate', async () => {
    const estimated = await stepTools({ toolMode: 'direct', tools: filler(100) });
    const throwing = await stepTools({ toolMode: 'direct', tools: filler(100), toolBudget: { countTokens: () => { throw new Error('counter broke'); } } });
    const nonsense = await stepTools({ toolMode: 'direct', tools: filler(100), toolBudget: { countTokens: () => -1 } });
    expect(JSON.stringify(throwing.tools)).toBe(JSON.stringify(estimated.tools));
    expect(JSON.stringify(nonsense.tools)).toBe(JSON.stringify(estimated.tools));
  });
});

describe('hostile tool_search queries', () => {
  const search = createToolSearchExecutor(Array.from({ length: 2_000 }, (_, i) => ({ ...idTool(`tool_${i}`, { namespace: `srv${i % 20}__`, description: `Does thing ${i} with records.` }), exposure: 'deferred' as const })));
  const call = async (query: unknown, limit?: unknown) => {
    const answer = await invokeTool(search, { kind: 'tool-search', arguments: limit === undefined ? { query } : { query, limit } } as never, { callId: 'q', hooks: false });
    if (answer.error) throw answer.error;
    const output = answer.output;
    return output.codeModeResult({ kind: 'tool-search', arguments: { query: 'x' } }) as unknown as Array<{ tools?: unknown[] }>;
  };

  it('any query is answered with at most `limit` tools or a documented refusal', async () => {
    let answered = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ unit: 'binary', maxLength: 400 }), fc.constantFrom('', '   ', 'the of and', '.*+?()[]{}', 'tool '.repeat(5_000), '\u0000\uD800', 'records'.repeat(2_000))), fc.option(fc.integer({ min: -3, max: 50 })), async (query, limit) => {
        try {
          const result = await call(query, limit ?? undefined);
          const count = result.reduce((sum, entry) => sum + (Array.isArray(entry.tools) ? entry.tools.length : 1), 0);
          expect(count).toBeLessThanOrEqual(limit ?? 8);
          answered++;
        } catch (error) {
          expect(isSwitchyardError(error) && error.code === 'RESPOND_TO_MODEL').toBe(true);
          expect((error as Error).message).toMatch(/^(query must not be empty|limit must be greater than zero|failed to parse tool_search arguments: `limit` must be a non-negative integer)$/);
          refused++;
        }
      }),
      { numRuns: RUNS },
    );
    report('tool_search queries', `${RUNS} queries over 2,000 deferred tools: ${answered} answered within their limit, ${refused} refused with a documented message`);
  });

  it('the estimate is never negative, at most one token per character, and joining never costs more', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 300 }), (a, b) => {
        const one = estimateTokens(a);
        expect(one).toBeGreaterThanOrEqual(0);
        expect(one).toBeLessThanOrEqual(a.length);
        expect(estimateTokens(a + b)).toBeLessThanOrEqual(one + estimateTokens(b));
      }),
      { numRuns: RUNS * 5 },
    );
  });
});

describe('hostile plan caches', () => {
  const context = { toolMode: 'direct' as const, provider: { toolSearch: true } };
  const deferred = () => ({ ...idTool('archive', { namespace: 'mail__' }), exposure: 'deferred' as const });
  const searchOf = (plan: ToolPlan) => plan.executors.find((executor) => executor.spec.type === 'tool_search');
  const outcome = (options: unknown): string => {
    try {
      planTools(context, { executors: [idTool('read'), deferred()] }, options as never);
      return 'accepted';
    } catch (error) {
      return isSwitchyardError(error) && error.code === 'CONFIG' && error.message.startsWith('options.cache: ') ? 'config' : `leaked ${String(error)}`;
    }
  };

  it('options that are not a cache of createPlanCache() are CONFIG errors naming options.cache; no options plan without one', () => {
    const real = createPlanCache();
    const hostile: Array<[string, unknown, string]> = [
      ['no options', undefined, 'accepted'],
      ['null options', null, 'accepted'],
      ['a string as options', 'cache', 'accepted'],
      ['a cache-shaped object', { cache: { size: 0 } }, 'config'],
      ['a copy of a real cache', { cache: { ...real } }, 'config'],
      ['an object whose prototype is a real cache', { cache: Object.create(real) }, 'accepted'],
      ['a getter that throws', Object.defineProperty({}, 'cache', { get: () => { throw new Error('gotcha'); } }), 'config'],
      ['a proxy whose getPrototypeOf throws', { cache: new Proxy({}, { getPrototypeOf: () => { throw new Error('no prototype'); } }) }, 'config'],
      ['a proxy whose get throws', new Proxy({}, { get: () => { throw new Error('no get'); } }), 'config'],
      ['null cache', { cache: null }, 'config'],
      ['a function', { cache: createPlanCache }, 'config'],
    ];
    expect(hostile.map(([label, options]) => [label, outcome(options)])).toEqual(hostile.map(([label, , expected]) => [label, expected]));
    fc.assert(
      fc.property(fc.anything({ maxDepth: 2 }), (cache) => {
        expect(outcome({ cache })).toBe(cache === undefined ? 'accepted' : 'config');
      }),
      { numRuns: RUNS },
    );
    report('plan caches', `${hostile.length} hostile planTools options and ${RUNS} random caches: CONFIG errors naming options.cache, never another throw`);
  });

  it('interleaved sessions and caches never hand one another their tool_search executor', () => {
    const executors = [idTool('read'), deferred()];
    const caches = Array.from({ length: 6 }, () => createPlanCache());
    const seen = new Map<unknown, number>();
    for (let round = 0; round < 5; round++) {
      caches.forEach((cache, index) => {
        // each round also plans other tool sets, so a cache's entries are evicted and made again
        planTools(context, { executors: [idTool(`other_${round}`), deferred()] }, { cache });
        const search = searchOf(planTools(context, { executors }, { cache }));
        const owner = seen.get(search);
        if (owner === undefined) seen.set(search, index);
        else expect(owner).toBe(index);
      });
    }
    expect(new Set(seen.values()).size).toBe(caches.length);
    report('plan caches', `${caches.length} caches over 5 interleaved rounds: ${seen.size} tool_search executors, none shared between caches`);
  });
});
