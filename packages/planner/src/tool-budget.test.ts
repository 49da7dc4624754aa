import type { ToolExecutor, ToolMode, WireTool } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { estimateTokens } from '@switchyard/kit/internal';
import { invokeTool } from '@switchyard/registry/testing';
import { describe, expect, it } from 'vitest';
import { fn, freeform, recordingContributor, visibleNames } from '../test/fixtures';
import { planTools, type ToolSources } from './plan-tools';
import { resolveToolBudget } from './tool-budget';

const searching = { namespaceTools: true, toolSearch: true };

/** `count` function tools with a 3-field schema; every tenth in namespace `svc{n}__`. */
function many(count: number, options: { namespaces?: number; exposure?: 'deferred' } = {}): ToolExecutor[] {
  return Array.from({ length: count }, (_, index) =>
    defineFunctionTool({
      name: `get_record_${index}`,
      namespace: options.namespaces ? `svc${index % options.namespaces}__` : undefined,
      namespaceDescription: options.namespaces ? `Service ${index % options.namespaces} records.` : undefined,
      description: `Fetch record ${index} of a customer account by its identifier, with status and totals.`,
      parameters: {
        type: 'object',
        properties: {
          account_id: { type: 'string', description: 'The account identifier.' },
          record_id: { type: 'integer', description: 'The record number.' },
          verbose: { type: 'boolean', description: 'Whether to include the history.' },
        },
        required: ['account_id', 'record_id'],
      },
      exposure: options.exposure,
      handle: ({ args }) => ({ index, args }),
    }),
  );
}

const searchSpec = (tools: readonly WireTool[]) => tools.find((tool) => tool.type === 'tool_search') as { description: string } | undefined;

