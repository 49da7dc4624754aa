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
import { augmentCodeModeDescription, createStepContext, selectWithinBudget } from '@switchyard/kit';
import { buildCodeModeSurface } from './code-mode-surface';
import { mergeNamespaces } from './namespaces';
import { executorLabel, executorProblem, hostedSpecProblem } from './tool-checks';
import { TOOL_SEARCH_NAME, createToolSearchExecutor, type ToolSearchOptions } from './tool-search';
import { resolveToolBudget, type ResolvedToolBudget } from './tool-budget';

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
const TOOL_SEARCH_CACHE_SIZE = 4;

/**
 * Recent tool_search executors by their deferred list (the same objects) and description options,
 * so an unchanged step reuses its executor; the BM25 index itself is shared by content.
 */
const toolSearchCache: Array<{ deferred: readonly ToolExecutor[]; key: string; executor: ToolExecutor }> = [];

function cachedToolSearchExecutor(deferred: readonly ToolExecutor[], options: ToolSearchOptions): ToolExecutor {
  const key = JSON.stringify([options.sourcesBudgetTokens ?? null, options.catalog ?? null]);
  for (const entry of toolSearchCache) {
    if (
      entry.key === key &&
      entry.deferred.length === deferred.length &&
      entry.deferred.every((executor, index) => executor === deferred[index]) &&
      entry.executor.spec.type === 'tool_search'
    ) {
      return entry.executor;
    }
  }
  const executor = createToolSearchExecutor(deferred, options);
  // a host's own countTokens may count differently each plan: only the default counter is cached
  if (options.countTokens === undefined) {
    toolSearchCache.unshift({ deferred, key, executor });
    if (toolSearchCache.length > TOOL_SEARCH_CACHE_SIZE) toolSearchCache.pop();
  }
  return executor;
}

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

