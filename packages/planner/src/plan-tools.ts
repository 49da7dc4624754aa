import {
  TOOL_MODES,
  displayName,
  errorMessage,
  executorExposure,
  specName,
  toWireTools,
  toolNameKey,
  type CodeModeContributor,
  type CodeModeSurface,
  type HostedToolSpec,
  type NestedToolDefinition,
  type PlanWarningEvent,
  type ProviderCapabilities,
  type StepContext,
  type ToolBudget,
  type ToolExecutor,
  type ToolExposure,
  type ToolMode,
  type ToolSpec,
  type WireTool,
} from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';
import { augmentCodeModeDescription, selectWithinBudget } from '@switchyard/kit/internal';
import { buildCodeModeSurface } from './code-mode-surface';
import { mergeNamespaces } from './namespaces';
import { executorLabel, executorProblem, hostedSpecProblem } from './tool-checks';
import { TOOL_SEARCH_NAME, type ToolSearchOptions } from './tool-search';
import type { ToolSearchSettings } from './search-ranking';
import { planMemoOf, type PlanCache, type PlanMemo } from './plan-cache';
import { resolveToolBudget, type ResolvedToolBudget } from './tool-budget';
import { exceedsBudget, modelList } from './model-list';

/**
 * What the planner reads from a step: the tool mode and the provider's capabilities. A full
 * protocol `StepContext` is accepted too and handed unchanged to the `CodeModeContributor`;
 * a partial one is completed with `createStepContext()`.
 */
export type PlanContext = { toolMode: ToolMode; provider: ProviderCapabilities } & Partial<Omit<StepContext, 'toolMode' | 'provider'>>;

/** The host's tool sources, in the host's order. */
export interface ToolSources {
  /** Host order; the first executor with a given `ToolName` wins. */
  executors: readonly ToolExecutor[];
  /** Provider-executed specs: appended last, visible, never registered. */
  hostedSpecs?: readonly HostedToolSpec[];
  /** Supplies `exec` / `wait`; required for `code-mode` / `code-mode-only` (missing → warning, planned as direct). */
  codeMode?: CodeModeContributor;
  /** Namespaces kept out of Code Mode: their tools stay top-level and are not callable from a cell. */
  excludedCodeModeNamespaces?: readonly string[];
  /**
   * The tool table's token budget (default 2,000 tokens, `{ tokens: Infinity }` turns it off). In
   * `direct` and `code-mode`, when the provider supports `tool_search`, direct function tools past
   * the budget are deferred (found through `tool_search`); in code-mode plans it is handed to the
   * contributor for the `exec` description. An invalid budget throws a `CONFIG` error.
   */
  budget?: ToolBudget;
  /**
   * How `tool_search` ranks and how many tools it returns, for the model's searches and a cell's
   * `tools.tool_search`: `search` (the host's own ranking; exact names still come first) and `limit`
   * (the default and the most a call may ask for). Default: BM25, 8 results.
   */
  toolSearch?: ToolSearchSettings;
  /**
   * Display names of the tools this caller's cells found with `tools.tool_search` (a session passes
   * them with `toolDiscovery: 'tools'`). In `code-mode-only` they are described in the `exec`
   * description (first when the budget cuts it), in `code-mode` deferred ones become visible; in
   * `direct` nothing changes (the model's own `tool_search` loads what it finds).
   */
  discovered?: readonly string[];
}

/** One row of {@link ToolPlan.describe}. */
export interface PlanRow {
  /** Display name (`clock__curr_time`, `mcp__docs__search`, `web_search`). */
  readonly name: string;
  /** The spec type: `function`, `custom`, `tool_search` or `hosted`. */
  readonly kind: 'function' | 'custom' | 'tool_search' | 'hosted';
  /** The executor's exposure (`direct` for hosted specs). */
  readonly exposure: ToolExposure;
  /** In the request's `tools`. */
  readonly visible: boolean;
  /** Held by the registry (dispatchable by exact name). */
  readonly registered: boolean;
  /** On the `tools` object of a Code Mode cell. */
  readonly callableFromCode: boolean;
}

