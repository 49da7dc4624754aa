import { SwitchyardError, type CellHost } from '@switchyard/protocol';
import { Session } from './code-mode-session';
import type { EngineSessionOptions } from './protocol';
import { EngineJournals } from './journal/engine-journals';

/** An engine session with `engine`'s limits (used in process and by the worker's protocol server). */
export function createEngineSession(
  engine: EngineSessionOptions,
  host: CellHost,
  extra: Pick<ConstructorParameters<typeof Session>[0], 'store' | 'nextCellId' | 'closed'> & { keepJournals?: boolean },
): Session {
  const { keepJournals, ...rest } = extra;
  const maxJournalBytes = engine.maxJournalBytes ?? defaultMaxJournalBytes(engine.heapMb);
  return new Session({
    host,
    limits: {
      heapMb: engine.heapMb,
      cpuTimeMs: engine.cpuTimeMs,
      wallTimeMs: engine.wallTimeMs,
      maxInFlightCalls: engine.maxInFlightCalls,
      maxInFlightArgumentChars: engine.maxInFlightArgumentChars,
      maxOutputBytes: engine.maxOutputBytes,
      maxOutputItems: engine.maxOutputItems,
      maxTimers: engine.maxTimers,
    },
    maxCells: engine.maxCells,
    storedValues: engine.storedValues,
    // In process the session is its host's journal keeper; in a worker the agent host keeps them.
    journals: keepJournals && maxJournalBytes > 0 ? new EngineJournals(host, maxJournalBytes) : undefined,
    ...rest,
  });
}

/**
 * The default `maxJournalBytes`: an eighth of the cell heap (16 MiB at the default 128 MB). A
 * resume delivers every journaled result into a fresh isolate again and a store writes the
 * journal with the session, so both grow with it; an eighth of the heap is the value size limit
 * of one value (a cell that took in more results than that ran long), and it keeps the resume
 * message well inside the default frame (64 MiB).
 */
export function defaultMaxJournalBytes(heapMb: number): number {
  return Math.floor((heapMb * 1024 * 1024) / 8);
}

/** Throws CONFIG for a host that is not a `CellHost`. */
export function checkHost(host: CellHost): void {
  if (typeof host !== 'object' || host === null || typeof host.invokeTool !== 'function') {
    throw new SwitchyardError('CONFIG', 'openSession expects a CellHost with invokeTool, notify and cellClosed');
  }
}

/** A whole number ≥ `minimum`, or `fallback` when absent; anything else is a CONFIG error naming the option. */
export function positiveInteger(value: number | undefined, fallback: number, name: string, minimum: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < minimum) {
    throw new SwitchyardError('CONFIG', `code mode runtime option ${name} must be a number >= ${minimum} (got ${String(value)})`);
  }
  return Math.floor(value);
}
