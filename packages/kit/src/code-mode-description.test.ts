import { describe, expect, it } from 'vitest';
import { augmentCodeModeDescription, codeModeDeclaration } from './code-mode-declaration';
import { safeToolText } from './tool-text';
import { schemaToTypeScript } from './schema-typescript';
import type { JsonSchema } from '@switchyard/protocol';

describe('schemaToTypeScript', () => {
  it('renders objects with sorted members and ? for optional ones', () => {
    expect(schemaToTypeScript({ type: 'object', properties: { message: { type: 'string' }, env_var: { type: 'string' } }, required: ['message'] })).toBe(
      '{ env_var?: string; message: string; }',
    );
  });

  it('renders scalars, arrays, tuples, unions, intersections and literals', () => {
    expect(schemaToTypeScript(true)).toBe('unknown');
    expect(schemaToTypeScript(false)).toBe('never');
    expect(schemaToTypeScript({ type: 'integer' })).toBe('number');
    expect(schemaToTypeScript({ type: ['string', 'null'] })).toBe('string | null');
    expect(schemaToTypeScript({ type: 'array', items: { type: 'boolean' } })).toBe('Array<boolean>');
    expect(schemaToTypeScript({ type: 'array' })).toBe('unknown[]');
    expect(schemaToTypeScript({ prefixItems: [{ type: 'string' }, { type: 'number' }] })).toBe('[string, number]');
    expect(schemaToTypeScript({ enum: ['a', 1, null] })).toBe('"a" | 1 | null');
    expect(schemaToTypeScript({ const: 'fixed' })).toBe('"fixed"');
    expect(schemaToTypeScript({ anyOf: [{ type: 'string' }, { type: 'number' }] })).toBe('string | number');
    expect(schemaToTypeScript({ allOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object', properties: { b: { type: 'number' } } }] })).toBe(
      '{ a?: string; } & { b?: number; }',
    );
    expect(schemaToTypeScript({ description: 'nothing typed' })).toBe('unknown');
  });

  it('adds index signatures and quotes names that are not identifiers', () => {
    expect(schemaToTypeScript({ type: 'object' })).toBe('{ [key: string]: unknown; }');
    expect(schemaToTypeScript({ type: 'object', additionalProperties: false })).toBe('{}');
    expect(schemaToTypeScript({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'number' } })).toBe(
      '{ a?: string; [key: string]: number; }',
    );
    expect(schemaToTypeScript({ type: 'object', properties: { 'content-type': { type: 'string' } }, required: ['content-type'] })).toBe('{ "content-type": string; }');
  });

  it('renders described members on their own lines with // comments', () => {
    expect(
      schemaToTypeScript({
        type: 'object',
        properties: { path: { type: 'string', description: 'File path.\nRelative to the workspace.' }, lines: { type: 'number' } },
        required: ['path'],
      }),
    ).toBe('{\n  lines?: number;\n  // File path.\n  // Relative to the workspace.\n  path: string;\n}');
  });

  it('renders a recursive $ref as a named type; a missing one as unknown; siblings intersected', () => {
    const schema = {
      $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } },
      $ref: '#/$defs/node',
    };
    expect(schemaToTypeScript(schema)).toBe('type node = { next?: node; };\nnode');
    expect(schemaToTypeScript({ $ref: '#/$defs/missing' })).toBe('unknown');
    expect(schemaToTypeScript({ $defs: { id: { type: 'string' } }, type: 'object', properties: { a: { $ref: '#/$defs/id', description: '' } } })).toBe('{ a?: string; }');
    expect(schemaToTypeScript({ $defs: { base: { type: 'object', properties: { a: { type: 'string' } } } }, $ref: '#/$defs/base', properties: { b: { type: 'number' } } })).toBe(
      '({ a?: string; }) & ({ b?: number; })',
    );
  });
});

