import {
  SwitchyardError,
  errorMessage,
  type CodeModeContributor,
  type CodeModeRuntime,
  type ModelClient,
  type ResponseItem,
  type ToolExecutor,
  type ToolMode,
} from '@switchyard/protocol';
import type { EventHub } from '@switchyard/kit/internal';
import type { PlanCache } from '@switchyard/planner';
import type { ToolCallRuntime } from '@switchyard/registry';
import { createCodeMode, type CodeMode } from '@switchyard/code-mode';
import type { SessionEvent } from './session-events';
import type { SessionHistory } from './history';
import type { HookedSession } from './session-hooks';
import type { BackgroundInbox } from './background';
import type { SessionDiscovery } from './discovery';
import type { SessionOptions } from './session-types';
import type { TurnGate } from './turn-gate';
import type { SessionPersistence } from './session-persistence';
import type { OwnTurn } from './turn';

// What one session's turns share, and the helpers that read it.

/** What one session's turns share. */
export interface SessionState {
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
  /** Turns begun and not yet finished, for `shutdown()` to interrupt and wait for. */
  readonly liveTurns: Set<OwnTurn>;
  /** One turn at a time: turns of the loop, host-driven turns and wake turns enter in order. */
  readonly turnGate: TurnGate;
  /** The model a `wake()` registered. */
  wakeModel: ModelClient | undefined;
  /** Wake turns since the host's last turn (or `wake()` call): bounded by `maxWakeTurns`. */
  wakeTurns: number;
  /** Runtimes that served cells between turns (released once idle, aborted at shutdown). */
  readonly backgroundRuntimes: ToolCallRuntime[];
  /** What the session's cells found with `tools.tool_search` (the `toolDiscovery` option). */
  readonly discovery: SessionDiscovery;
  /** Called when a turn has finished: a waiting wake turn may start (set by `createSession`). */
  readonly turnEnded: () => void;
  /** The link to the session's store (`store` option). */
  readonly persistence: SessionPersistence | undefined;
  /** Loading from the store or a `restore` document; every turn waits for it. */
  ready: Promise<void>;
  loaded: boolean;
  /** Items a resume produced for the model's next request (pending completions, lost work), each taken once. */
  readonly carried: ResponseItem[];
  /** Cells open now, with the `exec` call that created each. */
  readonly openCells: Map<string, string | undefined>;
  /** Called when the session creates its Code Mode lazily. */
  readonly codeModeCreated: (codeMode: CodeMode) => void;
}

/** To the session's listeners and every streamed turn: cell events are not tied to a step. */
export function emitGlobal(state: SessionState, event: SessionEvent): void {
  state.hub.emit(event);
  for (const sink of state.turnSinks) sink(event);
}

export function forwardCellEvents(state: SessionState, mode: CodeMode): void {
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

export async function codeModeFor(state: SessionState): Promise<CodeModeContributor | undefined> {
  if (state.toolMode === 'direct') return undefined;
  if (state.codeMode) return state.codeMode;
  // Created once, even when two steps are planned at the same time.
  state.creatingCodeMode ??= loadRuntimeModule(state.toolMode).then(({ createCodeModeRuntime }) => {
    const settings = (state.options.codeMode ?? {}) as { runtimeOptions?: Record<string, unknown>; maxOutputTokensCap?: number };
    state.ownRuntime = createCodeModeRuntime(settings.runtimeOptions as never);
    const created = createCodeMode({ runtime: state.ownRuntime, maxOutputTokensCap: settings.maxOutputTokensCap });
    forwardCellEvents(state, created);
    state.codeModeCreated(created);
    state.codeMode = created;
    return created;
  });
  return state.creatingCodeMode;
}

export function currentExecutors(options: SessionOptions): readonly ToolExecutor[] {
  return typeof options.tools === 'function' ? options.tools() : options.tools;
}

/** Calls each distinct lifecycle function of the executors once; a failing one never breaks the session. */
export async function callLifecycle(state: SessionState, pick: (executor: ToolExecutor) => ((...args: never[]) => unknown) | undefined, ...args: unknown[]) {
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