/** The two tables of one sampling step: what the model sees and what the host can run. */
export interface ToolPlan {
  /** The effective mode (`direct` when a code-mode plan could not get its `exec` / `wait`). */
  readonly toolMode: ToolMode;
  /** Exactly the request's tools, in order. */
  readonly modelVisibleSpecs: readonly ToolSpec[];
  /** `modelVisibleSpecs` serialized with `toWireTool` (computed once). */
  readonly tools: readonly WireTool[];
  /** Everything the registry must hold (deduplicated; includes exec/wait/tool_search when planned). */
  readonly executors: readonly ToolExecutor[];
  /** The hosted specs that were accepted. */
  readonly hostedSpecs: readonly HostedToolSpec[];
  /** The Code Mode nested surface; `undefined` in direct mode. */
  readonly codeModeSurface?: CodeModeSurface;
  /** Everything skipped or degraded, as `plan-warning` events. */
  readonly warnings: readonly PlanWarningEvent[];
  /**
   * Display names of the direct tools the budget kept out of the model's list (in host order):
   * registered, callable from a cell, and found through `tool_search`. Empty when everything fits.
   */
  readonly deferredByBudget: readonly string[];
  /** One row per registered executor, then per hosted spec. */
  describe(): PlanRow[];
}

const CODE_MODE_RESERVED = ['exec', 'wait'];

function isFullStepContext(context: Partial<StepContext>): context is StepContext {
  return (
    typeof context.sessionId === 'string' &&
    typeof context.turnId === 'string' &&
    typeof context.stepIndex === 'number' &&
    typeof context.cwd === 'string' &&
    context.turnState instanceof Map
  );
}

function isPlain(executor: ToolExecutor, name: string): boolean {
  return !executor.name.namespace && executor.name.name === name;
}

/** A deferred function or custom tool: `tool_search` can find and load it (the Responses API loads both kinds). */
function isSearchable(executor: ToolExecutor): boolean {
  return executorExposure(executor) === 'deferred' && (executor.spec.type === 'function' || executor.spec.type === 'custom');
}

/** Visible specs by executor, reused while its spec object and code-mode name are the same. */
const visibleMemo = new WeakMap<ToolExecutor, { spec: ToolSpec; codeModeName: string | undefined; shown: ToolSpec }>();

/** The visible spec of an executor, with the code-mode usage sample when it is callable from a cell. */
function visibleSpec(executor: ToolExecutor, codeModeName: string | undefined): ToolSpec {
  const spec = executor.spec;
  if (codeModeName === undefined || spec.type === 'tool_search') return spec;
  const memo = visibleMemo.get(executor);
  if (memo && memo.spec === spec && memo.codeModeName === codeModeName) return memo.shown;
  const description = augmentCodeModeDescription({
    description: spec.description,
    codeModeName,
    kind: spec.type === 'function' ? 'function' : 'freeform',
    inputSchema: spec.type === 'function' ? spec.parameters : undefined,
    outputSchema: spec.type === 'function' ? spec.outputSchema : undefined,
  });
  const shown = { ...spec, description };
  visibleMemo.set(executor, { spec, codeModeName, shown });
  return shown;
}

/** Options of {@link planTools}. */
export interface PlanOptions {
  /**
   * What this caller's plans reuse from its earlier ones, made by `createPlanCache()` (the session
   * owns one). Without it nothing is kept between calls: each plan builds its own `tool_search`.
   */
  cache?: PlanCache;
}

type Warn = (message: string, toolName?: string) => void;

/** What every stage of one plan reads, and where its warnings go. */
interface Planning {
  readonly warn: Warn;
  readonly warnings: PlanWarningEvent[];
  readonly budget: ResolvedToolBudget;
  readonly memo: PlanMemo;
  readonly namespacesSupported: boolean;
  readonly searchSupported: boolean;
  /** The host's search settings (`sources.toolSearch`). */
  readonly settings: ToolSearchSettings;
  /** Display names the caller's cells found (`sources.discovered`). */
  readonly discovered: ReadonlySet<string>;
}

function isContributor(value: unknown): value is CodeModeContributor {
  return typeof value === 'object' && value !== null && typeof (value as CodeModeContributor).executors === 'function';
}

