import { toolName, type ToolExecutor, type ToolOutput, type ToolPayload, type WireTool } from '@switchyard/protocol';
import { defineFreeformTool, defineFunctionTool } from '@switchyard/kit';
import { invokeTool, testExecutor } from '@switchyard/registry/testing';
import { describe, expect, it, vi } from 'vitest';
import { createBm25Index } from './bm25-index';
import { fiftyDeferredTools } from '../test/fifty-tools';
import { fn, freeform } from '../test/fixtures';
import { createToolSearchExecutor, createToolSearchIndex, sharedToolSearchIndex, toolSearchText } from './tool-search';

// The real BM25 index, counted: a shared index is observed by how many builds a lookup causes.
vi.mock('./bm25-index', async (importOriginal) => {
  const original = await importOriginal<typeof import('./bm25-index')>();
  return { ...original, createBm25Index: vi.fn(original.createBm25Index) };
});
const builds = (): number => vi.mocked(createBm25Index).mock.calls.length;

/**
 * One call through the registry's real dispatch. Resolves with the output; a refused call rejects
 * with its error (a tool_search failure reaches the model as an empty result, so the error is where
 * its reason is visible).
 */
async function invokeOrThrow(executor: ToolExecutor, payload: ToolPayload): Promise<ToolOutput> {
  const result = await invokeTool(executor, payload, { callId: 'call-1' });
  if (result.error) throw result.error;
  return result.output;
}

testExecutor({
  executor: createToolSearchExecutor([fn('archive', { exposure: 'deferred' }), fn('send_message', { exposure: 'deferred' })]),
  sample: { kind: 'tool-search', arguments: { query: 'archive' } },
  invalid: [{ kind: 'tool-search', arguments: { query: '  ' } }, { kind: 'tool-search', arguments: { query: 'archive', limit: 0 } }],
});

function search(executor: ToolExecutor, query: string, limit?: number) {
  return invokeOrThrow(executor, { kind: 'tool-search', arguments: limit === undefined ? { query } : { query, limit } });
}

/** A wire tool's `name` (tool_search specs have none). */
const nameOf = (tool: WireTool): string | undefined => (tool as { name?: string }).name;

/** Flat names of the returned tools, namespace members as `namespace + name`, in order. */
function flatNames(tools: readonly WireTool[]): string[] {
  return tools.flatMap((tool) =>
    tool.type === 'namespace' ? (tool.tools as Array<{ name: string }>).map((member) => `${nameOf(tool)}${member.name}`) : [String(nameOf(tool))],
  );
}

