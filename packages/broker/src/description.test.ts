import { describe, expect, it } from 'vitest';
import { toolName, type CodeModeSurface, type NestedToolDefinition } from '@switchyard/protocol';
import { MCP_TYPES, augmentedDescription, execDescription, nestedToolReference, toolDeclaration } from './description';

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
const hidden: NestedToolDefinition = { toolName: toolName('later'), codeModeName: 'later', description: 'Deferred.', kind: 'function', deferred: true };

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

  it('code-mode gets the template only; code-mode-only adds the note, MCP types and the reference', () => {
    const surface: CodeModeSurface = { mode: 'code-mode', tools: [echo, patch, hidden], hasDeferredTools: true };
    const plain = execDescription(surface);
    expect(plain).toMatch(/^Run JavaScript to call tools\./);
    expect(plain).not.toContain('### `');
    expect(plain).not.toContain('Shared MCP Types:');
    const only = execDescription({ ...surface, mode: 'code-mode-only' });
    expect(only.startsWith(plain)).toBe(true);
    expect(only).toContain('Find them by filtering `ALL_TOOLS` by `name` and `description`.');
    expect(only.split(MCP_TYPES)).toHaveLength(2);
    expect(only.endsWith(nestedToolReference([echo, patch, hidden]))).toBe(true);
    expect(only).not.toContain('Use `exec/wait` tool to run all other tools');
    const noMcp = execDescription({ mode: 'code-mode-only', tools: [patch], hasDeferredTools: false });
    expect(noMcp).not.toContain('Shared MCP Types:');
    expect(noMcp).not.toContain('ALL_TOOLS` by `name`');
  });
});
