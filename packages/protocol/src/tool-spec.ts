import type { JsonObject, JsonSchema } from './json';

/**
 * A function tool: the model sends JSON arguments.
 * Serialized as `{type:"function", name, description, strict, defer_loading?, parameters}`.
 */
export interface FunctionToolSpec {
  /** Discriminant; serialized as `type:"function"`. */
  readonly type: 'function';
  /** The function name (without namespace; the namespace lives on the executor's `ToolName`). */
  readonly name: string;
  /** What the model reads to decide when to call the tool. */
  readonly description: string;
  /** Responses-API strict mode; `false` unless set. */
  readonly strict?: boolean;
  /** Serialized as `defer_loading` only when set (tool_search results force it to `true`). */
  readonly deferLoading?: boolean;
  /** JSON Schema of the arguments object; validated with ajv before the handler runs. */
  readonly parameters: JsonSchema;
  /**
   * JSON Schema of the Code Mode result. **Never serialized** to the model's `tools`; used only to
   * type the nested tool in the `exec` description.
   */
  readonly outputSchema?: JsonSchema;
}

/** The grammar of a freeform tool's input. */
export interface ToolGrammar {
  /** `lark` (a Lark grammar) or `regex`. */
  readonly syntax: 'lark' | 'regex';
  /** The grammar text, sent verbatim. */
  readonly definition: string;
}

/**
 * A freeform ("custom") tool: the model sends raw text (`apply_patch`, `exec`).
 * Serialized as `{type:"custom", name, description, format:{type:"grammar", syntax, definition}}`,
 * or with `format:{type:"text"}` when no grammar is given.
 */
export interface FreeformToolSpec {
  /** Discriminant; serialized as `type:"custom"`. */
  readonly type: 'custom';
  /** The tool name (without namespace; the namespace lives on the executor's `ToolName`). */
  readonly name: string;
  /** What the model reads to decide when to call the tool. */
  readonly description: string;
  /** Constrains what the model may send; absent means free text. */
  readonly grammar?: ToolGrammar;
  /** Sent as `defer_loading` when set: `tool_search` returns found custom tools with `true`. */
  readonly deferLoading?: boolean;
}

/**
 * A namespace grouping function tools (`clock` → `curr_time`); a namespace `tool_search` returns
 * may also hold custom (freeform) tools, as the Responses API accepts.
 * Serialized as `{type:"namespace", name, description, tools:[function or custom specs]}`.
 * The planner builds these from executors whose `ToolName` has a namespace; members are sorted by name.
 */
export interface NamespaceToolSpec {
  /** Discriminant; serialized as `type:"namespace"`. */
  readonly type: 'namespace';
  /** The namespace (`clock`, `mcp__docs__`); the model sends it back as a call's `namespace`. */
  readonly name: string;
  /** What the namespace groups (first non-blank member `namespaceDescription`). */
  readonly description: string;
  /** The member tools, sorted by name: functions (custom tools only in specs `tool_search` returns). */
  readonly tools: readonly (FunctionToolSpec | FreeformToolSpec)[];
}

/**
 * The client-executed deferred-tool search.
 * Serialized as `{type:"tool_search", execution:"client", description, parameters}`.
 */
export interface ToolSearchToolSpec {
  /** Discriminant; serialized as `type:"tool_search"`. */
  readonly type: 'tool_search';
  /** Always `client`: Switchyard runs the search and answers it. */
  readonly execution: 'client';
  /** What the model reads to decide when to search. */
  readonly description: string;
  /** JSON Schema of the search arguments (`query`, optional `limit`). */
  readonly parameters: JsonSchema;
}

/**
 * A provider-executed tool (`web_search`, `image_generation`, …): visible to the model, never
 * registered. `json` is sent verbatim and must carry the wire `type`; `name` defaults to it.
 */
export interface HostedToolSpec {
  /** Discriminant; not serialized (the wire `type` is `json.type`). */
  readonly type: 'hosted';
  /** The exact wire JSON (`{type:"web_search", …}`), sent verbatim. */
  readonly json: JsonObject & { type: string };
}

/** Every spec a plan can hold. An executor's own spec is a function or freeform spec. */
export type ToolSpec = FunctionToolSpec | FreeformToolSpec | NamespaceToolSpec | ToolSearchToolSpec | HostedToolSpec;

/** The specs a single executor may have. */
export type ExecutorToolSpec = FunctionToolSpec | FreeformToolSpec | ToolSearchToolSpec;

/** What `tool_search` returns: a function, a custom tool or a namespace (reference "LoadableToolSpec"). */
export type LoadableToolSpec = FunctionToolSpec | FreeformToolSpec | NamespaceToolSpec;

