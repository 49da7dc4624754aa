import fc from 'fast-check';
import { isJsonObject, type JsonSchema, type JsonValue } from '@switchyard/protocol';
import { schemaFailures } from '../input-validation';

/** Longest string and array the generated inputs hold: enough to find edge cases, small enough to stay fast. */
const MAX_STRING = 24;
const MAX_ITEMS = 4;

/**
 * A fast-check arbitrary of the values a JSON Schema admits, for the keywords a tool's parameters
 * use (`type` and type lists, `properties` / `required`, `items`, `enum`, `const`, `anyOf` /
 * `oneOf`, `minimum` / `maximum`, `minLength` / `maxLength`, `minItems` / `maxItems`); anything
 * else is generated as any JSON value. Generated values are then filtered through the schema's own
 * validator, so every value is one the registry would accept. Hand-written: fast-check has no JSON
 * Schema reader, and the few npm ones cover other drafts or pull in a second validator.
 */
export function schemaInputs(schema: JsonSchema): fc.Arbitrary<JsonValue> {
  return arbitraryOf(schema, 0).filter((value) => schemaFailures(schema, value) === undefined);
}

function arbitraryOf(schema: unknown, depth: number): fc.Arbitrary<JsonValue> {
  if (!isJsonObject(schema)) return fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<JsonValue>;
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const alternatives = (Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined) as unknown[] | undefined;
  if (alternatives?.length) return fc.oneof(...alternatives.map((entry) => arbitraryOf(entry, depth)));
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : schema.properties ? ['object'] : [];
  if (types.length === 0) return fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<JsonValue>;
  return fc.oneof(...types.map((type) => arbitraryOfType(type, schema, depth)));
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function arbitraryOfType(type: string, schema: Record<string, unknown>, depth: number): fc.Arbitrary<JsonValue> {
  switch (type) {
    case 'string':
      return fc.string({ minLength: num(schema.minLength) ?? 0, maxLength: Math.max(num(schema.minLength) ?? 0, Math.min(num(schema.maxLength) ?? MAX_STRING, MAX_STRING)) });
    case 'integer':
      return fc.integer({ min: Math.ceil(num(schema.minimum) ?? -1_000_000), max: Math.floor(num(schema.maximum) ?? 1_000_000) });
    case 'number':
      return fc.double({ min: num(schema.minimum) ?? -1e9, max: num(schema.maximum) ?? 1e9, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = num(schema.minItems) ?? 0;
      const maxLength = Math.max(minLength, Math.min(num(schema.maxItems) ?? MAX_ITEMS, MAX_ITEMS));
      return depth > 3 ? fc.constant([]) : fc.array(arbitraryOf(schema.items, depth + 1), { minLength, maxLength });
    }
    case 'object': {
      const properties = isJsonObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : [];
      const model: Record<string, fc.Arbitrary<JsonValue>> = {};
      for (const [key, property] of Object.entries(properties)) model[key] = depth > 3 ? fc.constant(null) : arbitraryOf(property, depth + 1);
      return fc.record(model, { requiredKeys: required.filter((key) => key in model) }) as fc.Arbitrary<JsonValue>;
    }
    default:
      return fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<JsonValue>;
  }
}
