import { randomUUID } from 'node:crypto';
import {
  SwitchyardError,
  errorMessage,
  isSwitchyardError,
  isToolCallItem,
  systemTimeProvider,
  type ApprovalPolicy,
  type ApprovalProvider,
  type CodeModeContributor,
  type CodeModeRuntime,
  type HookRunner,
  type HostedToolSpec,
  type MessageItem,
  type ModelClient,
  type ModelRequest,
  type ModelStreamEvent,
  type ProviderCapabilities,
  type ResponseItem,
  type SandboxMode,
  type StepContext,
  type SwitchyardEventType,
  type TimeProvider,
  type ToolBudget,
  type ToolExecutor,
  type ToolMode,
  type ToolOutputItem,
  type WireTool,
} from '@switchyard/protocol';
import { type EventHub, createEventHub, abortableSleep, backoffDelay, type BackoffOptions } from '@switchyard/kit';
import { createPlanCache, planTools, resolveToolBudget, type PlanCache, type ToolPlan } from '@switchyard/planner';
import { ToolCallRuntime, ToolRegistry, createToolRouter, type DispatchResult, type ToolRouter } from '@switchyard/registry';
import { createCodeMode, type CodeMode } from '@switchyard/code-mode';
import { type SessionEvent, type SessionEventListener, type SessionEventType, type TurnEvent, type TurnResult } from './session-events';
import { SessionHistory, type TurnRecord } from './history';
import { checkSessionOptions } from './session-options';
import { assistantText } from './message-text';
import { warnOnce } from './warn-once';
import { traceSession, type SessionTracer } from './tracing';
import { hostApprovals } from './host-approvals';
import { BackgroundInbox, backgroundSettings, type SessionBackgroundOptions } from './background';
import {
  forwardHookEvents,
  permissionApprovals,
  promptText,
  runSessionEnd,
  runSessionStart,
  runStop,
  runUserPromptSubmit,
  type HookedSession,
} from './session-hooks';

export interface SessionOptions {
  /** `direct` (default), `code-mode` or `code-mode-only`. */
  toolMode?: ToolMode;
  /** Executors in the host's order, or a function read at every step (e.g. MCP tools whose list changes). */
  tools: readonly ToolExecutor[] | (() => readonly ToolExecutor[]);
  /** Provider-executed specs: visible, never registered. */
  hostedSpecs?: readonly HostedToolSpec[];
  /** What the provider accepts. Default: namespaces yes, tool_search no. */
  provider?: ProviderCapabilities;
  /**
   * Hooks (e.g. `createHookEngine(...)`): PreToolUse / PostToolUse around calls, and the lifecycle
   * events the runner implements: SessionStart (before the first turn), UserPromptSubmit, Stop,
   * SessionEnd (at `shutdown()`) and PermissionRequest (before `approvals` is asked). Its
   * `hook-start` / `hook-end` events are the session's; a hook that fails open is also a `warning`
   * event, once per hook.
   */
  hooks?: HookRunner;
  /** A transcript file the host keeps: `transcript_path` on lifecycle hooks' stdin. */
  transcriptPath?: string;
  /** Workspace root for file and process tools. Default `process.cwd()`. */
  cwd?: string;
  /** The model's window and name; `contextWindow` feeds get_context_remaining. */
  model?: { contextWindow?: number; name?: string; autoCompactTokens?: number };
  /** Code Mode: a `createCodeMode(...)` value, or runtime options; created lazily when a code mode is planned. */
  codeMode?: CodeMode | { runtimeOptions?: Record<string, unknown>; maxOutputTokensCap?: number };
  approvalPolicy?: ApprovalPolicy;
  sandboxMode?: SandboxMode;
  approvals?: ApprovalProvider;
  time?: TimeProvider;
  /** Stable id (hook payloads, code-mode session key). Default: a UUID. */
  sessionId?: string;
  /** System instructions sent with every request. */
  instructions?: string;
  /** Follow-up steps per turn before the turn fails. Default 32. */
  maxSteps?: number;
  /**
   * Admission control: most tool calls of one step running at once (direct calls; Code Mode's
   * nested calls have the same cap apart). Calls past it queue in order. Default 16
   * (`DEFAULT_MAX_CONCURRENT_TOOL_CALLS` of `@switchyard/registry`); `Infinity` turns it off.
   */
  maxConcurrentToolCalls?: number;
  /**
   * Session-level retries of a retryable model error, reusing the step's plan. Default 2. An error
   * whose client already retried it (`attempts` above 1, as `@switchyard/openai` sets) is not
   * retried again unless `retry.afterClientRetries` is set, so attempts never multiply.
   */
  maxModelRetries?: number;
  /** Backoff of those retries: exponential from `initialDelayMs` (default 500) up to `maxDelayMs` (default 10 000), ±25 % jitter. */
  retry?: SessionRetryOptions;
  /** Namespaces kept out of Code Mode. */
  excludedCodeModeNamespaces?: readonly string[];
  /**
   * The tool table's token budget (default 2,000 tokens, `{ tokens: Infinity }` turns it off):
   * the `exec` description inlines declarations up to it; with `provider.toolSearch`, direct tools
   * past it are deferred behind `tool_search`. `priority` names tools to keep first; `countTokens`
   * replaces the built-in o200k estimate. An invalid budget is a `CONFIG` error at creation.
   */
  toolBudget?: ToolBudget;
  /**
   * A saved conversation to continue (`JSON.parse(JSON.stringify(session.history))` of an earlier
   * session). Checked at creation: a malformed item is a `CONFIG` error; a call saved without its
   * output gets one saying the conversation was interrupted.
   */
  history?: readonly ResponseItem[];
  /**
   * Planner warnings (a broken tool definition skipped, namespaced tools hidden from a provider
   * without namespaces) fail the step with a `CONFIG` error instead. Default false: they are
   * `plan-warning` events and are reported once per process through `process.emitWarning`.
   */
  strict?: boolean;
  /**
   * OpenTelemetry tracing: a `Tracer` from `@opentelemetry/api` (an optional peer), or
   * `{ tracer, providerName?, agentName? }`. Spans for the turn, each model request, tool call,
   * hook run and Code Mode cell, after the GenAI semantic conventions. Without it nothing is traced.
   */
  tracer?: SessionTracer;
  /**
   * Background work: a Code Mode cell still running after its `exec` / `wait`, or a process still
   * running when `exec_command` answered (with `processScope: 'session'`), delivers its final
   * output into the model's next request on its own, once (within a turn at the next sampling
   * step, otherwise at the start of the next turn), and the session emits `background-complete`.
   * A cell's nested calls between turns run at once under the session's current policy (hooks,
   * approvals, sandbox; their source says `background`). `true` for the defaults. Default off:
   * the model observes such work with `wait` / `write_stdin`, as in the reference.
   */
  background?: boolean | SessionBackgroundOptions;
}