/** The effective tool mode: an unknown mode, or a code mode without a contributor, is planned as direct. */
function plannedMode(requested: ToolMode | undefined, contributor: unknown, warn: Warn): ToolMode {
  let toolMode: ToolMode = requested ?? 'direct';
  if (!TOOL_MODES.includes(toolMode)) {
    warn(`unknown tool mode "${String(toolMode)}"; planned as direct`);
    toolMode = 'direct';
  }
  if (toolMode !== 'direct' && !isContributor(contributor)) {
    warn(`tool mode "${toolMode}" needs a CodeModeContributor (sources.codeMode); planned as direct`);
    toolMode = 'direct';
  }
  return toolMode;
}

/** The host's executors that can be planned: valid, not reserved by code mode, the first of a name. */
function acceptHostTools(sources: ToolSources, toolMode: ToolMode, warn: Warn): ToolExecutor[] {
  const sourceList: readonly unknown[] = Array.isArray(sources?.executors) ? sources.executors : [];
  if (!Array.isArray(sources?.executors)) warn('sources.executors is not a list; no host tools planned');
  const accepted: ToolExecutor[] = [];
  const acceptedKeys = new Set<string>();
  for (const candidate of sourceList) {
    const problem = executorProblem(candidate);
    if (problem) {
      const label = executorLabel(candidate);
      warn(`skipped tool "${label}": ${problem}`, label);
      continue;
    }
    const executor = candidate as ToolExecutor;
    const label = displayName(executor.name);
    if (toolMode !== 'direct' && CODE_MODE_RESERVED.some((name) => isPlain(executor, name))) {
      warn(`skipped tool "${label}": the name is reserved by the code-mode plan`, label);
      continue;
    }
    const key = toolNameKey(executor.name);
    if (acceptedKeys.has(key)) {
      warn(`skipped duplicate tool "${label}": a tool with this name is already planned`, label);
      continue;
    }
    acceptedKeys.add(key);
    accepted.push(executor);
  }
  return accepted;
}

/**
 * Whether a tool_search is planned for the model (the provider supports it and a deferred tool is
 * searchable) and for cells (a code mode and a deferred tool); a host tool of that name then leaves `accepted`.
 */
function reserveToolSearch(accepted: ToolExecutor[], planning: Planning, toolMode: ToolMode): { planSearch: boolean; cellSearch: boolean } {
  const searchable = accepted.some((executor) => isSearchable(executor) && !isPlain(executor, TOOL_SEARCH_NAME));
  const planSearch = planning.searchSupported && searchable;
  const cellSearch = toolMode !== 'direct' && searchable;
  if (planSearch || cellSearch) {
    const refused = accepted.findIndex((executor) => isPlain(executor, TOOL_SEARCH_NAME));
    if (refused !== -1) {
      planning.warn(`skipped tool "${TOOL_SEARCH_NAME}": the name is reserved by the planned tool_search`, TOOL_SEARCH_NAME);
      accepted.splice(refused, 1);
    }
  }
  return { planSearch, cellSearch };
}

/** What Code Mode adds to a plan: the nested surface, its callable executors, and exec / wait. */
interface CodeModeParts {
  readonly surface: CodeModeSurface;
  readonly callable: ReadonlyMap<ToolExecutor, string>;
  readonly definitions: ReadonlyMap<ToolExecutor, NestedToolDefinition>;
  readonly contributed: readonly ToolExecutor[];
}

interface CodeModeRequest {
  readonly toolMode: Exclude<ToolMode, 'direct'>;
  readonly contributor: CodeModeContributor;
  readonly accepted: readonly ToolExecutor[];
  readonly excluded: unknown;
  readonly step: StepContext;
  /** Cells can search (`tools.tool_search`). */
  readonly search: boolean;
}

