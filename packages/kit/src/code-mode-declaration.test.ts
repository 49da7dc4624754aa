import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '@switchyard/protocol';
import { schemaToTypeScript } from './schema-typescript';

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

  it('renders a recursive $ref once, as a named type', () => {
    const tree: JsonSchema = {
      $defs: { node: { type: 'object', properties: { value: { type: 'number' }, child: { $ref: '#/$defs/node' } }, required: ['value'] } },
      $ref: '#/$defs/node',
    };
    expect(schemaToTypeScript(tree)).toBe('type node = { child?: node; value: number; };\nnode');
  });

  it('renders a recursive query schema with bare unions and nested objects not indented; the recursive clause is a named type', () => {
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
        'type Boolean_Clause_v1 = {',
        '  occur: "must" | "should";',
        '  // Use a nested group for parenthesized expressions.',
        '  query: { field: "A" | "B" | "C"; value: string; } | { clauses: Array<Boolean_Clause_v1>; };',
        '};',
        '{ clauses: Array<Boolean_Clause_v1>; }',
      ].join('\n'),
    );
  });

  it('renders a $ref used once in place (as Codex), one used twice once as a named type, whatever the depth', () => {
    const once: JsonSchema = { $defs: { id: { type: 'string' } }, type: 'object', properties: { a: { $ref: '#/$defs/id' } }, required: ['a'] };
    expect(schemaToTypeScript(once)).toBe('{ a: string; }');
    const twice: JsonSchema = { $defs: { id: { type: 'string' } }, type: 'object', properties: { a: { $ref: '#/$defs/id' }, b: { $ref: '#/$defs/id' } } };
    expect(schemaToTypeScript(twice)).toBe('type id = string;\n{ a?: id; b?: id; }');
    // every level refers to the next one twice: one line per level, not 2^levels copies
    const defs: Record<string, JsonSchema> = { L40: { type: 'string' } };
    for (let level = 0; level < 40; level++) defs[`L${level}`] = { type: 'object', properties: { l: { $ref: `#/$defs/L${level + 1}` }, r: { $ref: `#/$defs/L${level + 1}` } } };
    const rendered = schemaToTypeScript({ $defs: defs, $ref: '#/$defs/L0' });
    expect(rendered.split('\n')).toHaveLength(41);
    expect(rendered).toContain('type L39 = { l?: L40; r?: L40; };');
    // names are identifiers, never a type the declarations use, and distinct
    expect(schemaToTypeScript({ $defs: { Array: { type: 'number' }, '9 lives': { type: 'number' } }, type: 'object', properties: { a: { $ref: '#/$defs/Array' }, b: { $ref: '#/$defs/Array' }, c: { $ref: '#/$defs/9 lives' }, d: { $ref: '#/$defs/9 lives' } } })).toBe(
      'type Array_2 = number;\ntype _9_lives = number;\n{ a?: Array_2; b?: Array_2; c?: _9_lives; d?: _9_lives; }',
    );
  });

  it('renders a schema of more than 20,000 nodes as unknown', () => {
    const properties: Record<string, JsonSchema> = {};
    for (let index = 0; index < 25_000; index++) properties[`p${index}`] = { type: 'string' };
    expect(schemaToTypeScript({ type: 'object', properties })).toBe('unknown');
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
    expect(schemaToTypeScript({ type: 'object', properties: { self: { $ref: '#' } }, required: ['self'] })).toBe('type Root = { self: Root; };\n{ self: Root; }');
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