/** Backoff of the session's model retries (default 500 ms doubling up to 10 s, ±25 % jitter). */
export interface SessionRetryOptions extends BackoffOptions {
  /** Retry an error its client already retried (`attempts` > 1). Default false. */
  afterClientRetries?: boolean;
}

/** One sampling step: its context, plan and router, built once (retries reuse them). */
export interface Step {
  readonly context: StepContext;
  readonly plan: ToolPlan;
  /** The request's `tools` (model-visible specs as wire JSON). */
  readonly tools: readonly WireTool[];
  readonly router: ToolRouter;
  readonly runtime: ToolCallRuntime;
  /** Wire call item → wire output item (fatal errors reject). Non-call items reject with a CONFIG error. */
  dispatch(item: ResponseItem): Promise<ToolOutputItem>;
  /** Dispatches concurrently; outputs in call order. */
  dispatchAll(items: readonly ResponseItem[]): Promise<ToolOutputItem[]>;
  /**
   * Like `dispatch`, with the full `DispatchResult` (output, success, error code); `undefined` for
   * an item that is not a tool call. Hook contexts are queued for `turn.takeInjected()`.
   */
  handleItem(item: ResponseItem): Promise<DispatchResult | undefined>;
}

export interface TurnOptions {
  /** Cancels running tools and pending nested calls. */
  signal?: AbortSignal;
}

export interface Turn {
  readonly id: string;
  readonly signal: AbortSignal;
  /** Captures a step context and builds its plan and router. */
  step(): Promise<Step>;
  /**
   * Outputs injected by `notify()` since the last call, then background completions (with the
   * `background` option), then hook context as developer messages.
   */
  takeInjected(): ResponseItem[];
  /** Cancels the turn's running tools. */
  abort(reason?: unknown): void;
  /** Ends the turn: detaches its worker (a yielded cell's nested calls queue until the next step). */
  end(): Promise<void>;
}

export interface RunTurnOptions {
  model: ModelClient;
  /** New input for this turn (a string becomes a user message). */
  input: string | readonly ResponseItem[];
  signal?: AbortSignal;
}


/** Options of {@link Session.wake}. */
export interface WakeOptions {
  /** The model the session samples when it wakes itself. */
  model: ModelClient;
  /** Aborting it stops waking (a wake turn already running is not aborted). */
  signal?: AbortSignal;
}

export interface Session {
  readonly id: string;
  /**
   * The conversation so far (every turn's items), JSON-serializable; pass it to
   * `createSession({ history })` to continue. Valid after any turn: every call item has exactly
   * one output with its `call_id`.
   */
  readonly history: readonly ResponseItem[];
  beginTurn(options?: TurnOptions): Turn;
  /**
   * Runs a turn to its end: samples, runs tool calls, follows up until the model answers without
   * calls. Resolves with the turn's result; rejects with a `SwitchyardError` (`ABORTED` when
   * `signal` aborted it, `MODEL_ERROR`, `FATAL`, `CONFIG`, …). Built on {@link Session.streamTurn}.
   */
  runTurn(options: RunTurnOptions): Promise<TurnResult>;
  /**
   * Runs a turn and yields its events as they happen: `turn-start`, `text-delta`, `model-item`,
   * `tool-call-start`, `tool-call-end`, `tool-output`, `cell-start`, `cell-end`, … and last
   * `turn-end` with the `result` (or the `error`, which the iteration then throws). The turn
   * starts at the first `next()`; leaving the loop early aborts it.
   */
  streamTurn(options: RunTurnOptions): AsyncIterable<TurnEvent>;
  on<T extends SessionEventType>(type: T, listener: SessionEventListener<T>): () => void;
  /**
   * Opt-in: from now on, when background work completes while no turn runs (or after the turn
   * that was running ended without taking it), the session runs a turn itself with `model` and no
   * new input, so the model reads the completion and goes on. Nothing completes, nothing is sent.
   * Returns the function that stops it. Needs the `background` option (else a `CONFIG` error).
   */
  wake(options: WakeOptions): () => void;
  /** Terminates every cell (within 1 s) and refuses new turns. */
  shutdown(): Promise<void>;
}