function isSearchable(executor: ToolExecutor): boolean {
  return executorExposure(executor) === 'deferred' && executor.spec.type === 'function';
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

/**
 * Plans one sampling step: from the step's context and the host's tool
 * sources to the model-visible specs, every executor the registry must hold, the hosted specs and
 * the Code Mode surface. Pure and deterministic (same inputs → byte-identical `tools` JSON).
 * Never throws for input a plugin can produce: a bad, duplicate or reserved tool is skipped with a
 * `plan-warning`; a missing or failing `CodeModeContributor` degrades the plan to `direct`.
 */
export function planTools(context: PlanContext, sources: ToolSources): ToolPlan {
  const warnings: PlanWarningEvent[] = [];
  const warn = (message: string, name?: string) => {
    warnings.push(name === undefined ? { type: 'plan-warning', message } : { type: 'plan-warning', message, toolName: name });
  };

  const budget = resolveToolBudget(sources?.budget, 'sources.budget');
  const given: Partial<StepContext> = typeof context === 'object' && context !== null ? context : {};
  const step = isFullStepContext(given) ? given : createStepContext(given);
  const provider: ProviderCapabilities = given.provider ?? {};
  const namespacesSupported = provider.namespaceTools !== false;
  const searchSupported = provider.toolSearch === true && namespacesSupported;

  let toolMode: ToolMode = given.toolMode ?? 'direct';
  if (!TOOL_MODES.includes(toolMode)) {
    warn(`unknown tool mode "${String(toolMode)}"; planned as direct`);
    toolMode = 'direct';
  }
  const contributor = sources?.codeMode;
  if (toolMode !== 'direct' && (typeof contributor !== 'object' || contributor === null || typeof contributor.executors !== 'function')) {
    warn(`tool mode "${toolMode}" needs a CodeModeContributor (sources.codeMode); planned as direct`);
    toolMode = 'direct';
  }

  // 1. Host sources: valid, not reserved by code mode, first of a name wins.
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

  // 2. tool_search is planned when the provider supports it and some deferred tool is searchable.
  const planSearch = searchSupported && accepted.some((executor) => isSearchable(executor) && !isPlain(executor, TOOL_SEARCH_NAME));
  if (planSearch) {
    const refused = accepted.findIndex((executor) => isPlain(executor, TOOL_SEARCH_NAME));
    if (refused !== -1) {
      warn(`skipped tool "${TOOL_SEARCH_NAME}": the name is reserved by the planned tool_search`, TOOL_SEARCH_NAME);
      accepted.splice(refused, 1);
    }
  }

  // 3. Code Mode: the nested surface, handed to the contributor for exec / wait.
  let surfaceResult: ReturnType<typeof buildCodeModeSurface> | undefined;
  const contributed: ToolExecutor[] = [];
  if (toolMode !== 'direct') {
    const excluded = Array.isArray(sources.excludedCodeModeNamespaces) ? sources.excludedCodeModeNamespaces : [];
    surfaceResult = buildCodeModeSurface(toolMode, accepted, excluded);
    const surface: CodeModeSurface = { ...surfaceResult.surface, budget: budget.given };
    surfaceResult = { ...surfaceResult, surface };
    try {
      const produced: unknown = (contributor as CodeModeContributor).executors(surface, step);
      if (!Array.isArray(produced)) throw new Error('executors() did not return a list');
      for (const candidate of produced) {
        const problem = executorProblem(candidate);
        const label = executorLabel(candidate);
        if (problem) warn(`skipped code-mode tool "${label}": ${problem}`, label);
        else contributed.push(candidate as ToolExecutor);
      }
      warnings.push(...surfaceResult.warnings);
    } catch (error) {
      warn(`code-mode contributor failed: ${errorMessage(error)}; planned as direct`);
      toolMode = 'direct';
      surfaceResult = undefined;
      contributed.length = 0;
    }
  }

  // 4. The registry's list: exec / wait first, host tools, tool_search last.
  const executors: ToolExecutor[] = [];
  const keys = new Set<string>();
  const add = (executor: ToolExecutor) => {
    const key = toolNameKey(executor.name);
    if (keys.has(key)) {
      const label = displayName(executor.name);
      warn(`skipped duplicate tool "${label}": a tool with this name is already planned`, label);
      return false;
    }
    keys.add(key);
    executors.push(executor);
    return true;
  };
  contributed.forEach(add);
  const hostPlanned = accepted.filter(add);

  // 5. What the model would see without a budget.
  const callable = surfaceResult?.callable ?? new Map<ToolExecutor, string>();
  const shown = new Map<ToolExecutor, ToolSpec>();
  for (const executor of executors) {
    const exposure = executorExposure(executor);
    const spec = executor.spec;
    let visible = exposure === 'direct' || exposure === 'direct-model-only';
    if (visible && toolMode === 'code-mode-only' && exposure === 'direct' && (callable.has(executor) || spec.type === 'tool_search')) visible = false;
    const namespace = executor.name.namespace;
    if (visible && namespace) {
      if (spec.type !== 'function') {
        const label = displayName(executor.name);
        warn(`tool "${label}" is registered but not visible: a namespace can only hold function tools`, label);
        visible = false;
      } else if (!namespacesSupported) {
        const label = displayName(executor.name);
        warn(`tool "${label}" is registered but not visible: the provider does not accept namespaces (provider.namespaceTools is false)`, label);
        visible = false;
      }
    }
    if (visible) shown.set(executor, visibleSpec(executor, callable.get(executor)));
  }

  const hostedSpecs: HostedToolSpec[] = [];
  for (const candidate of Array.isArray(sources?.hostedSpecs) ? sources.hostedSpecs : []) {
    const problem = hostedSpecProblem(candidate);
    if (problem) {
      warn(`skipped hosted spec: ${problem}`);
      continue;
    }
    hostedSpecs.push(candidate);
  }

  // 6. The budget: direct function tools past it are deferred when tool_search can find them.
  const deferredByBudget = applyBudget();
  function applyBudget(): Set<ToolExecutor> {
    const none = new Set<ToolExecutor>();
    if (!(budget.tokens < Infinity) || toolMode === 'code-mode-only') return none;
    const deferrable = (executor: ToolExecutor) =>
      executorExposure(executor) === 'direct' && executor.spec.type === 'function' && shown.has(executor) && !isPlain(executor, TOOL_SEARCH_NAME);
    const candidates = executors.filter(deferrable);
    const specsOf = (hidden: ReadonlySet<ToolExecutor>, search: ToolExecutor | undefined) =>
      modelList(executors, shown, hidden, search, hostedSpecs);
    const hostSearch = searchSupported && hostPlanned.some((executor) => isPlain(executor, TOOL_SEARCH_NAME));
    const searchFor = (hidden: ReadonlySet<ToolExecutor>, catalog: boolean) =>
      toolSearchFor(hostPlanned.filter((executor) => isSearchable(executor) || hidden.has(executor)), hidden, catalog);
    const cost = (hidden: ReadonlySet<ToolExecutor>, search: ToolExecutor | undefined) =>
      budget.countTokens(JSON.stringify(toWireTools(mergeNamespaces(specsOf(hidden, search)))));
    // tool_search carries the short catalog line whenever the budget is in play, so it counts here too
    const unbudgeted = mergeNamespaces(specsOf(none, planSearch ? searchFor(none, true) : undefined));
    const over = exceedsBudget(unbudgeted, budget);
    if (over === false) return none;
    if (!searchSupported || hostSearch || candidates.length === 0) {
      const reason = !searchSupported
        ? 'the provider cannot search deferred tools (provider.toolSearch), so all stay visible'
        : hostSearch
          ? 'a host tool named "tool_search" holds the name, so none is deferred'
          : 'none of them can be deferred';
      warn(`the visible tools take more than ${over} tokens, over the tool budget of ${budget.tokens}; ${reason}`);
      return none;
    }
    // Fixed parts first (tools that cannot be deferred, tool_search with the catalog note), then
    // the candidates by priority hint, then host order, each while it fits.
    const everything = new Set(candidates);
    const base = cost(everything, searchFor(everything, true));
    const ordered = candidates
      .map((executor, index) => ({ executor, index, rank: budget.rank(executor.name) }))
      .sort((a, b) => a.rank - b.rank || a.index - b.index)
      .map((entry) => entry.executor);
    const kept = selectWithinBudget(ordered, budget.tokens - base, (executor, opened) => {
      const spec = shown.get(executor) as ToolSpec;
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
    while (kept.length > 0 && cost(hidden, searchFor(hidden, true)) > budget.tokens) hidden.add(kept.pop() as ToolExecutor);
    return hidden;
  }

  function toolSearchFor(deferred: readonly ToolExecutor[], hidden: ReadonlySet<ToolExecutor>, catalog: boolean): ToolExecutor {
    const options: ToolSearchOptions = {
      ...(budget.tokens < Infinity ? { sourcesBudgetTokens: Math.floor(budget.tokens / 4) } : {}),
      ...(budget.given?.countTokens ? { countTokens: budget.countTokens } : {}),
    };
    if (catalog) {
      const reachable = hostPlanned.filter((executor) => shown.has(executor) || isSearchable(executor) || hidden.has(executor));
      const visible = reachable.filter((executor) => shown.has(executor) && !hidden.has(executor)).length;
      options.catalog = { visible, total: reachable.length, ...(hidden.size === 0 ? { complete: true } : {}) };
    }
    return cachedToolSearchExecutor(deferred, options);
  }

  let search: ToolExecutor | undefined;
  if (planSearch || deferredByBudget.size > 0) {
    // the catalog line whenever the budget is in play: "V of T loaded upfront", and what to do when it cut
    search = toolSearchFor(
      hostPlanned.filter((executor) => isSearchable(executor) || deferredByBudget.has(executor)),
      deferredByBudget,
      budget.tokens < Infinity && toolMode !== 'code-mode-only',
    );
    add(search);
  }
  if (toolMode === 'direct' && !planSearch && hostPlanned.some((executor) => executorExposure(executor) === 'deferred')) {
    warn('deferred tools are registered but hidden from the model: tool_search needs a provider with toolSearch and namespaceTools');
  }

  // 7. The model's list and the rows.
  const visibleSearch = search !== undefined && toolMode !== 'code-mode-only' ? search : undefined;
  const specs = modelList(executors, shown, deferredByBudget, visibleSearch, hostedSpecs);
  const rows: PlanRow[] = executors.map((executor) => ({
    name: displayName(executor.name),
    kind: executor.spec.type,
    exposure: executorExposure(executor),
    visible: executor === visibleSearch || (shown.has(executor) && !deferredByBudget.has(executor)),
    registered: true,
    callableFromCode: callable.has(executor),
  }));
  for (const hosted of hostedSpecs) {
    rows.push({ name: specName(hosted), kind: 'hosted', exposure: 'direct', visible: true, registered: false, callableFromCode: false });
  }

  const modelVisibleSpecs = Object.freeze(mergeNamespaces(specs));
  const frozenRows = Object.freeze(rows.map((row) => Object.freeze(row)));
  return Object.freeze({
    toolMode,
    modelVisibleSpecs,
    tools: Object.freeze(toWireTools(modelVisibleSpecs)),
    executors: Object.freeze(executors),
    hostedSpecs: Object.freeze(hostedSpecs),
    ...(surfaceResult ? { codeModeSurface: surfaceResult.surface } : {}),
    warnings: Object.freeze(warnings),
    deferredByBudget: Object.freeze(executors.filter((executor) => deferredByBudget.has(executor)).map((executor) => displayName(executor.name))),
    describe: () => frozenRows.map((row) => ({ ...row })),
  });
}

/**
 * The model's list before namespace merging: visible executors in registry order (namespaced
 * functions wrapped in a namespace spec), except `hidden` ones, then `search`, then hosted specs.
 */
function modelList(
  executors: readonly ToolExecutor[],
  shown: ReadonlyMap<ToolExecutor, ToolSpec>,
  hidden: ReadonlySet<ToolExecutor>,
  search: ToolExecutor | undefined,
  hostedSpecs: readonly HostedToolSpec[],
): ToolSpec[] {
  const specs: ToolSpec[] = [];
  for (const executor of executors) {
    const spec = shown.get(executor);
    if (spec === undefined || hidden.has(executor)) continue;
    const namespace = executor.name.namespace;
    if (namespace && spec.type === 'function') {
      specs.push({ type: 'namespace', name: namespace, description: executor.namespaceDescription ?? '', tools: [spec] });
    } else {
      specs.push(spec);
    }
  }
  if (search) specs.push(search.spec);
  specs.push(...hostedSpecs);
  return specs;
}

/**
 * `false` when the specs fit the budget, else a token count they are known to pass. Counts spec by
 * spec (namespace members one by one) and stops once the running sum is over the budget by more
 * than the seams between parts could account for, so a huge list costs about one budget of work.
 */
function exceedsBudget(specs: readonly ToolSpec[], budget: ResolvedToolBudget): number | false {
  let sum = 0;
  let seams = 0;
  const over = () => sum > budget.tokens + 3 * seams;
  for (const spec of specs) {
    if (spec.type === 'namespace') {
      sum += budget.countTokens(JSON.stringify(toWireTools([{ ...spec, tools: [] }])));
      for (const member of spec.tools) {
        sum += budget.countTokens(JSON.stringify(toWireTools([member])));
        seams++;
        if (over()) return sum - 3 * seams;
      }
    } else {
      sum += budget.countTokens(JSON.stringify(toWireTools([spec])));
    }
    seams++;
    if (over()) return sum - 3 * seams;
  }
  const whole = budget.countTokens(JSON.stringify(toWireTools(specs)));
  return whole > budget.tokens ? whole : false;
}
