import { randomUUID } from 'node:crypto';
import EventEmitter from 'eventemitter3';
import {
  SwitchyardError,
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
  type ModelUsage,
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
import { planTools, resolveToolBudget, type ToolPlan } from '@switchyard/planner';
import { ToolCallRuntime, ToolRegistry, createToolRouter, type DispatchResult, type ToolRouter } from '@switchyard/registry';
import { createCodeMode, type CodeMode } from '@switchyard/broker';
import type { SessionEvent, SessionEventListener, SessionEventType } from './session-events';
import { traceSession, type SessionTracer } from './tracing';

export interface SessionOptions {
  /** `direct` (default), `code-mode` or `code-mode-only`. */
  toolMode?: ToolMode;
  /** Executors in the host's order, or a function read at every step (e.g. MCP tools whose list changes). */
  tools: readonly ToolExecutor[] | (() => readonly ToolExecutor[]);
  /** Provider-executed specs: visible, never registered. */
  hostedSpecs?: readonly HostedToolSpec[];
  /** What the provider accepts. Default: namespaces yes, tool_search no. */
  provider?: ProviderCapabilities;
  /** PreToolUse / PostToolUse policy (e.g. `createHookEngine(...)`). */
  hooks?: HookRunner;
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
  /** Session-level retries of a retryable model error, reusing the step's plan. Default 2. */
  maxModelRetries?: number;
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
   * OpenTelemetry tracing: a `Tracer` from `@opentelemetry/api` (an optional peer), or
   * `{ tracer, providerName?, agentName? }`. Spans for the turn, each model request, tool call,
   * hook run and Code Mode cell, after the GenAI semantic conventions. Without it nothing is traced.
   */
  tracer?: SessionTracer;
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
  /** Outputs injected by `notify()` since the last call, plus hook context as developer messages. */
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

export interface TurnResult {
  /** Items this turn added to the history (input, model items, outputs, injections). */
  readonly items: readonly ResponseItem[];
  /** Text of the model's last assistant message, if any. */
  readonly finalText?: string;
  readonly steps: number;
}

export interface Session {
  readonly id: string;
  /** The conversation so far (every turn's items). */
  readonly history: readonly ResponseItem[];
  beginTurn(options?: TurnOptions): Turn;
  runTurn(options: RunTurnOptions): Promise<TurnResult>;
  on<T extends SessionEventType>(type: T, listener: SessionEventListener<T>): () => void;
  /** Terminates every cell (within 1 s) and refuses new turns. */
  shutdown(): Promise<void>;
}

const TOOL_EVENTS: readonly SwitchyardEventType[] = ['tool-call-start', 'tool-call-end', 'tool-call-blocked', 'tool-call-aborted', 'tool-notification'];

function hookContextMessage(text: string): MessageItem {
  return { type: 'message', role: 'developer', content: `<hook_context>${text}</hook_context>` };
}

/** The host facade: plan → router once per step, the sampling loop, ordered drain, notify injection. */
export function createSession(options: SessionOptions): Session {
  resolveToolBudget(options.toolBudget, 'toolBudget');
  const sessionId = options.sessionId ?? randomUUID();
  const emitter = new EventEmitter();
  const emit = (event: SessionEvent) => emitter.emit(event.type, event);
  const on = <T extends SessionEventType>(type: T, listener: SessionEventListener<T>) => {
    emitter.on(type, listener as (...args: unknown[]) => void);
    return () => {
      emitter.off(type, listener as (...args: unknown[]) => void);
    };
  };
  const tracing = options.tracer ? traceSession(options.tracer, { on, sessionId, hooks: options.hooks, model: options.model?.name }) : undefined;
  const history: ResponseItem[] = [];
  let usedTokens = 0;
  let closed = false;
  let codeMode: CodeMode | undefined = options.codeMode && 'executors' in options.codeMode ? (options.codeMode as CodeMode) : undefined;
  const ownsCodeMode = !codeMode;
  /** The runtime this session created (its worker processes end with the session). */
  let ownRuntime: CodeModeRuntime | undefined;
  const forwardCellEvents = (mode: CodeMode) => mode.onCellEvent?.((event) => emit(event));
  if (codeMode) forwardCellEvents(codeMode);
  const toolMode = options.toolMode ?? 'direct';

  let creatingCodeMode: Promise<CodeMode> | undefined;
  async function codeModeFor(): Promise<CodeModeContributor | undefined> {
    if (toolMode === 'direct') return undefined;
    if (codeMode) return codeMode;
    // Created once, even when two steps are planned at the same time.
    creatingCodeMode ??= import('@switchyard/code-mode-runtime').then(({ createCodeModeRuntime }) => {
      const settings = (options.codeMode ?? {}) as { runtimeOptions?: Record<string, unknown>; maxOutputTokensCap?: number };
      ownRuntime = createCodeModeRuntime(settings.runtimeOptions as never);
      const created = createCodeMode({ runtime: ownRuntime, maxOutputTokensCap: settings.maxOutputTokensCap });
      forwardCellEvents(created);
      codeMode = created;
      return created;
    });
    return creatingCodeMode;
  }

  const currentExecutors = () => (typeof options.tools === 'function' ? options.tools() : options.tools);
  /** Calls each distinct lifecycle function of the executors once; a failing one never breaks the session. */
  async function callLifecycle(pick: (executor: ToolExecutor) => ((...args: never[]) => unknown) | undefined, ...args: unknown[]) {
    const seen = new Set<unknown>();
    const calls: Promise<unknown>[] = [];
    for (const executor of currentExecutors()) {
      const fn = pick(executor) as ((...a: unknown[]) => unknown) | undefined;
      if (typeof fn !== 'function' || seen.has(fn)) continue;
      seen.add(fn);
      calls.push(Promise.resolve().then(() => fn(...args)).catch(() => undefined));
    }
    await Promise.all(calls);
  }

  function beginTurn(turnOptions: TurnOptions = {}): Turn {
    if (closed) throw new SwitchyardError('SHUTTING_DOWN', 'session is shut down');
    const id = randomUUID();
    const controller = new AbortController();
    const forward = () => controller.abort(turnOptions.signal?.reason);
    if (turnOptions.signal?.aborted) forward();
    else turnOptions.signal?.addEventListener('abort', forward, { once: true });
    const turnState = new Map<string | symbol, unknown>();
    const pendingContexts: string[] = [];
    let stepIndex = 0;
    let detach: (() => void) | undefined;
    const runtimes: ToolCallRuntime[] = [];
    emit({ type: 'turn-start', turnId: id });

    const turn: Turn = {
      id,
      signal: controller.signal,
      async step() {
        stepIndex++;
        const context: StepContext = {
          sessionId,
          turnId: id,
          stepIndex,
          cwd: options.cwd ?? process.cwd(),
          toolMode,
          provider: { namespaceTools: true, ...options.provider },
          model: options.model?.name,
          contextWindow: { windowTokens: options.model?.contextWindow ?? null, usedTokens, autoCompactTokens: options.model?.autoCompactTokens },
          time: options.time ?? systemTimeProvider,
          approvalPolicy: options.approvalPolicy,
          sandboxMode: options.sandboxMode,
          approvals: options.approvals,
          turnState,
        };
        const executors = currentExecutors();
        const plan = planTools(context, {
          executors,
          hostedSpecs: options.hostedSpecs,
          codeMode: await codeModeFor(),
          excludedCodeModeNamespaces: options.excludedCodeModeNamespaces,
          budget: options.toolBudget,
        });
        for (const warning of plan.warnings) emit(warning);
        const registry = ToolRegistry.from(plan.executors);
        const router = createToolRouter({ specs: plan.modelVisibleSpecs, registry, hooks: options.hooks });
        for (const type of TOOL_EVENTS) router.on(type, (event) => emit(event as SessionEvent));
        // Earlier steps' runtimes with nothing running are released here: a long turn with many
        // steps (`mcp serve` makes one per MCP call) would otherwise keep every router and plan,
        // and one turn-signal listener per step.
        for (let index = runtimes.length - 1; index >= 0; index--) {
          if (runtimes[index].activeCalls > 0) continue;
          runtimes[index].dispose();
          runtimes.splice(index, 1);
        }
        const runtime = new ToolCallRuntime({ router, step: context, signal: controller.signal });
        runtimes.push(runtime);
        const handleItem = async (item: ResponseItem) => {
          const result = await runtime.handleItem(item);
          if (result) {
            pendingContexts.push(...result.additionalContexts);
            emit({ type: 'tool-output', turnId: id, item: result.item });
          }
          return result;
        };
        const dispatch = async (item: ResponseItem) => {
          const result = await handleItem(item);
          if (!result) throw new SwitchyardError('CONFIG', `not a tool call: ${String((item as { type?: unknown }).type)}`);
          return result.item;
        };
        detach?.();
        detach = codeMode ? codeMode.attachWorker(sessionId, runtime) : undefined;
        const step: Step = {
          context,
          plan,
          tools: plan.tools,
          router,
          runtime,
          dispatch,
          dispatchAll: (items) => Promise.all(items.map(dispatch)),
          handleItem,
        };
        emit({ type: 'step-start', turnId: id, stepIndex, plan });
        return step;
      },
      takeInjected() {
        const injected: ResponseItem[] = codeMode ? codeMode.takeInjected(sessionId) : [];
        const contexts = pendingContexts.splice(0, pendingContexts.length);
        return [...injected, ...contexts.map(hookContextMessage)];
      },
      abort(reason?: unknown) {
        controller.abort(reason);
      },
      async end() {
        detach?.();
        detach = undefined;
        for (const runtime of runtimes.splice(0)) runtime.dispose();
        turnOptions.signal?.removeEventListener('abort', forward);
        await callLifecycle((executor) => executor.onTurnEnd, id);
        // a failed or aborted turn ends with its reason (runTurn aborts a failing turn with the error)
        emit({ type: 'turn-end', turnId: id, ...(controller.signal.aborted ? { error: controller.signal.reason } : {}) });
      },
    };
    return turn;
  }

  async function runTurn(run: RunTurnOptions): Promise<TurnResult> {
    const turn = beginTurn({ signal: run.signal });
    const start = history.length;
    const input: readonly ResponseItem[] = typeof run.input === 'string' ? [{ type: 'message', role: 'user', content: run.input }] : run.input;
    history.push(...input);
    const maxSteps = options.maxSteps ?? 32;
    const maxRetries = options.maxModelRetries ?? 2;
    const parallelToolCalls = run.model.capabilities?.parallelToolCalls ?? true;
    let finalText: string | undefined;
    let steps = 0;
    try {
      for (;;) {
        if (steps >= maxSteps) throw new SwitchyardError('FATAL', `turn exceeded ${maxSteps} steps`);
        const step = await turn.step();
        steps++;
        let calls: Array<Promise<DispatchResult | undefined>> = [];
        let items: ResponseItem[] = [];
        for (let attempt = 1; ; attempt++) {
          history.push(...turn.takeInjected());
          const request: ModelRequest = {
            tools: step.tools,
            input: [...history],
            parallelToolCalls,
            instructions: options.instructions,
            signal: turn.signal,
          };
          const stepIndex = step.context.stepIndex;
          emit({ type: 'model-request', turnId: turn.id, stepIndex, attempt, plan: step.plan, request, model: options.model?.name ?? run.model.capabilities?.name });
          calls = [];
          items = [];
          let completed: { usage?: ModelUsage; responseId?: string } | undefined;
          try {
            for await (const event of run.model.stream(request)) {
              if (event.type === 'output-item') {
                items.push(event.item);
                emit({ type: 'model-item', turnId: turn.id, item: event.item });
                // Each call starts as soon as its item arrives; outputs are recorded in arrival order.
                if (isToolCallItem(event.item)) {
                  const pending = step.handleItem(event.item);
                  pending.catch(() => undefined);
                  calls.push(pending);
                }
              } else if (event.type === 'completed') {
                completed = event;
                if (event.usage) usedTokens = event.usage.totalTokens;
              }
            }
            emit({ type: 'model-response', turnId: turn.id, stepIndex, attempt, usage: completed?.usage, responseId: completed?.responseId });
            break;
          } catch (error) {
            emit({ type: 'model-response', turnId: turn.id, stepIndex, attempt, error });
            // `retryable` is read structurally: a client may bundle its own copy of protocol
            const retryable = (error as { retryable?: unknown } | undefined)?.retryable === true;
            if (!retryable || attempt > maxRetries || turn.signal.aborted || calls.length > 0) throw error;
          }
        }
        history.push(...items);
        for (const item of items) {
          if (item.type === 'message' && (item as MessageItem).role === 'assistant') {
            const content = (item as MessageItem).content;
            finalText = typeof content === 'string' ? content : content.map((part) => ('text' in part ? part.text : '')).join('');
          }
        }
        const results = await Promise.all(calls);
        // outputs in call order; hook contexts and notify() items follow with the next request
        for (const result of results) if (result) history.push(result.item);
        const toolCalls = results.filter(Boolean).length;
        if (toolCalls === 0) {
          history.push(...turn.takeInjected());
          break;
        }
      }
      await turn.end();
      return { items: history.slice(start), finalText, steps };
    } catch (error) {
      turn.abort(error);
      await turn.end();
      if (isSwitchyardError(error)) throw error;
      throw new SwitchyardError('FATAL', `turn failed: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    }
  }

  return {
    id: sessionId,
    history,
    beginTurn,
    runTurn,
    on,
    async shutdown() {
      if (closed) return;
      closed = true;
      await callLifecycle((executor) => executor.dispose);
      if (creatingCodeMode) await creatingCodeMode.catch(() => undefined);
      if (codeMode && ownsCodeMode) {
        await codeMode.shutdown();
        await ownRuntime?.shutdown();
      }
      else if (codeMode) await codeMode.service.closeSession(sessionId);
      tracing?.close();
    },
  };
}