const TOOL_EVENTS: readonly SwitchyardEventType[] = ['tool-call-start', 'tool-call-end', 'tool-call-blocked', 'tool-call-aborted', 'tool-notification'];

function hookContextMessage(text: string): MessageItem {
  return { type: 'message', role: 'developer', content: `<hook_context>${text}</hook_context>` };
}

/** The message closing a call a failed turn left open: what the model reads in its output. */
function closingMessage(error: SwitchyardError): string {
  return error.code === 'ABORTED' ? 'aborted by user' : `the turn failed before this call finished: ${error.message}`;
}

/** The error a failed turn rejects with: `ABORTED` once its signal aborted, a `SwitchyardError` as is, else `FATAL`. */
function turnError(error: unknown, signal: AbortSignal): SwitchyardError {
  if (signal.aborted) {
    if (isSwitchyardError(error) && error.code === 'ABORTED') return error;
    const reason = signal.reason;
    const detail = reason === undefined || (reason as Error)?.name === 'AbortError' ? '' : `: ${errorMessage(reason)}`;
    return new SwitchyardError('ABORTED', `turn aborted${detail}`, { cause: reason ?? error });
  }
  if (isSwitchyardError(error)) return error;
  return new SwitchyardError('FATAL', `turn failed: ${errorMessage(error)}`, { cause: error });
}

/** A turn created by the session, with the internal end that reports the outcome. */
interface OwnTurn extends Turn {
  /** Emits to the session's listeners and the turn's stream. */
  emit(event: SessionEvent): void;
  /** Queues hook contexts for the next request (as developer messages). */
  inject(contexts: readonly string[]): void;
  /**
   * What `takeInjected` returns, leaving background completions in the inbox: a turn ending
   * without another request records notify() items and hook contexts, while a completion stays
   * for a request that carries it (the next turn's, or a wake turn's).
   */
  takeInjectedForHistory(): ResponseItem[];
  finish(outcome: { result?: TurnResult; error?: unknown }): Promise<void>;
}

/** What one session's turns share. */
interface SessionState {
  readonly options: SessionOptions;
  readonly sessionId: string;
  readonly toolMode: ToolMode;
  readonly hub: EventHub<SessionEvent>;
  readonly history: SessionHistory;
  /** Event sinks of the turns being streamed; cell events (not tied to a step) go to each. */
  readonly turnSinks: Set<(event: SessionEvent) => void>;
  usedTokens: number;
  closed: boolean;
  codeMode: CodeMode | undefined;
  readonly ownsCodeMode: boolean;
  /** The runtime this session created (its worker processes end with the session). */
  ownRuntime: CodeModeRuntime | undefined;
  creatingCodeMode: Promise<CodeMode> | undefined;
  /** What this session's plans reuse from its earlier steps (never shared with another session). */
  readonly planCache: PlanCache;
  /** What the lifecycle hooks read of the session. */
  readonly hooked: HookedSession;
  /** SessionStart hooks, run once before the first turn: their contexts. */
  sessionStart: Promise<readonly string[]> | undefined;
  /** Stops forwarding the hook runner's events. */
  unwatchHooks: () => void;
  /** Background completions waiting for the next request (with the `background` option). */
  readonly inbox: BackgroundInbox | undefined;
  /** Turns begun and not yet finished. */
  activeTurns: number;
  /** The model a `wake()` registered. */
  wakeModel: ModelClient | undefined;
  /** Runtimes that served cells between turns (released once idle, aborted at shutdown). */
  readonly backgroundRuntimes: ToolCallRuntime[];
}

/** To the session's listeners and every streamed turn: cell events are not tied to a step. */
function emitGlobal(state: SessionState, event: SessionEvent): void {
  state.hub.emit(event);
  for (const sink of state.turnSinks) sink(event);
}

function forwardCellEvents(state: SessionState, mode: CodeMode): void {
  mode.onCellEvent?.((event) => emitGlobal(state, event));
}

/** The optional peer: a direct-mode host installs no native module, a code-mode one is told what to install. */
async function loadRuntimeModule(toolMode: ToolMode): Promise<typeof import('@switchyard/code-mode-runtime')> {
  try {
    return await import('@switchyard/code-mode-runtime');
  } catch (error) {
    throw new SwitchyardError(
      'CONFIG',
      `toolMode "${toolMode}" needs the Code Mode runtime: npm install @switchyard/code-mode-runtime isolated-vm (or pass codeMode: createCodeMode({ runtime })); loading it failed: ${errorMessage(error)}`,
      { cause: error },
    );
  }
}

