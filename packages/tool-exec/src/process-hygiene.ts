import type { RunningWork, StepContext } from '@switchyard/protocol';
import type { ExecProcess } from './exec-process';
import type { ProcessEntry } from './process-table';
import type { ToolsetState } from './toolset-state';

// Which processes of a toolset die when: with their turn, their session, or the toolset.

/** Kills the processes of earlier turns of the same session (the fallback when nobody calls endTurn). */
export function sweepEarlierTurns(state: ToolsetState, step: StepContext): void {
  if (state.scope !== 'turn') return;
  state.table.killWhere((entry) => entry.sessionId === step.sessionId && entry.turnId !== step.turnId);
}

/** Waits until each process finished, at most 1 s each (they were already killed). */
async function waitForExit(processes: ExecProcess[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise((done) => (timer = setTimeout(done, 1_000)));
  try {
    await Promise.all(processes.map((execProcess) => Promise.race([execProcess.finished, deadline])));
  } finally {
    clearTimeout(timer);
  }
}

const killAndWait = (entries: ProcessEntry[]) => waitForExit(entries.map((entry) => entry.process));

/**
 * Kills the processes of the sessions `matches` picks — those still running for a call that has not
 * answered, then those in the table — and waits for them.
 */
async function killSessions(state: ToolsetState, matches: (sessionId: string) => boolean): Promise<void> {
  const running = [...state.inFlight].filter(([, owner]) => matches(owner)).map(([execProcess]) => execProcess);
  for (const execProcess of running) execProcess.kill();
  await Promise.all([killAndWait(state.table.killWhere((entry) => matches(entry.sessionId))), waitForExit(running)]);
}

export async function endTurnOf(state: ToolsetState, turnId: string): Promise<void> {
  if (state.scope !== 'turn') return;
  await killAndWait(state.table.killWhere((entry) => entry.turnId === turnId));
}

export async function endSessionOf(state: ToolsetState, sessionId: string): Promise<void> {
  await killSessions(state, (owner) => owner === sessionId);
  await state.spawners.close(sessionId);
}

/**
 * What the session calls when it ends. It ends that session's processes when it says which session
 * it is (`{ sessionId }`); without that, one toolset may serve several sessions, so nothing is
 * killed and nothing is shut down — another session's processes and calls are never touched.
 * Processes still die with their turn (`processScope: 'turn'`), by eviction, `endSession`, or
 * `shutdown()`.
 */
export async function disposeFromSession(state: ToolsetState, context: unknown): Promise<void> {
  const sessionId = (context as { sessionId?: unknown } | undefined)?.sessionId;
  if (typeof sessionId === 'string') await endSessionOf(state, sessionId);
}

/**
 * What a persisted session records at each commit: the processes of `sessionId` that outlive their
 * call (a session resumed elsewhere reports them lost). Turn-scoped ones die with their turn, so
 * only `processScope: 'session'` reports any.
 */
export function runningWorkOf(state: ToolsetState, sessionId: string): RunningWork[] {
  if (state.scope !== 'session') return [];
  const work: RunningWork[] = [];
  for (const id of state.table.ids(sessionId)) {
    const entry = state.table.get(id, sessionId);
    if (entry && entry.callId !== undefined && !entry.process.exited) work.push({ callId: entry.callId, processId: entry.id, command: entry.command });
  }
  return work;
}

export async function shutdownToolset(state: ToolsetState): Promise<void> {
  if (!state.shuttingDown) {
    try {
      state.options.onShutdown?.();
    } catch {
      // the host's hook must not stop the processes from being killed
    }
  }
  state.shuttingDown = true;
  await killSessions(state, () => true);
  await state.spawners.close();
}