describe('tool_search results on a 50-tool fixture', () => {
  const executor = createToolSearchExecutor(fiftyDeferredTools());

  it.each([
    ['create calendar event', 'calendar__create_event'],
    ['weather forecast for tomorrow', 'weather__get_forecast'],
    ['approve a pull request', 'github__review_pull_request'],
    ['send an email', 'mail__send_message'],
    ['run a SQL query', 'db__run_query'],
    ['latitude longitude of an address', 'maps__geocode_address'],
    ['translate', 'translate_text'],
  ])('ranks the right tool first for "%s"', async (query, expected) => {
    const output = await search(executor, query);
    const item = output.toResponseItem('call-1', { kind: 'tool-search', arguments: { query } });
    expect(item).toMatchObject({ type: 'tool_search_output', call_id: 'call-1', status: 'completed', execution: 'client' });
    const tools = (item as { tools: WireTool[] }).tools;
    expect(flatNames(tools)[0]).toBe(expected);
  });

  it('returns 8 tools by default and honours a limit', async () => {
    const many = (await search(executor, 'list message file event issue')).toResponseItem('c', { kind: 'tool-search', arguments: { query: 'x' } });
    expect(flatNames((many as { tools: WireTool[] }).tools)).toHaveLength(8);
    const three = await search(executor, 'list message file event issue', 3);
    expect(flatNames(three.codeModeResult({ kind: 'tool-search', arguments: { query: 'x' } }) as unknown as WireTool[])).toHaveLength(3);
  });

  it('coalesces hits of one namespace into one entry, in first-appearance order', async () => {
    const query = 'email message calendar event';
    const output = await search(executor, query, 6);
    const tools = output.codeModeResult({ kind: 'tool-search', arguments: { query } }) as unknown as WireTool[];
    const namespaces = tools.map(nameOf);
    expect(new Set(namespaces).size).toBe(namespaces.length);
    expect([...namespaces].sort()).toEqual(['calendar__', 'mail__']);
    expect(flatNames(tools)).toHaveLength(6);
    const best = (await search(executor, query, 1)).codeModeResult({ kind: 'tool-search', arguments: { query } }) as unknown as WireTool[];
    expect(nameOf(tools[0])).toBe(nameOf(best[0]));
    expect(tools[0]).toMatchObject({ type: 'namespace', description: `Tools of the ${String(nameOf(best[0])).replace(/_+$/, '')} server.` });
  });

  it('members of a coalesced namespace keep their rank order', () => {
    const index = createToolSearchIndex([
      fn('third', { namespace: 'mail__', exposure: 'deferred', description: 'red' }),
      fn('second', { namespace: 'calendar__', exposure: 'deferred', description: 'red green' }),
      fn('first', { namespace: 'mail__', exposure: 'deferred', description: 'red green blue' }),
      fn('unrelated', { exposure: 'deferred', description: 'yellow' }),
    ]);
    expect(flatNames(index.search('red green blue', 8))).toEqual(['mail__first', 'mail__third', 'calendar__second']);
    expect(index.search('red green blue', 8).map(nameOf)).toEqual(['mail__', 'calendar__']);
  });

  it('results are loadable specs: defer_loading true, no output_schema', async () => {
    const output = await search(executor, 'weather translate', 4);
    const tools = output.codeModeResult({ kind: 'tool-search', arguments: { query: 'x' } }) as unknown as WireTool[];
    expect(tools).toHaveLength(2);
    expect(tools.find((tool) => tool.type === 'namespace')).toEqual({
      type: 'namespace',
      name: 'weather__',
      description: 'Tools of the weather server.',
      tools: expect.arrayContaining([
        expect.objectContaining({ type: 'function', name: 'get_forecast', strict: false, defer_loading: true }),
        expect.objectContaining({ name: 'get_current_weather', defer_loading: true }),
        expect.objectContaining({ name: 'get_air_quality', defer_loading: true }),
      ]),
    });
    expect(tools.find((tool) => tool.type === 'function')).toEqual({
      type: 'function',
      name: 'translate_text',
      description: 'Translate text into another language.',
      strict: false,
      defer_loading: true,
      parameters: {
        type: 'object',
        properties: { text: { type: 'string', description: 'Text to translate.' }, language: { type: 'string', description: 'Target language.' } },
      },
    });
    expect(JSON.stringify(tools)).not.toContain('output_schema');
    expect(JSON.stringify(tools)).not.toContain('outputSchema');
  });

  it('a query that matches nothing gives an empty list', async () => {
    const output = await search(executor, 'zzzz qqqq');
    expect(output.codeModeResult({ kind: 'tool-search', arguments: { query: 'x' } })).toEqual([]);
  });
});