async function codeModeFor(state: SessionState): Promise<CodeModeContributor | undefined> {
  if (state.toolMode === 'direct') return undefined;
  if (state.codeMode) return state.codeMode;
  // Created once, even when two steps are planned at the same time.
  state.creatingCodeMode ??= loadRuntimeModule(state.toolMode).then(({ createCodeModeRuntime }) => {
    const settings = (state.options.codeMode ?? {}) as { runtimeOptions?: Record<string, unknown>; maxOutputTokensCap?: number };
    state.ownRuntime = createCodeModeRuntime(settings.runtimeOptions as never);
    const created = createCodeMode({ runtime: state.ownRuntime, maxOutputTokensCap: settings.maxOutputTokensCap });
    forwardCellEvents(state, created);
    state.codeMode = created;
    return created;
  });
  return state.creatingCodeMode;
}

function currentExecutors(options: SessionOptions): readonly ToolExecutor[] {
  return typeof options.tools === 'function' ? options.tools() : options.tools;
}

/** Calls each distinct lifecycle function of the executors once; a failing one never breaks the session. */
async function callLifecycle(state: SessionState, pick: (executor: ToolExecutor) => ((...args: never[]) => unknown) | undefined, ...args: unknown[]) {
  const seen = new Set<unknown>();
  const calls: Promise<unknown>[] = [];
  for (const executor of currentExecutors(state.options)) {
    const fn = pick(executor) as ((...a: unknown[]) => unknown) | undefined;
    if (typeof fn !== 'function' || seen.has(fn)) continue;
    seen.add(fn);
    calls.push(Promise.resolve().then(() => fn(...args)).catch(() => undefined));
  }
  await Promise.all(calls);
}

/** What a turn's steps share. */
interface TurnScope {
  readonly state: SessionState;
  readonly id: string;
  readonly controller: AbortController;
  readonly emit: (event: SessionEvent) => void;
  readonly turnState: Map<string | symbol, unknown>;
  readonly pendingContexts: string[];
  readonly runtimes: ToolCallRuntime[];
  stepIndex: number;
  detach: (() => void) | undefined;
}

function stepContextOf(scope: TurnScope): StepContext {
  const { options, sessionId, toolMode, usedTokens } = scope.state;
  return {
    sessionId,
    turnId: scope.id,
    stepIndex: scope.stepIndex,
    cwd: options.cwd ?? process.cwd(),
    toolMode,
    provider: { namespaceTools: true, ...options.provider },
    model: options.model?.name,
    contextWindow: { windowTokens: options.model?.contextWindow ?? null, usedTokens, autoCompactTokens: options.model?.autoCompactTokens },
    time: options.time ?? systemTimeProvider,
    approvalPolicy: options.approvalPolicy,
    sandboxMode: options.sandboxMode,
    approvals: permissionApprovals(scope.state.hooked, hostApprovals(options.approvals), scope.id),
    turnState: scope.turnState,
    ...(scope.state.inbox ? { background: scope.state.inbox.delivery } : {}),
  };
}

/** Plans the step's tools; warnings are events (and once-per-process warnings), or a CONFIG error when strict. */
async function planStep(scope: TurnScope, context: StepContext): Promise<ToolPlan> {
  const { options } = scope.state;
  const sources = {
    executors: currentExecutors(options),
    hostedSpecs: options.hostedSpecs,
    codeMode: await codeModeFor(scope.state),
    excludedCodeModeNamespaces: options.excludedCodeModeNamespaces,
    budget: options.toolBudget,
  };
  const plan = planTools(context, sources, { cache: scope.state.planCache });
  if (options.strict && plan.warnings.length > 0) {
    throw new SwitchyardError('CONFIG', `strict session: ${plan.warnings.map((warning) => warning.message).join('; ')}`);
  }
  for (const warning of plan.warnings) {
    scope.emit(warning);
    // events nobody listens to are easy to miss: the process hears of each problem once
    warnOnce(warning.message, 'SWITCHYARD_PLAN');
  }
  return plan;
}

/**
 * Earlier steps' runtimes with nothing running are released: a long turn with many steps
 * (`mcp serve` makes one per MCP call) would otherwise keep every router and plan, and one
 * turn-signal listener per step.
 */
function releaseIdleRuntimes(runtimes: ToolCallRuntime[]): void {
  for (let index = runtimes.length - 1; index >= 0; index--) {
    if (runtimes[index].activeCalls > 0) continue;
    runtimes[index].dispose();
    runtimes.splice(index, 1);
  }
}

/** A step's context, plan, router and runtime (kept in the scope's runtimes). */
async function planRuntime(scope: TurnScope): Promise<{ context: StepContext; plan: ToolPlan; router: ToolRouter; runtime: ToolCallRuntime }> {
  const { state, emit } = scope;
  scope.stepIndex++;
  const context = stepContextOf(scope);
  const plan = await planStep(scope, context);
  const registry = ToolRegistry.from(plan.executors);
  const router = createToolRouter({ specs: plan.modelVisibleSpecs, registry, hooks: state.options.hooks });
  for (const type of TOOL_EVENTS) router.on(type, (event) => emit(event as SessionEvent));
  releaseIdleRuntimes(scope.runtimes);
  const runtime = new ToolCallRuntime({ router, step: context, signal: scope.controller.signal, maxConcurrentCalls: state.options.maxConcurrentToolCalls });
  scope.runtimes.push(runtime);
  return { context, plan, router, runtime };
}