/** The nested surface, handed to the contributor for exec / wait; `undefined` when the contributor fails (the plan is then direct). */
function contributeCodeMode({ toolMode, contributor, accepted, excluded, step, search }: CodeModeRequest, planning: Planning): CodeModeParts | undefined {
  const built = buildCodeModeSurface(toolMode, accepted, Array.isArray(excluded) ? excluded : [], planning.memo, { discovered: planning.discovered, search });
  const surface: CodeModeSurface = { ...built.surface, budget: planning.budget.given };
  const contributed: ToolExecutor[] = [];
  try {
    const produced: unknown = contributor.executors(surface, step);
    if (!Array.isArray(produced)) throw new Error('executors() did not return a list');
    for (const candidate of produced) {
      const problem = executorProblem(candidate);
      const label = executorLabel(candidate);
      if (problem) planning.warn(`skipped code-mode tool "${label}": ${problem}`, label);
      else contributed.push(candidate as ToolExecutor);
    }
    planning.warnings.push(...built.warnings);
    return { surface, callable: built.callable, definitions: built.definitions, contributed };
  } catch (error) {
    planning.warn(`code-mode contributor failed: ${errorMessage(error)}; planned as direct`);
    return undefined;
  }
}

/** The registry's list: the first executor of a name wins, a later one is skipped with a warning. */
class RegistryList {
  readonly executors: ToolExecutor[] = [];
  private readonly keys = new Set<string>();

  constructor(private readonly warn: Warn) {}

  add(executor: ToolExecutor): boolean {
    const key = toolNameKey(executor.name);
    if (this.keys.has(key)) {
      const label = displayName(executor.name);
      this.warn(`skipped duplicate tool "${label}": a tool with this name is already planned`, label);
      return false;
    }
    this.keys.add(key);
    this.executors.push(executor);
    return true;
  }
}

/** A deferred tool a cell found, shown from now on (code-mode: visible beside the direct tools). */
function isDiscovered(executor: ToolExecutor, callable: ReadonlyMap<ToolExecutor, string>, planning: Planning): boolean {
  return callable.has(executor) && planning.discovered.has(displayName(executor.name));
}

/** What the model would see without a budget: the visible spec of each registered executor that can be shown. */
function visibleSpecs(executors: readonly ToolExecutor[], toolMode: ToolMode, callable: ReadonlyMap<ToolExecutor, string>, planning: Planning): Map<ToolExecutor, ToolSpec> {
  const shown = new Map<ToolExecutor, ToolSpec>();
  for (const executor of executors) {
    const exposure = executorExposure(executor);
    const spec = executor.spec;
    let visible = exposure === 'direct' || exposure === 'direct-model-only' || (toolMode === 'code-mode' && exposure === 'deferred' && isDiscovered(executor, callable, planning));
    if (visible && toolMode === 'code-mode-only' && exposure === 'direct' && (callable.has(executor) || spec.type === 'tool_search')) visible = false;
    // A namespaced function or freeform tool is shown inside its namespace (the Responses API takes
    // custom members there, as tool_search returns them), so the model calls it with `namespace`.
    if (visible && executor.name.namespace) {
      if (!planning.namespacesSupported) {
        const label = displayName(executor.name);
        planning.warn(`tool "${label}" is registered but not visible: the provider does not accept namespaces (provider.namespaceTools is false)`, label);
        visible = false;
      }
    }
    if (visible) shown.set(executor, visibleSpec(executor, callable.get(executor)));
  }
  return shown;
}

function acceptHostedSpecs(sources: ToolSources, warn: Warn): HostedToolSpec[] {
  const hostedSpecs: HostedToolSpec[] = [];
  for (const candidate of Array.isArray(sources?.hostedSpecs) ? sources.hostedSpecs : []) {
    const problem = hostedSpecProblem(candidate);
    if (problem) {
      warn(`skipped hosted spec: ${problem}`);
      continue;
    }
    hostedSpecs.push(candidate);
  }
  return hostedSpecs;
}

/** The plan's tables before the budget: what the budget and tool_search stages read. */
interface TableDraft {
  readonly planning: Planning;
  readonly toolMode: ToolMode;
  /** The registry's list (tool_search is added to it after the budget). */
  readonly executors: readonly ToolExecutor[];
  /** The host's executors in the registry's list. */
  readonly hostPlanned: readonly ToolExecutor[];
  readonly shown: ReadonlyMap<ToolExecutor, ToolSpec>;
  readonly hostedSpecs: readonly HostedToolSpec[];
  /** A tool_search is planned for the host's deferred tools. */
  readonly planSearch: boolean;
  /** What a cell's `tools.tool_search` searches, when cells can search. */
  readonly nested: ToolSearchOptions['nested'];
}