/** The Responses-API JSON of a function tool. */
export interface WireFunctionTool {
  /** Always `function`. */
  type: 'function';
  /** The function name (without namespace). */
  name: string;
  /** What the model reads to decide when to call the tool. */
  description: string;
  /** Strict mode; always present, `false` unless the spec sets it. */
  strict: boolean;
  /** Present only when the spec sets `deferLoading`. */
  defer_loading?: boolean;
  /** JSON Schema of the arguments object. */
  parameters: JsonSchema;
}

/** The Responses-API JSON of a custom tool. */
export interface WireCustomTool {
  /** Always `custom`. */
  type: 'custom';
  /** The tool name (without namespace). */
  name: string;
  /** What the model reads to decide when to call the tool. */
  description: string;
  /** Present only when the spec sets `deferLoading` (key order: before `format`). */
  defer_loading?: boolean;
  /** `{type:"grammar", syntax, definition}` when the spec has a grammar, else `{type:"text"}` (free text). */
  format: { type: 'grammar'; syntax: 'lark' | 'regex'; definition: string } | { type: 'text' };
}

/** The Responses-API JSON of a namespace. */
export interface WireNamespaceTool {
  /** Always `namespace`. */
  type: 'namespace';
  /** The namespace the model sends back as a call's `namespace`. */
  name: string;
  /** What the namespace groups. */
  description: string;
  /** The member tools: functions, and custom tools in what `tool_search` returns. */
  tools: Array<WireFunctionTool | WireCustomTool>;
}

/** The Responses-API JSON of tool_search. */
export interface WireToolSearchTool {
  /** Always `tool_search`. */
  type: 'tool_search';
  /** Always `client`. */
  execution: 'client';
  /** What the model reads to decide when to search. */
  description: string;
  /** JSON Schema of the search arguments. */
  parameters: JsonSchema;
}

/** One entry of a request's `tools` array. Hosted specs are their own `json`. */
export type WireTool =
  | WireFunctionTool
  | WireCustomTool
  | WireNamespaceTool
  | WireToolSearchTool
  | (JsonObject & {
      /** A hosted tool's own wire type (`web_search`, `image_generation`, …). */
      type: string;
    });

/**
 * The name a spec answers to in a plan: its `name`, `tool_search`, or a hosted spec's
 * `json.name` falling back to `json.type` (`web_search`). Never throws.
 */
export function specName(spec: ToolSpec): string {
  switch (spec.type) {
    case 'tool_search':
      return 'tool_search';
    case 'hosted':
      return typeof spec.json.name === 'string' ? spec.json.name : spec.json.type;
    default:
      return spec.name;
  }
}

function wireFunction(spec: FunctionToolSpec): WireFunctionTool {
  const out: WireFunctionTool = {
    type: 'function',
    name: spec.name,
    description: spec.description,
    strict: spec.strict ?? false,
    parameters: spec.parameters,
  };
  if (spec.deferLoading !== undefined) {
    // Keep the reference key order: defer_loading sits before parameters.
    return { type: 'function', name: spec.name, description: spec.description, strict: out.strict, defer_loading: spec.deferLoading, parameters: spec.parameters };
  }
  return out;
}

function wireCustom(spec: FreeformToolSpec): WireCustomTool {
  const format: WireCustomTool['format'] = spec.grammar ? { type: 'grammar', syntax: spec.grammar.syntax, definition: spec.grammar.definition } : { type: 'text' };
  // The reference key order: defer_loading (only when set) sits before format.
  if (spec.deferLoading !== undefined) return { type: 'custom', name: spec.name, description: spec.description, defer_loading: spec.deferLoading, format };
  return { type: 'custom', name: spec.name, description: spec.description, format };
}

/**
 * Serializes one spec to its exact Responses-API JSON: `output_schema` is
 * never sent, `defer_loading` only when set, absent optional fields omitted, key order fixed so the
 * same plan gives byte-identical request JSON (provider prompt caches keep hitting). Pure; never throws.
 */
export function toWireTool(spec: ToolSpec): WireTool {
  switch (spec.type) {
    case 'function':
      return wireFunction(spec);
    case 'custom':
      return wireCustom(spec);
    case 'namespace':
      return { type: 'namespace', name: spec.name, description: spec.description, tools: spec.tools.map((member) => (member.type === 'custom' ? wireCustom(member) : wireFunction(member))) };
    case 'tool_search':
      return { type: 'tool_search', execution: 'client', description: spec.description, parameters: spec.parameters };
    case 'hosted':
      return spec.json;
  }
}

/** Serializes a list of specs (a request's `tools`) in order. */
export function toWireTools(specs: readonly ToolSpec[]): WireTool[] {
  return specs.map(toWireTool);
}