/**
 * The worker serving a session's cells between turns (the `background` option): planned at its
 * first nested call under the session's policy as it is then, a step of its own (turn id
 * `background-…`) whose events go to the session's listeners.
 */
function backgroundWorker(state: SessionState, inbox: BackgroundInbox): Parameters<CodeMode['attachWorker']>[1] {
  let planned: Promise<ToolCallRuntime> | undefined;
  const plan = async () => {
    releaseIdleRuntimes(state.backgroundRuntimes);
    const controller = new AbortController();
    if (inbox.signal.aborted) controller.abort(inbox.signal.reason);
    else inbox.signal.addEventListener('abort', () => controller.abort(inbox.signal.reason), { once: true });
    const emit = (event: SessionEvent) => emitGlobal(state, event);
    const scope: TurnScope = { state, id: `background-${randomUUID()}`, controller, emit, turnState: new Map(), pendingContexts: [], runtimes: state.backgroundRuntimes, stepIndex: 0, detach: undefined };
    return (await planRuntime(scope)).runtime;
  };
  return {
    async handle(call, options) {
      planned ??= plan();
      return (await planned).handle(call, options);
    },
  };
}

/** Captures a step context and builds its plan, router and runtime (the current worker of Code Mode). */
async function buildStep(scope: TurnScope): Promise<Step> {
  const { state, emit, id } = scope;
  const { context, plan, router, runtime } = await planRuntime(scope);
  const handleItem = async (item: ResponseItem) => {
    const result = await runtime.handleItem(item);
    if (result) {
      scope.pendingContexts.push(...result.additionalContexts);
      emit({ type: 'tool-output', turnId: id, item: result.item });
    }
    return result;
  };
  const dispatch = async (item: ResponseItem) => {
    const result = await handleItem(item);
    if (!result) throw new SwitchyardError('CONFIG', `not a tool call: ${String((item as { type?: unknown }).type)}`);
    return result.item;
  };
  scope.detach?.();
  scope.detach = state.codeMode ? state.codeMode.attachWorker(state.sessionId, runtime) : undefined;
  const step: Step = { context, plan, tools: plan.tools, router, runtime, dispatch, dispatchAll: (items) => Promise.all(items.map(dispatch)), handleItem };
  emit({ type: 'step-start', turnId: id, stepIndex: scope.stepIndex, plan });
  return step;
}

/** notify() items, then background completions (when `background`), then hook contexts: a cell's notifications precede its delivered end. */
function injectedItems(scope: TurnScope, background: boolean): ResponseItem[] {
  const { state } = scope;
  const injected: ResponseItem[] = state.codeMode ? state.codeMode.takeInjected(state.sessionId) : [];
  const completions = background ? (state.inbox?.take() ?? []) : [];
  const contexts = scope.pendingContexts.splice(0, scope.pendingContexts.length);
  return [...injected, ...completions, ...contexts.map(hookContextMessage)];
}

function beginOwnTurn(state: SessionState, turnOptions: TurnOptions = {}, sink?: (event: SessionEvent) => void): OwnTurn {
  if (state.closed) throw new SwitchyardError('SHUTTING_DOWN', 'session is shut down');
  const controller = new AbortController();
  const forward = () => controller.abort(turnOptions.signal?.reason);
  if (turnOptions.signal?.aborted) forward();
  else turnOptions.signal?.addEventListener('abort', forward, { once: true });
  const emit = (event: SessionEvent) => {
    state.hub.emit(event);
    sink?.(event);
  };
  if (sink) state.turnSinks.add(sink);
  state.activeTurns++;
  const scope: TurnScope = { state, id: randomUUID(), controller, emit, turnState: new Map(), pendingContexts: [], runtimes: [], stepIndex: 0, detach: undefined };
  const { id } = scope;
  let ended = false;
  emit({ type: 'turn-start', turnId: id });
  const turn: OwnTurn = {
    id,
    signal: controller.signal,
    emit,
    inject: (contexts) => void scope.pendingContexts.push(...contexts),
    step: () => buildStep(scope),
    takeInjected: () => injectedItems(scope, true),
    takeInjectedForHistory: () => injectedItems(scope, false),
    abort(reason?: unknown) {
      controller.abort(reason);
    },
    end() {
      // a turn the host aborted ends with its reason, as the host gave it
      return turn.finish(controller.signal.aborted ? { error: controller.signal.reason } : {});
    },
    async finish(outcome) {
      if (ended) return;
      ended = true;
      scope.detach?.();
      scope.detach = undefined;
      // between turns, cells that outlived the turn keep dispatching (with the background option)
      if (state.inbox && state.codeMode && !state.closed) state.codeMode.attachWorker(state.sessionId, backgroundWorker(state, state.inbox), { background: true });
      for (const runtime of scope.runtimes.splice(0)) runtime.dispose();
      turnOptions.signal?.removeEventListener('abort', forward);
      await callLifecycle(state, (executor) => executor.onTurnEnd, id);
      emit({ type: 'turn-end', turnId: id, ...outcome });
      if (sink) state.turnSinks.delete(sink);
      state.activeTurns--;
      scheduleWake(state);
    },
  };
  return turn;
}

