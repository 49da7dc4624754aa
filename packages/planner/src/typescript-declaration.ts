import { normalizeIdentifier } from '@switchyard/protocol';

/** Local `$ref`s are expanded at most this many times along one path, then render as `unknown`. */
const MAX_REF_EXPANSIONS_PER_PATH = 2;

const RENDERABLE_KEYWORDS = [
  'const',
  'enum',
  'anyOf',
  'oneOf',
  'allOf',
  'type',
  'properties',
  'additionalProperties',
  'required',
  'items',
  'prefixItems',
];

type SchemaObject = Record<string, unknown>;

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function literal(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function propertyName(name: string): string {
  return normalizeIdentifier(name) === name ? name : JSON.stringify(name);
}

/** Follows a local JSON pointer (`#/$defs/Node`) inside `root`; `undefined` when it does not resolve. */
function resolvePointer(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isObject(node) && Object.prototype.hasOwnProperty.call(node, key)) node = node[key];
    else return undefined;
  }
  return node;
}

class SchemaRenderer {
  private readonly active = new Map<string, number>();

  constructor(private readonly root: unknown) {}

  render(schema: unknown): string {
    if (schema === true) return 'unknown';
    if (schema === false) return 'never';
    if (!isObject(schema)) return 'unknown';
    return this.renderObjectSchema(schema);
  }

  private renderObjectSchema(schema: SchemaObject): string {
    if ('$ref' in schema) return this.renderRef(schema);
    if ('const' in schema) return literal(schema.const);
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum.map(literal).join(' | ');
    for (const key of ['anyOf', 'oneOf']) {
      const variants = schema[key];
      if (Array.isArray(variants) && variants.length > 0) return variants.map((variant) => this.render(variant)).join(' | ');
    }
    if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return schema.allOf.map((variant) => this.render(variant)).join(' & ');
    if (Array.isArray(schema.type)) {
      const types = schema.type.filter((type): type is string => typeof type === 'string');
      if (types.length > 0) return types.map((type) => this.renderType(schema, type)).join(' | ');
    } else if (typeof schema.type === 'string') {
      return this.renderType(schema, schema.type);
    }
    if ('properties' in schema || 'additionalProperties' in schema || 'required' in schema) return this.renderObject(schema);
    if ('items' in schema || 'prefixItems' in schema) return this.renderArray(schema);
    return 'unknown';
  }

  private renderRef(schema: SchemaObject): string {
    let referenced = 'unknown';
    const ref = schema.$ref;
    if (typeof ref === 'string' && ref.startsWith('#')) {
      const pointer = ref.slice(1);
      if (pointer === '' || pointer.startsWith('/')) {
        const depth = this.active.get(pointer) ?? 0;
        if (depth < MAX_REF_EXPANSIONS_PER_PATH) {
          const target = resolvePointer(this.root, pointer);
          if (target !== undefined) {
            this.active.set(pointer, depth + 1);
            referenced = this.render(target);
            if (depth === 0) this.active.delete(pointer);
            else this.active.set(pointer, depth);
          }
        }
      }
    }
    const siblings: SchemaObject = { ...schema };
    delete siblings.$ref;
    delete siblings.$defs;
    delete siblings.definitions;
    if (!RENDERABLE_KEYWORDS.some((key) => key in siblings)) return referenced;
    const sibling = this.renderObjectSchema(siblings);
    if (referenced === 'unknown') return sibling;
    if (sibling === 'unknown') return referenced;
    return `(${referenced}) & (${sibling})`;
  }

