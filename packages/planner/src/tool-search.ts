import {
  FatalToolError,
  RespondToModelError,
  displayName,
  isJsonObject,
  toolName,
  toWireTool,
  type FreeformToolSpec,
  type FunctionToolSpec,
  type JsonSchema,
  type LoadableToolSpec,
  type ToolExecutor,
  type ToolSearchToolSpec,
  type WireTool,
} from '@switchyard/protocol';
import { ToolSearchOutput, estimateTokens } from '@switchyard/kit/internal';
import { createBm25Index, type Bm25Index } from './bm25-index';
import { defaultNamespaceDescription } from './namespaces';
import { SearchRanking, type ToolSearchSettings } from './search-ranking';
import { nestedSearch, type NestedSearchSurface } from './nested-search';

/** The name of the deferred-tool search tool. */
export const TOOL_SEARCH_NAME = 'tool_search';

/** How many tools a search returns when the model gives no `limit`. */
export const TOOL_SEARCH_DEFAULT_LIMIT = 8;

/** Options of {@link createToolSearchExecutor}. */
export interface ToolSearchOptions {
  /** Results when the call gives no `limit`. Default 8. */
  defaultLimit?: number;
  /** The most results a call may ask for (a larger `limit` is cut to it). Default: no maximum. */
  maxLimit?: number;
  /** The host's own ranking (exact names still first). Default: BM25. */
  search?: ToolSearchSettings['search'];
  /**
   * The Code Mode surface a cell searches with `tools.tool_search({ query, limit })` (a `function`
   * payload): the tools callable from a cell. Absent: the executor answers only `tool_search_call`s.
   */
  nested?: NestedSearchSurface;
  /**
   * Tokens the list of sources in the description may take (counted with `countTokens`); sources
   * past it are summarized in one line. Default: no limit.
   */
  sourcesBudgetTokens?: number;
  /** Counts tokens for `sourcesBudgetTokens`. Default `estimateTokens` (calibrated against o200k). */
  countTokens?: (text: string) => number;
  /**
   * Set when a tool budget is in play: the description then ends with a catalog line. By default
   * the budget kept some tools from the model's list, and the line says "`visible` of `total` tools
   * are loaded upfront" and that this tool finds the others. With `complete: true` the budget kept
   * every tool the host shows upfront (the others are the host's deferred tools) and the line is
   * short: "`visible` of `total` tools are loaded upfront." (or "complete (N tools)." when none is deferred).
   */
  catalog?: { readonly visible: number; readonly total: number; readonly complete?: boolean };
}

/** One searchable deferred tool: what a hit returns and what it is found by. */
interface SearchEntry {
  readonly executor: ToolExecutor;
  /** What the entry was made from: it is reused while the executor still holds the same values. */
  readonly name: unknown;
  readonly spec: unknown;
  readonly namespaceDescription: unknown;
  readonly searchText: unknown;
  /** {@link toolSearchText} of the executor: the whole of what the BM25 index reads of it. */
  readonly text: string;
  /** The spec a hit returns, made on the first hit (most tools are never found). */
  loadable?: LoadableToolSpec;
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
  const properties = schema.properties;
  if (isJsonObject(properties)) {
    for (const name in properties) {
      if (!Object.hasOwn(properties, name)) continue;
      pushPart(parts, name);
      appendSchemaText(properties[name], parts, seen);
    }
  }
  const items = (schema as JsonSchema).items;
  if (Array.isArray(items)) for (const item of items) appendSchemaText(item, parts, seen);
  else appendSchemaText(items, parts, seen);
  if (Array.isArray(schema.anyOf)) for (const variant of schema.anyOf) appendSchemaText(variant, parts, seen);
}

/**
 * The text a deferred tool is found by: flat name, name with `_` as spaces, namespace and its
 * description; for a function its name, spaced name, description, every schema description and
 * property name (through `items` and `anyOf`); for a custom tool its name, description and grammar
 * syntax (`lark`, `regex`); then the executor's `searchText`.
 */
export function toolSearchText(executor: ToolExecutor): string {
  const parts: string[] = [];
  const spec = executor.spec as FunctionToolSpec | FreeformToolSpec;
  pushPart(parts, displayName(executor.name));
  pushPart(parts, executor.name.name.replace(/_/g, ' '));
  if (executor.name.namespace) {
    pushPart(parts, executor.name.namespace);
    pushPart(parts, executor.namespaceDescription);
  }
  pushPart(parts, spec.name);
  if (spec.type === 'custom') {
    pushPart(parts, spec.description);
    pushPart(parts, spec.grammar?.syntax);
  } else {
    pushPart(parts, spec.name.replace(/_/g, ' '));
    pushPart(parts, spec.description);
    appendSchemaText(spec.parameters, parts, new Set());
  }
  pushPart(parts, executor.searchText);
  return parts.join(' ');
}

