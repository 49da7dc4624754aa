import { SwitchyardError, isToolCallItem, type InterruptReason, type ModelClient, type ModelRequest, type ModelStreamEvent, type ResponseItem } from '@switchyard/protocol';
import { abortableSleep, backoffDelay } from '@switchyard/kit/internal';
import type { DispatchResult } from '@switchyard/registry';
import type { SessionEvent, TurnEvent, TurnResult } from './session-events';
import type { TurnRecord } from './history';
import { assistantText } from './message-text';
import { promptText, runSessionStart, runStop, runUserPromptSubmit } from './session-hooks';
import type { SessionState } from './session-state';
import { beginOwnTurn, closingMessage, turnError, type OwnTurn } from './turn';
import { busyError } from './turn-gate';
import type { RunTurnOptions, SessionOptions, Step } from './session-types';

// The turn loop: sample, run the calls, follow up until the model answers without calls.

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

/**
 * Starts a call of the response being streamed. With a store, the call's item (and the response's
 * items before it) is committed first: a call never runs before the store knows it was made. A
 * failed commit fails the call unrun (and with it the turn).
 */
function startCall(state: SessionState, step: Step, item: ResponseItem, items: readonly ResponseItem[]): Promise<DispatchResult | undefined> {
  if (!state.persistence) return step.handleItem(item);
  state.history.provisional = items;
  return state.persistence.save().then(() => step.handleItem(item));
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
        const pending = startCall(state, step, event.item, progress.items);
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

/** Waits for the session's running turn (or fails at once with `BUSY` under `ifBusy: 'fail'`). */
async function enterTurnGate(state: SessionState, run: RunTurnOptions): Promise<void> {
  // a session with a store (or a restore) is loaded first; one that lost its lease refuses turns
  // (synchronously when loaded: a turn asked for takes its place in the gate at once)
  if (!state.loaded) await state.ready;
  if (state.persistence?.lost) throw state.persistence.lost;
  if (run.ifBusy === 'fail') {
    if (!state.turnGate.tryEnter()) throw busyError(state.sessionId, "runTurn({ ifBusy: 'fail' }) refused to wait for it");
    return;
  }
  await state.turnGate.enter(run.signal);
}

/**
 * Runs one turn to its end, emitting through the turn (and `sink`). Resolves with the result;
 * rejects with the turn's error. `signalReason` says what an abort of `run.signal` is (Interrupt hooks' `reason`).
 */
export async function executeTurn(state: SessionState, run: RunTurnOptions, sink?: (event: SessionEvent) => void, signalReason?: () => InterruptReason): Promise<TurnResult> {
  const { options, history } = state;
  await enterTurnGate(state, run);
  // a turn of the loop holds the gate and ends itself once aborted
  const turn = beginOwnTurn(state, { signal: run.signal }, sink, true, signalReason);
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
      state.persistence?.schedule();
      for (const item of progress.items) finalText = assistantText(item) ?? finalText;
      const results = await Promise.all(progress.calls);
      // outputs in call order; hook contexts and notify() items follow with the next request
      for (const result of results) if (result) history.push(result.item);
      state.persistence?.schedule();
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
    // the turn is over once its store holds it
    await state.persistence?.save();
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
  turn.cancel(error);
  if (progress.calls.length > 0) {
    if (!progress.itemsRecorded) state.history.pushModelItems(record, progress.items);
    const settled = await Promise.allSettled(progress.calls);
    for (const outcome of settled) if (outcome.status === 'fulfilled' && outcome.value) state.history.push(outcome.value.item);
  }
  state.history.fail(record, closingMessage(error));
  state.persistence?.schedule();
  await turn.finish({ error });
}

export async function* streamTurn(state: SessionState, run: RunTurnOptions): AsyncGenerator<TurnEvent> {
  const queue: TurnEvent[] = [];
  let wake: (() => void) | undefined;
  let settled = false;
  let failure: SwitchyardError | undefined;
  const stop = new AbortController();
  // what stopping means for Interrupt hooks: the host's signal, unless the host left the loop
  let stopReason: InterruptReason = 'signal';
  const forward = () => stop.abort(run.signal?.reason);
  if (run.signal?.aborted) forward();
  else run.signal?.addEventListener('abort', forward, { once: true });
  const running = executeTurn(
    state,
    { ...run, signal: stop.signal },
    (event) => {
      queue.push(event);
      wake?.();
    },
    () => stopReason,
  ).then(
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
      stopReason = 'stream-closed';
      stop.abort(new SwitchyardError('ABORTED', 'the host stopped reading the turn'));
      await running;
    }
  }
}
