import { toolName, toWireTools, type HostedToolSpec, type ToolExecutor, type ToolExposure, type ToolMode } from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';
import { ToolCallRuntime, ToolRegistry, createToolRouter } from '@switchyard/registry';
import { describe, expect, it } from 'vitest';
import { fn, freeform, recordingContributor, visibleNames } from '../test/fixtures';
import { planTools } from './plan-tools';
import { createPlanCache } from './plan-cache';

const provider = { namespaceTools: true, toolSearch: false };
const webSearch: HostedToolSpec = { type: 'hosted', json: { type: 'web_search', external_web_access: true } };

describe('exposure × tool mode', () => {
  const table: Array<[ToolExposure, ToolMode, { visible: boolean; callableFromCode: boolean }]> = [
    ['direct', 'direct', { visible: true, callableFromCode: false }],
    ['direct-model-only', 'direct', { visible: true, callableFromCode: false }],
    ['deferred', 'direct', { visible: false, callableFromCode: false }],
    ['hidden', 'direct', { visible: false, callableFromCode: false }],
    ['direct', 'code-mode', { visible: true, callableFromCode: true }],
    ['direct-model-only', 'code-mode', { visible: true, callableFromCode: false }],
    ['deferred', 'code-mode', { visible: false, callableFromCode: true }],
    ['hidden', 'code-mode', { visible: false, callableFromCode: false }],
    ['direct', 'code-mode-only', { visible: false, callableFromCode: true }],
    ['direct-model-only', 'code-mode-only', { visible: true, callableFromCode: false }],
    ['deferred', 'code-mode-only', { visible: false, callableFromCode: true }],
    ['hidden', 'code-mode-only', { visible: false, callableFromCode: false }],
  ];

  it.each(table)('%s tool in %s mode', (exposure, toolMode, expected) => {
    const probe = fn('probe', { exposure });
    const plan = planTools({ toolMode, provider }, { executors: [probe], codeMode: recordingContributor() });

    // Registered in every cell.
    expect(plan.executors).toContain(probe);
    const row = plan.describe().find((entry) => entry.name === 'probe');
    expect(row).toEqual({ name: 'probe', kind: 'function', exposure, visible: expected.visible, registered: true, callableFromCode: expected.callableFromCode });

    expect(visibleNames(plan.tools).includes('probe')).toBe(expected.visible);
    const nested = plan.codeModeSurface?.tools.map((tool) => tool.codeModeName) ?? [];
    expect(nested.includes('probe')).toBe(expected.callableFromCode);

    if (toolMode === 'direct') {
      expect(visibleNames(plan.tools)).not.toContain('exec');
      expect(plan.codeModeSurface).toBeUndefined();
    } else {
      // exec / wait are prepended and registered first.
      expect(visibleNames(plan.tools).slice(0, 2)).toEqual(['exec', 'wait']);
      expect(plan.executors.slice(0, 2).map((executor) => executor.name.name)).toEqual(['exec', 'wait']);
    }
    expect(plan.warnings.filter((warning) => warning.toolName === 'probe')).toEqual([]);
  });

  it('code-mode keeps direct tools visible with the usage sample; direct-model-only tools are not augmented', () => {
    const weather = fn('get_weather', {
      description: 'Current weather for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      outputSchema: { type: 'object', properties: { tempC: { type: 'number' } }, required: ['tempC'] },
    });
    const modelOnly = fn('new_context', { exposure: 'direct-model-only', description: 'Start over.' });
    const plan = planTools({ toolMode: 'code-mode', provider }, { executors: [weather, modelOnly], codeMode: recordingContributor() });

    expect(visibleNames(plan.tools)).toEqual(['exec', 'wait', 'get_weather', 'new_context']);
    expect(plan.tools[2]).toMatchObject({
      type: 'function',
      name: 'get_weather',
      description:
        'Current weather for a city.\n\nexec tool declaration:\n```ts\n' +
        'declare const tools: { get_weather(args: { city: string; }): Promise<{ tempC: number; }>; };\n```',
    });
    expect(plan.tools[3]).toMatchObject({ name: 'new_context', description: 'Start over.' });
    // The executors themselves are untouched.
    expect(weather.spec.description).toBe('Current weather for a city.');
  });

  it('code-mode augments namespace members and freeform tools with their code-mode names', () => {
    const plan = planTools(
      { toolMode: 'code-mode', provider },
      { executors: [fn('curr_time', { namespace: 'clock', description: 'Current time.' }), freeform('apply_patch')], codeMode: recordingContributor() },
    );
    expect(plan.tools[2]).toMatchObject({
      type: 'namespace',
      name: 'clock',
      tools: [
        {
          name: 'curr_time',
          description:
            'Current time.\n\nexec tool declaration:\n```ts\ndeclare const tools: { clock__curr_time(args: { [key: string]: unknown; }): Promise<unknown>; };\n```',
        },
      ],
    });
    expect(plan.tools[3]).toMatchObject({
      type: 'custom',
      name: 'apply_patch',
      description:
        'The apply_patch freeform tool.\n\nexec tool declaration:\n```ts\ndeclare const tools: { apply_patch(input: string): Promise<unknown>; };\n```',
    });
  });

  it('code-mode-only shows exactly exec, wait, direct-model-only tools and hosted specs', () => {
    const plan = planTools(
      { toolMode: 'code-mode-only', provider },
      {
        executors: [fn('read_file'), fn('spawn_agent', { namespace: 'agents', exposure: 'direct-model-only' }), fn('later', { exposure: 'deferred' })],
        hostedSpecs: [webSearch],
        codeMode: recordingContributor(),
      },
    );
    expect(visibleNames(plan.tools)).toEqual(['exec', 'wait', 'agents', 'web_search']);
    expect(plan.tools[2]).toMatchObject({ type: 'namespace', name: 'agents', tools: [{ name: 'spawn_agent', description: 'The spawn_agent tool.' }] });
  });

  it('direct mode ignores the contributor and leaves descriptions alone', () => {
    const contributor = recordingContributor();
    const plan = planTools({ toolMode: 'direct', provider }, { executors: [fn('read_file')], codeMode: contributor });
    expect(contributor.calls).toEqual([]);
    expect(plan.tools).toEqual([
      { type: 'function', name: 'read_file', description: 'The read_file tool.', strict: false, parameters: { type: 'object', properties: {} } },
    ]);
  });
});

