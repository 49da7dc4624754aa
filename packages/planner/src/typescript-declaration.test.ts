import { describe, expect, it } from 'vitest';
import { codeModeUsageSample, renderJsonSchemaToTypeScript as render } from './typescript-declaration';

describe('renderJsonSchemaToTypeScript', () => {
  it('renders objects with sorted members and ? for optional ones', () => {
    expect(render({ type: 'object', properties: { message: { type: 'string' }, env_var: { type: 'string' } }, required: ['message'] })).toBe(
      '{ env_var?: string; message: string; }',
    );
  });

  it('renders scalars, arrays, tuples, unions, intersections and literals', () => {
    expect(render(true)).toBe('unknown');
    expect(render(false)).toBe('never');
    expect(render({ type: 'integer' })).toBe('number');
    expect(render({ type: ['string', 'null'] })).toBe('string | null');
    expect(render({ type: 'array', items: { type: 'boolean' } })).toBe('Array<boolean>');
    expect(render({ type: 'array' })).toBe('unknown[]');
    expect(render({ prefixItems: [{ type: 'string' }, { type: 'number' }] })).toBe('[string, number]');
    expect(render({ enum: ['a', 1, null] })).toBe('"a" | 1 | null');
    expect(render({ const: 'fixed' })).toBe('"fixed"');
    expect(render({ anyOf: [{ type: 'string' }, { type: 'number' }] })).toBe('string | number');
    expect(render({ allOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object', properties: { b: { type: 'number' } } }] })).toBe(
      '{ a?: string; } & { b?: number; }',
    );
    expect(render({ description: 'nothing typed' })).toBe('unknown');
  });

  it('adds index signatures and quotes names that are not identifiers', () => {
    expect(render({ type: 'object' })).toBe('{ [key: string]: unknown; }');
    expect(render({ type: 'object', additionalProperties: false })).toBe('{}');
    expect(render({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'number' } })).toBe(
      '{ a?: string; [key: string]: number; }',
    );
    expect(render({ type: 'object', properties: { 'content-type': { type: 'string' } }, required: ['content-type'] })).toBe('{ "content-type": string; }');
  });

  it('renders described members on their own lines with // comments', () => {
    expect(
      render({
        type: 'object',
        properties: { path: { type: 'string', description: 'File path.\nRelative to the workspace.' }, lines: { type: 'number' } },
        required: ['path'],
      }),
    ).toBe('{\n  lines?: number;\n  // File path.\n  // Relative to the workspace.\n  path: string;\n}');
  });

  it('expands a local $ref twice along a path, then stops with unknown', () => {
    const schema = {
      $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } },
      $ref: '#/$defs/node',
    };
    expect(render(schema)).toBe('{ next?: { next?: unknown; }; }');
    expect(render({ $ref: '#/$defs/missing' })).toBe('unknown');
    expect(render({ $defs: { id: { type: 'string' } }, type: 'object', properties: { a: { $ref: '#/$defs/id', description: '' } } })).toBe('{ a?: string; }');
    expect(render({ $defs: { base: { type: 'object', properties: { a: { type: 'string' } } } }, $ref: '#/$defs/base', properties: { b: { type: 'number' } } })).toBe(
      '({ a?: string; }) & ({ b?: number; })',
    );
  });
});

describe('codeModeUsageSample', () => {
  it('appends the exec tool declaration (reference augment_tool_definition)', () => {
    expect(
      codeModeUsageSample({
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
    expect(codeModeUsageSample({ description: 'Patch files.', codeModeName: 'apply_patch', kind: 'freeform' })).toBe(
      'Patch files.\n\nexec tool declaration:\n```ts\ndeclare const tools: { apply_patch(input: string): Promise<unknown>; };\n```',
    );
  });

  it('renders MCP-shaped output schemas as CallToolResult<structured>', () => {
    const mcpOutput = (structuredContent?: unknown) => ({
      type: 'object',
      properties: {
        content: { type: 'array', items: { type: 'object' } },
        ...(structuredContent === undefined ? {} : { structuredContent }),
        isError: { type: 'boolean' },
        _meta: { type: 'object' },
      },
      required: ['content'],
    });
    const sample = codeModeUsageSample({
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
    expect(codeModeUsageSample({ description: 'x', codeModeName: 'a', kind: 'function', outputSchema: mcpOutput() })).toContain('Promise<CallToolResult>;');
  });
});