/** What a hit loads: the spec with `deferLoading: true` (a function without its output schema). */
function loadableMember(spec: FunctionToolSpec | FreeformToolSpec): FunctionToolSpec | FreeformToolSpec {
  if (spec.type === 'custom') return { ...spec, deferLoading: true };
  const { outputSchema: _dropped, ...rest } = spec;
  return { ...rest, deferLoading: true };
}

/** Coalesces hits of the same namespace into one namespace entry, in first-appearance order. */
function coalesce(specs: readonly LoadableToolSpec[]): LoadableToolSpec[] {
  const out: LoadableToolSpec[] = [];
  const namespaces = new Map<string, Array<FunctionToolSpec | FreeformToolSpec>>();
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
 * The tool_search description: sources are the namespaces of the deferred tools,
 * sorted by name, each with its first non-blank description; "None currently enabled." if none.
 * Under a sources budget the list stops where the budget ends and one line counts the rest; when a
 * tool budget is in play (`catalog`), a last paragraph says how many tools are loaded upfront.
 */
function toolSearchDescription(deferred: readonly ToolExecutor[], options: ToolSearchOptions): string {
  const sources = new Map<string, string | undefined>();
  for (const executor of deferred) {
    const namespace = executor.name.namespace;
    if (!namespace) continue;
    const description = executor.namespaceDescription?.trim() ? executor.namespaceDescription.trim() : undefined;
    if (!sources.has(namespace) || (sources.get(namespace) === undefined && description)) sources.set(namespace, description);
  }
  const names = [...sources.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const lines = names.map((name) => (sources.get(name) ? `- ${name}: ${sources.get(name)}` : `- ${name}`));
  const listed = lines.length === 0 ? 'None currently enabled.' : boundedLines(lines, options).join('\n');
  const note = options.catalog === undefined ? '' : `\n\n${catalogLine(options.catalog)}`;
  return (
    '# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\n' +
    `You have access to tools from the following sources:\n${listed}\n` +
    `Some of the tools may not have been provided to you upfront, and you should use this tool (\`${TOOL_SEARCH_NAME}\`) to search for the required tools. ` +
    `For MCP tool discovery, always use \`${TOOL_SEARCH_NAME}\` instead of \`list_mcp_resources\` or \`list_mcp_resource_templates\`.` +
    note
  );
}

/** The catalog line of a budgeted tool_search description (see {@link ToolSearchOptions.catalog}). */
function catalogLine({ visible, total, complete }: NonNullable<ToolSearchOptions['catalog']>): string {
  if (!complete) {
    return `Tool catalog: ${visible} of ${total} tools are loaded upfront; use \`${TOOL_SEARCH_NAME}\` to find and load the other ${total - visible}.`;
  }
  return visible < total ? `Tool catalog: ${visible} of ${total} tools are loaded upfront.` : `Tool catalog: complete (${total === 1 ? '1 tool' : `${total} tools`}).`;
}

/** The first source lines that fit the sources budget, then "- … and N more sources" for the rest. */
function boundedLines(lines: readonly string[], options: ToolSearchOptions): string[] {
  const budget = options.sourcesBudgetTokens;
  if (budget === undefined || !(budget < Infinity)) return [...lines];
  const count = options.countTokens ?? estimateTokens;
  const kept: string[] = [];
  let used = 0;
  for (const [index, line] of lines.entries()) {
    const cost = count(line) + 1;
    const rest = lines.length - index - 1;
    const overflow = rest === 0 ? 0 : count(`- … and ${rest} more sources`) + 1;
    if (used + cost + overflow > budget) break;
    kept.push(line);
    used += cost;
  }
  if (kept.length < lines.length) kept.push(`- … and ${lines.length - kept.length} more sources`);
  return kept;
}

/**
 * Search entries by executor object. Executors are treated as values: an entry is recomputed when
 * the executor's name, spec, namespace description or search text is replaced by another object or string.
 */
const entryMemo = new WeakMap<ToolExecutor, SearchEntry>();

function searchEntry(executor: ToolExecutor): SearchEntry | undefined {
  // The Responses API loads functions and custom (freeform) tools, plain or in a namespace.
  if (executor.spec.type !== 'function' && executor.spec.type !== 'custom') return undefined;
  const memo = entryMemo.get(executor);
  if (
    memo &&
    memo.name === executor.name &&
    memo.spec === executor.spec &&
    memo.namespaceDescription === executor.namespaceDescription &&
    memo.searchText === executor.searchText
  ) {
    return memo;
  }
  const entry: SearchEntry = {
    executor,
    name: executor.name,
    spec: executor.spec,
    namespaceDescription: executor.namespaceDescription,
    searchText: executor.searchText,
    text: toolSearchText(executor),
  };
  entryMemo.set(executor, entry);
  return entry;
}

/** The loadable spec of a found entry: the function (without its output schema) or custom tool, in its namespace. */
function loadableOf(entry: SearchEntry): LoadableToolSpec {
  if (entry.loadable === undefined) {
    const { executor } = entry;
    const member = loadableMember(executor.spec as FunctionToolSpec | FreeformToolSpec);
    const namespace = executor.name.namespace;
    entry.loadable = namespace
      ? {
          type: 'namespace',
          name: namespace,
          description: executor.namespaceDescription?.trim() ? executor.namespaceDescription : defaultNamespaceDescription(namespace),
          tools: [member],
        }
      : member;
  }
  return entry.loadable;
}

function searchEntries(deferred: readonly ToolExecutor[]): SearchEntry[] {
  const entries: SearchEntry[] = [];
  for (const executor of deferred) {
    const entry = searchEntry(executor);
    if (entry) entries.push(entry);
  }
  return entries;
}

/** A search over deferred tools, usable without the executor (hosts, debugging, benchmarks). */
export interface ToolSearchIndex {
  /** How many tools are indexed (deferred function and custom tools). */
  readonly size: number;
  /** The indexed tools, in index order (what {@link rank} returns positions of). */
  readonly executors: readonly ToolExecutor[];
  /**
   * The loadable specs of the best `limit` matches as Responses-API JSON: functions and namespaces
   * with `defer_loading: true` and no `output_schema`, namespaces coalesced in first-appearance order.
   * Tools named exactly by a word of the query come first, then BM25's ranking.
   */
  search(query: string, limit: number): WireTool[];
  /** Positions of the best `limit` matches: exact names first, then BM25 or the host's `search`. */
  rank(query: string, limit: number, settings: ToolSearchSettings, signal: AbortSignal): number[] | Promise<number[]>;
  /** The loadable specs of ranked positions, as {@link search} returns them. */
  loadable(positions: readonly number[]): WireTool[];
}

/** The signal of a search nobody can cancel (the default ranking never reads it). */
const NEVER = new AbortController().signal;

/** The entries' loadable specs ranked by a BM25 index built over their texts (in the same order). */
function indexOf(entries: readonly SearchEntry[], index: Bm25Index): ToolSearchIndex {
  const ranking = new SearchRanking(entries, index);
  const loadable = (positions: readonly number[]) => coalesce(positions.map((position) => loadableOf(entries[position]))).map((spec) => toWireTool(spec));
  return {
    size: entries.length,
    executors: entries.map((entry) => entry.executor),
    search(query, limit) {
      return loadable(ranking.rank(query, limit, {}, NEVER) as number[]);
    },
    rank: (query, limit, settings, signal) => ranking.rank(query, limit, settings, signal),
    loadable,
  };
}

/** Indexes the deferred function and custom tools of `deferred` with BM25 (built eagerly, never cached). */
export function createToolSearchIndex(deferred: readonly ToolExecutor[]): ToolSearchIndex {
  const entries = searchEntries(deferred);
  return indexOf(entries, createBm25Index(entries.map((entry) => entry.text)));
}

/** At most this many distinct tool sets keep an index, and at most this many tools over all of them. */
const SHARED_INDEX_SETS = 8;
const SHARED_INDEX_TOOLS = 100_000;

/**
 * Shared BM25 indexes by the search texts they were built from, most recently used last (a bounded
 * LRU). The key is every text with its length before it, concatenated (two lists have the same key
 * only if they are equal); the map hashes and compares it natively. An entry keeps that key and the
 * postings, nothing else: no executor, spec or handler of the session that built it stays
 * reachable from here.
 */
const sharedIndexes = new Map<string, { size: number; index: Bm25Index }>();
let sharedTools = 0;

/**
 * The index of `deferred`, sharing its BM25 postings with every plan, step and session of this
 * process that searches the same tools. The key is the content, not the executor objects: the
 * search text of every tool, in order, which is everything the postings are built from, so
 * sessions that build their own executors for the same tools share one build. A hit returns the
 * caller's own loadable specs (parameters, types, namespace description), so what the search text
 * leaves out (a parameter's type, `required`, `strict`) need not be in the key and no other
 * session's spec is ever returned. A lookup costs the search texts (memoized per executor object,
 * so the next step of a session reuses them) and one string comparison, not a build; on a miss the
 * build reuses the texts. Bounded: the least recently used of more than 8 tool sets (or 100,000
 * tools) is dropped.
 */
export function sharedToolSearchIndex(deferred: readonly ToolExecutor[]): ToolSearchIndex {
  const entries = searchEntries(deferred);
  const key = entries.map((entry) => `${entry.text.length}:${entry.text}`).join('');
  const cached = sharedIndexes.get(key);
  if (cached) {
    sharedIndexes.delete(key);
    sharedIndexes.set(key, cached);
    return indexOf(entries, cached.index);
  }
  const index = createBm25Index(entries.map((entry) => entry.text));
  if (entries.length <= SHARED_INDEX_TOOLS) {
    sharedIndexes.set(key, { size: entries.length, index });
    sharedTools += entries.length;
    for (const [oldest, entry] of sharedIndexes) {
      if (sharedIndexes.size <= SHARED_INDEX_SETS && sharedTools <= SHARED_INDEX_TOOLS) break;
      sharedIndexes.delete(oldest);
      sharedTools -= entry.size;
    }
  }
  return indexOf(entries, index);
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

/** A call's `{ query, limit }`, checked as the reference checks them (the refusals are model-visible). */
export function searchArguments(value: unknown, defaultLimit: number, maxLimit: number | undefined): { query: string; limit: number } {
  const { query, limit } = (isJsonObject(value) ? value : {}) as { query?: unknown; limit?: unknown };
  if (typeof query !== 'string') throw new RespondToModelError('failed to parse tool_search arguments: `query` must be a string');
  if (query.trim() === '') throw new RespondToModelError('query must not be empty');
  if (limit !== undefined && limit !== null && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0)) {
    throw new RespondToModelError('failed to parse tool_search arguments: `limit` must be a non-negative integer');
  }
  const effective = typeof limit === 'number' ? limit : defaultLimit;
  if (effective === 0) throw new RespondToModelError('limit must be greater than zero');
  return { query: query.trim(), limit: maxLimit === undefined ? effective : Math.min(effective, maxLimit) };
}

function positiveInteger(value: number | undefined): number | undefined {
  return value !== undefined && Number.isInteger(value) && value > 0 ? value : undefined;
}

/**
 * The `tool_search` executor over `deferred` tools. Parallel-safe. The BM25 index is
 * found (or built) on the first call, not when the executor is created, so planning stays cheap; it
 * is shared with every executor over the same tools (`sharedToolSearchIndex`). A call answers
 * with a `ToolSearchOutput`; an empty query or a zero limit is a model-visible refusal
 * ("query must not be empty", "limit must be greater than zero"); a non-search payload is fatal.
 * With `options.nested` it also answers a cell's `tools.tool_search({ query, limit })` (a
 * `function` payload) with the matching nested tools and their declarations (`nested-search.ts`).
 */
export function createToolSearchExecutor(deferred: readonly ToolExecutor[], options: ToolSearchOptions = {}): ToolExecutor {
  const maxLimit = positiveInteger(options.maxLimit);
  const defaultLimit = Math.min(positiveInteger(options.defaultLimit) ?? TOOL_SEARCH_DEFAULT_LIMIT, maxLimit ?? Infinity);
  const settings: ToolSearchSettings = options.search ? { search: options.search } : {};
  const tools = [...deferred];
  const nested = options.nested ? nestedSearch(options.nested, { defaultLimit, maxLimit, settings }) : undefined;
  let index: ToolSearchIndex | undefined;
  const spec: ToolSearchToolSpec = {
    type: 'tool_search',
    execution: 'client',
    description: toolSearchDescription(tools, options),
    parameters: TOOL_SEARCH_PARAMETERS(defaultLimit),
  };
  return {
    name: toolName(TOOL_SEARCH_NAME),
    spec,
    exposure: 'direct',
    supportsParallelToolCalls: true,
    payloadKinds: nested ? ['tool-search', 'function'] : ['tool-search'],
    async handle(invocation) {
      const payload = invocation.payload;
      if (payload.kind === 'function' && nested) return nested.handle(invocation);
      if (payload.kind !== 'tool-search') throw new FatalToolError(`${TOOL_SEARCH_NAME} handler received unsupported payload`);
      const { query, limit } = searchArguments(payload.arguments ?? {}, defaultLimit, maxLimit);
      if (tools.length === 0) return new ToolSearchOutput([]);
      const found = index ?? sharedToolSearchIndex(tools);
      index = found;
      const ranked = found.rank(query, limit, settings, invocation.signal);
      // the default ranking answers in the same tick; only a host's search function is awaited
      return new ToolSearchOutput(found.loadable(Array.isArray(ranked) ? ranked : await ranked));
    },
  };
}