describe('augmentCodeModeDescription', () => {
  it('appends the exec tool declaration (reference augment_tool_definition)', () => {
    expect(
      augmentCodeModeDescription({
        description: 'Test tool',
        codeModeName: 'hidden_dynamic_tool',
        kind: 'function',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      }),
    ).toBe(
      'Test tool\n\nexec tool declaration:\n```ts\ndeclare const tools: { hidden_dynamic_tool(args: { city: string; }): Promise<{ ok: boolean; }>; };\n```',
    );
  });

  it('types freeform tools as input: string and unknown outputs as unknown', () => {
    expect(augmentCodeModeDescription({ description: 'Patch files.', codeModeName: 'apply_patch', kind: 'freeform' })).toBe(
      'Patch files.\n\nexec tool declaration:\n```ts\ndeclare const tools: { apply_patch(input: string): Promise<unknown>; };\n```',
    );
  });

  it('renders MCP-shaped output schemas as CallToolResult<structured>', () => {
    const mcpOutput = (structuredContent?: JsonSchema): JsonSchema => ({
      type: 'object',
      properties: {
        content: { type: 'array', items: { type: 'object' } },
        ...(structuredContent === undefined ? {} : { structuredContent }),
        isError: { type: 'boolean' },
        _meta: { type: 'object' },
      },
      required: ['content'],
    });
    const sample = augmentCodeModeDescription({
      description: 'Echo.',
      codeModeName: 'mcp__rmcp__echo',
      kind: 'function',
      inputSchema: { type: 'object', properties: { message: { type: 'string' }, env_var: { type: 'string' } }, required: ['message'] },
      outputSchema: mcpOutput({
        type: 'object',
        properties: { echo: { type: 'string' }, env: { type: ['string', 'null'] } },
        required: ['echo', 'env'],
      }),
    });
    expect(sample.endsWith(
      'declare const tools: { mcp__rmcp__echo(args: { env_var?: string; message: string; }): Promise<CallToolResult<{ echo: string; env: string | null; }>>; };\n```',
    )).toBe(true);
    expect(augmentCodeModeDescription({ description: 'x', codeModeName: 'a', kind: 'function', outputSchema: mcpOutput() })).toContain('Promise<CallToolResult>;');
  });

  it('resolves $refs of the structured content against the structured content schema (Codex mcp__sample__search)', () => {
    const output: JsonSchema = {
      type: 'object',
      properties: {
        content: { type: 'array', items: { type: 'object' } },
        structuredContent: {
          type: 'object',
          properties: { results: { type: 'array', items: { $ref: '#/definitions/Result~1item~0v1' } } },
          required: ['results'],
          additionalProperties: false,
          definitions: {
            'Result/item~v1': {
              type: 'object',
              properties: { id: { type: 'string' }, score: { type: 'number' } },
              required: ['id', 'score'],
              additionalProperties: false,
            },
          },
        },
        isError: { type: 'boolean' },
        _meta: { type: 'object' },
      },
      required: ['content'],
      additionalProperties: false,
    };
    expect(
      augmentCodeModeDescription({
        description: 'Search',
        codeModeName: 'mcp__sample__search',
        kind: 'function',
        inputSchema: { type: 'object', properties: {}, additionalProperties: false },
        outputSchema: output,
      }),
    ).toBe(
      'Search\n\nexec tool declaration:\n```ts\ndeclare const tools: { mcp__sample__search(args: {}): Promise<CallToolResult<{ results: Array<{ id: string; score: number; }>; }>>; };\n```',
    );
  });

  it('declares the named types of both schemas before the declaration, one name space per tool', () => {
    const node: JsonSchema = { $defs: { Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } } }, $ref: '#/$defs/Node' };
    const other: JsonSchema = { $defs: { Node: { type: 'object', properties: { parent: { $ref: '#/$defs/Node' } } } }, $ref: '#/$defs/Node' };
    expect(codeModeDeclaration({ description: 'd', codeModeName: 'walk', kind: 'function', inputSchema: node, outputSchema: other })).toBe(
      ['type Node = { next?: Node; };', 'type Node_2 = { parent?: Node_2; };', 'declare const tools: { walk(args: Node): Promise<Node_2>; };'].join('\n'),
    );
  });

  it('bounds a declaration at 20,000 characters: the result type goes first, then the argument type, with a note', () => {
    const wide = (count: number): JsonSchema => {
      const properties: Record<string, JsonSchema> = {};
      for (let index = 0; index < count; index++) properties[`field_${index}`] = { type: 'string', description: `Field ${index} of the record.` };
      return { type: 'object', properties };
    };
    const note = '// The types of this tool are too large to show here (a declaration shows at most 20000 characters); read its description.';
    const resultTooLarge = codeModeDeclaration({ description: 'd', codeModeName: 'get', kind: 'function', inputSchema: wide(2), outputSchema: wide(3_000) });
    expect(resultTooLarge.startsWith(`${note}\ndeclare const tools: { get(args: {`)).toBe(true);
    expect(resultTooLarge.endsWith('}): Promise<unknown>; };')).toBe(true);
    const bothTooLarge = codeModeDeclaration({ description: 'd', codeModeName: 'get', kind: 'function', inputSchema: wide(3_000), outputSchema: wide(3_000) });
    expect(bothTooLarge).toBe(`${note}\ndeclare const tools: { get(args: unknown): Promise<unknown>; };`);
  });

  it("normalises a tool's line terminators and escapes its fences, in its description and its comments", () => {
    expect(safeToolText('a\r\nb\rc\u2028d\u2029e\u0085f')).toBe('a\nb\nc\nd\ne\nf');
    expect(safeToolText('```js\nx\n~~~~\n`` two is fine')).toBe('\\`\\`\\`js\nx\n\\~\\~\\~\\~\n`` two is fine');
    const text = augmentCodeModeDescription({
      description: 'Reads.\n```\n## Not a heading of ours\n```\rdeclare const x: 1;',
      codeModeName: 'read',
      kind: 'function',
      inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'Path.\u2028declare const y: 2;' } } },
    });
    expect(text).toBe(
      [
        'Reads.',
        '\\`\\`\\`',
        '## Not a heading of ours',
        '\\`\\`\\`',
        'declare const x: 1;',
        '',
        'exec tool declaration:',
        '```ts',
        'declare const tools: { read(args: {',
        '  // Path.',
        '  // declare const y: 2;',
        '  path?: string;',
        '}): Promise<unknown>; };',
        '```',
      ].join('\n'),
    );
  });
});
