import { describe, expect, it } from 'vitest';
import { toolName, type CodeModeSurface, type NestedToolDefinition } from '@switchyard/protocol';
import { estimateTokens } from '@switchyard/kit/internal';
import { EXEC_GRAMMAR, MCP_TYPES, augmentedDescription, execDescription, nestedToolReference, toolDeclaration } from './description';

const echo: NestedToolDefinition = {
  toolName: toolName('echo', 'mcp__rmcp__'),
  codeModeName: 'mcp__rmcp__echo',
  description: 'Echo a message.',
  kind: 'function',
  inputSchema: { type: 'object', properties: { message: { type: 'string' }, env_var: { type: 'string' } }, required: ['message'] },
  outputSchema: {
    type: 'object',
    properties: {
      content: { type: 'array' },
      structuredContent: { type: 'object', properties: { echo: { type: 'string' }, env: { type: ['string', 'null'] } }, required: ['echo', 'env'] },
      isError: { type: 'boolean' },
    },
    required: ['content'],
  },
  deferred: false,
  namespaceDescription: 'Tools of the rmcp server.',
};
const patch: NestedToolDefinition = { toolName: toolName('apply_patch'), codeModeName: 'apply_patch', description: 'Edit files.', kind: 'freeform', deferred: false };
const dashed: NestedToolDefinition = {
  toolName: toolName('get-thing', 'ext'),
  codeModeName: 'ext__get_thing',
  description: 'Gets a thing.',
  kind: 'function',
  inputSchema: { type: 'object', properties: {} , additionalProperties: false },
  deferred: false,
};
const DEFERRED_GUIDANCE =
  'Some deferred nested tools may be omitted from this description. They are still available on the global `tools` object and listed in `ALL_TOOLS`.\nTo find one, filter `ALL_TOOLS` by `name` and `description`.';
const hidden: NestedToolDefinition = { toolName: toolName('later'), codeModeName: 'later', description: 'Deferred.', kind: 'function', deferred: true };

describe('the exec grammar', () => {
  it('is the reference\'s text byte for byte, blank lines included (tools/codex-differential compares it with the binary\'s)', () => {
    expect(EXEC_GRAMMAR).toBe(
      '\nstart: pragma_source | plain_source\npragma_source: PRAGMA_LINE NEWLINE SOURCE\nplain_source: SOURCE\n\n' +
        'PRAGMA_LINE: /[ \\t]*\\/\\/ @exec:[^\\r\\n]*/\nNEWLINE: /\\r?\\n/\nSOURCE: /[\\s\\S]+/\n',
    );
  });
});

