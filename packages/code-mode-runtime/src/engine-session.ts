import { SwitchyardError, type CellHost } from '@switchyard/protocol';
import { Session } from './code-mode-session';
import type { EngineSessionOptions } from './protocol';
import { EngineJournals } from './journal/engine-journals';
import { limitDefault, limitOf } from './cell-limits';

/** An engine session with `engine`'s limits (used in process and by the worker's protocol server). */
export function createEngineSession(
  engine: EngineSessionOptions,
  host: CellHost,
  extra: Pick<ConstructorParameters<typeof Session>[0], 'store' | 'nextCellId' | 'closed'> & { keepJournals?: boolean },
): Session {
  const { keepJournals, ...rest } = extra;
  const maxJournalBytes = limitOf(engine, 'maxJournalBytes');
  return new Session({
    host,
    limits: engine,
    maxCells: engine.maxCells,
    storedValues: engine.storedValues,
    // In process the session is its host's journal keeper; in a worker the agent host keeps them.
    journals: keepJournals && maxJournalBytes > 0 ? new EngineJournals(host, maxJournalBytes) : undefined,
    ...rest,
  });
}

/** The default `maxJournalBytes` for a cell of `heapMb` (the table's: an eighth of the heap, 16 MiB at 128 MB). */
export function defaultMaxJournalBytes(heapMb: number): number {
  return limitDefault('maxJournalBytes', heapMb);
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
