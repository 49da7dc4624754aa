import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import {
  DIRECT_SOURCE,
  SwitchyardError,
  displayName,
  errorMessage,
  isFatalError,
  isSwitchyardError,
  type ResponseItem,
  type StepContext,
  type ToolAccess,
  type ToolCall,
  type ToolCallSource,
  type ToolExecutor,
  type ToolName,
  type ToolOutput,
  type ToolOutputItem,
  type ToolPayload,
} from '@switchyard/protocol';
import { AbortedToolOutput, FailureToolOutput, abortedMessage, elapsedMs } from '@switchyard/kit/internal';
import { dispatchToolCall, type DispatchContext, type DispatchOutcome } from './dispatch';
import { ReadWriteGate, type GateRelease } from './read-write-gate';
import { budgetHookContexts } from './hook-context-budget';
import type { ToolRouter } from './tool-router';

/** Options of {@link ToolCallRuntime}. */
export interface ToolCallRuntimeOptions {
  /** The step's router (registry, hooks, events). */
  router: ToolRouter;
  /** The step every call of this runtime runs in. */
  step: StepContext;
  /** The turn's signal: aborting it cancels every call, running or later. */
  signal?: AbortSignal;
  /**
   * Admission control: most calls of this step running at once, for the model's direct calls and
   * (separately) Code Mode's nested calls. Calls past it wait their turn in order; nothing is
   * refused. Default {@link DEFAULT_MAX_CONCURRENT_TOOL_CALLS}.
   */
  maxConcurrentCalls?: number;
}

/**
 * Most calls of one step that run at once by default: a response of 200 `exec_command` calls runs
 * them 16 at a time, not 200 processes at once. The same cap applies to a step's Code Mode nested
 * calls (their own gate, so an `exec` holding a slot never waits on its cell's calls).
 */
export const DEFAULT_MAX_CONCURRENT_TOOL_CALLS = 16;

/** Options of {@link ToolCallRuntime.handle}. */
export interface HandleOptions {
  /**
   * Who started the call; default `direct`. Code Mode calls do not take the turn gate (their `exec`
   * holds it): they take the runtime's gate for nested calls, with the same rule (parallel-safe
   * tools share it, any other tool runs alone among the nested calls).
   */
  source?: ToolCallSource;
  /** Cancels this call only. */
  signal?: AbortSignal;
}

/** The answer to one call. */
export interface DispatchResult {
  readonly callId: string;
  readonly toolName: ToolName;
  /** The payload the handler saw (after any PreToolUse rewrite). */
  readonly payload: ToolPayload;
  /** What the model sees (post-hook feedback replaces the handler's output here). */
  readonly item: ToolOutputItem;
  /** `output.codeModeResult(payload)` is what Code Mode receives: the original typed result, even under feedback. */
  readonly output: ToolOutput;
  /** `false` for failures, `undefined` for aborted calls and hook feedback. */
  readonly success: boolean | undefined;
  /** Hook additional contexts of this call. */
  readonly additionalContexts: readonly string[];
  /** The model-visible error (`TOOL_NOT_FOUND`, `INVALID_INPUT`, `HOOK_BLOCKED`, `ABORTED`, …) when the call failed. */
  readonly error?: SwitchyardError;
}

/**
 * Runs one step's calls: a fair read/write gate per runtime (parallel-safe tools
 * share it, any other tool takes it alone), an `AbortSignal` per call, aborted outputs on
 * cancellation, and the error → output table. `handle` resolves with every model-visible outcome
 * and rejects only with a fatal `SwitchyardError` (`FATAL`, `INCOMPATIBLE_PAYLOAD`, `INTERNAL`).
 */
export class ToolCallRuntime {
  readonly router: ToolRouter;
  readonly step: StepContext;
  private readonly turnSignal: AbortSignal | undefined;
  private readonly gate: ReadWriteGate;
  /** The gate of Code Mode calls: `exec` holds the turn gate while its cell's calls run. */
  private readonly nestedGate: ReadWriteGate;
  /** Every call still running. */
  private readonly active = new Set<CallRun>();
  /** `call_id`s of the wire items this runtime (this step's response) has dispatched. */
  private readonly itemCallIds = new Set<string>();
  private readonly onTurnAbort = () => this.abort(this.turnSignal?.reason);