interface ToolSearchRequest {
  /** The tools it searches. */
  readonly deferred: readonly ToolExecutor[];
  /** The tools the budget keeps from the model's list. */
  readonly hidden: ReadonlySet<ToolExecutor>;
  /** Its description ends with the catalog line (whenever the budget is in play). */
  readonly catalog: boolean;
}

function toolSearchFor(draft: TableDraft, { deferred, hidden, catalog }: ToolSearchRequest): ToolExecutor {
  const { budget, memo } = draft.planning;
  const { search, limit } = draft.planning.settings;
  const options: ToolSearchOptions = {
    ...(budget.tokens < Infinity ? { sourcesBudgetTokens: Math.floor(budget.tokens / 4) } : {}),
    ...(budget.given?.countTokens ? { countTokens: budget.countTokens } : {}),
    ...(search ? { search } : {}),
    ...(limit !== undefined ? { defaultLimit: limit, maxLimit: limit } : {}),
    ...(draft.nested ? { nested: draft.nested } : {}),
  };
  if (catalog) {
    const { hostPlanned, shown } = draft;
    const reachable = hostPlanned.filter((executor) => shown.has(executor) || isSearchable(executor) || hidden.has(executor));
    const visible = reachable.filter((executor) => shown.has(executor) && !hidden.has(executor)).length;
    options.catalog = { visible, total: reachable.length, ...(hidden.size === 0 ? { complete: true } : {}) };
  }
  return memo.toolSearchExecutor(deferred, options);
}

/** The tool_search the budget counts with `hidden` kept out: it finds them, with the catalog line. */
function budgetSearch(draft: TableDraft, hidden: ReadonlySet<ToolExecutor>): ToolExecutor {
  const deferred = draft.hostPlanned.filter((executor) => isSearchable(executor) || hidden.has(executor));
  return toolSearchFor(draft, { deferred, hidden, catalog: true });
}

/** Tokens of the whole table with `hidden` kept out and the tool_search that finds them. */
function tableCost(draft: TableDraft, hidden: ReadonlySet<ToolExecutor>): number {
  const specs = modelList(draft.executors, draft.shown, hidden, budgetSearch(draft, hidden), draft.hostedSpecs);
  return draft.planning.budget.countTokens(JSON.stringify(toWireTools(mergeNamespaces(specs))));
}

/** Why nothing is deferred although the table is over the budget, or `undefined` when the budget can defer. */
function budgetRefusal(draft: TableDraft, candidates: readonly ToolExecutor[]): string | undefined {
  if (!draft.planning.searchSupported) return 'the provider cannot search deferred tools (provider.toolSearch), so all stay visible';
  if (draft.hostPlanned.some((executor) => isPlain(executor, TOOL_SEARCH_NAME))) return 'a host tool named "tool_search" holds the name, so none is deferred';
  if (candidates.length === 0) return 'none of them can be deferred';
  return undefined;
}

/** The direct function tools past the budget, deferred because tool_search can find them. */
function deferredByBudget(draft: TableDraft): Set<ToolExecutor> {
  const { planning, toolMode, executors, shown } = draft;
  const { budget } = planning;
  const none = new Set<ToolExecutor>();
  if (!(budget.tokens < Infinity) || toolMode === 'code-mode-only') return none;
  const candidates = executors.filter(
    (executor) => executorExposure(executor) === 'direct' && executor.spec.type === 'function' && shown.has(executor) && !isPlain(executor, TOOL_SEARCH_NAME),
  );
  // tool_search carries the short catalog line whenever the budget is in play, so it counts here too
  const search = draft.planSearch ? budgetSearch(draft, none) : undefined;
  const over = exceedsBudget(mergeNamespaces(modelList(executors, shown, none, search, draft.hostedSpecs)), budget);
  if (over === false) return none;
  const refusal = budgetRefusal(draft, candidates);
  if (refusal !== undefined) {
    planning.warn(`the visible tools take more than ${over} tokens, over the tool budget of ${budget.tokens}; ${refusal}`);
    return none;
  }
  return hiddenByBudget(draft, candidates);
}

