import { SwitchyardError, type CellHost } from '@switchyard/protocol';
import { Session } from './code-mode-session';
import type { EngineSessionOptions } from './protocol';

/** An engine session with `engine`'s limits (used in process and by the worker's protocol server). */
export function createEngineSession(
  engine: EngineSessionOptions,
  host: CellHost,
  extra: Pick<ConstructorParameters<typeof Session>[0], 'store' | 'nextCellId' | 'closed'>,
): Session {
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
    ...extra,
  });
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