describe('exec description', () => {
  it('declares MCP tools as CallToolResult<T> (reference example)', () => {
    expect(toolDeclaration(echo)).toBe(
      'declare const tools: { mcp__rmcp__echo(args: { env_var?: string; message: string; }): Promise<CallToolResult<{ echo: string; env: string | null; }>>; };',
    );
    expect(toolDeclaration(patch)).toBe('declare const tools: { apply_patch(input: string): Promise<unknown>; };');
    expect(augmentedDescription(patch)).toBe('Edit files.\n\nexec tool declaration:\n```ts\ndeclare const tools: { apply_patch(input: string): Promise<unknown>; };\n```');
  });

  it('renders the nested reference with namespace sections, raw names and no deferred tools', () => {
    expect(nestedToolReference([patch, hidden, echo, dashed])).toBe(
      [
        '### `apply_patch`\nEdit files.\n\nexec tool declaration:\n```ts\ndeclare const tools: { apply_patch(input: string): Promise<unknown>; };\n```',
        '### `ext__get_thing` (ext__get-thing)\nGets a thing.\n\nexec tool declaration:\n```ts\ndeclare const tools: { ext__get_thing(args: {}): Promise<unknown>; };\n```',
        '## mcp__rmcp__\nTools of the rmcp server.',
        `### \`mcp__rmcp__echo\`\n${augmentedDescription(echo)}`,
      ].join('\n\n'),
    );
  });

  it('code-mode gets the template (and the deferred note); code-mode-only adds the note, MCP types and the reference', () => {
    const surface: CodeModeSurface = { mode: 'code-mode', tools: [echo, patch, hidden], hasDeferredTools: true };
    const template = execDescription({ ...surface, hasDeferredTools: false });
    expect(template).toMatch(/^Run JavaScript to call tools\./);
    const plain = execDescription(surface);
    expect(plain).toBe(`${template}\n\n${DEFERRED_GUIDANCE}`);
    expect(plain).not.toContain('### `');
    expect(plain).not.toContain('Shared MCP Types:');
    const only = execDescription({ ...surface, mode: 'code-mode-only' });
    expect(only.startsWith(`${template}\n\nTool catalog: 2 of 3 nested tools are described below.\n${DEFERRED_GUIDANCE}\n\n${MCP_TYPES}\n\n`)).toBe(true);
    expect(only.split(MCP_TYPES)).toHaveLength(2);
    expect(only.endsWith(nestedToolReference([echo, patch, hidden]))).toBe(true);
    expect(only).not.toContain('Use `exec/wait` tool to run all other tools');
    const noMcp = execDescription({ mode: 'code-mode-only', tools: [patch], hasDeferredTools: false });
    expect(noMcp).not.toContain('Shared MCP Types:');
    expect(noMcp).not.toContain('ALL_TOOLS` by `name`');
    expect(noMcp).toBe(`${template}\n\nTool catalog: complete (1 tool).\n\n${nestedToolReference([patch])}`);
  });

  it('says what the defaults are, as Codex does', () => {
    const template = execDescription({ mode: 'code-mode', tools: [], hasDeferredTools: false });
    expect(template).toContain(
      '\n- `generatedImage(result: { image_url: string; output_hint?: string })`: append an image-generation result and its optional output hint. HTTP(S) URLs are not supported.\n',
    );
    expect(template).toContain(
      '\n- You may optionally start the tool input with a first-line pragma like `// @exec: {"yield_time_ms": 10000, "max_output_tokens": 1000}`.\n' +
        '- `yield_time_ms` asks `exec` to yield early if the script is still running (it answers "Script running with cell ID …"; use `wait` with that cell ID to see more). Defaults to 10000 ms.\n' +
        '- `max_output_tokens` sets the token budget for direct `exec` results. Defaults to 10000 tokens.\n',
    );
  });

  it('adds the shared MCP types once when only a deferred tool has an MCP result, and does not describe that tool', () => {
    const deferredMcp: NestedToolDefinition = { ...echo, deferred: true };
    const text = execDescription({ mode: 'code-mode-only', tools: [deferredMcp, patch], hasDeferredTools: true });
    expect(text.split('Shared MCP Types:')).toHaveLength(2);
    expect(text.split('type CallToolResult<TStructured = { [key: string]: unknown }>')).toHaveLength(2);
    expect(text).toContain(`\n${DEFERRED_GUIDANCE}\n\n${MCP_TYPES}\n\n### \`apply_patch\``);
    expect(text).not.toContain('### `mcp__rmcp__echo`');
    expect(execDescription({ mode: 'code-mode-only', tools: [patch, hidden], hasDeferredTools: true })).not.toContain('Shared MCP Types:');
  });

  it('carries the MCP schema\'s CallToolResult types (Codex text)', () => {
    expect(MCP_TYPES.startsWith('Shared MCP Types:\n```ts\ntype Role = "user" | "assistant";\ntype MetaObject = Record<string, unknown>;\ntype Annotations = {\n  audience?: Role[];\n')).toBe(true);
    expect(MCP_TYPES).toContain('\ntype ContentBlock =\n  | TextContent\n  | ImageContent\n  | AudioContent\n  | ResourceLink\n  | EmbeddedResource;\n');
    expect(MCP_TYPES.endsWith(
      'type CallToolResult<TStructured = { [key: string]: unknown }> = {\n  _meta?: MetaObject;\n  content: ContentBlock[];\n  isError?: boolean;\n  structuredContent?: TStructured;\n  [key: string]: unknown;\n};\n```',
    )).toBe(true);
  });

  it('tells the model how failed calls and console behave in a cell', () => {
    const plain = execDescription({ mode: 'code-mode', tools: [], hasDeferredTools: false });
    expect(plain).toContain('as its description says. A failed call rejects with an `Error` whose `message` is the failure text.\n');
    expect(plain).toContain('\n- The environment is raw JavaScript -- no Node, no file system, no network access.\n');
    expect(plain).toContain(
      '\n- `text(value)`: append text to the output (objects are JSON-encoded).\n- `console.log(...values)` (and `info`, `warn`, `error`, `debug`): like `text`, the values joined by spaces.\n- `image(',
    );
    expect(plain).not.toContain('no console');
    expect(plain).not.toContain('rejects with a string');
  });

  it('says the catalog is complete when every nested tool is described, in a few tokens', () => {
    const plain = execDescription({ mode: 'code-mode', tools: [], hasDeferredTools: false });
    const complete = execDescription({ mode: 'code-mode-only', tools: [echo, patch, dashed], hasDeferredTools: false });
    const line = 'Tool catalog: complete (3 tools).';
    expect(complete).toBe([plain, line, MCP_TYPES, nestedToolReference([echo, patch, dashed])].join('\n\n'));
    expect(estimateTokens(JSON.stringify(complete)) - estimateTokens(JSON.stringify(complete.replace(`\n\n${line}`, '')))).toBeLessThanOrEqual(12);
    expect(execDescription({ mode: 'code-mode-only', tools: [], hasDeferredTools: false })).toBe(`${plain}\n\nTool catalog: complete (no nested tools).`);
    // the same with the budget off, and byte-identical for fresh definitions of the same tools
    expect(execDescription({ mode: 'code-mode-only', tools: [echo, patch, dashed], hasDeferredTools: false, budget: { tokens: Infinity } })).toBe(complete);
    expect(execDescription({ mode: 'code-mode-only', tools: [{ ...echo }, { ...patch }, { ...dashed }], hasDeferredTools: false })).toBe(complete);
  });
});