describe('duplicates, reserved names and bad input', () => {
  it('the first executor with a ToolName wins; later ones are skipped with a warning', () => {
    const first = fn('lookup', { description: 'first' });
    const second = fn('lookup', { description: 'second' });
    const namespaced = fn('lookup', { namespace: 'docs' });
    const plan = planTools({ toolMode: 'direct', provider }, { executors: [first, second, namespaced] });

    expect(plan.executors).toEqual([first, namespaced]);
    expect(plan.tools.filter((tool) => (tool as { name?: string }).name === 'lookup')).toMatchObject([{ description: 'first' }]);
    expect(plan.warnings).toEqual([
      { type: 'plan-warning', toolName: 'lookup', message: 'skipped duplicate tool "lookup": a tool with this name is already planned' },
    ]);
  });

  it('exec and wait are reserved in code mode only', () => {
    const hostExec = fn('exec');
    const hostWait = fn('wait');
    const nsExec = fn('exec', { namespace: 'shell' });
    const codePlan = planTools({ toolMode: 'code-mode', provider }, { executors: [hostExec, hostWait, nsExec], codeMode: recordingContributor() });
    expect(codePlan.executors).not.toContain(hostExec);
    expect(codePlan.executors).not.toContain(hostWait);
    expect(codePlan.executors).toContain(nsExec);
    expect(codePlan.warnings.map((warning) => warning.message)).toEqual([
      'skipped tool "exec": the name is reserved by the code-mode plan',
      'skipped tool "wait": the name is reserved by the code-mode plan',
    ]);

    const directPlan = planTools({ toolMode: 'direct', provider }, { executors: [hostExec, hostWait] });
    expect(directPlan.executors).toEqual([hostExec, hostWait]);
    expect(directPlan.warnings).toEqual([]);
  });

  it('tool_search is reserved only when it is planned', () => {
    const hostSearch = fn('tool_search');
    const deferred = fn('archive', { exposure: 'deferred' });
    const planned = planTools({ toolMode: 'direct', provider: { toolSearch: true } }, { executors: [hostSearch, deferred] });
    expect(planned.executors).not.toContain(hostSearch);
    expect(planned.executors.map((executor) => executor.spec.type)).toEqual(['function', 'tool_search']);
    expect(planned.warnings).toContainEqual({
      type: 'plan-warning',
      toolName: 'tool_search',
      message: 'skipped tool "tool_search": the name is reserved by the planned tool_search',
    });

    const notPlanned = planTools({ toolMode: 'direct', provider: { toolSearch: true } }, { executors: [hostSearch] });
    expect(notPlanned.executors).toEqual([hostSearch]);
  });

  it('skips invalid schemas, empty names and broken objects with a warning naming each; the rest is planned', () => {
    const good = fn('good');
    const badSchema = fn('bad_schema', { parameters: { type: 'object', properties: { city: { type: 'strnig' } } } });
    const notObject = fn('not_object', { parameters: { type: 'string' } });
    const circular: Record<string, unknown> = { type: 'object', properties: {} };
    (circular.properties as Record<string, unknown>).self = circular;
    const loop = fn('loop', { parameters: circular });
    const empty = fn('  ');
    const noHandle = { name: toolName('no_handle'), spec: { type: 'function', name: 'no_handle', description: '', parameters: { type: 'object' } } };
    const mismatch = { ...fn('alias'), name: toolName('other') };
    const throwing = {
      get name(): never {
        throw new Error('boom');
      },
    };
    const plan = planTools(
      { toolMode: 'direct', provider },
      { executors: [badSchema, null, notObject, loop, empty, noHandle, mismatch, throwing, good] as unknown as ToolExecutor[] },
    );

    expect(plan.executors).toEqual([good]);
    expect(visibleNames(plan.tools)).toEqual(['good']);
    expect(plan.warnings.map((warning) => [warning.toolName, warning.message])).toEqual([
      ['bad_schema', 'skipped tool "bad_schema": invalid schema: parameters.properties.city.type must be a JSON type name or a list of them'],
      ['<unnamed>', 'skipped tool "<unnamed>": not a tool executor object'],
      ['not_object', 'skipped tool "not_object": invalid schema: parameters must describe an object (type "object")'],
      ['loop', 'skipped tool "loop": invalid schema: parameters.properties.self is circular'],
      ['  ', 'skipped tool "  ": empty name'],
      ['no_handle', 'skipped tool "no_handle": missing handle function'],
      ['other', 'skipped tool "other": spec name "alias" does not match tool name "other"'],
      ['<unnamed>', 'skipped tool "<unnamed>": unreadable executor (boom)'],
    ]);
  });

  it('a missing or throwing contributor degrades the plan to direct with a warning', () => {
    const tool = fn('read_file');
    const missing = planTools({ toolMode: 'code-mode-only', provider }, { executors: [tool] });
    expect(missing.toolMode).toBe('direct');
    expect(visibleNames(missing.tools)).toEqual(['read_file']);
    expect(missing.warnings.map((warning) => warning.message)).toEqual([
      'tool mode "code-mode-only" needs a CodeModeContributor (sources.codeMode); planned as direct',
    ]);

    const throwing = planTools(
      { toolMode: 'code-mode-only', provider },
      {
        executors: [tool],
        codeMode: {
          executors() {
            throw new Error('runtime unavailable');
          },
        },
      },
    );
    expect(throwing.toolMode).toBe('direct');
    expect(throwing.codeModeSurface).toBeUndefined();
    expect(visibleNames(throwing.tools)).toEqual(['read_file']);
    expect(throwing.warnings.map((warning) => warning.message)).toEqual(['code-mode contributor failed: runtime unavailable; planned as direct']);
  });

  it('a missing context, sources or unknown tool mode never throws', () => {
    expect(planTools(undefined as never, undefined as never)).toMatchObject({ toolMode: 'direct', tools: [], executors: [] });
    const plan = planTools({ toolMode: 'turbo' as ToolMode, provider }, { executors: [fn('read_file')] });
    expect(plan.toolMode).toBe('direct');
    expect(visibleNames(plan.tools)).toEqual(['read_file']);
    expect(plan.warnings.map((warning) => warning.message)).toEqual(['unknown tool mode "turbo"; planned as direct']);
  });

  it('bad hosted specs are skipped; good ones are appended last and never registered', () => {
    const image: HostedToolSpec = { type: 'hosted', json: { type: 'image_generation', output_format: 'png' } };
    const plan = planTools(
      { toolMode: 'direct', provider },
      { executors: [fn('read_file')], hostedSpecs: [webSearch, { type: 'hosted', json: {} } as unknown as HostedToolSpec, image] },
    );
    expect(plan.tools.slice(1)).toEqual([
      { type: 'web_search', external_web_access: true },
      { type: 'image_generation', output_format: 'png' },
    ]);
    expect(plan.hostedSpecs).toEqual([webSearch, image]);
    expect(plan.executors.map((executor) => executor.name.name)).toEqual(['read_file']);
    expect(plan.warnings.map((warning) => warning.message)).toEqual(['skipped hosted spec: json.type must be a non-empty string']);
    expect(plan.describe().slice(1)).toEqual([
      { name: 'web_search', kind: 'hosted', exposure: 'direct', visible: true, registered: false, callableFromCode: false },
      { name: 'image_generation', kind: 'hosted', exposure: 'direct', visible: true, registered: false, callableFromCode: false },
    ]);
  });

  it('a namespaced freeform tool is shown in its namespace in direct mode, and the model\'s call with that namespace routes to it', async () => {
    const patch = freeform('apply', { namespace: 'files' });
    const plan = planTools({ toolMode: 'direct', provider }, { executors: [fn('read_file', { namespace: 'files' }), patch] });
    expect(plan.executors).toEqual([expect.objectContaining({ name: { name: 'read_file', namespace: 'files' } }), patch]);
    expect(plan.warnings).toEqual([]);
    expect(plan.tools).toEqual([
      {
        type: 'namespace',
        name: 'files',
        description: 'Tools in the files namespace.',
        tools: [
          { type: 'custom', name: 'apply', description: 'The apply freeform tool.', format: { type: 'text' } },
          expect.objectContaining({ type: 'function', name: 'read_file' }),
        ],
      },
    ]);
    const runtime = new ToolCallRuntime({ router: createToolRouter({ specs: plan.modelVisibleSpecs, registry: ToolRegistry.from(plan.executors) }), step: createStepContext() });
    const called = await runtime.handleItem({ type: 'custom_tool_call', call_id: 'call-1', name: 'apply', namespace: 'files', input: '*** Begin Patch' });
    expect(called?.item).toEqual({ type: 'custom_tool_call_output', call_id: 'call-1', output: '*** Begin Patch' });
  });

  it('a namespaced freeform tool is hidden with a warning, like a namespaced function, when the provider takes no namespaces', () => {
    const patch = freeform('apply', { namespace: 'files' });
    const plan = planTools({ toolMode: 'direct', provider: { namespaceTools: false } }, { executors: [patch] });
    expect(plan.executors).toEqual([patch]);
    expect(plan.tools).toEqual([]);
    expect(plan.warnings.map((warning) => warning.message)).toEqual([
      'tool "files__apply" is registered but not visible: the provider does not accept namespaces (provider.namespaceTools is false)',
    ]);
  });
});

