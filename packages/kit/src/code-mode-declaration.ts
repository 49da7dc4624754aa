import { MCP_RESULT_SCHEMA_MARKER, type JsonSchema, type JsonValue } from '@switchyard/protocol';

/**
 * Code Mode declarations, shared by the planner (visible descriptions in `code-mode`) and the
 * broker (`exec` description, `ALL_TOOLS`) so both always render the same text.
 *
 * Renders a JSON Schema as a TypeScript type, by the rules the model is used to from Codex (each
 * one spends as few tokens as the type allows):
 * `true` → unknown, `false` → never, const/enum → JSON literals, anyOf/oneOf → `A | B` and
 * allOf → `A & B` with no parentheses around the members, a `type` list → one type per entry
 * joined by `|`, arrays → `Array<T>` (tuples from `prefixItems`), objects → `{ a: T; b?: U; }` with
 * sorted properties, index signatures for `additionalProperties`, quoted non-identifier names.
 * An object with a described property renders one member per line, each line indented by two
 * spaces and preceded by its `// description` lines; a nested object is not indented further and
 * closes at column 0. A local `$ref` (`#` or `#/…`, resolved against `root`, by default the schema
 * itself) is expanded at most twice along one path, then renders `unknown`; siblings beside a
 * `$ref` are intersected as `(A) & (B)`.
 */
export function schemaToTypeScript(schema: JsonSchema | boolean | undefined, root?: JsonSchema): string {
  if (schema === undefined || schema === null) return 'unknown';
  return render(schema, { root: (root ?? (typeof schema === 'object' ? schema : {})) as JsonSchema, refs: new Map() });
}

interface RenderState {
  root: JsonSchema;
  /** How often each `$ref` was expanded on the current path. */
  refs: Map<string, number>;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RENDERABLE = ['const', 'enum', 'anyOf', 'oneOf', 'allOf', 'type', 'properties', 'additionalProperties', 'required', 'items', 'prefixItems'];
/** The prefix of each member line of a multi-line object (nested objects are not indented further). */
const MEMBER_INDENT = '  ';

function literal(value: JsonValue): string {
  try {
    return JSON.stringify(value) ?? 'unknown';
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

function renderRef(schema: JsonSchema, state: RenderState): string {
  const ref = schema.$ref as string;
  const seen = state.refs.get(ref) ?? 0;
  const target = seen < 2 ? resolveRef(ref, state.root) : undefined;
  const refType = target === undefined ? 'unknown' : render(target, { ...state, refs: new Map(state.refs).set(ref, seen + 1) });
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
      for (const line of ((property as JsonSchema).description as string).split(/\r?\n/)) if (line.trim() !== '') lines.push(`${prefix}// ${line.trim()}`);
    }
    const key = IDENTIFIER.test(name) ? name : JSON.stringify(name);
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

/**
 * True when an output schema describes an MCP `CallToolResult`: marked with `MCP_RESULT_SCHEMA_MARKER`,
 * or with an array `content` property and an `isError` property.
 */
export function isMcpOutputSchema(schema: JsonSchema | undefined): boolean {
  if (!schema || typeof schema !== 'object') return false;
  if (schema[MCP_RESULT_SCHEMA_MARKER] === true) return true;
  const content = schema.properties?.content as JsonSchema | undefined;
  return !!content && content.type === 'array' && !!schema.properties && 'isError' in schema.properties;
}

/**
 * The result type of a nested tool: `CallToolResult<T>` for MCP-shaped schemas, the rendered schema, or `unknown`.
 * `T` is the `structuredContent` schema rendered as a schema of its own: an MCP tool's `outputSchema` describes the
 * structured content alone, so its local `$ref`s (`#/definitions/…`, `#/$defs/…`) point into it, not into the
 * `CallToolResult` envelope around it.
 */
function outputType(schema: JsonSchema | undefined): string {
  if (!schema) return 'unknown';
  if (isMcpOutputSchema(schema)) {
    const structured = schema.properties?.structuredContent as JsonSchema | undefined;
    const rendered = structured === undefined ? 'unknown' : schemaToTypeScript(structured);
    return rendered === 'unknown' ? 'CallToolResult' : `CallToolResult<${rendered}>`;
  }
  return schemaToTypeScript(schema);
}

/** What a Code Mode declaration needs to know about one tool. */
export interface CodeModeDeclarationInput {
  /** The tool's own description. */
  description: string;
  /** The JS identifier under `tools.`. */
  codeModeName: string;
  /** `function` tools take `args`, `freeform` tools `input: string`. */
  kind: 'function' | 'freeform';
  /**
   * JSON Schema of the arguments (function tools), rendered as the `args` type; absent → `unknown`. Ignored for
   * freeform tools.
   */
  inputSchema?: JsonSchema;
  /**
   * JSON Schema of the result, rendered as the promise's type (`CallToolResult<T>` for MCP-shaped schemas);
   * absent → `unknown`.
   */
  outputSchema?: JsonSchema;
}

/** `declare const tools: { name(args: T): Promise<O>; };` for one nested tool. */
export function codeModeDeclaration(tool: CodeModeDeclarationInput): string {
  const input = tool.kind === 'freeform' ? 'input: string' : `args: ${tool.inputSchema === undefined ? 'unknown' : schemaToTypeScript(tool.inputSchema)}`;
  return `declare const tools: { ${tool.codeModeName}(${input}): Promise<${outputType(tool.outputSchema)}>; };`;
}

/**
 * The description a tool has in Code Mode — visible specs in `code-mode`, `ALL_TOOLS` and the
 * `exec` reference: its text, then "exec tool declaration:" and the TypeScript block.
 */
export function augmentCodeModeDescription(tool: CodeModeDeclarationInput): string {
  return `${tool.description}\n\nexec tool declaration:\n\`\`\`ts\n${codeModeDeclaration(tool)}\n\`\`\``;
}
