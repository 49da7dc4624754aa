import { MCP_RESULT_SCHEMA_MARKER, type JsonSchema, type JsonValue } from '@switchyard/protocol';

/**
 * Code Mode declarations, shared by the planner (visible descriptions in `code-mode`) and the
 * broker (`exec` description, `ALL_TOOLS`) so both always render the same text.
 *
 * Renders a JSON Schema as a TypeScript type, by these rules:
 * `true` → unknown, `false` → never, const/enum → literals, anyOf/oneOf → `|`, allOf → `&`,
 * arrays → `Array<T>` (tuples from `prefixItems`), objects → `{ a: T; b?: U; }` with sorted
 * properties (multi-line with `// description` comments when any property has one), index
 * signatures for `additionalProperties`, quoted non-identifier names, local `$ref` expanded at
 * most twice along one path.
 */
export function schemaToTypeScript(schema: JsonSchema | boolean | undefined, root?: JsonSchema): string {
  if (schema === undefined || schema === null) return 'unknown';
  return render(schema, { root: (root ?? (typeof schema === 'object' ? schema : {})) as JsonSchema, refs: new Map(), indent: '' });
}

interface RenderState {
  root: JsonSchema;
  /** How often each `$ref` was expanded on the current path. */
  refs: Map<string, number>;
  indent: string;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RENDERABLE = ['const', 'enum', 'anyOf', 'oneOf', 'allOf', 'type', 'properties', 'additionalProperties', 'required', 'items', 'prefixItems'];

function literal(value: JsonValue): string {
  try {
    return JSON.stringify(value) ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function resolveRef(ref: string, root: JsonSchema): JsonSchema | boolean | undefined {
  if (!ref.startsWith('#')) return undefined;
  const path = ref.slice(1).split('/').filter(Boolean).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node: unknown = root;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node as JsonSchema | boolean | undefined;
}

function render(schema: JsonSchema | boolean, state: RenderState): string {
  if (schema === true) return 'unknown';
  if (schema === false) return 'never';
  if (typeof schema !== 'object' || schema === null) return 'unknown';

  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref;
    const seen = state.refs.get(ref) ?? 0;
    const target = resolveRef(ref, state.root);
    let refType = 'unknown';
    if (seen < 2 && target !== undefined) {
      const refs = new Map(state.refs).set(ref, seen + 1);
      refType = render(target, { ...state, refs });
    }
    const { $ref: _ref, $defs: _defs, definitions: _definitions, ...siblings } = schema;
    if (!RENDERABLE.some((key) => key in siblings)) return refType;
    const siblingType = render(siblings as JsonSchema, state);
    if (refType === 'unknown') return siblingType;
    if (siblingType === 'unknown') return refType;
    return `(${refType}) & (${siblingType})`;
  }

  if ('const' in schema && schema.const !== undefined) return literal(schema.const as JsonValue);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum.map((v) => literal(v as JsonValue)).join(' | ');
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union) && union.length > 0) return union.map((s) => wrapUnionMember(render(s as JsonSchema, state))).join(' | ');
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    return (schema.allOf as JsonSchema[]).map((s) => wrapUnionMember(render(s, state))).join(' & ');
  }

  const type = schema.type;
  if (Array.isArray(type)) {
    return type.map((t) => render({ ...schema, type: t }, state)).join(' | ');
  }
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
      if (schema.properties || schema.additionalProperties !== undefined) return renderObject(schema, state);
      if (schema.items || schema.prefixItems) return renderArray(schema, state);
      return 'unknown';
  }
}

function wrapUnionMember(text: string): string {
  return text.includes(' | ') || text.includes(' & ') ? `(${text})` : text;
}

function renderArray(schema: JsonSchema, state: RenderState): string {
  const prefix = schema.prefixItems as JsonSchema[] | undefined;
  if (Array.isArray(prefix)) return `[${prefix.map((s) => render(s, state)).join(', ')}]`;
  if (Array.isArray(schema.items)) return `[${schema.items.map((s) => render(s, state)).join(', ')}]`;
  if (schema.items !== undefined) {
    return `Array<${render(schema.items as JsonSchema | boolean, state)}>`;
  }
  return 'unknown[]';
}

function renderObject(schema: JsonSchema, state: RenderState): string {
  const properties = schema.properties ?? {};
  const names = Object.keys(properties).sort();
  const required = new Set(schema.required ?? []);
  const multiLine = names.some((name) => typeof (properties[name] as JsonSchema)?.description === 'string' && (properties[name] as JsonSchema).description !== '');
  const inner = multiLine ? `${state.indent}  ` : state.indent;
  const members: Array<{ comment?: string; text: string }> = names.map((name) => {
    const property = properties[name] as JsonSchema | boolean;
    const key = IDENTIFIER.test(name) ? name : JSON.stringify(name);
    const optional = required.has(name) ? '' : '?';
    const comment = typeof property === 'object' && property.description ? property.description : undefined;
    return { comment, text: `${key}${optional}: ${render(property, { ...state, indent: inner })};` };
  });
  const additional = schema.additionalProperties;
  if (additional === true || (typeof additional === 'object' && additional !== null)) {
    members.push({ text: `[key: string]: ${render(additional as JsonSchema | boolean, { ...state, indent: inner })};` });
  } else if (names.length === 0 && additional === undefined) {
    members.push({ text: '[key: string]: unknown;' });
  }
  if (members.length === 0) return '{}';
  if (!multiLine) return `{ ${members.map((m) => m.text).join(' ')} }`;
  const lines: string[] = ['{'];
  for (const member of members) {
    if (member.comment) {
      for (const line of member.comment.split(/\r?\n/)) if (line.trim() !== '') lines.push(`${inner}// ${line.trim()}`);
    }
    lines.push(`${inner}${member.text}`);
  }
  lines.push(`${state.indent}}`);
  return lines.join('\n');
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

/** The result type of a nested tool: `CallToolResult<T>` for MCP-shaped schemas, the rendered schema, or `unknown`. */
function outputType(schema: JsonSchema | undefined): string {
  if (!schema) return 'unknown';
  if (isMcpOutputSchema(schema)) {
    const structured = schema.properties?.structuredContent as JsonSchema | undefined;
    const rendered = structured === undefined ? 'unknown' : schemaToTypeScript(structured, schema);
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