describe('tool_search calls', () => {
  const executor = createToolSearchExecutor([fn('archive', { exposure: 'deferred' })]);

  it.each([
    ['an empty query', { query: '   ' }, 'query must not be empty'],
    ['a zero limit', { query: 'archive', limit: 0 }, 'limit must be greater than zero'],
    ['a negative limit', { query: 'archive', limit: -1 }, 'failed to parse tool_search arguments: `limit` must be a non-negative integer'],
  ])('refuses %s with a model-visible message', async (_label, args, message) => {
    await expect(invokeOrThrow(executor, { kind: 'tool-search', arguments: args as { query: string } })).rejects.toMatchObject({ code: 'RESPOND_TO_MODEL', message });
  });

  it('refuses a missing query: the router for a model call, the handler for a nested one', async () => {
    // A model's tool_search_call is read by the router, which checks the arguments' shape first.
    await expect(invokeOrThrow(executor, { kind: 'tool-search', arguments: {} as { query: string } })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: 'failed to parse tool_search arguments: arguments.query is required',
    });
    // A call made through `invocation.tools` (Code Mode's nested calls) reaches the handler's own check.
    const relay = defineFunctionTool({
      name: 'relay',
      description: 'Searches for its caller.',
      parameters: { type: 'object', properties: {} },
      handle: async ({ invocation }) => {
        const output = await invocation.tools!.call(toolName('tool_search'), { kind: 'tool-search', arguments: {} as { query: string } });
        return { success: output.success ?? null, seen: output.codeModeResult({ kind: 'tool-search', arguments: { query: '' } }) };
      },
    });
    const result = await invokeTool(relay, {}, { tools: [executor] });
    const failed = result.events.find((event) => event.type === 'tool-call-end' && event.toolName === 'tool_search');
    expect(failed).toMatchObject({ success: false, error: { code: 'RESPOND_TO_MODEL', message: 'failed to parse tool_search arguments: `query` must be a string' } });
  });

  it('a non-search payload is fatal', async () => {
    await expect(invokeOrThrow(executor, { kind: 'function', arguments: '{}' })).rejects.toMatchObject({
      code: 'INCOMPATIBLE_PAYLOAD',
      message: 'tool tool_search invoked with incompatible payload',
    });
    // Past the registry's kind check (an executor declaring function payloads too), the handler's own guard.
    const widened = { ...executor, payloadKinds: ['tool-search', 'function'] } as const;
    await expect(invokeOrThrow(widened, { kind: 'function', arguments: '{}' })).rejects.toMatchObject({
      code: 'FATAL',
      message: 'tool_search handler received unsupported payload',
    });
  });

  it('with no deferred tools every valid query answers an empty list', async () => {
    const empty = createToolSearchExecutor([]);
    const output = await search(empty, 'anything');
    expect(output.toResponseItem('c-2', { kind: 'tool-search', arguments: { query: 'anything' } })).toEqual({
      type: 'tool_search_output',
      call_id: 'c-2',
      status: 'completed',
      execution: 'client',
      tools: [],
    });
  });

  it('is a parallel-safe tool_search executor with the reference spec', () => {
    const withSources = createToolSearchExecutor([
      fn('send', { namespace: 'mail__', namespaceDescription: 'Email for the team.', exposure: 'deferred' }),
      fn('list', { namespace: 'mail__', exposure: 'deferred' }),
      fn('lookup', { namespace: 'docs', exposure: 'deferred' }),
      fn('plain', { exposure: 'deferred' }),
    ], { defaultLimit: 5 });
    expect(withSources.name).toEqual(toolName('tool_search'));
    expect(withSources.supportsParallelToolCalls).toBe(true);
    expect(withSources.spec).toEqual({
      type: 'tool_search',
      execution: 'client',
      description:
        '# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\n' +
        'You have access to tools from the following sources:\n- docs\n- mail__: Email for the team.\n' +
        'Some of the tools may not have been provided to you upfront, and you should use this tool (`tool_search`) to search for the required tools. ' +
        'For MCP tool discovery, always use `tool_search` instead of `list_mcp_resources` or `list_mcp_resource_templates`.',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'Search query for deferred tools.' },
          limit: { type: 'number', description: 'Maximum number of tools to return (defaults to 5).' },
        },
        required: ['query'],
        additionalProperties: false,
      },
    });
    expect(createToolSearchExecutor([fn('plain', { exposure: 'deferred' })]).spec.description).toContain(
      'You have access to tools from the following sources:\nNone currently enabled.\n',
    );
  });
});

