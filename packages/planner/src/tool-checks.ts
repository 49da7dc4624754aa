import { displayName, isJsonObject, type HostedToolSpec, type ToolExecutor } from '@switchyard/protocol';

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'array', 'object']);
const SCHEMA_MAPS = ['properties', '$defs', 'definitions', 'patternProperties'];
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SCHEMA_SINGLES = ['additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'];

/** Schema objects already checked (plans are rebuilt every step from the same executors). */
const schemaVerdicts = new WeakMap<object, string | null>();

function checkSubschema(schema: unknown, path: string, stack: Set<object>): string | null {
  if (typeof schema === 'boolean') return null;
  if (!isJsonObject(schema)) return `${path} must be a schema object or a boolean`;
  if (stack.has(schema)) return `${path} is circular`;
  stack.add(schema);
  try {
    const type = schema.type;
    if (type !== undefined) {
      const types = Array.isArray(type) ? type : [type];
      if (types.length === 0 || !types.every((name) => typeof name === 'string' && JSON_TYPES.has(name))) {
        return `${path}.type must be a JSON type name or a list of them`;
      }
    }
    if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((name) => typeof name === 'string'))) {
      return `${path}.required must be a list of strings`;
    }
    if (schema.enum !== undefined && !Array.isArray(schema.enum)) return `${path}.enum must be a list`;
    if (schema.description !== undefined && typeof schema.description !== 'string') return `${path}.description must be a string`;
    for (const key of SCHEMA_MAPS) {
      const map = schema[key];
      if (map === undefined) continue;
      if (!isJsonObject(map)) return `${path}.${key} must be an object`;
      for (const [name, child] of Object.entries(map)) {
        const problem = checkSubschema(child, `${path}.${key}.${name}`, stack);
        if (problem) return problem;
      }
    }
    for (const key of SCHEMA_LISTS) {
      const list = schema[key];
      if (list === undefined) continue;
      if (!Array.isArray(list)) return `${path}.${key} must be a list`;
      for (let index = 0; index < list.length; index++) {
        const problem = checkSubschema(list[index], `${path}.${key}[${index}]`, stack);
        if (problem) return problem;
      }
    }
    for (const key of SCHEMA_SINGLES) {
      if (schema[key] === undefined) continue;
      const problem = checkSubschema(schema[key], `${path}.${key}`, stack);
      if (problem) return problem;
    }
    if (schema.items !== undefined) {
      const items = Array.isArray(schema.items) ? schema.items : [schema.items];
      for (let index = 0; index < items.length; index++) {
        const problem = checkSubschema(items[index], `${path}.items`, stack);
        if (problem) return problem;
      }
    }
    return null;
  } finally {
    stack.delete(schema);
  }
}

/**
 * Checks that a schema is well formed enough to send and render: a JSON object of schema
 * keywords with valid types, no cycles, serializable. Returns the problem, or `null` when fine.
 * `path` names the schema in the problem; `rootMustBeObject` requires `type: "object"` (or no
 * type) at the root, as function parameters do.
 */
export function schemaProblem(schema: unknown, { path, rootMustBeObject = false }: { path: string; rootMustBeObject?: boolean }): string | null {
  if (!isJsonObject(schema)) return `${path} must be a JSON Schema object`;
  let verdict = schemaVerdicts.get(schema);
  if (verdict === undefined) {
    verdict = checkSubschema(schema, '$', new Set());
    if (verdict === null) {
      try {
        JSON.stringify(schema);
      } catch (error) {
        verdict = `$ is not JSON-serializable (${error instanceof Error ? error.message : String(error)})`;
      }
    }
    schemaVerdicts.set(schema, verdict);
  }
  if (verdict !== null) return verdict.replace(/^\$/, path);
  if (rootMustBeObject && schema.type !== undefined && schema.type !== 'object') {
    return `${path} must describe an object (type "object")`;
  }
  return null;
}

/** A safe label for an executor in a warning, whatever shape it has. */
export function executorLabel(executor: unknown): string {
  try {
    const name = (executor as ToolExecutor | undefined)?.name;
    if (name && typeof name.name === 'string') return displayName(name);
  } catch {
    // fall through
  }
  return '<unnamed>';
}

/**
 * Why an executor from a host source cannot be planned, or `null` when it can. Never throws,
 * whatever the value is (a broken plugin must not break the plan).
 */
export function executorProblem(executor: unknown): string | null {
  try {
    if (typeof executor !== 'object' || executor === null) return 'not a tool executor object';
    const candidate = executor as ToolExecutor;
    const name = candidate.name;
    if (typeof name !== 'object' || name === null || typeof name.name !== 'string') return 'missing name';
    if (name.name.trim() === '') return 'empty name';
    if (name.namespace !== undefined && (typeof name.namespace !== 'string' || name.namespace.trim() === '')) {
      return 'namespace must be a non-empty string';
    }
    if (typeof candidate.handle !== 'function') return 'missing handle function';
    const exposure = candidate.exposure;
    if (exposure !== undefined && !['direct', 'direct-model-only', 'deferred', 'hidden'].includes(exposure)) {
      return `unknown exposure "${String(exposure)}"`;
    }
    const spec = candidate.spec;
    if (typeof spec !== 'object' || spec === null) return 'missing spec';
    switch (spec.type) {
      case 'function': {
        if (spec.name !== name.name) return `spec name "${String(spec.name)}" does not match tool name "${name.name}"`;
        if (typeof spec.description !== 'string') return 'description must be a string';
        const parameters = schemaProblem(spec.parameters, { path: 'parameters', rootMustBeObject: true });
        if (parameters) return `invalid schema: ${parameters}`;
        if (spec.outputSchema !== undefined) {
          const output = schemaProblem(spec.outputSchema, { path: 'outputSchema' });
          if (output) return `invalid schema: ${output}`;
        }
        return null;
      }
      case 'custom': {
        if (spec.name !== name.name) return `spec name "${String(spec.name)}" does not match tool name "${name.name}"`;
        if (typeof spec.description !== 'string') return 'description must be a string';
        const grammar = spec.grammar;
        if (grammar !== undefined && (typeof grammar !== 'object' || grammar === null || !['lark', 'regex'].includes(grammar.syntax) || typeof grammar.definition !== 'string')) {
          return 'grammar must be { syntax: "lark" | "regex", definition: string }';
        }
        return null;
      }
      case 'tool_search': {
        if (typeof spec.description !== 'string') return 'description must be a string';
        const parameters = schemaProblem(spec.parameters, { path: 'parameters', rootMustBeObject: true });
        return parameters ? `invalid schema: ${parameters}` : null;
      }
      default:
        return `unsupported spec type "${String((spec as { type?: unknown }).type)}"`;
    }
  } catch (error) {
    return `unreadable executor (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** Why a hosted spec cannot be sent, or `null` when it can. Never throws. */
export function hostedSpecProblem(spec: unknown): string | null {
  try {
    if (typeof spec !== 'object' || spec === null || (spec as HostedToolSpec).type !== 'hosted') return 'not a hosted spec ({ type: "hosted", json })';
    const json = (spec as HostedToolSpec).json;
    if (!isJsonObject(json) || typeof json.type !== 'string' || json.type.trim() === '') return 'json.type must be a non-empty string';
    JSON.stringify(json);
    return null;
  } catch (error) {
    return `unreadable hosted spec (${error instanceof Error ? error.message : String(error)})`;
  }
}
