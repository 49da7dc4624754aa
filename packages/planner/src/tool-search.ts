import {
  FatalToolError,
  RespondToModelError,
  ToolSearchOutput,
  displayName,
  isJsonObject,
  toolName,
  toWireTool,
  type FunctionToolSpec,
  type JsonSchema,
  type LoadableToolSpec,
  type ToolExecutor,
  type ToolSearchToolSpec,
  type WireTool,
} from '@switchyard/protocol';
import { createBm25Index, type Bm25Index } from './bm25-index';
import { defaultNamespaceDescription } from './namespaces';

/** The name of the deferred-tool search tool. */
export const TOOL_SEARCH_NAME = 'tool_search';

/** How many tools a search returns when the model gives no `limit`. */
export const TOOL_SEARCH_DEFAULT_LIMIT = 8;

/** Options of {@link createToolSearchExecutor}. */
export interface ToolSearchOptions {
  /** Results when the call gives no `limit`. Default 8. */
  defaultLimit?: number;
}

/** One searchable deferred tool: what is indexed and what a hit returns. */
interface SearchEntry {
  readonly text: string;
  readonly loadable: LoadableToolSpec;
}

function pushPart(parts: string[], part: unknown): void {
  if (typeof part !== 'string') return;
  const trimmed = part.trim();
  if (trimmed !== '') parts.push(trimmed);
}

function appendSchemaText(schema: unknown, parts: string[], seen: Set<object>): void {
  if (!isJsonObject(schema) || seen.has(schema)) return;
  seen.add(schema);
  pushPart(parts, schema.description);
  if (isJsonObject(schema.properties)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      pushPart(parts, name);
      appendSchemaText(property, parts, seen);
    }
  }
  const items = (schema as JsonSchema).items;
  for (const item of Array.isArray(items) ? items : [items]) appendSchemaText(item, parts, seen);
  if (Array.isArray(schema.anyOf)) for (const variant of schema.anyOf) appendSchemaText(variant, parts, seen);
}

/**
 * The text a deferred tool is found by (reference §1.8): flat name, name with `_` as spaces,
 * namespace and its description, function name, spaced name, description, every schema
 * description and property name (through `items` and `anyOf`), then the executor's `searchText`.
 */
export function toolSearchText(executor: ToolExecutor): string {
  const parts: string[] = [];
  const spec = executor.spec as FunctionToolSpec;
  pushPart(parts, displayName(executor.name));
  pushPart(parts, executor.name.name.replace(/_/g, ' '));
  if (executor.name.namespace) {
    pushPart(parts, executor.name.namespace);
    pushPart(parts, executor.namespaceDescription);
  }
  pushPart(parts, spec.name);
  pushPart(parts, spec.name.replace(/_/g, ' '));
  pushPart(parts, spec.description);
  appendSchemaText(spec.parameters, parts, new Set());
  pushPart(parts, executor.searchText);
  return parts.join(' ');
}

function loadableFunction(spec: FunctionToolSpec): FunctionToolSpec {
  const { outputSchema: _dropped, ...rest } = spec;
  return { ...rest, deferLoading: true };
}

/** Coalesces hits of the same namespace into one namespace entry, in first-appearance order. */
function coalesce(specs: readonly LoadableToolSpec[]): LoadableToolSpec[] {
  const out: LoadableToolSpec[] = [];
  const namespaces = new Map<string, FunctionToolSpec[]>();
  for (const spec of specs) {
    if (spec.type !== 'namespace') {
      out.push(spec);
      continue;
    }
    const members = namespaces.get(spec.name);
    if (members === undefined) {
      const tools = [...spec.tools];
      namespaces.set(spec.name, tools);
      out.push({ ...spec, tools });
    } else {
      members.push(...spec.tools);
    }
  }
  return out;
}

/**
 * The tool_search description (reference §1.8): sources are the namespaces of the deferred tools,
 * sorted by name, each with its first non-blank description; "None currently enabled." if none.
 */