/** True when the session retries `error` after `attempt` attempts of this step (no tool call started). */
function shouldRetry(options: SessionOptions, error: unknown, attempt: number, signal: AbortSignal): boolean {
  // read structurally: a client may bundle its own copy of protocol
  const failure = error as { retryable?: unknown; attempts?: unknown } | undefined;
  if (failure?.retryable !== true || signal.aborted) return false;
  if (attempt > (options.maxModelRetries ?? 2)) return false;
  const clientAttempts = typeof failure.attempts === 'number' ? failure.attempts : 1;
  return clientAttempts <= 1 || options.retry?.afterClientRetries === true;
}

/** Calls of the step being sampled and what the model produced so far (kept for a failed turn's history). */
interface StepProgress {
  calls: Array<Promise<DispatchResult | undefined>>;
  items: ResponseItem[];
  itemsRecorded: boolean;
}

/** One sampling attempt: streams the model's events; each call starts as soon as its item arrives. */
async function sampleOnce(run: { state: SessionState; model: ModelClient; turn: OwnTurn; step: Step; request: ModelRequest; attempt: number; progress: StepProgress }): Promise<void> {
  const { state, model, turn, step, request, attempt, progress } = run;
  const { emit } = turn;
  const stepIndex = step.context.stepIndex;
  emit({ type: 'model-request', turnId: turn.id, stepIndex, attempt, plan: step.plan, request, model: state.options.model?.name ?? model.capabilities?.name, provider: model.provider });
  progress.calls = [];
  progress.items = [];
  let completed: Extract<ModelStreamEvent, { type: 'completed' }> | undefined;
  for await (const event of model.stream(request)) {
    if (event.type === 'output-item') {
      progress.items.push(event.item);
      emit({ type: 'model-item', turnId: turn.id, item: event.item });
      // Each call starts as soon as its item arrives; outputs are recorded in arrival order.
      if (isToolCallItem(event.item)) {
        const pending = step.handleItem(event.item);
        pending.catch(() => undefined);
        progress.calls.push(pending);
      }
    } else if (event.type === 'text-delta') {
      emit({ type: 'text-delta', turnId: turn.id, delta: event.delta });
    } else if (event.type === 'completed') {
      completed = event;
      if (event.usage) state.usedTokens = event.usage.totalTokens;
    }
  }
  const response = { usage: completed?.usage, responseId: completed?.responseId, responseModel: completed?.model, finishReasons: completed?.finishReasons };
  emit({ type: 'model-response', turnId: turn.id, stepIndex, attempt, ...response });
}

/** Samples the step, retrying a retryable model error (with backoff) while no tool call has started. */
async function sampleStep(run: { state: SessionState; model: ModelClient; turn: OwnTurn; step: Step; parallelToolCalls: boolean; progress: StepProgress }): Promise<void> {
  const { state, turn, step } = run;
  const { options, history } = state;
  const sleep = options.retry?.sleep ?? abortableSleep;
  for (let attempt = 1; ; attempt++) {
    history.push(...turn.takeInjected());
    const request: ModelRequest = { tools: step.tools, input: [...history.items], parallelToolCalls: run.parallelToolCalls, instructions: options.instructions, signal: turn.signal };
    try {
      await sampleOnce({ ...run, request, attempt });
      return;
    } catch (error) {
      const stepIndex = step.context.stepIndex;
      turn.emit({ type: 'model-response', turnId: turn.id, stepIndex, attempt, error });
      if (run.progress.calls.length > 0 || !shouldRetry(options, error, attempt, turn.signal)) throw error;
      const delayMs = backoffDelay(attempt, options.retry);
      turn.emit({ type: 'model-retry', turnId: turn.id, stepIndex, attempt, delayMs, error: turnError(error, turn.signal) });
      await sleep(delayMs, turn.signal);
    }
  }
}

/**
 * The hooks before a turn's input reaches the model: SessionStart once per session (its contexts go
 * to the first turn), then UserPromptSubmit. Returns the refusal reason when a hook blocked the
 * prompt; contexts are queued for the turn's first request.
 */
async function openingHooks(state: SessionState, turn: OwnTurn, input: readonly ResponseItem[]): Promise<string | undefined> {
  if (!state.options.hooks) return undefined;
  const first = state.sessionStart === undefined;
  state.sessionStart ??= runSessionStart(state.hooked, (state.options.history?.length ?? 0) > 0);
  const started = await state.sessionStart;
  if (first) turn.inject(started);
  const outcome = await runUserPromptSubmit(state.hooked, { turnId: turn.id, prompt: promptText(input), signal: turn.signal });
  if (outcome?.blocked) return outcome.reason ?? 'the prompt was blocked by a UserPromptSubmit hook';
  turn.inject(outcome?.additionalContexts ?? []);
  return undefined;
}

/** Stop hooks after an answer without calls: the reason to continue with, or `undefined` to end the turn. */
async function stopContinues(state: SessionState, turn: OwnTurn, run: { finalText: string | undefined; stopHookActive: boolean }): Promise<string | undefined> {
  if (!state.options.hooks) return undefined;
  const outcome = await runStop(state.hooked, { turnId: turn.id, signal: turn.signal, stopHookActive: run.stopHookActive, lastAssistantMessage: run.finalText });
  turn.inject(outcome?.additionalContexts ?? []);
  return outcome?.blocked ? (outcome.reason ?? 'a Stop hook asked to continue') : undefined;
}