  private renderType(schema: SchemaObject, type: string): string {
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
        return this.renderArray(schema);
      case 'object':
        return this.renderObject(schema);
      default:
        return 'unknown';
    }
  }

  private renderArray(schema: SchemaObject): string {
    if ('items' in schema && !Array.isArray(schema.items)) return `Array<${this.render(schema.items)}>`;
    const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : undefined;
    if (tuple && tuple.length > 0) return `[${tuple.map((item) => this.render(item)).join(', ')}]`;
    return 'unknown[]';
  }

  private indexSignature(schema: SchemaObject, hasProperties: boolean): string | undefined {
    if ('additionalProperties' in schema) {
      const extra = schema.additionalProperties;
      if (extra === false) return undefined;
      return `[key: string]: ${extra === true ? 'unknown' : this.render(extra)};`;
    }
    return hasProperties ? undefined : '[key: string]: unknown;';
  }

  private renderObject(schema: SchemaObject): string {
    const required = new Set(Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === 'string') : []);
    const properties = isObject(schema.properties) ? schema.properties : {};
    const names = Object.keys(properties).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const member = (name: string) => `${propertyName(name)}${required.has(name) ? '' : '?'}: ${this.render(properties[name])};`;
    const describedName = names.some((name) => {
      const property = properties[name];
      return isObject(property) && typeof property.description === 'string' && property.description !== '';
    });
    const signature = () => this.indexSignature(schema, names.length > 0);

    if (describedName) {
      const lines = ['{'];
      for (const name of names) {
        const property = properties[name];
        if (isObject(property) && typeof property.description === 'string') {
          for (const line of property.description.split(/\r?\n/)) {
            if (line.trim() !== '') lines.push(`  // ${line.trim()}`);
          }
        }
        lines.push(`  ${member(name)}`);
      }
      const extra = signature();
      if (extra) lines.push(`  ${extra}`);
      lines.push('}');
      return lines.join('\n');
    }

    const parts = names.map(member);
    const extra = signature();
    if (extra) parts.push(extra);
    return parts.length === 0 ? '{}' : `{ ${parts.join(' ')} }`;
  }
}

/**
 * Renders a JSON Schema as a TypeScript type (reference code-mode.md §1.3): objects with sorted
 * members and `?` for optional ones, `//` comments for described members, unions for
 * `anyOf`/`oneOf`/`enum`, intersections for `allOf`, local `$ref` expanded twice per path.
 * Pure; never throws (anything unrecognized renders as `unknown`).
 */
export function renderJsonSchemaToTypeScript(schema: unknown): string {
  return new SchemaRenderer(schema).render(schema);
}

/**
 * The `structuredContent` schema of an MCP-shaped output schema (`content` array of objects,
 * boolean `isError`, object `_meta`), `true` when it has none, or `undefined` for other schemas.
 */
function mcpStructuredContentSchema(outputSchema: unknown): unknown {
  if (!isObject(outputSchema) || !isObject(outputSchema.properties)) return undefined;
  const properties = outputSchema.properties;
  const content = properties.content;
  if (!isObject(content) || content.type !== 'array' || !isObject(content.items) || content.items.type !== 'object') return undefined;
  if (!isObject(properties.isError) || properties.isError.type !== 'boolean') return undefined;
  if (!isObject(properties._meta) || properties._meta.type !== 'object') return undefined;
  return 'structuredContent' in properties ? properties.structuredContent : true;
}

/** What {@link codeModeUsageSample} needs to know about one tool. */
export interface CodeModeUsageSampleOptions {
  /** The tool's own description. */
  description: string;
  /** The JS identifier under `tools.` (already normalized). */
  codeModeName: string;
  /** `function` tools take `args`, `freeform` tools take `input: string`. */
  kind: 'function' | 'freeform';
  inputSchema?: unknown;
  outputSchema?: unknown;
}

/**
 * The description augmented for Code Mode (`augment_tool_spec_for_code_mode`): the tool's text,
 * then "exec tool declaration:" and a `declare const tools: { name(args: T): Promise<O>; };` block.
 * MCP-shaped output schemas render as `CallToolResult<structured>`.
 */
export function codeModeUsageSample(options: CodeModeUsageSampleOptions): string {
  const inputName = options.kind === 'function' ? 'args' : 'input';
  const inputType =
    options.kind === 'freeform' ? 'string' : options.inputSchema === undefined ? 'unknown' : renderJsonSchemaToTypeScript(options.inputSchema);
  let outputType: string;
  const structured = mcpStructuredContentSchema(options.outputSchema);
  if (structured !== undefined) {
    const rendered = renderJsonSchemaToTypeScript(structured);
    outputType = rendered === 'unknown' ? 'CallToolResult' : `CallToolResult<${rendered}>`;
  } else {
    outputType = options.outputSchema === undefined ? 'unknown' : renderJsonSchemaToTypeScript(options.outputSchema);
  }
  const declaration = `declare const tools: { ${options.codeModeName}(${inputName}: ${inputType}): Promise<${outputType}>; };`;
  return `${options.description}\n\nexec tool declaration:\n\`\`\`ts\n${declaration}\n\`\`\``;
}
