import type { DiscoveredTool, ToolDiscovery, ToolExecutor, ToolSearchOutputItem, WireTool } from '@switchyard/protocol';
import { invokeTool } from '@switchyard/registry/testing';
import { describe, expect, it } from 'vitest';
import { fn, freeform, recordingContributor } from '../test/fixtures';
import { planTools } from './plan-tools';
import { createPlanCache } from './plan-cache';
import type { ToolSearchFunction } from './search-ranking';

// tool_search from a cell (a function payload), exact names first, a host's own search and limit,
// and what a caller's discoveries change in later plans.

/** A catalog where BM25 alone puts `search_graph` below tools whose descriptions repeat the query's words. */
function graphCatalog(): ToolExecutor[] {
  const noisy = (name: string) =>
    fn(name, { namespace: 'mcp__codebase__', exposure: 'deferred', description: 'trace path query graph search code index repository codebase memory snippet' });
  return [
    noisy('trace_path'),
    noisy('get_code_snippet'),
    noisy('query_graph'),
    noisy('search_code'),
    noisy('index_repository'),
    fn('search_graph', { namespace: 'mcp__codebase__', exposure: 'deferred', description: 'Finds nodes.' }),
    fn('get_forecast', { namespace: 'weather__', exposure: 'deferred', description: 'Weather forecast for a city.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }),
    freeform('run_sql', { namespace: 'db__', exposure: 'deferred' }),
    fn('read_file', { description: 'Reads a file.' }),
  ];
}

const QUERY = 'trace_path get_code_snippet query_graph search_code index_repository search_graph codebase-memory-mcp';

function searchOf(plan: ReturnType<typeof planTools>): ToolExecutor {
  const search = plan.executors.find((executor) => executor.spec.type === 'tool_search');
  if (!search) throw new Error('no tool_search planned');
  return search;
}

function wireNames(tools: readonly WireTool[]): string[] {
  return tools.flatMap((tool) => (tool.type === 'namespace' ? (tool.tools as Array<{ name: string }>).map((member) => `${String(tool.name)}${member.name}`) : [String((tool as { name?: string }).name)]));
}

/** A cell's search through the registry's dispatch: the JSON the cell receives and what the sink heard. */
async function cellSearch(search: ToolExecutor, args: object) {
  const heard: ToolDiscovery[] = [];
  const result = await invokeTool(search, { kind: 'function', arguments: JSON.stringify(args) }, { step: { toolDiscovery: { found: (discovery) => heard.push(discovery) } } });
  return { result, heard, value: result.output.codeModeResult(result.payload ?? { kind: 'function', arguments: '{}' }) as { tools: Array<Omit<DiscoveredTool, 'toolName'>> } };
}

describe('exact names rank first (openai/codex#21503)', () => {
  it('the model\'s tool_search: a tool named in a long query is in the top results although BM25 ranks it last', async () => {
    const plan = planTools({ toolMode: 'direct', provider: { toolSearch: true } }, { executors: graphCatalog() });
    const result = await invokeTool(searchOf(plan), { kind: 'tool-search', arguments: { query: QUERY, limit: 6 } });
    // the exact names in the query's order, then BM25 fills the rest (here: nothing left)
    expect(wireNames((result.item as ToolSearchOutputItem).tools)).toEqual([
      'mcp__codebase__trace_path',
      'mcp__codebase__get_code_snippet',
      'mcp__codebase__query_graph',
      'mcp__codebase__search_code',
      'mcp__codebase__index_repository',
      'mcp__codebase__search_graph',
    ]);
    // a bare name shared by no other tool, quoted and backticked, is still exact
    const quoted = await invokeTool(searchOf(plan), { kind: 'tool-search', arguments: { query: 'is `search_graph` there? trace path repository code', limit: 1 } });
    expect(wireNames((quoted.item as ToolSearchOutputItem).tools)).toEqual(['mcp__codebase__search_graph']);
  });

  it('a spelling two tools share is no exact name: BM25 ranks them', async () => {
    const plan = planTools(
      { toolMode: 'direct', provider: { toolSearch: true } },
      { executors: [fn('search', { namespace: 'alpha__', exposure: 'deferred', description: 'Alpha things.' }), fn('search', { namespace: 'beta__', exposure: 'deferred', description: 'Beta search engine for search.' })] },
    );
    const result = await invokeTool(searchOf(plan), { kind: 'tool-search', arguments: { query: 'search', limit: 2 } });
    expect(wireNames((result.item as ToolSearchOutputItem).tools)).toEqual(['beta__search', 'alpha__search']);
  });
});

describe('tools.tool_search from a cell (a function payload)', () => {
  const plan = planTools({ toolMode: 'code-mode-only', provider: {} }, { executors: graphCatalog(), codeMode: recordingContributor() });

  it('answers the matching nested tools with their declarations and tells the step what was found', async () => {
    const { value, heard, result } = await cellSearch(searchOf(plan), { query: 'weather forecast city', limit: 1 });
    expect(result.success).not.toBe(false);
    expect(value).toEqual({
      tools: [
        {
          name: 'weather__get_forecast',
          description: 'Weather forecast for a city.',
          declaration: 'declare const tools: { weather__get_forecast(args: { city: string; }): Promise<unknown>; };',
        },
      ],
    });
    expect(heard).toEqual([{ callId: result.item.call_id, query: 'weather forecast city', tools: [{ toolName: 'weather__get_forecast', ...value.tools[0] }] }]);
  });

  it('searches every tool a cell can call: non-deferred and freeform tools too, exact names first', async () => {
    const { value } = await cellSearch(searchOf(plan), { query: 'db__run_sql read_file' });
    expect(value.tools.slice(0, 2)).toEqual([
      { name: 'db__run_sql', description: 'The run_sql freeform tool.', declaration: 'declare const tools: { db__run_sql(input: string): Promise<unknown>; };' },
      { name: 'read_file', description: 'Reads a file.', declaration: 'declare const tools: { read_file(args: { [key: string]: unknown; }): Promise<unknown>; };' },
    ]);
  });

  it('refuses what the model\'s tool_search refuses, with the same texts, and finds nothing without telling anyone', async () => {
    const search = searchOf(plan);
    expect((await cellSearch(search, { query: '  ' })).result.error?.message).toBe('query must not be empty');
    expect((await cellSearch(search, { query: 'x', limit: 0 })).result.error?.message).toBe('limit must be greater than zero');
    expect((await cellSearch(search, { query: 'x', limit: 1.5 })).result.error?.message).toBe('failed to parse tool_search arguments: `limit` must be a non-negative integer');
    expect((await cellSearch(search, { limit: 2 })).result.error?.message).toBe('failed to parse tool_search arguments: `query` must be a string');
    const none = await cellSearch(search, { query: 'zzzz qqqq' });
    expect(none.value).toEqual({ tools: [] });
    expect(none.heard).toEqual([]);
  });

  it('a discovery sink that throws costs the cell nothing', async () => {
    const result = await invokeTool(searchOf(plan), { kind: 'function', arguments: '{"query":"forecast"}' }, {
      step: {
        toolDiscovery: {
          found() {
            throw new Error('host bug');
          },
        },
      },
    });
    expect(result.success).not.toBe(false);
    expect(JSON.stringify(result.output.codeModeResult(result.payload))).toContain('weather__get_forecast');
  });
});

describe('a host\'s own search and limit (sources.toolSearch)', () => {
  it('the host ranks (names it does not know are dropped, repeats once), exact names still first, at most `limit`', async () => {
    const asked: Array<{ query: string; limit: number; tools: string[] }> = [];
    const search: ToolSearchFunction = ({ query, limit, tools }) => {
      asked.push({ query, limit, tools: tools.map((tool) => tool.name) });
      return ['no_such_tool', 'weather__get_forecast', 'weather__get_forecast', 'mcp__codebase__query_graph', 'db__run_sql'];
    };
    const plan = planTools({ toolMode: 'code-mode-only', provider: {} }, { executors: graphCatalog(), codeMode: recordingContributor(), toolSearch: { search, limit: 3 } });
    const { value } = await cellSearch(searchOf(plan), { query: 'read_file please', limit: 50 });
    expect(value.tools.map((tool) => tool.name)).toEqual(['read_file', 'weather__get_forecast', 'mcp__codebase__query_graph']);
    expect(asked).toEqual([{ query: 'read_file please', limit: 3, tools: expect.arrayContaining(['read_file', 'db__run_sql', 'weather__get_forecast']) }]);
    expect(asked[0].tools).not.toContain('tool_search');
    // the model's tool_search uses the same function over the deferred tools, and its description says the default
    const direct = planTools({ toolMode: 'direct', provider: { toolSearch: true } }, { executors: graphCatalog(), toolSearch: { search, limit: 3 } });
    const outer = await invokeTool(searchOf(direct), { kind: 'tool-search', arguments: { query: 'anything' } });
    expect(wireNames((outer.item as ToolSearchOutputItem).tools)).toEqual(['weather__get_forecast', 'mcp__codebase__query_graph', 'db__run_sql']);
    expect(JSON.stringify(searchOf(direct).spec)).toContain('Maximum number of tools to return (defaults to 3).');
  });

  it('a search function that throws, rejects or answers nonsense fails the search, model-visibly', async () => {
    const answers: ToolSearchFunction[] = [
      () => {
        throw new Error('catalog down');
      },
      () => Promise.reject(new Error('timeout')),
      () => 'weather__get_forecast' as never,
      () => [7] as never,
    ];
    const messages: Array<string | undefined> = [];
    for (const search of answers) {
      const plan = planTools({ toolMode: 'code-mode-only', provider: {} }, { executors: graphCatalog(), codeMode: recordingContributor(), toolSearch: { search } });
      messages.push((await cellSearch(searchOf(plan), { query: 'forecast' })).result.error?.message);
    }
    expect(messages).toEqual([
      'tool_search failed: catalog down',
      'tool_search failed: timeout',
      'tool_search failed: the search function did not answer with a list of tool names',
      'tool_search failed: the search function did not answer with a list of tool names',
    ]);
  });
});

describe('what a caller\'s discoveries change (sources.discovered)', () => {
  const executors = graphCatalog();

  it('code-mode-only: a found deferred tool is described from then on (deferred: false, discovered: true)', () => {
    const plan = planTools({ toolMode: 'code-mode-only', provider: {} }, { executors, codeMode: recordingContributor(), discovered: ['weather__get_forecast'] });
    const forecast = plan.codeModeSurface?.tools.find((tool) => tool.codeModeName === 'weather__get_forecast');
    expect(forecast).toMatchObject({ deferred: false, discovered: true });
    expect(plan.codeModeSurface?.hasDeferredTools).toBe(true);
    expect(plan.codeModeSurface?.toolSearch).toBe(true);
  });

  it('code-mode: a found deferred tool becomes visible, with its usage sample; direct mode ignores the list', () => {
    const plan = planTools({ toolMode: 'code-mode', provider: {} }, { executors, codeMode: recordingContributor(), discovered: ['weather__get_forecast'] });
    const weather = plan.tools.find((tool) => (tool as { name?: string }).name === 'weather__') as { tools: Array<{ name: string; description: string }> } | undefined;
    expect(weather?.tools.map((tool) => tool.name)).toEqual(['get_forecast']);
    expect(weather?.tools[0].description).toContain('declare const tools: { weather__get_forecast(args: { city: string; }): Promise<unknown>; };');
    const direct = planTools({ toolMode: 'direct', provider: {} }, { executors, discovered: ['weather__get_forecast'] });
    expect(JSON.stringify(direct.tools)).not.toContain('get_forecast');
  });

  it('one cache gives the same tool_search executor while the tools and the discoveries are the same', () => {
    const cache = createPlanCache();
    const context = { toolMode: 'code-mode-only', provider: {} } as const;
    const first = searchOf(planTools(context, { executors, codeMode: recordingContributor() }, { cache }));
    expect(searchOf(planTools(context, { executors, codeMode: recordingContributor() }, { cache }))).toBe(first);
    const after = searchOf(planTools(context, { executors, codeMode: recordingContributor(), discovered: ['weather__get_forecast'] }, { cache }));
    expect(after).not.toBe(first);
    expect(searchOf(planTools(context, { executors, codeMode: recordingContributor(), discovered: ['weather__get_forecast'] }, { cache }))).toBe(after);
  });
});
