import { randomUUID } from 'node:crypto';
import { SwitchyardError, errorMessage } from '@switchyard/protocol';
import { createEventHub } from '@switchyard/kit/internal';
import { createPlanCache, resolveToolBudget } from '@switchyard/planner';
import type { CodeMode } from '@switchyard/code-mode';
import type { SessionEvent, TurnResult } from './session-events';
import { SessionHistory } from './history';
import { checkSessionOptions } from './session-options';
import { warnOnce } from './warn-once';
import { traceSession } from './tracing';
import { BackgroundInbox, DEFAULT_MAX_WAKE_TURNS, backgroundSettings } from './background';
import { SessionDiscovery } from './discovery';
import { forwardHookEvents, runSessionEnd } from './session-hooks';
import { callLifecycle, currentExecutors, emitGlobal, forwardCellEvents, type SessionState } from './session-state';
import { beginOwnTurn } from './turn';
import { TurnGate } from './turn-gate';
import { executeTurn, streamTurn } from './turn-loop';
import { SessionPersistence } from './session-persistence';
import { commitContent, exportSession, openDurable, watchCodeMode } from './session-durability';
import { checkExport, type SessionExport } from './durable-state';
import type { RunTurnOptions, Session, SessionOptions, WakeOptions } from './session-types';


/**
 * With a `wake()` model: when completions wait in the inbox and no turn runs, the session runs a
 * turn itself (no new input: the completions are what the model reads). Its events go to the
 * session's listeners; its failure ends in its `turn-end`, never in an unhandled rejection.
 */
function scheduleWake(state: SessionState): void {
  queueMicrotask(() => {
    const model = state.wakeModel;
    if (!model || state.closed || state.turnGate.busy || !state.loaded || (!state.inbox?.pending && state.carried.length === 0)) return;
    // a model that starts new work in every wake turn would keep the session busy without end
    const limit = backgroundSettings(state.options.background)?.maxWakeTurns ?? DEFAULT_MAX_WAKE_TURNS;
    if (state.wakeTurns > limit) return;
    if (state.wakeTurns === limit) {
      // said once; the host's next turn (or wake() again) re-arms it
      state.wakeTurns++;
      const message = `the session stopped waking itself after ${limit} wake turns in a row without a turn of the host; ${state.inbox?.pending ?? 0} completion(s) wait for the next turn (or wake() again)`;
      emitGlobal(state, { type: 'warning', source: 'background', message });
      return;
    }
    state.wakeTurns++;
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
  state.wakeTurns = 0;
  options.signal?.addEventListener('abort', stop, { once: true });
  scheduleWake(state);
  return stop;
}

/** How long `shutdown()` waits for an aborted turn whose model or hook ignores the abort. */
const TURN_STOP_GRACE_MS = 10_000;

/** Aborts every running turn and waits until each has ended (at most the grace for all of them). */
async function stopTurns(state: SessionState, reason: SwitchyardError): Promise<void> {
  if (state.liveTurns.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, TURN_STOP_GRACE_MS);
    timer.unref();
  });
  await Promise.race([Promise.all([...state.liveTurns].map((turn) => turn.stop(reason))), grace]);
  clearTimeout(timer);
}

async function shutdownSession(state: SessionState): Promise<void> {
  if (state.closed) return;
  state.closed = true;
  state.wakeModel = undefined;
  // the store gets the session as it is (open cells' journals included) before anything is ended,
  // then the lease goes: another process may resume it at once
  await state.ready.catch(() => undefined);
  await state.persistence?.close().catch(() => undefined);
  // running turns are interrupted (their Interrupt hooks run before SessionEnd's) and have ended
  // before anything else stops: nothing of the session starts after shutdown()
  const stopping = new SwitchyardError('SHUTTING_DOWN', 'the session is shutting down');
  await stopTurns(state, stopping);
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

/**
 * With a store or a `restore` document: loads the session (every turn waits for `ready`), then
 * wakes it when the resume left something for the model's next request.
 */
function openSession(state: SessionState, restore: SessionExport | undefined): void {
  state.loaded = false;
  state.ready = openDurable(state, restore).then(() => {
    state.loaded = true;
    scheduleWake(state);
  });
  // a turn or the host (`session.ready`) reports a failed load; nobody has to listen
  state.ready.catch(() => undefined);
}

/** The host facade: plan → router once per step, the sampling loop, ordered drain, notify injection. */
// long-function: the session facade's one assembly (options, state, store, discovery, background, the returned object); its parts live in step/turn/turn-loop
export function createSession(options: SessionOptions): Session {
  checkSessionOptions(options);
  const budget = resolveToolBudget(options.toolBudget, 'toolBudget');
  const restore = options.restore === undefined ? undefined : checkExport(options.restore);
  const sessionId = options.sessionId ?? restore?.sessionId ?? randomUUID();
  // a throwing listener is reported (process warning SWITCHYARD_LISTENER) and never reaches the turn
  const hub = createEventHub<SessionEvent>({ name: 'session' });
  const tracing = options.tracer
    ? traceSession(options.tracer, { on: (type, listener) => hub.on(type, listener), sessionId, tenant: options.tenant, hooks: options.hooks, model: options.model?.name })
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
    liveTurns: new Set(),
    turnGate: new TurnGate(),
    wakeModel: undefined,
    wakeTurns: 0,
    backgroundRuntimes: [],
    // a discovery message carries declarations up to the tool budget, as the exec description does
    discovery: new SessionDiscovery(options.toolDiscovery ?? 'tools', budget.tokens),
    turnEnded: () => scheduleWake(state),
    persistence: options.store ? new SessionPersistence(options.store, sessionId, options.storeOptions ?? {}, () => commitContent(state)) : undefined,
    ready: Promise.resolve(),
    loaded: true,
    carried: [],
    openCells: new Map(),
    codeModeCreated: (created) => watchCodeMode(state, created),
  };
  const background = backgroundSettings(options.background);
  if (background) (state as { inbox: BackgroundInbox }).inbox = new BackgroundInbox(background, (event) => {
      emitGlobal(state, event);
      scheduleWake(state);
    });
  state.unwatchHooks = forwardHookEvents(state.hooked, (event) => emitGlobal(state, event));
  void checkToolSetup(state);
  if (codeMode) {
    forwardCellEvents(state, codeMode);
    watchCodeMode(state, codeMode);
  }
  if (state.persistence || restore) openSession(state, restore);
  // a turn of the host re-arms the wake bound
  const runStream = (run: RunTurnOptions) => {
    state.wakeTurns = 0;
    return streamTurn(state, run);
  };
  return {
    id: sessionId,
    ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
    history: state.history.items,
    beginTurn: (turnOptions) => {
      state.wakeTurns = 0;
      return beginOwnTurn(state, turnOptions);
    },
    async runTurn(run) {
      let result: TurnResult | undefined;
      for await (const event of runStream(run)) if (event.type === 'turn-end' && event.result) result = event.result;
      return result!;
    },
    streamTurn: runStream,
    get ready() {
      return state.ready;
    },
    export: () => exportSession(state),
    on: (type, listener) => hub.on(type, listener),
    onEvent: (listener) => hub.onAny(listener),
    wake: (wakeOptions) => startWaking(state, wakeOptions),
    async shutdown() {
      if (state.closed) return;
      await shutdownSession(state);
      tracing?.close();
    },
  };
}