describe('search text and index', () => {
  it('indexes name, spaced name, namespace, description and schema words', () => {
    const tool = defineFunctionTool({
      name: 'get_weather',
      namespace: 'weather__',
      namespaceDescription: 'Forecasts.',
      description: 'Current weather.',
      parameters: {
        type: 'object',
        description: 'Arguments.',
        properties: {
          city: { type: 'string', description: 'City name.' },
          units: { anyOf: [{ type: 'string', description: 'Unit system.' }] },
          stops: { type: 'array', items: { type: 'object', properties: { place: { type: 'string' } } } },
        },
      },
      searchText: 'meteo',
      handle: () => 'sunny',
    });
    expect(toolSearchText(tool)).toBe(
      'weather__get_weather get weather weather__ Forecasts. get_weather get weather Current weather. Arguments. city City name. units Unit system. stops place meteo',
    );
  });

  it('indexes deferred custom tools by name, description and grammar syntax', () => {
    const patch = defineFreeformTool({
      name: 'apply_patch',
      namespace: 'editor__',
      namespaceDescription: 'Editing tools',
      description: 'Apply a patch',
      exposure: 'deferred',
      grammar: { syntax: 'lark', definition: 'start: "patch"' },
      handle: () => 'done',
    });
    expect(toolSearchText(patch)).toBe('editor__apply_patch apply patch editor__ Editing tools apply_patch Apply a patch lark');
  });

  it('finds plain and namespaced deferred custom tools and returns them with defer_loading: true, beside functions of their namespace', () => {
    const grammar = { syntax: 'lark', definition: 'start: "patch"' } as const;
    const lookup = fn('lookup_order', { namespace: 'editor__', namespaceDescription: 'Editing tools', exposure: 'deferred', description: 'Look up an order' });
    const patch = defineFreeformTool({ name: 'apply_patch', namespace: 'editor__', namespaceDescription: 'Editing tools', description: 'Apply a patch', exposure: 'deferred', grammar, handle: () => 'done' });
    const plain = defineFreeformTool({ name: 'sketch', description: 'Draw a quick sketch', exposure: 'deferred', handle: () => 'done' });
    const index = createToolSearchIndex([lookup, patch, plain]);
    expect(index.size).toBe(3);
    expect(JSON.stringify(index.search('apply a patch', 1))).toBe(
      '[{"type":"namespace","name":"editor__","description":"Editing tools","tools":[{"type":"custom","name":"apply_patch","description":"Apply a patch","defer_loading":true,"format":{"type":"grammar","syntax":"lark","definition":"start: \\"patch\\""}}]}]',
    );
    const both = index.search('look up an order apply a patch', 2);
    expect(both).toHaveLength(1);
    expect(both[0]).toMatchObject({ type: 'namespace', name: 'editor__', description: 'Editing tools' });
    expect((both[0] as { tools: Array<{ name: string }> }).tools.slice().sort((a, b) => (a.name < b.name ? -1 : 1))).toEqual(
        [
          { type: 'custom', name: 'apply_patch', description: 'Apply a patch', defer_loading: true, format: { type: 'grammar', syntax: 'lark', definition: 'start: "patch"' } },
          { type: 'function', name: 'lookup_order', description: 'Look up an order', strict: false, defer_loading: true, parameters: lookup.spec.type === 'function' ? lookup.spec.parameters : {} },
        ],
    );
    expect(JSON.stringify(index.search('sketch', 1))).toBe('[{"type":"custom","name":"sketch","description":"Draw a quick sketch","defer_loading":true,"format":{"type":"text"}}]');
  });
});

describe('the shared index', () => {
  const tools = (description = 'Archive a message.', type = 'string') => [
    fn('archive', {
      namespace: 'mail__',
      exposure: 'deferred',
      description,
      parameters: { type: 'object', properties: { folder: { type, description: 'Where to.' } }, required: ['folder'] },
    }),
    fn('lookup', { exposure: 'deferred', description: 'Look a word up.' }),
  ];
  const archiveSpec = (index: { search(query: string, limit: number): WireTool[] }) =>
    (index.search('archive', 1)[0] as { tools: Array<{ parameters: unknown }> }).tools[0].parameters;

  it('is keyed by content: new executor objects for the same tools find the built index', () => {
    const first = sharedToolSearchIndex(tools());
    const before = builds();
    const second = sharedToolSearchIndex(tools());
    expect(builds()).toBe(before);
    expect(flatNames(second.search('archive message', 8))).toEqual(flatNames(first.search('archive message', 8)));
    // a different search text is another index
    const email = sharedToolSearchIndex(tools('Archive an email.'));
    expect(builds()).toBe(before + 1);
    expect(flatNames(email.search('email', 8))).toEqual(['mail__archive']);
    expect(flatNames(first.search('email', 8))).toEqual([]);
  });

  it('shares the postings, not the specs: a hit returns the caller\'s own parameters', () => {
    const strings = sharedToolSearchIndex(tools('Archive a letter.'));
    const before = builds();
    // the same search text (types are not searched) with another parameter type: no build, its own spec
    const integers = sharedToolSearchIndex(tools('Archive a letter.', 'integer'));
    expect(builds()).toBe(before);
    expect(archiveSpec(integers)).toEqual({ type: 'object', properties: { folder: { type: 'integer', description: 'Where to.' } }, required: ['folder'] });
    expect(archiveSpec(strings)).toEqual({ type: 'object', properties: { folder: { type: 'string', description: 'Where to.' } }, required: ['folder'] });
  });

  it('sees a replaced spec on the same executor object', () => {
    const [archive] = tools();
    sharedToolSearchIndex([archive]);
    const before = builds();
    const mutable = archive as { spec: unknown };
    mutable.spec = { ...archive.spec, description: 'Shred a letter.' };
    const after = sharedToolSearchIndex([archive]);
    expect(builds()).toBe(before + 1);
    expect(flatNames(after.search('shred', 8))).toEqual(['mail__archive']);
  });

  it('keys are unambiguous: two sets whose texts concatenate to the same string are two indexes', () => {
    const tool = (name: string, searchText: string) => fn(name, { exposure: 'deferred', description: ' ', searchText });
    const one = () => [tool('k', 'q'), tool('n', 'zm m m m s')];
    const other = () => [tool('k', 'qn n n n z'), tool('m', 's')];
    expect(one().map(toolSearchText)).toEqual(['k k k k q', 'n n n n zm m m m s']);
    expect(one().map(toolSearchText).join('')).toBe(other().map(toolSearchText).join(''));
    const first = sharedToolSearchIndex(one());
    const before = builds();
    const second = sharedToolSearchIndex(other());
    expect(builds()).toBe(before + 1);
    expect(flatNames(second.search('qn', 8))).toEqual(['k']);
    expect(flatNames(first.search('qn', 8))).toEqual([]);
    sharedToolSearchIndex(one());
    expect(builds()).toBe(before + 1);
  });

  it('keeps at most 8 tool sets, dropping the least recently used', () => {
    const sets = () => Array.from({ length: 10 }, (_, index) => [fn(`only_${index}`, { exposure: 'deferred' })]);
    for (const set of sets()) sharedToolSearchIndex(set);
    const before = builds();
    const fresh = sets();
    sharedToolSearchIndex(fresh[9]);
    sharedToolSearchIndex(fresh[2]);
    expect(builds()).toBe(before);
    sharedToolSearchIndex(fresh[0]);
    expect(builds()).toBe(before + 1);
  });

  it('executors over the same tools share one index: a second session searches without rebuilding', async () => {
    const corpus = () => fiftyDeferredTools();
    const one = createToolSearchExecutor(corpus());
    const two = createToolSearchExecutor(corpus());
    const first = (output: ToolOutput) =>
      flatNames(output.codeModeResult({ kind: 'tool-search', arguments: { query: 'x' } }) as unknown as WireTool[])[0];
    expect(first(await search(one, 'send an email'))).toBe('mail__send_message');
    const before = builds();
    expect(first(await search(two, 'send an email'))).toBe('mail__send_message');
    expect(builds()).toBe(before);
  });
});