describe('namespaces in a plan', () => {
  const tools = () => [
    fn('zeta', { namespace: 'docs' }),
    fn('plain_one'),
    fn('alpha', { namespace: 'docs', namespaceDescription: '  ' }),
    fn('curr_time', { namespace: 'clock', namespaceDescription: 'Time tools.' }),
    fn('middle', { namespace: 'docs', namespaceDescription: 'Documentation search.' }),
    fn('hidden_member', { namespace: 'docs', exposure: 'hidden' }),
  ];

  it('merges at the first occurrence, sorts members and takes the first non-blank description', () => {
    const plan = planTools({ toolMode: 'direct', provider }, { executors: tools() });
    expect(visibleNames(plan.tools)).toEqual(['docs', 'plain_one', 'clock']);
    expect(plan.tools[0]).toMatchObject({ type: 'namespace', name: 'docs', description: 'Documentation search.' });
    expect(visibleNames((plan.tools[0] as { tools: { type: string; name: string }[] }).tools)).toEqual(['alpha', 'middle', 'zeta']);
    expect(plan.tools[2]).toMatchObject({ name: 'clock', description: 'Time tools.' });
  });

  it('a provider without namespace support gets no namespace specs; the tools stay registered', () => {
    const plan = planTools({ toolMode: 'direct', provider: { namespaceTools: false } }, { executors: tools(), hostedSpecs: [webSearch] });
    expect(visibleNames(plan.tools)).toEqual(['plain_one', 'web_search']);
    expect(plan.executors).toHaveLength(6);
    expect(plan.describe().filter((row) => row.name.startsWith('docs')).map((row) => [row.name, row.visible, row.registered])).toEqual([
      ['docs__zeta', false, true],
      ['docs__alpha', false, true],
      ['docs__middle', false, true],
      ['docs__hidden_member', false, true],
    ]);
    // hidden, but never silently: one warning per namespaced tool the model would have seen
    expect(plan.warnings.map((warning) => warning.toolName)).toEqual(['docs__zeta', 'docs__alpha', 'clock__curr_time', 'docs__middle']);
    expect(plan.warnings[0].message).toBe('tool "docs__zeta" is registered but not visible: the provider does not accept namespaces (provider.namespaceTools is false)');
  });

  it('namespaced tools stay callable from code without namespace support', () => {
    const plan = planTools({ toolMode: 'code-mode-only', provider: { namespaceTools: false } }, { executors: tools(), codeMode: recordingContributor() });
    expect(plan.codeModeSurface?.tools.map((tool) => tool.codeModeName)).toEqual([
      'clock__curr_time',
      'docs__alpha',
      'docs__middle',
      'docs__zeta',
      'plain_one',
    ]);
  });
});