  constructor(options: ToolCallRuntimeOptions) {
    this.router = options.router;
    this.step = options.step;
    this.turnSignal = options.signal;
    const limit = options.maxConcurrentCalls ?? DEFAULT_MAX_CONCURRENT_TOOL_CALLS;
    if (limit !== Infinity && !(Number.isInteger(limit) && limit >= 1)) {
      throw new SwitchyardError('CONFIG', `ToolCallRuntime: option \`maxConcurrentCalls\` must be an integer of at least 1 (or Infinity); got ${String(limit)}`);
    }
    this.gate = new ReadWriteGate(limit);
    this.nestedGate = new ReadWriteGate(limit);
    options.signal?.addEventListener('abort', this.onTurnAbort, { once: true });
  }

  /**
   * Stops listening to the turn's signal (a long-lived host signal would otherwise keep every
   * step's runtime alive). Calls already running are unaffected; call it once the step is over.
   */
  dispose(): void {
    this.turnSignal?.removeEventListener('abort', this.onTurnAbort);
  }

  /** Calls of this runtime still running (direct and nested); 0 once the step's work is done. */
  get activeCalls(): number {
    return this.active.size;
  }

  /** Dispatches one call under the gate. Resolves with its answer; rejects only with a fatal error. */
  handle(call: ToolCall, options: HandleOptions = {}): Promise<DispatchResult> {
    const source = options.source ?? DIRECT_SOURCE;
    return this.run(call, source, options.signal ? [options.signal] : [], source.kind === 'code-mode' ? this.nestedGate : this.gate);
  }

  /**
   * Builds the call of a wire item and dispatches it; `undefined` when the item is not a tool call.
   * A runtime serves one step, so one model response: a call whose `call_id` an earlier item of
   * this runtime already used is refused without running (see {@link duplicateCallMessage}) — the
   * first call with that id keeps the one real output.
   */
  async handleItem(item: ResponseItem): Promise<DispatchResult | undefined> {
    const call = this.router.buildToolCall(item);
    if (!call) return undefined;
    if (this.itemCallIds.has(call.callId)) return duplicateResult(call);
    this.itemCallIds.add(call.callId);
    return this.handle(call);
  }

  /** Runs calls concurrently under the gate; results come back in call order, whatever order they finish in. */
  dispatchAll(calls: readonly ToolCall[]): Promise<DispatchResult[]> {
    return Promise.all(calls.map((call) => this.handle(call)));
  }

  /** Cancels every call of this runtime that is still running; later calls run normally. */
  abort(reason?: unknown): void {
    for (const run of [...this.active]) run.cancel(reason ?? new SwitchyardError('ABORTED', 'tool calls cancelled'));
  }

  private run(call: ToolCall, source: ToolCallSource, signals: readonly AbortSignal[], gate: ReadWriteGate | undefined): Promise<DispatchResult> {
    const executor = this.router.registry.get(call.toolName);
    const run = new CallRun({
      call,
      source,
      executor,
      router: this.router,
      step: this.step,
      signals,
      turnSignal: this.turnSignal,
      active: this.active,
      tools: (signal) => this.toolAccess(source, signal),
    });
    // Already cancelled: answer aborted without running anything (an ungated call would otherwise
    // start its handler before the checks below).
    const preAborted = this.turnSignal?.aborted ? this.turnSignal : signals.find((caller) => caller.aborted);
    if (preAborted) {
      run.claim('aborted');
      return Promise.resolve(run.abortedResult(0));
    }
    return new Promise<DispatchResult>((resolve, reject) => run.start(gate, resolve, reject));
  }

  /** Lets a handler call sibling tools through this runtime (hooks and all), outside the gate its own call holds. */
  private toolAccess(source: ToolCallSource, parentSignal: AbortSignal): ToolAccess {
    let unlimited = false;
    return {
      has: (name) => this.router.registry.has(name),
      call: async (name, payload, options) => {
        if (!unlimited) {
          // Each nested call listens on the parent's signal; many nested calls are normal, not a leak.
          setMaxListeners(0, parentSignal);
          unlimited = true;
        }
        const call: ToolCall = { toolName: name, callId: `call-${randomUUID()}`, payload };
        const signals = options?.signal ? [parentSignal, options.signal] : [parentSignal];
        return (await this.run(call, source, signals, undefined)).output;
      },
    };
  }
}