/** Runs one turn to its end, emitting through the turn (and `sink`). Resolves with the result; rejects with the turn's error. */
async function executeTurn(state: SessionState, run: RunTurnOptions, sink?: (event: SessionEvent) => void): Promise<TurnResult> {
  const { options, history } = state;
  const turn = beginOwnTurn(state, { signal: run.signal }, sink);
  const input: readonly ResponseItem[] = typeof run.input === 'string' ? [{ type: 'message', role: 'user', content: run.input }] : run.input;
  const refused = await openingHooks(state, turn, input);
  if (refused !== undefined) {
    const result: TurnResult = { items: [], steps: 0, promptBlocked: refused };
    await turn.finish({ result });
    return result;
  }
  const record: TurnRecord = history.begin(input);
  let stopHookActive = false;
  const maxSteps = options.maxSteps ?? 32;
  const parallelToolCalls = run.model.capabilities?.parallelToolCalls ?? true;
  let finalText: string | undefined;
  let steps = 0;
  const progress: StepProgress = { calls: [], items: [], itemsRecorded: false };
  try {
    for (;;) {
      if (steps >= maxSteps) throw new SwitchyardError('FATAL', `turn exceeded ${maxSteps} steps`);
      turn.signal.throwIfAborted();
      const step = await turn.step();
      steps++;
      await sampleStep({ state, model: run.model, turn, step, parallelToolCalls, progress });
      history.pushModelItems(record, progress.items);
      progress.itemsRecorded = true;
      for (const item of progress.items) finalText = assistantText(item) ?? finalText;
      const results = await Promise.all(progress.calls);
      // outputs in call order; hook contexts and notify() items follow with the next request
      for (const result of results) if (result) history.push(result.item);
      progress.calls = [];
      progress.itemsRecorded = false;
      if (results.filter(Boolean).length === 0) {
        const again = await stopContinues(state, turn, { finalText, stopHookActive });
        if (again === undefined) {
          history.push(...turn.takeInjectedForHistory());
          break;
        }
        // a Stop hook asked for more: its reason is the next input, and the next Stop run knows it
        stopHookActive = true;
        history.push({ type: 'message', role: 'user', content: again });
      }
    }
    const result: TurnResult = { items: history.items.slice(record.start), finalText, steps };
    await turn.finish({ result });
    return result;
  } catch (caught) {
    const error = turnError(caught, turn.signal);
    await closeFailedTurn({ state, turn, record, progress, error });
    throw error;
  }
}

/**
 * Ends a failed turn. Calls already started are part of the conversation: their items and outputs
 * are kept (the aborted ones answer with the aborted output), every other call gets a closing output.
 */
async function closeFailedTurn(run: { state: SessionState; turn: OwnTurn; record: TurnRecord; progress: StepProgress; error: SwitchyardError }): Promise<void> {
  const { state, turn, record, progress, error } = run;
  turn.abort(error);
  if (progress.calls.length > 0) {
    if (!progress.itemsRecorded) state.history.pushModelItems(record, progress.items);
    const settled = await Promise.allSettled(progress.calls);
    for (const outcome of settled) if (outcome.status === 'fulfilled' && outcome.value) state.history.push(outcome.value.item);
  }
  state.history.fail(record, closingMessage(error));
  await turn.finish({ error });
}

async function* streamTurn(state: SessionState, run: RunTurnOptions): AsyncGenerator<TurnEvent> {
  const queue: TurnEvent[] = [];
  let wake: (() => void) | undefined;
  let settled = false;
  let failure: SwitchyardError | undefined;
  const stop = new AbortController();
  const forward = () => stop.abort(run.signal?.reason);
  if (run.signal?.aborted) forward();
  else run.signal?.addEventListener('abort', forward, { once: true });
  const running = executeTurn(state, { ...run, signal: stop.signal }, (event) => {
    queue.push(event);
    wake?.();
  }).then(
    () => undefined,
    (error: SwitchyardError) => {
      failure = error;
    },
  );
  void running.finally(() => {
    settled = true;
    run.signal?.removeEventListener('abort', forward);
    wake?.();
  });
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift()!;
      if (settled) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
    if (failure) throw failure;
  } finally {
    if (!settled) {
      // the host left the loop early: the turn stops, its history stays valid
      stop.abort(new SwitchyardError('ABORTED', 'the host stopped reading the turn'));
      await running;
    }
  }
}

/**
 * With a `wake()` model: when completions wait in the inbox and no turn runs, the session runs a
 * turn itself (no new input: the completions are what the model reads). Its events go to the
 * session's listeners; its failure ends in its `turn-end`, never in an unhandled rejection.
 */
function scheduleWake(state: SessionState): void {
  queueMicrotask(() => {
    const model = state.wakeModel;
    if (!model || state.closed || state.activeTurns > 0 || !state.inbox?.pending) return;
    executeTurn(state, { model, input: [] }).catch(() => undefined);
  });
}