describe('the tool budget in direct mode', () => {
  it('keeps direct tools visible in host order up to the budget and defers the rest behind tool_search', () => {
    const executors = many(200);
    const plan = planTools({ toolMode: 'direct', provider: searching }, { executors });
    expect(estimateTokens(JSON.stringify(plan.tools))).toBeLessThanOrEqual(2_000);
    const names = visibleNames(plan.tools);
    expect(names.at(-1)).toBe('tool_search');
    const visible = names.slice(0, -1);
    // every tool costs the same, so the visible ones are a prefix of the host order
    expect(visible).toEqual(executors.slice(0, visible.length).map((executor) => executor.name.name));
    expect(visible.length).toBeGreaterThan(3);
    expect(plan.deferredByBudget).toEqual(executors.slice(visible.length).map((executor) => executor.name.name));
    expect(searchSpec(plan.tools)?.description).toContain(
      `\n\nTool catalog: ${visible.length} of 200 tools are loaded upfront; use \`tool_search\` to find and load the other ${200 - visible.length}.`,
    );
    // deferred by the budget: still registered, reported as not visible, with the executor's own exposure
    expect(plan.executors).toHaveLength(201);
    const row = plan.describe().find((entry) => entry.name === 'get_record_199');
    expect(row).toMatchObject({ exposure: 'direct', visible: false, registered: true });
  });

  it('tool_search finds and returns a tool the budget deferred', async () => {
    const plan = planTools({ toolMode: 'direct', provider: searching }, { executors: many(200) });
    const search = plan.executors.find((executor) => executor.spec.type === 'tool_search') as ToolExecutor;
    const { item: answer } = await invokeTool(search, { kind: 'tool-search', arguments: { query: 'record 187', limit: 1 } }, { callId: 'c1' });
    const item = answer as unknown as { call_id: string; tools: WireTool[] };
    expect(item.call_id).toBe('c1');
    expect(item.tools).toEqual([expect.objectContaining({ type: 'function', name: 'get_record_187', defer_loading: true })]);
  });

  it('priority hints keep named tools and namespaces visible first', () => {
    const executors = many(200, { namespaces: 40 });
    const plan = planTools(
      { toolMode: 'direct', provider: searching },
      { executors, budget: { priority: ['svc37__get_record_197', 'svc3__'] } },
    );
    const namespaces = plan.tools.filter((tool) => tool.type === 'namespace') as Array<{ name: string; tools: Array<{ name: string }> }>;
    // kept by priority, shown in host order
    expect(namespaces.find((tool) => tool.name === 'svc3__')?.tools).toHaveLength(5);
    expect(namespaces.map((tool) => tool.name)).toEqual([...namespaces.map((tool) => tool.name)].sort((a, b) => Number(a.slice(3, -2)) - Number(b.slice(3, -2))));
    expect(namespaces.find((tool) => tool.name === 'svc37__')?.tools.map((tool) => tool.name)).toEqual(['get_record_197']);
    expect(plan.deferredByBudget).not.toContain('svc37__get_record_197');
    expect(plan.deferredByBudget).toContain('svc37__get_record_37');
    expect(plan.deferredByBudget.some((name) => name.startsWith('svc3__'))).toBe(false);
  });

  it('never defers direct-model-only, freeform or hosted tools', () => {
    const executors = [fn('new_context', { exposure: 'direct-model-only' }), freeform('apply_patch'), ...many(150)];
    const plan = planTools({ toolMode: 'direct', provider: searching }, { executors, hostedSpecs: [{ type: 'hosted', json: { type: 'web_search' } }] });
    expect(visibleNames(plan.tools).slice(0, 2)).toEqual(['new_context', 'apply_patch']);
    expect(visibleNames(plan.tools).slice(-2)).toEqual(['tool_search', 'web_search']);
    expect(plan.deferredByBudget).not.toContain('new_context');
    expect(plan.deferredByBudget).not.toContain('apply_patch');
    expect(plan.deferredByBudget.length).toBeGreaterThan(100);
  });

  it('without tool_search nothing is deferred: the plan warns once and keeps every tool', () => {
    const plan = planTools({ toolMode: 'direct', provider: { namespaceTools: true } }, { executors: many(100) });
    expect(plan.tools).toHaveLength(100);
    expect(plan.deferredByBudget).toEqual([]);
    expect(plan.warnings.map((warning) => warning.message)).toEqual([
      expect.stringMatching(/^the visible tools take more than \d+ tokens, over the tool budget of 2000; the provider cannot search deferred tools \(provider\.toolSearch\), so all stay visible$/),
    ]);
  });

  it("a host tool named tool_search keeps its name and turns deferral off", () => {
    const plan = planTools({ toolMode: 'direct', provider: searching }, { executors: [fn('tool_search'), ...many(100)] });
    expect(plan.tools).toHaveLength(101);
    expect(plan.warnings.map((warning) => warning.message)).toEqual([expect.stringContaining('a host tool named "tool_search" holds the name, so none is deferred')]);
  });

  it('{ tokens: Infinity } turns the budget off; a small table is the same with and without it but for the catalog line', () => {
    const off = planTools({ toolMode: 'direct', provider: searching }, { executors: many(100), budget: { tokens: Infinity } });
    expect(off.tools).toHaveLength(100);
    expect(off.deferredByBudget).toEqual([]);
    const line = '\n\nTool catalog: 2 of 3 tools are loaded upfront.';
    for (const toolMode of ['direct', 'code-mode', 'code-mode-only'] as ToolMode[]) {
      const sources = (): ToolSources => ({
        executors: [fn('read_file'), fn('archive', { namespace: 'mail', exposure: 'deferred' }), fn('alpha', { namespace: 'docs', namespaceDescription: 'Docs.' })],
        codeMode: recordingContributor(),
      });
      const budgeted = planTools({ toolMode, provider: searching }, sources());
      const unbudgeted = planTools({ toolMode, provider: searching }, { ...sources(), budget: { tokens: Infinity } });
      expect(budgeted.deferredByBudget).toEqual([]);
      // tool_search (visible outside code-mode-only) says the budget kept every tool it could: a short line, nothing else changes
      const withoutLine = JSON.stringify(budgeted.tools).replace(JSON.stringify(line).slice(1, -1), '');
      expect(withoutLine).toBe(JSON.stringify(unbudgeted.tools));
      if (toolMode === 'code-mode-only') expect(JSON.stringify(budgeted.tools)).toBe(JSON.stringify(unbudgeted.tools));
      else {
        expect(searchSpec(budgeted.tools)?.description.endsWith(line)).toBe(true);
        expect(searchSpec(unbudgeted.tools)?.description).not.toContain('Tool catalog:');
        expect(estimateTokens(JSON.stringify(budgeted.tools)) - estimateTokens(JSON.stringify(unbudgeted.tools))).toBeLessThanOrEqual(17);
      }
    }
  });

  it('plans stay byte-identical across steps and across fresh executor objects when the budget cuts', () => {
    for (const toolMode of ['direct', 'code-mode'] as ToolMode[]) {
      const first = planTools({ toolMode, provider: searching }, { executors: many(300, { namespaces: 7 }), codeMode: recordingContributor() });
      const second = planTools({ toolMode, provider: searching }, { executors: many(300, { namespaces: 7 }), codeMode: recordingContributor() });
      expect(first.deferredByBudget.length).toBeGreaterThan(200);
      expect(JSON.stringify(second.tools)).toBe(JSON.stringify(first.tools));
    }
  });

  it('bounds the list of tool_search sources to a quarter of the budget', () => {
    const executors = many(400, { namespaces: 200, exposure: 'deferred' });
    const plan = planTools({ toolMode: 'direct', provider: searching }, { executors });
    const description = searchSpec(plan.tools)?.description ?? '';
    const sources = description.split('\n').filter((line) => line.startsWith('- '));
    expect(sources.at(-1)).toMatch(/^- … and \d+ more sources$/);
    const listed = sources.length - 1;
    expect(Number(/and (\d+) more/.exec(sources.at(-1) as string)?.[1])).toBe(200 - listed);
    expect(estimateTokens(sources.join('\n'))).toBeLessThanOrEqual(500);
    // only host-deferred tools: the budget cut nothing, so the line is the short one
    expect(description.endsWith('\n\nTool catalog: 0 of 400 tools are loaded upfront.')).toBe(true);
    expect(plan.deferredByBudget).toEqual([]);
  });

  it('in code-mode, deferred-by-budget tools stay callable from a cell', () => {
    const contributor = recordingContributor();
    const plan = planTools({ toolMode: 'code-mode', provider: searching }, { executors: many(100), codeMode: contributor });
    expect(plan.deferredByBudget.length).toBeGreaterThan(80);
    expect(plan.codeModeSurface?.tools).toHaveLength(100);
    expect(plan.describe().find((row) => row.name === 'get_record_99')).toMatchObject({ visible: false, callableFromCode: true });
    expect(contributor.calls[0].surface.budget).toEqual({ tokens: 2_000 });
  });

  it('counts with the host counter; a broken counter falls back to the estimate', () => {
    const byCharacter = planTools({ toolMode: 'direct', provider: searching }, { executors: many(100), budget: { countTokens: (text) => text.length } });
    const estimated = planTools({ toolMode: 'direct', provider: searching }, { executors: many(100) });
    expect(JSON.stringify(byCharacter.tools).length).toBeLessThanOrEqual(2_000);
    expect(byCharacter.deferredByBudget.length).toBeGreaterThan(estimated.deferredByBudget.length);
    const broken = planTools({ toolMode: 'direct', provider: searching }, { executors: many(100), budget: { countTokens: () => Number.NaN } });
    expect(JSON.stringify(broken.tools)).toBe(JSON.stringify(estimated.tools));
  });

  it.each([
    [{ tokens: 0 }, 'sources.budget.tokens must be a positive number of tokens (Infinity turns the budget off), got 0'],
    [{ tokens: '2000' }, 'sources.budget.tokens must be a positive number of tokens (Infinity turns the budget off), got 2000'],
    [{ priority: 'exec' }, 'sources.budget.priority must be a list of tool or namespace names'],
    [{ countTokens: 5 }, 'sources.budget.countTokens must be a function (text) => number'],
    [7, 'sources.budget must be an object like { tokens: 2000 }'],
  ])('a bad budget %j is a CONFIG error naming the option', (budget, message) => {
    expect(() => planTools({ toolMode: 'direct', provider: searching }, { executors: [], budget: budget as never })).toThrow(
      expect.objectContaining({ code: 'CONFIG', message }),
    );
    expect(() => resolveToolBudget(budget, 'toolBudget')).toThrow(expect.objectContaining({ code: 'CONFIG', message: message.replace('sources.budget', 'toolBudget') }));
  });
});

describe('reuse across steps', () => {
  it('an unchanged tool keeps its definition and visible spec; a replaced spec is seen at once', () => {
    const executors = many(3);
    const plan = () => planTools({ toolMode: 'code-mode', provider: searching }, { executors, codeMode: recordingContributor() });
    const first = plan();
    const second = plan();
    expect(second.codeModeSurface?.tools[0]).toBe(first.codeModeSurface?.tools[0]);
    expect(second.modelVisibleSpecs[2]).toBe(first.modelVisibleSpecs[2]);
    const target = executors[0] as { spec: ToolExecutor['spec'] };
    target.spec = { ...target.spec, description: 'Replaced description.' } as ToolExecutor['spec'];
    const third = plan();
    const definition = third.codeModeSurface?.tools.find((tool) => tool.codeModeName === 'get_record_0');
    expect(definition?.description).toBe('Replaced description.');
    expect(JSON.stringify(third.tools)).toContain('Replaced description.\\n\\nexec tool declaration:');
  });
});