/** What one call's run needs from the runtime that owns it. */
interface CallRunOptions {
  readonly call: ToolCall;
  readonly source: ToolCallSource;
  readonly executor: ToolExecutor | undefined;
  readonly router: ToolRouter;
  readonly step: StepContext;
  /** The callers' signals (a Code Mode cell's, a parent call's); aborting any cancels the call. */
  readonly signals: readonly AbortSignal[];
  readonly turnSignal: AbortSignal | undefined;
  /** The runtime's running calls: the run is in it from its start until it settles. */
  readonly active: Set<CallRun>;
  /** The sibling-tool access of a handler whose call has `signal`. */
  readonly tools: (signal: AbortSignal) => ToolAccess;
}

/**
 * One call from start to its single answer: its gate slot, its `AbortSignal`, and the race between
 * the handler finishing and a cancellation (whichever claims the call first decides its answer).
 */
class CallRun {
  private readonly options: CallRunOptions;
  private readonly controller = new AbortController();
  private readonly startedAt = performance.now();
  private readonly contexts: string[] = [];
  private readonly context: DispatchContext;
  private terminal: 'done' | 'aborted' | undefined;
  private release: GateRelease | undefined;
  private cancelled = false;
  // Set by start(), before anything can cancel or settle the run.
  private task!: Promise<DispatchOutcome>;
  private resolve!: (result: DispatchResult) => void;
  private reject!: (error: unknown) => void;
  private readonly forward = (event: Event) => this.cancel((event.target as AbortSignal).reason);

  constructor(options: CallRunOptions) {
    this.options = options;
    const signal = this.controller.signal;
    this.context = {
      call: options.call,
      source: options.source,
      executor: options.executor,
      router: options.router,
      step: options.step,
      signal,
      cancelled: () => this.cancelled,
      tools: options.tools(signal),
      claim: () => this.claim('done'),
      addContexts: (list) => {
        this.contexts.push(...list);
      },
    };
  }

  /** Takes the call's terminal outcome; `false` when the other side took it first. */
  claim(kind: 'done' | 'aborted'): boolean {
    if (this.terminal) return false;
    this.terminal = kind;
    return true;
  }

  /** The aborted answer (and its `tool-call-aborted` event) of a call cancelled after `elapsedMs`. */
  abortedResult(elapsedMs: number): DispatchResult {
    const { call, executor, router, source } = this.options;
    const output = new AbortedToolOutput(abortedMessage(elapsedMs, { style: executor?.abortStyle }));
    router.emit({ type: 'tool-call-aborted', callId: call.callId, toolName: displayName(call.toolName), source, durationMs: elapsedMs });
    return callResult(call, call.payload, output, this.contexts, new SwitchyardError('ABORTED', output.message));
  }

  /** Dispatches the call (under `gate` when given) and listens for its cancellation. */
  start(gate: ReadWriteGate | undefined, resolve: (result: DispatchResult) => void, reject: (error: unknown) => void): void {
    this.resolve = resolve;
    this.reject = reject;
    const task = this.dispatch(gate);
    this.task = task;
    task.then(
      (outcome) => this.finished(outcome),
      (error: unknown) => this.failed(error),
    );
    const { signals, turnSignal, active } = this.options;
    active.add(this);
    for (const caller of signals) caller.addEventListener('abort', this.forward, { once: true });
    if (turnSignal?.aborted) return this.cancel(turnSignal.reason);
    for (const caller of signals) {
      if (caller.aborted) return this.cancel(caller.reason);
    }
  }

  /**
   * Every cancellation goes through here (runtime.abort(), a caller's signal, an already-aborted
   * signal), so the call's own signal needs no listener of ours (the first listener on a fresh
   * AbortSignal costs microseconds in Node 20). The runtime settles the call first (claim, the
   * aborted event, the gate), then the signal tells the handler: the order a gated call always
   * had, since its handler could only listen after the runtime did.
   */
  cancel(reason: unknown): void {
    if (this.cancelled) return;
    this.cancelled = true;
    try {
      this.onCancel();
    } finally {
      this.controller.abort(reason);
    }
  }

