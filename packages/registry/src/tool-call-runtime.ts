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
  type ToolName,
  type ToolOutput,
  type ToolOutputItem,
  type ToolPayload,
} from '@switchyard/protocol';
import { AbortedToolOutput, FailureToolOutput, abortedMessage } from '@switchyard/kit';
import { dispatchToolCall, type DispatchContext, type DispatchOutcome } from './dispatch';
import { ReadWriteGate, type GateRelease } from './read-write-gate';
import type { ToolRouter } from './tool-router';

/** Options of {@link ToolCallRuntime}. */
export interface ToolCallRuntimeOptions {
  /** The step's router (registry, hooks, events). */
  router: ToolRouter;
  /** The step every call of this runtime runs in. */
  step: StepContext;
  /** The turn's signal: aborting it cancels every call, running or later. */
  signal?: AbortSignal;
}

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
  private readonly gate = new ReadWriteGate();
  /** The gate of Code Mode calls: `exec` holds the turn gate while its cell's calls run. */
  private readonly nestedGate = new ReadWriteGate();
  /** The cancel function of every call still running. */
  private readonly active = new Set<(reason: unknown) => void>();
  private readonly onTurnAbort = () => this.abort(this.turnSignal?.reason);

  constructor(options: ToolCallRuntimeOptions) {
    this.router = options.router;
    this.step = options.step;
    this.turnSignal = options.signal;
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

  /** Builds the call of a wire item and dispatches it; `undefined` when the item is not a tool call. */
  async handleItem(item: ResponseItem): Promise<DispatchResult | undefined> {
    const call = this.router.buildToolCall(item);
    return call ? this.handle(call) : undefined;
  }

  /** Runs calls concurrently under the gate; results come back in call order, whatever order they finish in. */
  dispatchAll(calls: readonly ToolCall[]): Promise<DispatchResult[]> {
    return Promise.all(calls.map((call) => this.handle(call)));
  }

  /** Cancels every call of this runtime that is still running; later calls run normally. */
  abort(reason?: unknown): void {
    for (const cancel of [...this.active]) cancel(reason ?? new SwitchyardError('ABORTED', 'tool calls cancelled'));
  }

  private run(call: ToolCall, source: ToolCallSource, signals: readonly AbortSignal[], gate: ReadWriteGate | undefined): Promise<DispatchResult> {
    const router = this.router;
    const executor = router.registry.get(call.toolName);
    const parallel = executor?.supportsParallelToolCalls === true && executor.exposure !== 'hidden';
    const controller = new AbortController();
    const signal = controller.signal;
    const startedAt = performance.now();
    const contexts: string[] = [];
    let terminal: 'done' | 'aborted' | undefined;
    let release: GateRelease | undefined;
    let cancelled = false;
    const claim = (kind: 'done' | 'aborted') => {
      if (terminal) return false;
      terminal = kind;
      return true;
    };
    const context: DispatchContext = {
      call,
      source,
      executor,
      router,
      step: this.step,
      signal,
      cancelled: () => cancelled,
      tools: this.toolAccess(source, signal),
      claim: () => claim('done'),
      addContexts: (list) => {
        contexts.push(...list);
      },
    };

    // Already cancelled: answer aborted without running anything (an ungated call would otherwise
    // start its handler before the checks below).
    const preAborted = this.turnSignal?.aborted ? this.turnSignal : signals.find((caller) => caller.aborted);
    if (preAborted) {
      claim('aborted');
      const output = new AbortedToolOutput(abortedMessage(0, { style: executor?.abortStyle }));
      router.emit({ type: 'tool-call-aborted', callId: call.callId, toolName: displayName(call.toolName), source, durationMs: 0 });
      return Promise.resolve(this.result(call, call.payload, output, contexts, new SwitchyardError('ABORTED', output.message)));
    }

    return new Promise<DispatchResult>((resolve, reject) => {
      // Every cancellation goes through here (runtime.abort(), a caller's signal, an already-aborted
      // signal), so the call's own signal needs no listener of ours (the first listener on a fresh
      // AbortSignal costs microseconds in Node 20). The runtime settles the call first (claim, the
      // aborted event, the gate), then the signal tells the handler: the order a gated call always
      // had, since its handler could only listen after the runtime did.
      const cancel = (reason: unknown) => {
        if (cancelled) return;
        cancelled = true;
        try {
          onCancel();
        } finally {
          controller.abort(reason);
        }
      };
      const forward = (event: Event) => cancel((event.target as AbortSignal).reason);
      const cleanup = () => {
        this.active.delete(cancel);
        for (const caller of signals) caller.removeEventListener('abort', forward);
      };

      // A free slot is taken at once with no wrapper (the usual nested call: a parallel-safe tool
      // and nobody waiting); otherwise the call waits its turn at the gate. Handlers' own sibling
      // calls (`invocation.tools`) take no gate: their caller holds one.
      const mode = parallel ? 'shared' : 'exclusive';
      const immediate = gate?.tryAcquire(mode);
      let task: Promise<DispatchOutcome>;
      if (!gate) task = dispatchToolCall(context);
      else if (immediate) {
        release = immediate;
        task = dispatchToolCall(context);
        task.then(immediate, immediate);
      } else {
        task = (async () => {
          const granted = await gate.acquire(mode, signal);
          release = granted;
          try {
            return await dispatchToolCall(context);
          } finally {
            granted();
          }
        })();
      }

      task.then(
        (outcome) => {
          if (terminal === 'aborted') return;
          cleanup();
          resolve(this.result(call, outcome.payload, outcome.output, contexts, outcome.error));
        },
        (error: unknown) => {
          if (terminal === 'aborted') return;
          cleanup();
          if (isFatalError(error)) return reject(error);
          if (isSwitchyardError(error)) return resolve(this.result(call, call.payload, new FailureToolOutput(error.message), contexts, error));
          reject(new SwitchyardError('INTERNAL', `tool task failed to receive: ${errorMessage(error)}`, { cause: error }));
        },
      );

      const onCancel = () => {
        // Cancellation after completion keeps the real result.
        if (!claim('aborted')) return;
        const elapsedMs = performance.now() - startedAt;
        const output = new AbortedToolOutput(abortedMessage(elapsedMs, { style: executor?.abortStyle }));
        router.emit({ type: 'tool-call-aborted', callId: call.callId, toolName: displayName(call.toolName), source, durationMs: elapsedMs });
        const result = this.result(call, call.payload, output, contexts, new SwitchyardError('ABORTED', output.message));
        if (executor?.waitsForCancellation) {
          // Let the handler tear down (it keeps its gate slot meanwhile); its output is discarded.
          const settle = () => {
            cleanup();
            resolve(result);
          };
          task.then(settle, settle);
        } else {
          release?.();
          cleanup();
          resolve(result);
        }
      };

      this.active.add(cancel);
      for (const caller of signals) caller.addEventListener('abort', forward, { once: true });
      const turnSignal = this.turnSignal;
      if (turnSignal?.aborted) return cancel(turnSignal.reason);
      for (const caller of signals) {
        if (caller.aborted) return cancel(caller.reason);
      }
    });
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

  private result(call: ToolCall, payload: ToolPayload, output: ToolOutput, contexts: readonly string[], error?: SwitchyardError): DispatchResult {
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
      additionalContexts: [...contexts],
      ...(error ? { error } : {}),
    };
  }
}
