import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '@switchyard/protocol';
import { schemaToTypeScript } from './code-mode-declaration';

describe('schemaToTypeScript golden corpus', () => {
  const corpus: Array<[string, JsonSchema | boolean, string]> = [
    ['true', true, 'unknown'],
    ['false', false, 'never'],
    ['primitives', { type: 'integer' }, 'number'],
    ['type list', { type: ['string', 'null'] }, 'string | null'],
    ['enum', { type: 'string', enum: ['a', 'b', 1] }, '"a" | "b" | 1'],
    ['const', { const: 'fixed' }, '"fixed"'],
    ['anyOf', { anyOf: [{ type: 'string' }, { type: 'number' }] }, 'string | number'],
    ['oneOf members are joined without parentheses', { oneOf: [{ type: ['string', 'null'] }, { type: 'boolean' }] }, 'string | null | boolean'],
    ['union of objects without parentheses', { anyOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { type: 'object', properties: { b: { anyOf: [{ type: 'number' }, { type: 'null' }] } } }] }, '{ a: string; } | { b?: number | null; }'],
    ['allOf of unions without parentheses', { allOf: [{ enum: ['a', 'b'] }, { type: ['string', 'null'] }] }, '"a" | "b" & string | null'],
    ['empty anyOf falls through to oneOf', { anyOf: [], oneOf: [{ type: 'string' }, { type: 'number' }] }, 'string | number'],
    ['required alone makes an object', { required: ['id'] }, '{ [key: string]: unknown; }'],
    ['an unknown type name is unknown', { type: 'date', properties: { a: { type: 'string' } } }, 'unknown'],
    ['items as a list renders Array<unknown>', { type: 'array', items: [{ type: 'string' }] as unknown as JsonSchema }, 'Array<unknown>'],
    ['allOf', { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { type: 'object', properties: { b: { type: 'number' } } }] }, '{ a: string; } & { b?: number; }'],
    ['array', { type: 'array', items: { type: 'string' } }, 'Array<string>'],
    ['array without items', { type: 'array' }, 'unknown[]'],
    ['tuple', { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] }, '[string, number]'],
    ['object sorted, optional marked', { type: 'object', properties: { zeta: { type: 'string' }, alpha: { type: 'number' } }, required: ['zeta'] }, '{ alpha?: number; zeta: string; }'],
    ['empty object', { type: 'object' }, '{ [key: string]: unknown; }'],
    ['closed empty object', { type: 'object', properties: {}, additionalProperties: false }, '{}'],
    ['additionalProperties schema', { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: { type: 'number' } }, '{ id: string; [key: string]: number; }'],
    ['additionalProperties true', { type: 'object', properties: {}, additionalProperties: true }, '{ [key: string]: unknown; }'],
    ['non-identifier names quoted', { type: 'object', properties: { 'content-type': { type: 'string' }, '2x': { type: 'boolean' }, ok_$: { type: 'null' } } }, '{ "2x"?: boolean; "content-type"?: string; ok_$?: null; }'],
    [
      'nested objects with descriptions render multi-line',
      {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name.' },
          opts: { type: 'object', properties: { units: { type: 'string', enum: ['c', 'f'], description: 'Unit system.' } } },
        },
        required: ['city'],
      },
      '{\n  // City name.\n  city: string;\n  opts?: {\n  // Unit system.\n  units?: "c" | "f";\n};\n}',
    ],
    ['no type with properties is an object', { properties: { a: { type: 'string' } } }, '{ a?: string; }'],
  ];
  for (const [name, schema, expected] of corpus) {
    it(name, () => expect(schemaToTypeScript(schema)).toBe(expected));
  }

  it('expands a local $ref at most twice along one path', () => {
    const tree: JsonSchema = {
      $defs: { node: { type: 'object', properties: { value: { type: 'number' }, child: { $ref: '#/$defs/node' } }, required: ['value'] } },
      $ref: '#/$defs/node',
    };
    expect(schemaToTypeScript(tree)).toBe('{ child?: { child?: unknown; value: number; }; value: number; }');
  });

  it('renders a recursive query schema as Codex does: bare unions, nested objects not indented, one expansion then unknown', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: { clauses: { type: 'array', items: { $ref: '#/$defs/Boolean~1Clause~0v1' } } },
      required: ['clauses'],
      additionalProperties: false,
      $defs: {
        'Boolean/Clause~v1': {
          type: 'object',
          properties: {
            occur: { type: 'string', enum: ['must', 'should'] },
            query: { $ref: '#/$defs/Query', description: 'Use a nested group for parenthesized expressions.' },
          },
          required: ['occur', 'query'],
          additionalProperties: false,
        },
        Query: {
          oneOf: [
            { $ref: '#/$defs/Leaf' },
            { type: 'object', properties: { clauses: { type: 'array', items: { $ref: '#/$defs/Boolean~1Clause~0v1' } } }, required: ['clauses'], additionalProperties: false },
          ],
        },
        Leaf: {
          type: 'object',
          properties: { field: { type: 'string', enum: ['A', 'B', 'C'] }, value: { type: 'string' } },
          required: ['field', 'value'],
          additionalProperties: false,
        },
      },
    };
    expect(schemaToTypeScript(schema)).toBe(
      [
        '{ clauses: Array<{',
        '  occur: "must" | "should";',
        '  // Use a nested group for parenthesized expressions.',
        '  query: { field: "A" | "B" | "C"; value: string; } | { clauses: Array<{',
        '  occur: "must" | "should";',
        '  // Use a nested group for parenthesized expressions.',
        '  query: { field: "A" | "B" | "C"; value: string; } | { clauses: Array<unknown>; };',
        '}>; };',
        '}>; }',
      ].join('\n'),
    );
  });

  it('keeps property comments on a described array of objects (Codex weather_tool)', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        weather: {
          type: 'array',
          description: 'look up weather for a given list of locations',
          items: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
        },
      },
      required: ['weather'],
    };
    expect(schemaToTypeScript(schema)).toBe('{\n  // look up weather for a given list of locations\n  weather: Array<{ location: string; }>;\n}');
  });

  it('resolves only local pointers (`#` is the root)', () => {
    expect(schemaToTypeScript({ type: 'object', properties: { self: { $ref: '#' } }, required: ['self'] })).toBe('{ self: { self: { self: unknown; }; }; }');
    expect(schemaToTypeScript({ $defs: { a: { type: 'string' } }, $ref: '#$defs/a' })).toBe('unknown');
    expect(schemaToTypeScript({ $defs: { a: { type: 'string' } }, $ref: '#/$defs/toString' })).toBe('unknown');
  });

  it('intersects siblings of a $ref', () => {
    const schema: JsonSchema = {
      definitions: { id: { type: 'string' } },
      type: 'object',
      properties: { key: { $ref: '#/definitions/id', enum: ['a'] } },
      required: ['key'],
    };
    expect(schemaToTypeScript(schema)).toBe('{ key: (string) & ("a"); }');
  });

  it('renders an unresolvable $ref as unknown', () => {
    expect(schemaToTypeScript({ $ref: '#/$defs/missing' })).toBe('unknown');
    expect(schemaToTypeScript({ $ref: 'https://example.com/schema' })).toBe('unknown');
  });
});