function startWaking(state: SessionState, options: WakeOptions): () => void {
  if (!state.inbox) throw new SwitchyardError('CONFIG', 'session.wake: needs the `background` option of createSession (background work must deliver its completions)');
  const model = options.model;
  if (typeof model?.stream !== 'function') throw new SwitchyardError('CONFIG', 'session.wake: option `model` must be a ModelClient');
  const stop = () => {
    if (state.wakeModel === model) state.wakeModel = undefined;
  };
  if (options.signal?.aborted) return stop;
  state.wakeModel = model;
  options.signal?.addEventListener('abort', stop, { once: true });
  scheduleWake(state);
  return stop;
}

async function shutdownSession(state: SessionState): Promise<void> {
  if (state.closed) return;
  state.closed = true;
  state.wakeModel = undefined;
  // watchers stop and nothing more is delivered; nested calls between turns are cancelled
  state.inbox?.close();
  // SessionEnd only for a session whose hooks saw it start
  if (state.sessionStart) await runSessionEnd(state.hooked);
  state.unwatchHooks();
  // the ending session names itself: a toolset shared by several sessions ends only this one's processes
  await callLifecycle(state, (executor) => executor.dispose, { sessionId: state.sessionId });
  if (state.creatingCodeMode) await state.creatingCodeMode.catch(() => undefined);
  if (state.codeMode && state.ownsCodeMode) {
    await state.codeMode.shutdown();
    await state.ownRuntime?.shutdown();
  } else if (state.codeMode) await state.codeMode.service.closeSession(state.sessionId);
}

/**
 * Each distinct `checkSetup` of the tools, once at creation: every problem is a `warning` event
 * (and a process warning, once, for a host that does not listen). Never throws.
 */
async function checkToolSetup(state: SessionState): Promise<void> {
  const { options } = state;
  const context = { cwd: options.cwd ?? process.cwd(), ...(options.sandboxMode !== undefined ? { sandboxMode: options.sandboxMode } : {}) };
  const seen = new Set<unknown>();
  try {
    for (const executor of currentExecutors(options)) {
      const check = executor.checkSetup;
      if (typeof check !== 'function' || seen.has(check)) continue;
      seen.add(check);
      const problems = await Promise.resolve()
        .then(() => check(context))
        .catch((error: unknown) => [`the setup check of ${executor.name.name} failed: ${errorMessage(error)}`]);
      for (const message of problems) {
        emitGlobal(state, { type: 'warning', source: 'tools', message });
        warnOnce(message, 'SWITCHYARD_TOOLS');
      }
    }
  } catch {
    // a tools function that throws is reported when a step reads it
  }
}

/** The host facade: plan → router once per step, the sampling loop, ordered drain, notify injection. */
export function createSession(options: SessionOptions): Session {
  checkSessionOptions(options);
  resolveToolBudget(options.toolBudget, 'toolBudget');
  const sessionId = options.sessionId ?? randomUUID();
  // a throwing listener is reported (process warning SWITCHYARD_LISTENER) and never reaches the turn
  const hub = createEventHub<SessionEvent>({ name: 'session' });
  const tracing = options.tracer
    ? traceSession(options.tracer, { on: (type, listener) => hub.on(type, listener), sessionId, hooks: options.hooks, model: options.model?.name })
    : undefined;
  const codeMode = options.codeMode && 'executors' in options.codeMode ? (options.codeMode as CodeMode) : undefined;
  const state: SessionState = {
    options,
    sessionId,
    toolMode: options.toolMode ?? 'direct',
    hub,
    history: new SessionHistory(options.history),
    turnSinks: new Set(),
    usedTokens: 0,
    closed: false,
    codeMode,
    ownsCodeMode: !codeMode,
    ownRuntime: undefined,
    creatingCodeMode: undefined,
    planCache: createPlanCache(),
    hooked: {
      sessionId,
      hooks: options.hooks,
      cwd: options.cwd ?? process.cwd(),
      model: options.model?.name,
      permissionMode: options.approvalPolicy,
      transcriptPath: options.transcriptPath,
    },
    sessionStart: undefined,
    unwatchHooks: () => undefined,
    inbox: undefined,
    activeTurns: 0,
    wakeModel: undefined,
    backgroundRuntimes: [],
  };
  const background = backgroundSettings(options.background);
  if (background) (state as { inbox: BackgroundInbox }).inbox = new BackgroundInbox(background, (event) => {
      emitGlobal(state, event);
      scheduleWake(state);
    });
  state.unwatchHooks = forwardHookEvents(state.hooked, (event) => emitGlobal(state, event));
  void checkToolSetup(state);
  if (codeMode) forwardCellEvents(state, codeMode);
  const runStream = (run: RunTurnOptions) => streamTurn(state, run);
  return {
    id: sessionId,
    history: state.history.items,
    beginTurn: (turnOptions) => beginOwnTurn(state, turnOptions),
    async runTurn(run) {
      let result: TurnResult | undefined;
      for await (const event of runStream(run)) if (event.type === 'turn-end' && event.result) result = event.result;
      return result!;
    },
    streamTurn: runStream,
    on: (type, listener) => hub.on(type, listener),
    wake: (wakeOptions) => startWaking(state, wakeOptions),
    async shutdown() {
      if (state.closed) return;
      await shutdownSession(state);
      tracing?.close();
    },
  };
}