/** `count` nested tools over `namespaces` namespaces with descriptions (plus `plain` tools without one). */
function surfaceOf(count: number, namespaces: number, options: { plain?: number; deferred?: number; budget?: CodeModeSurface['budget'] } = {}): CodeModeSurface {
  const tools: NestedToolDefinition[] = [];
  for (let index = 0; index < count; index++) {
    const namespace = `svc${index % namespaces}__`;
    tools.push({
      toolName: toolName(`get_record_${index}`, namespace),
      codeModeName: `${namespace}get_record_${index}`,
      description: `Fetch record ${index} of an account, with status and totals.`,
      kind: 'function',
      inputSchema: { type: 'object', properties: { account_id: { type: 'string', description: 'The account.' }, verbose: { type: 'boolean' } }, required: ['account_id'] },
      outputSchema: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] },
      deferred: index < (options.deferred ?? 0),
      namespaceDescription: `Service ${index % namespaces}: records and accounts. More text that the summary drops.`,
    });
  }
  for (let index = 0; index < (options.plain ?? 0); index++) {
    tools.push({ toolName: toolName(`plain_${index}`), codeModeName: `plain_${index}`, description: 'A plain tool.', kind: 'freeform', deferred: false });
  }
  tools.sort((a, b) => (a.codeModeName < b.codeModeName ? -1 : 1));
  return { mode: 'code-mode-only', tools, hasDeferredTools: tools.some((tool) => tool.deferred), ...(options.budget ? { budget: options.budget } : {}) };
}