  /**
   * A free slot is taken at once with no wrapper (the usual nested call: a parallel-safe tool and
   * nobody waiting); otherwise the call waits its turn at the gate. Handlers' own sibling calls
   * (`invocation.tools`) take no gate: their caller holds one.
   */
  private dispatch(gate: ReadWriteGate | undefined): Promise<DispatchOutcome> {
    const executor = this.options.executor;
    const parallel = executor?.supportsParallelToolCalls === true && executor.exposure !== 'hidden';
    const mode = parallel ? 'shared' : 'exclusive';
    const immediate = gate?.tryAcquire(mode);
    if (!gate) return dispatchToolCall(this.context);
    if (!immediate) return this.dispatchWhenGranted(gate, mode);
    this.release = immediate;
    const task = dispatchToolCall(this.context);
    task.then(immediate, immediate);
    return task;
  }

  private async dispatchWhenGranted(gate: ReadWriteGate, mode: 'shared' | 'exclusive'): Promise<DispatchOutcome> {
    const granted = await gate.acquire(mode, this.controller.signal);
    this.release = granted;
    try {
      return await dispatchToolCall(this.context);
    } finally {
      granted();
    }
  }

  private finished(outcome: DispatchOutcome): void {
    if (this.terminal === 'aborted') return;
    this.cleanup();
    this.resolve(callResult(this.options.call, outcome.payload, outcome.output, this.contexts, outcome.error));
  }

  private failed(error: unknown): void {
    if (this.terminal === 'aborted') return;
    this.cleanup();
    if (isFatalError(error)) return this.reject(error);
    const call = this.options.call;
    if (isSwitchyardError(error)) return this.resolve(callResult(call, call.payload, new FailureToolOutput(error.message), this.contexts, error));
    this.reject(new SwitchyardError('INTERNAL', `tool task failed to receive: ${errorMessage(error)}`, { cause: error }));
  }

  private onCancel(): void {
    // Cancellation after completion keeps the real result.
    if (!this.claim('aborted')) return;
    const result = this.abortedResult(elapsedMs(this.startedAt));
    if (this.options.executor?.waitsForCancellation) {
      // Let the handler tear down (it keeps its gate slot meanwhile); its output is discarded.
      const settle = () => this.settleAborted(result);
      this.task.then(settle, settle);
    } else {
      this.release?.();
      this.settleAborted(result);
    }
  }

  private settleAborted(result: DispatchResult): void {
    this.cleanup();
    this.resolve(result);
  }

  private cleanup(): void {
    this.options.active.delete(this);
    for (const caller of this.options.signals) caller.removeEventListener('abort', this.forward);
  }
}

/** The model-visible failure of a second (or later) call with an id its response already used. */
export function duplicateCallMessage(callId: string): string {
  return `duplicate call_id ${JSON.stringify(callId)}: an earlier call in this response already uses it, so this call was not run; give every call its own call_id`;
}

/** The answer of a duplicate call: a failure carrying the id, no events, nothing run. */
function duplicateResult(call: ToolCall): DispatchResult {
  const message = duplicateCallMessage(call.callId);
  return callResult(call, call.payload, new FailureToolOutput(message), [], new SwitchyardError('RESPOND_TO_MODEL', message));
}

/** The answer of a call; an output that cannot become a wire item becomes a model-visible failure. */
function callResult(call: ToolCall, payload: ToolPayload, output: ToolOutput, contexts: readonly string[], error?: SwitchyardError): DispatchResult {
  let item: ToolOutputItem;
  try {
    item = output.toResponseItem(call.callId, payload);
  } catch (cause) {
    // A broken output object is the tool's bug: answer the model instead of crashing the turn.
    const message = `tool ${displayName(call.toolName)} returned an output that cannot be sent: ${errorMessage(cause)}`;
    error = new SwitchyardError('RESPOND_TO_MODEL', message, { cause });
    output = new FailureToolOutput(message);
    item = output.toResponseItem(call.callId, payload);
  }
  return {
    callId: call.callId,
    toolName: call.toolName,
    payload,
    item,
    output,
    success: output.success,
    // hook contexts are model input: they share the call's output budget
    additionalContexts: budgetHookContexts(contexts, item),
    ...(error ? { error } : {}),
  };
}