describe('a budgeted description', () => {
  it('cuts the source list where the sources budget ends and counts the rest', () => {
    const deferred = Array.from({ length: 30 }, (_, index) =>
      fn(`tool_${index}`, { namespace: `server${String(index).padStart(2, '0')}__`, namespaceDescription: `Server number ${index}.`, exposure: 'deferred' }),
    );
    const description = createToolSearchExecutor(deferred, { sourcesBudgetTokens: 60 }).spec.description;
    const lines = description.split('\n').filter((line) => line.startsWith('- '));
    expect(lines[0]).toBe('- server00__: Server number 0.');
    expect(lines.at(-1)).toBe(`- … and ${31 - lines.length} more sources`);
    expect(lines.length).toBeGreaterThan(3);
    expect(lines.length).toBeLessThan(20);
    expect(createToolSearchExecutor(deferred).spec.description.split('\n').filter((line) => line.startsWith('- '))).toHaveLength(30);
  });

  it('says how many tools are loaded upfront when a budget deferred some', () => {
    const description = createToolSearchExecutor([fn('a', { exposure: 'deferred' })], { catalog: { visible: 12, total: 340 } }).spec.description;
    expect(description.endsWith('\n\nTool catalog: 12 of 340 tools are loaded upfront; use `tool_search` to find and load the other 328.')).toBe(true);
  });

  it('says so in a short line when the budget kept every tool upfront', () => {
    const deferred = [fn('a', { exposure: 'deferred' })];
    const line = (catalog: { visible: number; total: number; complete?: boolean }) =>
      createToolSearchExecutor(deferred, { catalog }).spec.description.split('\n\n').at(-1);
    expect(line({ visible: 12, total: 15, complete: true })).toBe('Tool catalog: 12 of 15 tools are loaded upfront.');
    expect(line({ visible: 4, total: 4, complete: true })).toBe('Tool catalog: complete (4 tools).');
    expect(line({ visible: 1, total: 1, complete: true })).toBe('Tool catalog: complete (1 tool).');
    expect(line({ visible: 12, total: 15, complete: false })).toBe(line({ visible: 12, total: 15 }));
  });
});