describe('tool_search planning', () => {
  const deferred = () => fn('archive_mail', { namespace: 'mail', exposure: 'deferred' });

  it('is planned after the host tools when a deferred tool exists and the provider supports it', () => {
    const plan = planTools({ toolMode: 'direct', provider: { toolSearch: true } }, { executors: [fn('read_file'), deferred()], hostedSpecs: [webSearch] });
    expect(visibleNames(plan.tools)).toEqual(['read_file', 'tool_search', 'web_search']);
    const search = plan.executors.at(-1);
    expect(search?.name).toEqual({ name: 'tool_search' });
    expect(search?.supportsParallelToolCalls).toBe(true);
    expect(plan.describe().at(-2)).toEqual({
      name: 'tool_search',
      kind: 'tool_search',
      exposure: 'direct',
      visible: true,
      registered: true,
      callableFromCode: false,
    });
  });

  it.each([
    ['no deferred tool', { toolSearch: true }, [fn('read_file')]],
    ['a provider without tool search', { toolSearch: false }, [deferred()]],
    ['a provider without namespaces', { toolSearch: true, namespaceTools: false }, [deferred()]],
  ])('is not planned with %s', (_label, capabilities, executors) => {
    const plan = planTools({ toolMode: 'direct', provider: capabilities }, { executors });
    expect(plan.executors.some((executor) => executor.spec.type === 'tool_search')).toBe(false);
    expect(visibleNames(plan.tools)).not.toContain('tool_search');
  });

  it('is planned for a deferred namespaced freeform tool, which it finds and loads (defer_loading: true) and whose call routes to it', async () => {
    const patch = freeform('apply', { namespace: 'files__', exposure: 'deferred' });
    const plan = planTools({ toolMode: 'direct', provider: { toolSearch: true } }, { executors: [fn('read_file'), patch] });
    expect(visibleNames(plan.tools)).toEqual(['read_file', 'tool_search']);
    expect(plan.warnings).toEqual([]);
    const runtime = new ToolCallRuntime({ router: createToolRouter({ specs: plan.modelVisibleSpecs, registry: ToolRegistry.from(plan.executors) }), step: createStepContext() });
    const found = await runtime.handleItem({ type: 'tool_search_call', call_id: 'search-1', execution: 'client', arguments: { query: 'apply freeform' } });
    expect(found?.item).toEqual({
      type: 'tool_search_output',
      call_id: 'search-1',
      status: 'completed',
      execution: 'client',
      tools: [
        {
          type: 'namespace',
          name: 'files__',
          description: 'Tools in the files__ namespace.',
          tools: [{ type: 'custom', name: 'apply', description: 'The apply freeform tool.', defer_loading: true, format: { type: 'text' } }],
        },
      ],
    });
    const called = await runtime.handleItem({ type: 'custom_tool_call', call_id: 'call-2', name: 'apply', namespace: 'files__', input: '*** Begin Patch' });
    expect(called?.item).toMatchObject({ type: 'custom_tool_call_output', call_id: 'call-2', output: '*** Begin Patch' });
  });

  it('warns when deferred tools cannot be reached in direct mode', () => {
    const plan = planTools({ toolMode: 'direct', provider: { toolSearch: false } }, { executors: [deferred()] });
    expect(plan.warnings.map((warning) => warning.message)).toEqual([
      'deferred tools are registered but hidden from the model: tool_search needs a provider with toolSearch and namespaceTools',
    ]);
  });

  it('is registered but hidden in code-mode-only (deferred tools are found through ALL_TOOLS and tools.tool_search)', () => {
    const plan = planTools({ toolMode: 'code-mode-only', provider: { toolSearch: true } }, { executors: [deferred()], codeMode: recordingContributor() });
    expect(visibleNames(plan.tools)).toEqual(['exec', 'wait']);
    expect(plan.executors.map((executor) => executor.name.name)).toEqual(['exec', 'wait', 'archive_mail', 'tool_search']);
    expect(plan.codeModeSurface).toMatchObject({
      hasDeferredTools: true,
      toolSearch: true,
      tools: [
        { codeModeName: 'mail__archive_mail', deferred: true },
        { codeModeName: 'tool_search', deferred: false, kind: 'function' },
      ],
    });
    expect(plan.describe().find((row) => row.name === 'tool_search')).toEqual({
      name: 'tool_search',
      kind: 'tool_search',
      exposure: 'direct',
      visible: false,
      registered: true,
      callableFromCode: true,
    });
  });

  it('is planned for cells alone when the provider cannot search: registered, callable from a cell, never visible', () => {
    for (const toolMode of ['code-mode', 'code-mode-only'] as const) {
      const plan = planTools({ toolMode, provider: { toolSearch: false } }, { executors: [fn('read_file'), deferred()], codeMode: recordingContributor() });
      expect(visibleNames(plan.tools)).not.toContain('tool_search');
      expect(plan.describe().find((row) => row.name === 'tool_search')).toMatchObject({ visible: false, registered: true, callableFromCode: true });
      expect(plan.codeModeSurface?.tools.map((tool) => tool.codeModeName)).toEqual(['mail__archive_mail', 'read_file', 'tool_search']);
    }
    // without a deferred tool there is nothing to search: no tool_search at all
    const plain = planTools({ toolMode: 'code-mode-only', provider: {} }, { executors: [fn('read_file')], codeMode: recordingContributor() });
    expect(plain.executors.map((executor) => executor.name.name)).toEqual(['exec', 'wait', 'read_file']);
    expect(plain.codeModeSurface?.toolSearch).toBeUndefined();
    // direct mode has no cells: nothing is planned without the provider's support (and a warning says why)
    const direct = planTools({ toolMode: 'direct', provider: {} }, { executors: [deferred()] });
    expect(direct.executors.map((executor) => executor.name.name)).toEqual(['archive_mail']);
  });

  it('a host tool whose Code Mode name is tool_search yields it to the cells\' search', () => {
    const own = fn('tool-search');
    const plan = planTools({ toolMode: 'code-mode-only', provider: {} }, { executors: [own, deferred()], codeMode: recordingContributor() });
    expect(plan.warnings.map((warning) => warning.message)).toContain(
      'tool "tool-search" is not callable from code mode: its code-mode name "tool_search" is reserved by the cells\' tool_search',
    );
    expect(plan.codeModeSurface?.tools.filter((tool) => tool.codeModeName === 'tool_search').map((tool) => tool.toolName.name)).toEqual(['tool_search']);
  });

});