/**
 * The candidates the budget hides: fixed parts first (tools that cannot be deferred, tool_search
 * with the catalog line), then the candidates by priority hint, then host order, each while it fits.
 */
function hiddenByBudget(draft: TableDraft, candidates: readonly ToolExecutor[]): Set<ToolExecutor> {
  const { budget } = draft.planning;
  const base = tableCost(draft, new Set(candidates));
  const ordered = candidates
    .map((executor, index) => ({ executor, index, rank: budget.rank(executor.name) }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map((entry) => entry.executor);
  const kept = selectWithinBudget(ordered, budget.tokens - base, (executor, opened) => {
    const spec = draft.shown.get(executor) as ToolSpec;
    const namespace = executor.name.namespace;
    const member = budget.countTokens(JSON.stringify(toWireTools([spec]))) + 1;
    if (!namespace || opened.has(namespace)) return { cost: member };
    const wrapper = budget.countTokens(
      JSON.stringify(toWireTools([{ type: 'namespace', name: namespace, description: executor.namespaceDescription ?? '', tools: [] }])),
    );
    return { cost: member + wrapper, opens: namespace };
  });
  // The estimate of the parts is not the estimate of the whole: drop the last kept tool until it fits.
  const keptSet = new Set(kept);
  const hidden = new Set(candidates.filter((executor) => !keptSet.has(executor)));
  while (kept.length > 0 && tableCost(draft, hidden) > budget.tokens) hidden.add(kept.pop() as ToolExecutor);
  return hidden;
}

/** The planned tool_search, when a deferred tool, the budget or cells need one; with the catalog line whenever the budget is in play. */
function plannedSearch(draft: TableDraft, deferred: ReadonlySet<ToolExecutor>): ToolExecutor | undefined {
  if (!draft.planSearch && deferred.size === 0 && draft.nested === undefined) return undefined;
  // the catalog line whenever the budget is in play: "V of T loaded upfront", and what to do when it cut
  return toolSearchFor(draft, {
    deferred: draft.hostPlanned.filter((executor) => isSearchable(executor) || deferred.has(executor)),
    hidden: deferred,
    catalog: draft.planning.budget.tokens < Infinity && draft.toolMode !== 'code-mode-only',
  });
}

interface PlanParts {
  /** The tools the budget deferred. */
  readonly deferred: ReadonlySet<ToolExecutor>;
  readonly search: ToolExecutor | undefined;
  readonly codeMode: CodeModeParts | undefined;
}

function planRows(draft: TableDraft, parts: PlanParts, visibleSearch: ToolExecutor | undefined): PlanRow[] {
  const { deferred, codeMode } = parts;
  const rows: PlanRow[] = draft.executors.map((executor) => ({
    name: displayName(executor.name),
    kind: executor.spec.type,
    exposure: executorExposure(executor),
    visible: executor === visibleSearch || (draft.shown.has(executor) && !deferred.has(executor)),
    registered: true,
    callableFromCode: (codeMode?.callable.has(executor) ?? false) || (executor === parts.search && draft.nested !== undefined),
  }));
  for (const hosted of draft.hostedSpecs) {
    rows.push({ name: specName(hosted), kind: 'hosted', exposure: 'direct', visible: true, registered: false, callableFromCode: false });
  }
  return rows;
}

/** The model's list and the rows, frozen into the plan. */
function frozenPlan(draft: TableDraft, parts: PlanParts): ToolPlan {
  const { toolMode, executors, shown, hostedSpecs } = draft;
  const { deferred, search, codeMode } = parts;
  // a search planned for cells alone (no provider support) is never shown to the model
  const visibleSearch = search !== undefined && toolMode !== 'code-mode-only' && (draft.planSearch || deferred.size > 0) ? search : undefined;
  const modelVisibleSpecs = Object.freeze(mergeNamespaces(modelList(executors, shown, deferred, visibleSearch, hostedSpecs)));
  const frozenRows = Object.freeze(planRows(draft, parts, visibleSearch).map((row) => Object.freeze(row)));
  return Object.freeze({
    toolMode,
    modelVisibleSpecs,
    tools: Object.freeze(toWireTools(modelVisibleSpecs)),
    executors: Object.freeze(executors),
    hostedSpecs: Object.freeze(hostedSpecs),
    ...(codeMode ? { codeModeSurface: codeMode.surface } : {}),
    warnings: Object.freeze(draft.planning.warnings),
    deferredByBudget: Object.freeze(executors.filter((executor) => deferred.has(executor)).map((executor) => displayName(executor.name))),
    describe: () => frozenRows.map((row) => ({ ...row })),
  });
}

/**
 * Plans one sampling step: from the step's context and the host's tool
 * sources to the model-visible specs, every executor the registry must hold, the hosted specs and
 * the Code Mode surface. Pure and deterministic (same inputs → byte-identical `tools` JSON): what
 * it reuses from earlier plans lives in the caller's `options.cache`, never in the module.
 * Never throws for input a plugin can produce: a bad, duplicate or reserved tool is skipped with a
 * `plan-warning`; a missing or failing `CodeModeContributor` degrades the plan to `direct`.
 * A bad `sources.budget` or `options.cache` is a `CONFIG` error.
 */
export function planTools(context: PlanContext, sources: ToolSources, options?: PlanOptions): ToolPlan {
  const warnings: PlanWarningEvent[] = [];
  const warn: Warn = (message, name) => {
    warnings.push(name === undefined ? { type: 'plan-warning', message } : { type: 'plan-warning', message, toolName: name });
  };
  const budget = resolveToolBudget(sources?.budget, 'sources.budget');
  const memo = planMemoOf(options);
  const given: Partial<StepContext> = typeof context === 'object' && context !== null ? context : {};
  const step = isFullStepContext(given) ? given : createStepContext(given);
  const provider: ProviderCapabilities = given.provider ?? {};
  const namespacesSupported = provider.namespaceTools !== false;
  const searchSupported = provider.toolSearch === true && namespacesSupported;
  const settings: ToolSearchSettings = sources?.toolSearch ?? {};
  const discovered = new Set(Array.isArray(sources?.discovered) ? sources.discovered : []);
  const planning: Planning = { warn, warnings, budget, memo, namespacesSupported, searchSupported, settings, discovered };

  const contributor = sources?.codeMode;
  let toolMode = plannedMode(given.toolMode, contributor, warn);
  // 1. Host sources: valid, not reserved by code mode, first of a name wins.
  const accepted = acceptHostTools(sources, toolMode, warn);
  // 2. tool_search is planned when the provider supports it, or cells can search, and some deferred tool is searchable.
  const { planSearch, cellSearch } = reserveToolSearch(accepted, planning, toolMode);
  // 3. Code Mode: the nested surface, handed to the contributor for exec / wait.
  const codeMode =
    toolMode === 'direct'
      ? undefined
      : contributeCodeMode({ toolMode, contributor: contributor as CodeModeContributor, accepted, excluded: sources.excludedCodeModeNamespaces, step, search: cellSearch }, planning);
  if (!codeMode) toolMode = 'direct';
  // 4. The registry's list: exec / wait first, host tools, tool_search last.
  const registry = new RegistryList(warn);
  for (const executor of codeMode?.contributed ?? []) registry.add(executor);
  const hostPlanned = accepted.filter((executor) => registry.add(executor));
  // 5. What the model would see without a budget.
  const shown = visibleSpecs(registry.executors, toolMode, codeMode?.callable ?? new Map(), planning);
  const hostedSpecs = acceptHostedSpecs(sources, warn);
  // 6. The budget: direct function tools past it are deferred when tool_search can find them.
  const nested = codeMode?.surface.toolSearch ? { tools: codeMode.definitions } : undefined;
  const draft: TableDraft = { planning, toolMode, executors: registry.executors, hostPlanned, shown, hostedSpecs, planSearch, nested };
  const deferred = deferredByBudget(draft);
  const search = plannedSearch(draft, deferred);
  if (search) registry.add(search);
  if (toolMode === 'direct' && !planSearch && hostPlanned.some((executor) => executorExposure(executor) === 'deferred')) {
    warn('deferred tools are registered but hidden from the model: tool_search needs a provider with toolSearch and namespaceTools');
  }
  // 7. The model's list and the rows.
  return frozenPlan(draft, { deferred, search, codeMode });
}
