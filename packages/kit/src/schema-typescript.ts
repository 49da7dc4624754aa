import type { JsonSchema, JsonValue } from '@switchyard/protocol';
import { safeToolText, sourceLiteral } from './tool-text';

/**
 * The JSON Schema → TypeScript renderer behind every declaration (planner descriptions, the `exec`
 * description, `ALL_TOOLS`), by the rules the model is used to from Codex (each one spends as few
 * tokens as the type allows): `true` → unknown, `false` → never, const/enum → JSON literals,
 * anyOf/oneOf → `A | B` and allOf → `A & B` with no parentheses around the members, a `type` list →
 * one type per entry joined by `|`, arrays → `Array<T>` (tuples from `prefixItems`), objects →
 * `{ a: T; b?: U; }` with sorted properties, index signatures for `additionalProperties`, quoted
 * non-identifier names. An object with a described property renders one member per line, each line
 * indented by two spaces and preceded by its `// description` lines; a nested object is not
 * indented further and closes at column 0.
 *
 * Local `$ref`s (`#` or `#/…`, resolved against the schema's root) are rendered once: a `$ref`
 * used at one place only, and not part of a cycle, is expanded in place (as Codex does); one used
 * at several places, or recursive, becomes a named type (`type Node = …;`, named after the last
 * segment of its pointer) rendered once and referred to by name. Siblings beside a `$ref` are
 * intersected as `(A) & (B)`. Without this, a schema whose definitions each refer to the next twice
 * doubled its rendering at every level (2.7 M characters at 17 levels, past V8's string limit at 25).
 */

/** A schema walks at most this many nodes; past it, rendering stops ({@link TooLargeToRender}). */
const MAX_RENDERED_NODES = 20_000;

/** Thrown when a schema has more than {@link MAX_RENDERED_NODES} nodes to render. */
export class TooLargeToRender extends Error {
  constructor() {
    super(`more than ${MAX_RENDERED_NODES} schema nodes`);
  }
}

/** The named types of one declaration: the names taken (by every schema rendered into it) and the `type` lines. */
export interface TypeScope {
  readonly taken: Set<string>;
  /** `type Name = …;` in first-use order. */
  readonly aliases: string[];
  /** Nodes rendered so far (bounded by {@link MAX_RENDERED_NODES}). */
  visits: number;
}

export function createTypeScope(): TypeScope {
  return { taken: new Set(RESERVED_NAMES), aliases: [], visits: 0 };
}

/** Names a named type may not take: the ones rendering and the shared MCP types use, and TypeScript's own. */
const RESERVED_NAMES = [
  'Array', 'Promise', 'Record', 'CallToolResult', 'Role', 'MetaObject', 'Annotations', 'Icon', 'TextResourceContents', 'BlobResourceContents',
  'TextContent', 'ImageContent', 'AudioContent', 'ResourceLink', 'EmbeddedResource', 'ContentBlock', 'tools', 'string', 'number', 'boolean',
  'null', 'unknown', 'never', 'object', 'any', 'undefined', 'void', 'symbol', 'bigint', 'type', 'declare', 'const', 'let', 'var', 'function',
];

interface RenderState {
  root: JsonSchema;
  scope: TypeScope;
  /** The `$ref`s rendered as named types, and the name each got once it was first used. */
  named: Map<string, string | undefined>;
}

/**
 * Renders `schema` as a TypeScript type expression. Named types it needs are added to `scope`
 * (their `type` lines, to be printed before the expression). Throws {@link TooLargeToRender}.
 */
export function renderSchemaType(schema: JsonSchema | boolean | undefined, scope: TypeScope, root?: JsonSchema): string {
  if (schema === undefined || schema === null) return 'unknown';
  const base = (root ?? (typeof schema === 'object' ? schema : {})) as JsonSchema;
  const named = new Map<string, string | undefined>();
  for (const ref of refsToName(schema, base, scope)) named.set(ref, undefined);
  return render(schema, { root: base, scope, named });
}

/**
 * Renders a JSON Schema as TypeScript: the type expression, preceded by one `type Name = …;` line
 * per named type it uses (a `$ref` used at several places or recursively). `root` resolves local
 * `$ref`s (default: the schema itself). A schema of more than {@link MAX_RENDERED_NODES} nodes
 * renders as `unknown`.
 */
