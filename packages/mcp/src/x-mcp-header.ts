import { isJsonObject, type JsonValue } from '@switchyard/protocol';

// The 2026-07-28 revision lets a tool mirror parameters into `Mcp-Param-{name}` HTTP headers
// (`x-mcp-header` in its input schema), and requires an HTTP client to refuse a tool whose
// annotations break the rules (the SDK mirrors the headers, but keeps no public check of the
// rules for a client that lists tools itself, as this one does).

/** RFC 9110 `tchar`: the characters of an HTTP field name. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE_TYPES = new Set(['string', 'integer', 'boolean']);
/** Keywords an annotation must not sit under: only a chain of `properties` keys reaches a header. */
const NOT_STATIC = ['items', 'prefixItems', 'additionalItems', 'contains', 'additionalProperties', 'patternProperties', 'oneOf', 'anyOf', 'allOf', 'not', 'if', 'then', 'else', '$ref', '$defs', 'definitions', 'dependentSchemas'];

/** Why a tool's `x-mcp-header` annotations are invalid, or `undefined` when they are fine (or absent). */
export function xMcpHeaderProblem(inputSchema: JsonValue): string | undefined {
  const seen = new Map<string, string>();
  const visit = (schema: JsonValue, path: string, reachable: boolean): string | undefined => {
    if (!isJsonObject(schema)) return undefined;
    if ('x-mcp-header' in schema) {
      const name = schema['x-mcp-header'];
      if (!reachable) return `\`x-mcp-header\` at ${path} is not reachable through \`properties\` alone`;
      if (typeof name !== 'string' || name === '') return `\`x-mcp-header\` at ${path} is empty or not a string`;
      if (!TOKEN.test(name)) return `\`x-mcp-header\` ${JSON.stringify(name)} at ${path} is not an HTTP field-name token`;
      const type = schema.type;
      if (typeof type !== 'string' || !PRIMITIVE_TYPES.has(type)) return `\`x-mcp-header\` ${JSON.stringify(name)} at ${path} is on a parameter of type ${JSON.stringify(type)} (string, integer or boolean only)`;
      const previous = seen.get(name.toLowerCase());
      if (previous !== undefined) return `\`x-mcp-header\` ${JSON.stringify(name)} at ${path} repeats the one at ${previous} (names are case-insensitive)`;
      seen.set(name.toLowerCase(), path);
    }
    if (isJsonObject(schema.properties)) {
      for (const [key, property] of Object.entries(schema.properties)) {
        const problem = visit(property, `${path}.properties.${key}`, reachable);
        if (problem) return problem;
      }
    }
    for (const keyword of NOT_STATIC) {
      const nested = schema[keyword];
      const children = Array.isArray(nested) ? nested : isJsonObject(nested) && (keyword === '$defs' || keyword === 'definitions' || keyword === 'patternProperties' || keyword === 'dependentSchemas') ? Object.values(nested) : [nested];
      for (const child of children) {
        const problem = visit(child as JsonValue, `${path}.${keyword}`, false);
        if (problem) return problem;
      }
    }
    return undefined;
  };
  return visit(inputSchema, 'inputSchema', true);
}
