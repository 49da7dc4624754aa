import { describe, expect, it } from 'vitest';
import { hasErrorCode, type JsonSchema } from '@switchyard/protocol';
import { compiledValidator, parseFunctionArguments, validateArguments } from './input-validation';

const weather: JsonSchema = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    units: { enum: ['c', 'f'] },
    days: { type: 'integer', maximum: 7 },
    stops: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  },
  required: ['city'],
  additionalProperties: false,
};

function messageOf(run: () => void): string {
  try {
    run();
  } catch (error) {
    expect(hasErrorCode(error, 'INVALID_INPUT')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected a validation error');
}

describe('input validation', () => {
  it('accepts valid arguments', () => {
    expect(() => validateArguments('get_weather', weather, { city: 'Oslo', units: 'c', stops: [{ name: 'a' }] })).not.toThrow();
  });

  it('names each failing path', () => {
    const message = messageOf(() =>
      validateArguments('get_weather', weather, { city: 3, units: 'k', days: 9, stops: [{ name: 'a' }, {}], extra: true } as never),
    );
    expect(message.startsWith('invalid arguments for get_weather: ')).toBe(true);
    const failures = message.slice('invalid arguments for get_weather: '.length).split('; ').sort();
    expect(failures).toEqual(
      [
        'arguments.extra is not allowed',
        'arguments.city must be string',
        'arguments.units must be equal to one of the allowed values: "c", "f"',
        'arguments.days must be <= 7',
        'arguments.stops[1].name is required',
      ].sort(),
    );
  });

  it('reports a missing required property and a wrong root type', () => {
    expect(messageOf(() => validateArguments('get_weather', weather, {}))).toBe('invalid arguments for get_weather: arguments.city is required');
    expect(messageOf(() => validateArguments('get_weather', weather, [1]))).toBe('invalid arguments for get_weather: arguments must be object');
  });

  it('caps the list of failures', () => {
    const schema: JsonSchema = { type: 'object', properties: Object.fromEntries('abcdefghij'.split('').map((k) => [k, { type: 'string' }])) };
    const args = Object.fromEntries('abcdefghij'.split('').map((k) => [k, 1]));
    expect(messageOf(() => validateArguments('t', schema, args)).endsWith('; and 2 more')).toBe(true);
  });

  it('compiles each schema once and reuses it', () => {
    const schema: JsonSchema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(compiledValidator(schema)).toBe(compiledValidator(schema));
  });

  it('understands draft 2020-12 schemas and tolerates unknown keywords', () => {
    const schema: JsonSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { when: { type: 'string', format: 'date-time', 'x-vendor': 1 }, list: { type: 'array', prefixItems: [{ type: 'number' }] } },
    };
    expect(messageOf(() => validateArguments('t', schema, { list: ['x'] }))).toBe('invalid arguments for t: arguments.list[0] must be number');
    expect(() => validateArguments('t', schema, { when: 'not a date' })).not.toThrow();
  });

  it('dispatches unvalidated when a schema cannot be compiled', () => {
    const broken: JsonSchema = { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } };
    expect(compiledValidator(broken)).toBeNull();
    expect(() => validateArguments('t', broken, { a: 1 })).not.toThrow();
  });

  it('parses arguments: blank is {}, malformed JSON is a model-visible parse failure', () => {
    expect(parseFunctionArguments('  ')).toEqual({});
    expect(parseFunctionArguments('{"a":1}')).toEqual({ a: 1 });
    // serde_json's words and position, as the reference answers
    expect(messageOf(() => parseFunctionArguments('{"a":'))).toBe('failed to parse function arguments: EOF while parsing a value at line 1 column 5');
    expect(messageOf(() => parseFunctionArguments('{"a":1} x'))).toBe('failed to parse function arguments: trailing characters at line 1 column 9');
  });

  it('refuses arguments whose own valueOf breaks ajv deep equality instead of throwing a TypeError', () => {
    expect(() => validateArguments('pick', { enum: [{ fast: true }, 'slow'] }, { valueOf: 1 })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', message: 'invalid arguments for pick: arguments could not be checked against the schema: a.valueOf is not a function' }),
    );
  });
});