export function schemaToTypeScript(schema: JsonSchema | boolean | undefined, root?: JsonSchema): string {
  const scope = createTypeScope();
  try {
    const type = renderSchemaType(schema, scope, root);
    return [...scope.aliases, type].join('\n');
  } catch (error) {
    if (error instanceof TooLargeToRender) return 'unknown';
    throw error;
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RENDERABLE = ['const', 'enum', 'anyOf', 'oneOf', 'allOf', 'type', 'properties', 'additionalProperties', 'required', 'items', 'prefixItems'];
/** The prefix of each member line of a multi-line object (nested objects are not indented further). */
const MEMBER_INDENT = '  ';

function literal(value: JsonValue): string {
  try {
    return sourceLiteral(value) ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** A local JSON pointer (`#` or `#/a/b`, `~1` → `/`, `~0` → `~`) in `root`; anything else is unresolvable. */
function resolveRef(ref: string, root: JsonSchema): JsonSchema | boolean | undefined {
  if (ref !== '#' && !ref.startsWith('#/')) return undefined;
  const path = ref.slice(2).split('/').map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node: unknown = root;
  for (const part of ref === '#' ? [] : path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, part)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node as JsonSchema | boolean | undefined;
}

/** The schemas rendering visits below `node` (not `$defs`: those are reached through `$ref`s). */
function children(node: JsonSchema): unknown[] {
  const out: unknown[] = [];
  const list = (value: unknown) => Array.isArray(value) && out.push(...value);
  if (typeof node.properties === 'object' && node.properties !== null) out.push(...Object.values(node.properties));
  out.push(node.additionalProperties, node.items);
  list(node.prefixItems);
  list(node.anyOf);
  list(node.oneOf);
  list(node.allOf);
  return out;
}

/** The `$ref`s of `schema` to render as named types: those used at more than one place, and those on a cycle. */
function refsToName(schema: JsonSchema | boolean, root: JsonSchema, scope: TypeScope): Set<string> {
  const uses = new Map<string, number>();
  const cyclic = new Set<string>();
  const onPath = new Set<string>();
  const walked = new Set<string>();
  const walk = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
    if (++scope.visits > MAX_RENDERED_NODES) throw new TooLargeToRender();
    const ref = (node as JsonSchema).$ref;
    if (typeof ref === 'string') {
      uses.set(ref, (uses.get(ref) ?? 0) + 1);
      if (onPath.has(ref)) cyclic.add(ref);
      else if (!walked.has(ref)) {
        walked.add(ref);
        onPath.add(ref);
        walk(resolveRef(ref, root));
        onPath.delete(ref);
      }
    }
    for (const child of children(node as JsonSchema)) walk(child);
  };
  walk(schema);
  return new Set([...uses].filter(([ref, count]) => count > 1 || cyclic.has(ref)).map(([ref]) => ref));
}

/** A free name for `ref` in `scope`: the last segment of its pointer as an identifier (`Root` for `#`), numbered when taken. */
function nameFor(ref: string, scope: TypeScope): string {
  const segment = ref === '#' ? 'Root' : (ref.slice(ref.lastIndexOf('/') + 1).replace(/~1/g, '/').replace(/~0/g, '~') || 'Type');
  let base = segment.replace(/[^A-Za-z0-9_$]/g, '_');
  if (!IDENTIFIER.test(base)) base = `_${base}`;
  let name = base;
  for (let index = 2; scope.taken.has(name); index++) name = `${base}_${index}`;
  scope.taken.add(name);
  return name;
}

/** A named `$ref`'s name; the first use renders its `type` line (its slot is taken first, so the lines read top-down). */
function namedType(ref: string, state: RenderState): string {
  const known = state.named.get(ref);
  if (known !== undefined) return known;
  const name = nameFor(ref, state.scope);
  state.named.set(ref, name);
  const target = resolveRef(ref, state.root);
  const slot = state.scope.aliases.push('') - 1;
  state.scope.aliases[slot] = `type ${name} = ${target === undefined ? 'unknown' : render(target, state)};`;
  return name;
}

function renderRef(schema: JsonSchema, state: RenderState): string {
  const ref = schema.$ref as string;
  let refType: string;
  if (state.named.has(ref)) refType = namedType(ref, state);
  else {
    const target = resolveRef(ref, state.root);
    refType = target === undefined ? 'unknown' : render(target, state);
  }
  const { $ref: _ref, $defs: _defs, definitions: _definitions, ...siblings } = schema;
  if (!RENDERABLE.some((key) => key in siblings)) return refType;
  const siblingType = render(siblings as JsonSchema, state);
  if (refType === 'unknown') return siblingType;
  if (siblingType === 'unknown') return refType;
  return `(${refType}) & (${siblingType})`;
}

/** The members of a non-empty list joined by `separator`, or undefined for a missing or empty list. */
function joined<T>(list: readonly T[] | undefined, separator: string, each: (item: T) => string): string | undefined {
  return Array.isArray(list) && list.length > 0 ? list.map((item) => each(item)).join(separator) : undefined;
}

function render(schema: JsonSchema | boolean, state: RenderState): string {
  if (schema === true) return 'unknown';
  if (schema === false) return 'never';
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'unknown';
  if (++state.scope.visits > MAX_RENDERED_NODES) throw new TooLargeToRender();
  if (typeof schema.$ref === 'string') return renderRef(schema, state);
  if ('const' in schema && schema.const !== undefined) return literal(schema.const as JsonValue);
  const child = (item: JsonSchema | boolean) => render(item, state);
  const composed =
    joined(schema.enum, ' | ', (value) => literal(value)) ?? joined(schema.anyOf, ' | ', child) ?? joined(schema.oneOf, ' | ', child) ?? joined(schema.allOf as Array<JsonSchema | boolean> | undefined, ' & ', child);
  if (composed !== undefined) return composed;
  const type = schema.type as unknown;
  if (Array.isArray(type)) {
    const names = type.filter((entry): entry is string => typeof entry === 'string');
    if (names.length > 0) return names.map((name) => renderType(schema, name, state)).join(' | ');
  } else if (typeof type === 'string') {
    return renderType(schema, type, state);
  }
  if (schema.properties !== undefined || schema.additionalProperties !== undefined || schema.required !== undefined) return renderObject(schema, state);
  if (schema.items !== undefined || schema.prefixItems !== undefined) return renderArray(schema, state);
  return 'unknown';
}

function renderType(schema: JsonSchema, type: string, state: RenderState): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return renderArray(schema, state);
    case 'object':
      return renderObject(schema, state);
    default:
      return 'unknown';
  }
}

function renderArray(schema: JsonSchema, state: RenderState): string {
  if (schema.items !== undefined) return `Array<${render(schema.items as JsonSchema | boolean, state)}>`;
  const tuple = joined(schema.prefixItems as Array<JsonSchema | boolean> | undefined, ', ', (item) => render(item, state));
  return tuple === undefined ? 'unknown[]' : `[${tuple}]`;
}

function hasDescription(property: unknown): boolean {
  return typeof property === 'object' && property !== null && typeof (property as JsonSchema).description === 'string' && (property as JsonSchema).description !== '';
}

function renderObject(schema: JsonSchema, state: RenderState): string {
  const properties = (typeof schema.properties === 'object' && schema.properties !== null ? schema.properties : {}) as Record<string, JsonSchema | boolean>;
  const names = Object.keys(properties).sort();
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const multiLine = names.some((name) => hasDescription(properties[name]));
  const prefix = multiLine ? MEMBER_INDENT : '';
  const lines: string[] = [];
  for (const name of names) {
    const property = properties[name];
    if (multiLine && hasDescription(property)) {
      // every line terminator TypeScript knows (CR, U+2028, U+2029 too) starts a new comment line
      for (const line of safeToolText((property as JsonSchema).description as string).split('\n')) if (line.trim() !== '') lines.push(`${prefix}// ${line.trim()}`);
    }
    const key = IDENTIFIER.test(name) ? name : sourceLiteral(name);
    lines.push(`${prefix}${key}${required.has(name) ? '' : '?'}: ${render(property, state)};`);
  }
  if (schema.additionalProperties !== undefined) {
    const additional = schema.additionalProperties;
    if (additional !== false) lines.push(`${prefix}[key: string]: ${render(additional, state)};`);
  } else if (names.length === 0) {
    lines.push(`${prefix}[key: string]: unknown;`);
  }
  if (multiLine) return ['{', ...lines, '}'].join('\n');
  return lines.length === 0 ? '{}' : `{ ${lines.join(' ')} }`;
}
