import type {
  ApprovalPolicy,
  ApprovalProvider,
  HookRunner,
  HostedToolSpec,
  ModelClient,
  SessionStore,
  ProviderCapabilities,
  ResponseItem,
  SandboxMode,
  StepContext,
  TimeProvider,
  ToolBudget,
  ToolDiscoveryMode,
  ToolExecutor,
  ToolMode,
  ToolOutputItem,
  WireTool,
} from '@switchyard/protocol';
import type { BackoffOptions } from '@switchyard/kit/internal';
import type { ToolPlan, ToolSearchSettings } from '@switchyard/planner';
import type { DispatchResult, ToolCallRuntime, ToolRouter } from '@switchyard/registry';
import type { CodeMode } from '@switchyard/code-mode';
import type { SessionEvent, SessionEventListener, SessionEventType, TurnEvent, TurnResult } from './session-events';
import type { SessionTracer } from './tracing';
import type { SessionBackgroundOptions } from './background';
import type { IfBusy } from './turn-gate';
import type { SessionStoreOptions } from './session-persistence';
import type { SessionExport } from './durable-state';

// The public types of a session: its options, its turns and steps, and the facade itself.

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
  /**
   * Who the session belongs to (a user, an organization). Code Mode opens the session's cells with
   * it (`runtime.openSession(host, { tenant })`: sessions of one tenant may share a worker process,
   * sessions of different tenants are placed by the runtime's tenant rules), each step carries it
   * (`StepContext.tenant`: exec tools admit commands per tenant), and tracing spans carry it as
   * `switchyard.tenant`. Default: none — the session is a tenant of its own.
   */
  tenant?: string;
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
   * `{ tracer, providerName?, agentName?, recordContent? }`. Spans for the turn, each model request, tool call,
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
  /**
   * How the model hears of the tools a Code Mode cell found with `tools.tool_search` (from the next
   * step on). `'tools'` (default): they join the plan of later steps (described in the `exec`
   * description in `code-mode-only`, visible in `code-mode`), so `step.tools` change after a
   * discovery. `'conversation'`: `step.tools` stay byte-identical (the cached prompt prefix
   * survives) and each search's new tools arrive as one developer message
   * (`<tools_found>…</tools_found>`) after the step's outputs. No effect in `direct` mode, where the
   * model's own `tool_search` answers with `tool_search_output` items.
   */
  toolDiscovery?: ToolDiscoveryMode;
  /**
   * How `tool_search` ranks and how many tools it returns, for the model's searches and a cell's:
   * `search` (your own ranking, e.g. embeddings; exact names still come first) and `limit` (the
   * default and the most one search returns). Default: BM25 over names and descriptions, 8.
   */
  toolSearch?: ToolSearchSettings;
  /**
   * Where the session lives (`createSqliteStore(path)`, `createNatsSessionStore(…)`, or your own
   * `SessionStore`): with `sessionId`, the session is loaded from it (history, stored values,
   * pending completions, open cells) and every turn is committed to it; the session holds the
   * store's lease for that id meanwhile (see `storeOptions`). A session id the store does not hold
   * starts new (seeded by `history`, when given). Every turn waits for `session.ready`.
   */
  store?: SessionStore;
  /** The lease and the budgets of a session with a `store`. */
  storeOptions?: SessionStoreOptions;
  /**
   * A document `session.export()` returned (possibly in another process): the session continues
   * from it (its `sessionId` unless `sessionId` is given). A malformed one is a `CONFIG` error, a
   * newer version `STORE_VERSION`. With a `store` that already holds the session, the store wins.
   */
  restore?: SessionExport;
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
  /**
   * When another turn of the session runs (or waits): `'wait'` (default) queues this one behind
   * it, in the order turns were asked for; `'fail'` rejects at once with `BUSY`, recording nothing.
   */
  ifBusy?: IfBusy;
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
  /** The `tenant` option, when given. */
  readonly tenant?: string;
  /**
   * The conversation so far (every turn's items), JSON-serializable; pass it to
   * `createSession({ history })` to continue. Valid after any turn: every call item has exactly
   * one output with its `call_id`.
   */
  readonly history: readonly ResponseItem[];
  /**
   * Begins a turn the host drives itself (`step()`, `dispatch`, `end()`); the host orders its own
   * turns. While a `runTurn` / `streamTurn` / wake turn runs or waits this throws `BUSY` (it is
   * synchronous: it cannot wait), and such a turn asked meanwhile waits until this one's `end()`.
   */
  beginTurn(options?: TurnOptions): Turn;
  /**
   * Runs a turn to its end: samples, runs tool calls, follows up until the model answers without
   * calls. Resolves with the turn's result; rejects with a `SwitchyardError` (`ABORTED` when
   * `signal` aborted it, `MODEL_ERROR`, `FATAL`, `CONFIG`, `BUSY` with `ifBusy: 'fail'`, …). One
   * turn at a time: a turn asked for while another runs waits for it (see `ifBusy`). Built on
   * {@link Session.streamTurn}.
   */
  runTurn(options: RunTurnOptions): Promise<TurnResult>;
  /**
   * Runs a turn and yields its events as they happen: `turn-start`, `text-delta`, `model-item`,
   * `tool-call-start`, `tool-call-end`, `tool-output`, `cell-start`, `cell-end`, … and last
   * `turn-end` with the `result` (or the `error`, which the iteration then throws). The turn
   * starts at the first `next()`; leaving the loop early aborts it.
   */
  streamTurn(options: RunTurnOptions): AsyncIterable<TurnEvent>;
  /** Subscribes to one event type; returns the unsubscribe function. A listener that throws is reported (`SWITCHYARD_LISTENER`) and never reaches the turn. */
  on<T extends SessionEventType>(type: T, listener: SessionEventListener<T>): () => void;
  /**
   * Subscribes to every event the session emits — every type `on` offers, and types a newer
   * package adds — in the order they happen, after the listeners of that type; returns the
   * unsubscribe function. Forward with `eventToJSON(event)` for a bounded, credential-free form.
   */
  onEvent(listener: (event: SessionEvent) => void): () => void;
  /**
   * Opt-in: from now on, when background work completes while no turn runs (or after the turn
   * that was running ended without taking it), the session runs a turn itself with `model` and no
   * new input, so the model reads the completion and goes on. Nothing completes, nothing is sent.
   * Returns the function that stops it. Needs the `background` option (else a `CONFIG` error).
   */
  wake(options: WakeOptions): () => void;
  /**
   * Resolves once the session is loaded (with `store` or `restore`; at once otherwise); rejects with
   * the load's error (`LEASE_HELD`, `STORE_CORRUPT`, `STORE_VERSION`, `STORE_FAILED`), which every
   * turn then rejects with too.
   */
  readonly ready: Promise<void>;
  /**
   * The session's whole durable state as one versioned JSON document (`format:
   * "switchyard.session"`): history, Code Mode's stored values and open cells' journals, pending
   * completions, running work. `createSession({ restore })` continues from it.
   */
  export(): SessionExport;
  /**
   * Terminates every cell (within 1 s) and refuses new turns. With a `store`, the session is
   * committed first (open cells' journals included, so another process resumes them) and its lease
   * released.
   */
  shutdown(): Promise<void>;
}
