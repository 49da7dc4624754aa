import { randomUUID } from 'node:crypto';
import { SwitchyardError, errorMessage, isSwitchyardError, type InterruptReason, type ResponseItem } from '@switchyard/protocol';
import type { TurnResult, SessionEvent } from './session-events';
import { callLifecycle, type SessionState } from './session-state';
import { backgroundWorker, buildStep, injectedItems, type TurnScope } from './step';
import { busyError } from './turn-gate';
import { runInterrupt } from './session-hooks';
import type { Turn, TurnOptions } from './session-types';

// A turn: its scope, its injected items and how it ends.

/** The message closing a call a failed turn left open: what the model reads in its output. */
export function closingMessage(error: SwitchyardError): string {
  return error.code === 'ABORTED' ? 'aborted by user' : `the turn failed before this call finished: ${error.message}`;
}

/** The error a failed turn rejects with: `ABORTED` once its signal aborted, a `SwitchyardError` as is, else `FATAL`. */
export function turnError(error: unknown, signal: AbortSignal): SwitchyardError {
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
export interface OwnTurn extends Turn {
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
  /** True for a turn the session's loop runs (it ends itself once aborted); false for one the host drives (`beginTurn`). */
  endsItself: boolean;
  /**
   * Interrupts the turn with `reason` (at shutdown); a turn the host drives is ended here. Resolves
   * once it has ended (its Interrupt hooks and `turn-end` included).
   */
  stop(reason: SwitchyardError): Promise<void>;
  /**
   * Aborts the turn from outside (the host's signal, `abort()`, a stream left early, shutdown) and
   * runs its Interrupt hooks, once: a turn already aborted or ended is left as it is. Resolves when
   * the hooks have run; `finish` waits for them too, so `turn-end` comes after them.
   */
  interrupt(reason: InterruptReason, cause?: unknown): Promise<void>;
  /** Aborts the turn's work after a failure of its own (no Interrupt: nobody interrupted it). */
  cancel(cause: unknown): void;
  finish(outcome: { result?: TurnResult; error?: unknown }): Promise<void>;
}

/** The text of an abort reason for Interrupt hooks (`undefined` for none or a bare AbortError). */
function abortDetail(cause: unknown): string | undefined {
  if (cause === undefined || (cause as Error)?.name === 'AbortError') return undefined;
  return errorMessage(cause);
}

/**
 * Begins a turn. `entered`: a turn of the loop that already holds the session's turn gate;
 * otherwise a host-driven turn (`beginTurn()`), refused with `BUSY` while a loop turn runs or waits.
 * `signalReason` names what aborting `turnOptions.signal` means for Interrupt hooks
 * (`signal`, the host's own, unless the caller knows better: the turn of a stream left early).
 */
// long-function: one turn's lifecycle in order (the gate, hooks, events, the end with its store commit); splitting it would scatter that order
export function beginOwnTurn(
  state: SessionState,
  turnOptions: TurnOptions = {},
  sink?: (event: SessionEvent) => void,
  entered = false,
  signalReason: () => InterruptReason = () => 'signal',
): OwnTurn {
  if (state.closed) {
    if (entered) state.turnGate.leave();
    throw new SwitchyardError('SHUTTING_DOWN', 'session is shut down');
  }
  if (!entered && !state.loaded) throw busyError(state.sessionId, 'it is still loading from its store (await session.ready before beginTurn())');
  if (!entered && !state.turnGate.tryEnterHost()) throw busyError(state.sessionId, 'beginTurn() cannot start beside a runTurn / streamTurn / wake turn');
  const controller = new AbortController();
  let interrupted: Promise<void> | undefined;
  const forward = () => void turn.interrupt(signalReason(), turnOptions.signal?.reason);
  const emit = (event: SessionEvent) => {
    state.hub.emit(event);
    sink?.(event);
  };
  if (sink) state.turnSinks.add(sink);
  state.activeTurns++;
  const scope: TurnScope = { state, id: randomUUID(), controller, emit, turnState: new Map(), pendingContexts: [], runtimes: [], stepIndex: 0, detach: undefined };
  const { id } = scope;
  let ended = false;
  let markEnded: () => void = () => undefined;
  const hasEnded = new Promise<void>((resolve) => {
    markEnded = resolve;
  });
  emit({ type: 'turn-start', turnId: id });
  const turn: OwnTurn = {
    id,
    signal: controller.signal,
    emit,
    inject: (contexts) => void scope.pendingContexts.push(...contexts),
    // nothing of a session starts after its shutdown
    step: () => (state.closed ? Promise.reject(new SwitchyardError('SHUTTING_DOWN', 'session is shut down')) : buildStep(scope)),
    takeInjected: () => injectedItems(scope, true),
    takeInjectedForHistory: () => injectedItems(scope, false),
    abort(reason?: unknown) {
      void turn.interrupt('abort', reason);
    },
    interrupt(reason, cause) {
      if (interrupted) return interrupted;
      if (ended || controller.signal.aborted) return Promise.resolve();
      controller.abort(cause);
      interrupted = state.options.hooks ? runInterrupt(state.hooked, { turnId: id, reason, detail: abortDetail(cause) }) : Promise.resolve();
      return interrupted;
    },
    cancel(cause) {
      controller.abort(cause);
    },
    endsItself: entered,
    stop(reason) {
      // its Interrupt hooks run (once) before it ends
      void turn.interrupt('shutdown', reason);
      if (!turn.endsItself) void turn.end();
      return hasEnded;
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
      if (state.inbox && state.codeMode && !state.closed) state.codeMode.attachWorker(state.sessionId, backgroundWorker(state, state.inbox), { background: true, tenant: state.options.tenant });
      for (const runtime of scope.runtimes.splice(0)) runtime.dispose();
      turnOptions.signal?.removeEventListener('abort', forward);
      await callLifecycle(state, (executor) => executor.onTurnEnd, id);
      await interrupted;
      // a loop turn saved its end already; a host-driven turn's is saved without waiting
      if (!entered) state.persistence?.schedule();
      emit({ type: 'turn-end', turnId: id, ...outcome });
      if (sink) state.turnSinks.delete(sink);
      state.liveTurns.delete(turn);
      state.activeTurns--;
      // the next queued turn holds the gate from here on; a wake turn only finds an idle session
      state.turnGate.leave(!entered);
      markEnded();
      state.turnEnded();
    },
  };
  state.liveTurns.add(turn);
  if (turnOptions.signal?.aborted) forward();
  else turnOptions.signal?.addEventListener('abort', forward, { once: true });
  return turn;
}