describe('the caller-owned plan cache', () => {
  const context = { toolMode: 'direct', provider: { toolSearch: true } } as const;
  const deferred = () => fn('archive_mail', { namespace: 'mail', exposure: 'deferred' });
  const searchOf = (plan: ReturnType<typeof planTools>) => {
    const search = plan.executors.at(-1);
    expect(search?.spec.type).toBe('tool_search');
    return search;
  };

  it('one cache reused gives the same tool_search executor while the deferred tools are the same objects', () => {
    const executors = [fn('read_file'), deferred()];
    const cache = createPlanCache();
    expect(cache.size).toBe(0);
    const first = searchOf(planTools(context, { executors }, { cache }));
    expect(cache.size).toBe(1);
    expect(searchOf(planTools(context, { executors: [...executors] }, { cache }))).toBe(first);
    expect(cache.size).toBe(1);
    expect(searchOf(planTools(context, { executors: [executors[0], deferred()] }, { cache }))).not.toBe(first);
    expect(cache.size).toBe(2);
    // the cached executor is still found after another tool set was planned with the same cache
    expect(searchOf(planTools(context, { executors }, { cache }))).toBe(first);
  });

  it('two caches share no entry, and without a cache nothing is kept between plans', () => {
    const executors = [fn('read_file'), deferred()];
    const one = createPlanCache();
    const other = createPlanCache();
    const fromOne = searchOf(planTools(context, { executors }, { cache: one }));
    const fromOther = searchOf(planTools(context, { executors }, { cache: other }));
    expect(fromOther).not.toBe(fromOne);
    expect(searchOf(planTools(context, { executors }, { cache: other }))).toBe(fromOther);
    expect(searchOf(planTools(context, { executors }, { cache: one }))).toBe(fromOne);
    const uncached = searchOf(planTools(context, { executors }));
    expect(uncached).not.toBe(fromOne);
    expect(uncached).not.toBe(fromOther);
    expect(searchOf(planTools(context, { executors }))).not.toBe(uncached);
    expect([one.size, other.size]).toEqual([1, 1]);
    // what the model sees does not depend on the cache
    const wire = JSON.stringify(planTools(context, { executors }).tools);
    expect(JSON.stringify(planTools(context, { executors }, { cache: one }).tools)).toBe(wire);
    expect(JSON.stringify(planTools(context, { executors }, { cache: other }).tools)).toBe(wire);
  });

  it.each([
    ['a plain object', {}],
    ['a number', 4],
    ['null', null],
  ])('a cache that is %s (not made by createPlanCache) is a CONFIG error naming the option', (_label, cache) => {
    expect(() => planTools(context, { executors: [deferred()] }, { cache: cache as never })).toThrow(
      expect.objectContaining({ code: 'CONFIG', message: 'options.cache: expected a cache made by createPlanCache()' }),
    );
  });
});

