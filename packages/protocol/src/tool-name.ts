/**
 * The identity of a tool: a `name` plus an optional `namespace`.
 *
 * Equality uses both fields (see {@link toolNameEquals}); lookups in the registry are exact, so a
 * namespaced tool never matches a plain one of the same name. A tool has one display name (see
 * {@link displayName}), the same one a Code Mode cell calls; the wire keeps the two fields apart.
 * Values are plain frozen objects: safe to share between steps, cheap to compare.
 */
export interface ToolName {
  /** The function name inside its namespace (`curr_time`), or the whole name when plain (`exec`). */
  readonly name: string;
  /** The namespace (`clock`, `mcp__docs__`), or `undefined` for a plain tool. Never `""`. */
  readonly namespace?: string;
}

/** The default namespace of the Responses API: it displays as the bare name. */
export const DEFAULT_NAMESPACE = 'functions';

/**
 * Creates a frozen {@link ToolName}. An empty or absent namespace means a plain tool.
 * Does not validate the characters; the planner refuses empty names with a warning.
 */
export function toolName(name: string, namespace?: string | null): ToolName {
  return namespace ? Object.freeze({ name, namespace }) : Object.freeze({ name });
}

/**
 * The one display name of a tool — the name hooks (`tool_name`, matchers), model-visible errors
 * ("unsupported call: X"), events, logs and plan tables use. It is the Code Mode name before
 * identifier normalization: namespace and name joined with `__`, or glued when the namespace
 * already ends in `_` or the name starts with `_` (`clock` + `curr_time` → `clock__curr_time`,
 * `mcp__fs__` + `read_file` → `mcp__fs__read_file`). A plain tool and the default `functions`
 * namespace display as the bare name. Never throws.
 */
export function displayName(tool: ToolName): string {
  if (!tool.namespace || tool.namespace === DEFAULT_NAMESPACE) return tool.name;
  return joinNamespace(tool.namespace, tool.name);
}

/**
 * Joins a namespace and a name the Code Mode way: glued when the namespace ends in `_` or the
 * name starts with `_`, else with `__` between them. Shared by {@link displayName} and the
 * code-mode identifier, so the two never drift apart.
 */
export function joinNamespace(namespace: string, name: string): string {
  return namespace.endsWith('_') || name.startsWith('_') ? namespace + name : `${namespace}__${name}`;
}

/**
 * Every spelling a host may use for a tool in a hook matcher: the display name, the bare name and
 * `namespace.name` (with the namespace's trailing `_` separator dropped, so `mcp__fs__` + `read_file`
 * is also `mcp__fs.read_file`). Deduplicated, display name first. Never throws.
 */
export function toolNameSpellings(tool: ToolName): string[] {
  const names = [displayName(tool), tool.name];
  if (tool.namespace) {
    names.push(`${tool.namespace}.${tool.name}`);
    const bare = tool.namespace.replace(/_+$/, '');
    if (bare && bare !== tool.namespace) names.push(`${bare}.${tool.name}`);
  }
  return [...new Set(names)];
}

/** Exact equality on both fields (an absent namespace equals only an absent namespace). */
export function toolNameEquals(a: ToolName, b: ToolName): boolean {
  return a.name === b.name && (a.namespace || undefined) === (b.namespace || undefined);
}

/**
 * A string key unique per {@link ToolName} (unlike {@link displayName}, which can collide:
 * `a__` + `b`, `a` + `__b` and `a` + `b` all display as `a__b`). Use it for `Map` keys; never show it to a model.
 */
export function toolNameKey(tool: ToolName): string {
  return tool.namespace ? `${tool.namespace}\u0000${tool.name}` : tool.name;
}

/**
 * Orders tool names by namespace-or-name first, then name (the reference's ordering).
 * Returns a negative, zero or positive number like any comparator; byte order, locale-free.
 */
export function compareToolNames(a: ToolName, b: ToolName): number {
  const ka = a.namespace ?? a.name;
  const kb = b.namespace ?? b.name;
  if (ka !== kb) return ka < kb ? -1 : 1;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return 0;
}

/** The longest function or namespace name the Responses and Chat Completions APIs accept. */
export const MAX_WIRE_NAME_LENGTH = 64;
