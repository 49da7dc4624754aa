import { describe, expect, it } from 'vitest';
import { toolName, type CodeModeSurface, type NestedToolDefinition, type ToolOutput } from '@switchyard/protocol';
import { JsonToolOutput } from '@switchyard/kit';
import { SEARCH_NOTE, execDescription } from './description';
import { DispatchBroker } from './dispatch-broker';

// What Code Mode adds for cells that search: the exec description's search note, found tools
// described first under a budget, and a search answered with the tools the cell can call.

const nestedFn = (name: string, extra: Partial<NestedToolDefinition> = {}): NestedToolDefinition => ({
  toolName: toolName(name, 'docs__'),
  codeModeName: `docs__${name}`,
  description: `The ${name} tool. ${'It does a great many things, described at length here. '.repeat(6)}`,
  kind: 'function',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
  deferred: false,
  ...extra,
});
const search: NestedToolDefinition = {
  toolName: toolName('tool_search'),
  codeModeName: 'tool_search',
  description: 'Searches the nested tools.',
  kind: 'function',
  deferred: false,
};

describe('the exec description when cells can search', () => {
  const tools = [nestedFn('alpha'), nestedFn('beta', { deferred: true }), search];

  it('follows the deferred-tools note with the search note, in code-mode and code-mode-only', () => {
    const codeMode = execDescription({ mode: 'code-mode', tools, hasDeferredTools: true, toolSearch: true });
    expect(codeMode.endsWith(`To find one, filter \`ALL_TOOLS\` by \`name\` and \`description\`.\n${SEARCH_NOTE}`)).toBe(true);
    const only = execDescription({ mode: 'code-mode-only', tools, hasDeferredTools: true, toolSearch: true, budget: { tokens: Infinity } });
    expect(only).toContain(`Tool catalog: 2 of 3 nested tools are described below.\nSome deferred nested tools may be omitted from this description.`);
    expect(only).toContain(`by \`name\` and \`description\`.\n${SEARCH_NOTE}\n\n`);
    expect(only).toContain('### `tool_search`\nSearches the nested tools.');
    // without the search the text is what it was
    expect(execDescription({ mode: 'code-mode', tools: tools.slice(0, 2), hasDeferredTools: true })).not.toContain(SEARCH_NOTE);
  });

  it('a description the budget cuts carries the search note and describes found tools first', () => {
    const many = Array.from({ length: 12 }, (_, index) => nestedFn(`tool_${String(index).padStart(2, '0')}`));
    const found = nestedFn('tool_11', { discovered: true });
    const surface = (list: NestedToolDefinition[]): CodeModeSurface => ({ mode: 'code-mode-only', tools: list, hasDeferredTools: false, toolSearch: true, budget: { tokens: 1200 } });
    const before = execDescription(surface([...many, search]));
    expect(before).toMatch(/Tool catalog: \d+ of 13 nested tools are described below; the others are left out to save space\./);
    expect(before).toContain(SEARCH_NOTE);
    expect(before).not.toContain('### `docs__tool_11`');
    const after = execDescription(surface([...many.slice(0, 11), found, search]));
    expect(after).toContain('### `docs__tool_11`');
  });
});

describe('a search from a cell whose tools changed since it began', () => {
  it('is answered with the tools the cell can call (its held JSON is not used)', async () => {
    const broker = new DispatchBroker();
    const answer = { tools: [{ name: 'docs__alpha', description: 'a', declaration: 'x' }, { name: 'docs__newer', description: 'n', declaration: 'y' }] };
    broker.attachWorker({ handle: () => Promise.resolve({ output: new JsonToolOutput(answer) as ToolOutput, success: true }) });
    const { cellId } = await broker.createCell([nestedFn('alpha'), search], 'exec-1', async (id) => ({ cellId: id }));
    const call = (tool: string) => ({ cellId, runtimeToolCallId: `tool-${tool}`, tool, input: { query: 'alpha newer' }, signal: new AbortController().signal });
    expect(await broker.invoke(call('tool_search'))).toEqual({ tools: [answer.tools[0]] });
    expect(await broker.invokeJson(call('tool_search'))).toEqual({ value: { tools: [answer.tools[0]] } });
    // any other tool's answer is passed through as it came (held JSON and all)
    expect(await broker.invokeJson(call('docs__alpha'))).toEqual({ json: JSON.stringify(answer) });
  });

  it('an answer that holds only callable tools keeps its JSON text', async () => {
    const broker = new DispatchBroker();
    const answer = { tools: [{ name: 'docs__alpha', description: 'a', declaration: 'x' }] };
    broker.attachWorker({ handle: () => Promise.resolve({ output: new JsonToolOutput(answer) as ToolOutput, success: true }) });
    const { cellId } = await broker.createCell([nestedFn('alpha'), search], 'exec-1', async (id) => ({ cellId: id }));
    expect(await broker.invokeJson({ cellId, runtimeToolCallId: 'tool-1', tool: 'tool_search', input: { query: 'a' }, signal: new AbortController().signal })).toEqual({
      json: JSON.stringify(answer),
    });
  });
});