describe('the code-mode surface handed to the contributor', () => {
  it('gets the surface and the full StepContext unchanged', () => {
    const contributor = recordingContributor();
    const step = createStepContext({ toolMode: 'code-mode', provider, sessionId: 'session-7', stepIndex: 3 });
    planTools(step, {
      executors: [fn('read_file'), fn('search', { namespace: 'mcp__docs__', exposure: 'deferred' }), fn('secret', { exposure: 'hidden' })],
      codeMode: contributor,
    });
    expect(contributor.calls).toHaveLength(1);
    expect(contributor.calls[0].step).toBe(step);
    expect(contributor.calls[0].surface).toMatchObject({
      mode: 'code-mode',
      hasDeferredTools: true,
      toolSearch: true,
      tools: [
        { codeModeName: 'mcp__docs__search', deferred: true, kind: 'function' },
        { codeModeName: 'read_file', deferred: false, kind: 'function' },
        { codeModeName: 'tool_search', deferred: false, kind: 'function' },
      ],
    });
  });

  it('fills a StepContext when only a partial context is given', () => {
    const contributor = recordingContributor();
    planTools({ toolMode: 'code-mode', provider, turnId: 'turn-9' }, { executors: [], codeMode: contributor });
    const step = contributor.calls[0].step;
    expect(step).toMatchObject({ toolMode: 'code-mode', provider, turnId: 'turn-9', sessionId: 'session', stepIndex: 1 });
    expect(step.turnState).toBeInstanceOf(Map);
  });

  it('keeps excluded namespaces out of code mode: top-level, not augmented, not callable', () => {
    const plan = planTools(
      { toolMode: 'code-mode-only', provider },
      {
        executors: [fn('read_file'), fn('navigate', { namespace: 'browser', description: 'Open a page.' })],
        codeMode: recordingContributor(),
        excludedCodeModeNamespaces: ['browser'],
      },
    );
    expect(visibleNames(plan.tools)).toEqual(['exec', 'wait', 'browser']);
    expect(plan.tools[2]).toMatchObject({ tools: [{ name: 'navigate', description: 'Open a page.' }] });
    expect(plan.codeModeSurface?.tools.map((tool) => tool.codeModeName)).toEqual(['read_file']);
  });
});