const described = (text: string) => [...text.matchAll(/^### `([^`]+)`/gm)].map((match) => match[1]);
const tokensOf = (text: string) => estimateTokens(JSON.stringify(text));

describe('the budgeted exec description', () => {
  it('a catalog that fits is the full reference, unchanged by the budget', () => {
    const surface = surfaceOf(6, 2, { deferred: 1 });
    const full = execDescription({ ...surface, budget: { tokens: Infinity } });
    expect(execDescription(surface)).toBe(full);
    expect(full).toContain(`\n\nTool catalog: 5 of 6 nested tools are described below.\n${DEFERRED_GUIDANCE}\n\n`);
    expect(full).not.toContain('left out to save space');
    expect(described(full)).toHaveLength(5);
    expect(execDescription(surfaceOf(6, 2))).toContain('\n\nTool catalog: complete (6 tools).\n\n');
  });

  it('past the budget: N of M described round-robin over namespaces, the rest summarized with counts', () => {
    const surface = surfaceOf(300, 3, { plain: 40 });
    const text = execDescription(surface);
    expect(tokensOf(text)).toBeLessThanOrEqual(2_000);
    const names = described(text);
    expect(names.length).toBeGreaterThan(2);
    expect(text).toContain(`Tool catalog: ${names.length} of 340 nested tools are described below; the others are left out to save space.`);
    expect(text).toContain('Find the others by filtering `ALL_TOOLS` by `name` and `description`');
    // round-robin: every group gets a share before any gets a second one
    const groups = new Set(names.map((name) => (name.startsWith('plain_') ? '' : name.slice(0, 6))));
    expect(groups).toEqual(new Set(['', 'svc0__', 'svc1__', 'svc2__']));
    const summary = text.slice(text.indexOf('Nested tools not described above, by namespace:'));
    const lines = summary.split('\n').slice(1);
    expect(lines[0]).toMatch(/^- \d+ tools? without a namespace$/);
    expect(lines[1]).toMatch(/^- `svc0__` \(\d+ tools\): Service 0: records and accounts\.$/);
    const counted = lines.map((line) => Number(/(\d+) tools?/.exec(line)?.[1])).reduce((sum, value) => sum + value, 0);
    expect(counted).toBe(340 - names.length);
  });

  it('the reference part stays sorted by namespace and name, with namespace headings', () => {
    const text = execDescription(surfaceOf(300, 3));
    const names = described(text);
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(text).toContain('## svc0__\nService 0: records and accounts. More text that the summary drops.');
  });

  it('priority hints are described first', () => {
    const text = execDescription(surfaceOf(300, 3, { budget: { priority: ['svc2__get_record_299', 'svc1__get_record_1'] } }));
    expect(described(text)).toContain('svc2__get_record_299');
    expect(described(text)).toContain('svc1__get_record_1');
    expect(described(execDescription(surfaceOf(300, 3)))).not.toContain('svc2__get_record_299');
  });

  it('summarizes many namespaces in as many lines as fit, then one line for the rest', () => {
    const text = execDescription(surfaceOf(400, 200));
    expect(tokensOf(text)).toBeLessThanOrEqual(2_000);
    const lines = text.slice(text.indexOf('Nested tools not described above')).split('\n');
    expect(lines.at(-1)).toMatch(/^- … and \d+ more namespaces$/);
  });

  it('counts deferred tools among the M and never describes them', () => {
    const text = execDescription(surfaceOf(300, 3, { deferred: 50 }));
    expect(text).toMatch(/Tool catalog: \d+ of 300 nested tools are described below/);
    expect(text).not.toContain(DEFERRED_GUIDANCE);
    for (const name of described(text)) expect(Number(/_(\d+)$/.exec(name)?.[1])).toBeGreaterThanOrEqual(50);
  });

  it('is deterministic and follows the budget and the host counter', () => {
    expect(execDescription(surfaceOf(300, 3))).toBe(execDescription(surfaceOf(300, 3)));
    const small = execDescription(surfaceOf(300, 3, { budget: { tokens: 1_200 } }));
    expect(tokensOf(small)).toBeLessThanOrEqual(1_200);
    expect(described(small).length).toBeLessThan(described(execDescription(surfaceOf(300, 3))).length);
    const large = execDescription(surfaceOf(300, 3, { budget: { tokens: 8_000 } }));
    expect(described(large).length).toBeGreaterThan(described(execDescription(surfaceOf(300, 3))).length);
    const byCharacter = execDescription(surfaceOf(300, 3, { budget: { tokens: 6_000, countTokens: (text) => text.length } }));
    expect(JSON.stringify(byCharacter).length).toBeLessThanOrEqual(6_000);
    expect(described(byCharacter).length).toBeGreaterThan(0);
    // a budget below the fixed parts still gives the template, the note and the summary
    const tiny = execDescription(surfaceOf(300, 3, { budget: { tokens: 10 } }));
    expect(described(tiny)).toEqual([]);
    expect(tiny).toContain('Tool catalog: 0 of 300 nested tools are described below');
  });

  it('code-mode gets the template alone whatever the budget', () => {
    expect(execDescription({ ...surfaceOf(300, 3), mode: 'code-mode' })).toBe(execDescription({ mode: 'code-mode', tools: [], hasDeferredTools: false }));
  });
});

describe('exec description reuse', () => {
  it('the same definitions and budget give the cached text; other definitions or budgets are rendered anew', () => {
    const surface = surfaceOf(300, 3);
    const first = execDescription(surface);
    expect(execDescription({ ...surface })).toBe(first);
    const changed = surface.tools.map((tool, index) => (index === 0 ? { ...tool, description: 'Another text.' } : tool));
    expect(execDescription({ ...surface, tools: changed, budget: { priority: [changed[0].codeModeName] } })).toContain('Another text.');
    expect(execDescription({ ...surface, budget: { tokens: 1_000 } })).not.toBe(first);
  });
});