function toolSearchDescription(deferred: readonly ToolExecutor[]): string {
  const sources = new Map<string, string | undefined>();
  for (const executor of deferred) {
    const namespace = executor.name.namespace;
    if (!namespace) continue;
    const description = executor.namespaceDescription?.trim() ? executor.namespaceDescription.trim() : undefined;
    if (!sources.has(namespace) || (sources.get(namespace) === undefined && description)) sources.set(namespace, description);
  }
  const names = [...sources.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const listed =
    names.length === 0
      ? 'None currently enabled.'
      : names.map((name) => (sources.get(name) ? `- ${name}: ${sources.get(name)}` : `- ${name}`)).join('\n');
  return (
    '# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\n' +
    `You have access to tools from the following sources:\n${listed}\n` +
    `Some of the tools may not have been provided to you upfront, and you should use this tool (\`${TOOL_SEARCH_NAME}\`) to search for the required tools. ` +
    `For MCP tool discovery, always use \`${TOOL_SEARCH_NAME}\` instead of \`list_mcp_resources\` or \`list_mcp_resource_templates\`.`
  );
}

function searchEntries(deferred: readonly ToolExecutor[]): SearchEntry[] {
  const entries: SearchEntry[] = [];
  for (const executor of deferred) {
    // Only function tools can be loaded by the Responses API (freeform tools are not searchable).
    if (executor.spec.type !== 'function') continue;
    const member = loadableFunction(executor.spec);
    const namespace = executor.name.namespace;
    const loadable: LoadableToolSpec = namespace
      ? {
          type: 'namespace',
          name: namespace,
          description: executor.namespaceDescription?.trim() ? executor.namespaceDescription : defaultNamespaceDescription(namespace),
          tools: [member],
        }
      : member;
    entries.push({ text: toolSearchText(executor), loadable });
  }
  return entries;
}

/** A search over deferred tools, usable without the executor (hosts, debugging, benchmarks). */
export interface ToolSearchIndex {
  /** How many tools are indexed (deferred function tools). */
  readonly size: number;
  /**
   * The loadable specs of the best `limit` matches as Responses-API JSON: functions and namespaces
   * with `defer_loading: true` and no `output_schema`, namespaces coalesced in first-appearance order.
   */
  search(query: string, limit: number): WireTool[];
}

/** Indexes the deferred function tools of `deferred` with BM25 (built eagerly). */
export function createToolSearchIndex(deferred: readonly ToolExecutor[]): ToolSearchIndex {
  const entries = searchEntries(deferred);
  const index: Bm25Index = createBm25Index(entries.map((entry) => entry.text));
  return {
    size: entries.length,
    search(query, limit) {
      const hits = index.search(query, limit);
      return coalesce(hits.map((hit) => entries[hit.index].loadable)).map((spec) => toWireTool(spec));
    },
  };
}

const TOOL_SEARCH_PARAMETERS = (defaultLimit: number): JsonSchema => ({
  type: 'object',
  properties: {
    query: { type: 'string', description: 'Search query for deferred tools.' },
    limit: { type: 'number', description: `Maximum number of tools to return (defaults to ${defaultLimit}).` },
  },
  required: ['query'],
  additionalProperties: false,
});

/**
 * The `tool_search` executor over `deferred` tools (reference §1.8). Parallel-safe. The BM25 index is
 * built on the first call, not when the executor is created, so planning stays cheap. A call answers
 * with a `ToolSearchOutput`; an empty query or a zero limit is a model-visible refusal
 * ("query must not be empty", "limit must be greater than zero"); a non-search payload is fatal.
 */
export function createToolSearchExecutor(deferred: readonly ToolExecutor[], options: ToolSearchOptions = {}): ToolExecutor {
  const defaultLimit =
    options.defaultLimit !== undefined && Number.isInteger(options.defaultLimit) && options.defaultLimit > 0
      ? options.defaultLimit
      : TOOL_SEARCH_DEFAULT_LIMIT;
  const tools = [...deferred];
  let index: ToolSearchIndex | undefined;
  const spec: ToolSearchToolSpec = {
    type: 'tool_search',
    execution: 'client',
    description: toolSearchDescription(tools),
    parameters: TOOL_SEARCH_PARAMETERS(defaultLimit),
  };
  return {
    name: toolName(TOOL_SEARCH_NAME),
    spec,
    exposure: 'direct',
    supportsParallelToolCalls: true,
    payloadKinds: ['tool-search'],
    async handle(invocation) {
      const payload = invocation.payload;
      if (payload.kind !== 'tool-search') throw new FatalToolError(`${TOOL_SEARCH_NAME} handler received unsupported payload`);
      const { query, limit } = (payload.arguments ?? {}) as { query?: unknown; limit?: unknown };
      if (typeof query !== 'string') throw new RespondToModelError('failed to parse tool_search arguments: `query` must be a string');
      if (query.trim() === '') throw new RespondToModelError('query must not be empty');
      if (limit !== undefined && limit !== null && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0)) {
        throw new RespondToModelError('failed to parse tool_search arguments: `limit` must be a non-negative integer');
      }
      const effectiveLimit = typeof limit === 'number' ? limit : defaultLimit;
      if (effectiveLimit === 0) throw new RespondToModelError('limit must be greater than zero');
      if (tools.length === 0) return new ToolSearchOutput([]);
      index ??= createToolSearchIndex(tools);
      return new ToolSearchOutput(index.search(query.trim(), effectiveLimit));
    },
  };
}