describe('determinism and inspection', () => {
  const sources = () => ({
    executors: [
      fn('zeta', { namespace: 'docs', namespaceDescription: 'Docs.' }),
      fn('read_file', { parameters: { type: 'object', properties: { path: { type: 'string', description: 'File path.' } }, required: ['path'] } }),
      fn('alpha', { namespace: 'docs' }),
      fn('archive', { namespace: 'mail', exposure: 'deferred' }),
      fn('new_context', { exposure: 'direct-model-only' }),
    ],
    hostedSpecs: [webSearch],
    codeMode: recordingContributor(),
  });

  it.each<ToolMode>(['direct', 'code-mode', 'code-mode-only'])('the same inputs give byte-identical tools JSON (%s)', (toolMode) => {
    const context = { toolMode, provider: { toolSearch: true } };
    const first = JSON.stringify(planTools(context, sources()).tools);
    const second = JSON.stringify(planTools(context, sources()).tools);
    expect(second).toBe(first);
    const plan = planTools(context, sources());
    expect(JSON.stringify(plan.tools)).toBe(JSON.stringify(toWireTools(plan.modelVisibleSpecs)));
  });

  it('describe() lists every registered executor then hosted specs', () => {
    const plan = planTools({ toolMode: 'code-mode', provider: { toolSearch: true } }, sources());
    expect(plan.describe()).toEqual([
      { name: 'exec', kind: 'custom', exposure: 'direct', visible: true, registered: true, callableFromCode: false },
      { name: 'wait', kind: 'function', exposure: 'direct', visible: true, registered: true, callableFromCode: false },
      { name: 'docs__zeta', kind: 'function', exposure: 'direct', visible: true, registered: true, callableFromCode: true },
      { name: 'read_file', kind: 'function', exposure: 'direct', visible: true, registered: true, callableFromCode: true },
      { name: 'docs__alpha', kind: 'function', exposure: 'direct', visible: true, registered: true, callableFromCode: true },
      { name: 'mail__archive', kind: 'function', exposure: 'deferred', visible: false, registered: true, callableFromCode: true },
      { name: 'new_context', kind: 'function', exposure: 'direct-model-only', visible: true, registered: true, callableFromCode: false },
      { name: 'tool_search', kind: 'tool_search', exposure: 'direct', visible: true, registered: true, callableFromCode: true },
      { name: 'web_search', kind: 'hosted', exposure: 'direct', visible: true, registered: false, callableFromCode: false },
    ]);
    expect(visibleNames(plan.tools)).toEqual(['exec', 'wait', 'docs', 'read_file', 'new_context', 'tool_search', 'web_search']);
  });

  it('the plan is frozen; describe() hands out copies', () => {
    const plan = planTools({ toolMode: 'direct', provider }, { executors: [fn('read_file')] });
    expect(Object.isFrozen(plan)).toBe(true);
    expect(Object.isFrozen(plan.tools)).toBe(true);
    const rows = plan.describe();
    rows[0] = { ...rows[0], visible: false };
    expect(plan.describe()[0].visible).toBe(true);
  });
});
