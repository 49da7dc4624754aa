import { SwitchyardError, createCellIdGenerator } from '@switchyard/protocol';
import type { CellHost, CodeModeRuntime, CodeModeSession } from '@switchyard/protocol';

import { Session } from './code-mode-session';
import { nodeSnapshotFlagProblem } from './node-snapshot-check';

/** Options of {@link createCodeModeRuntime}; every limit fails only the cell (or call) that hits it. */
export interface CodeModeRuntimeOptions {
  /** V8 heap per cell in MB (isolated-vm `memoryLimit`, minimum 8). Default 128. */
  heapMb?: number;
  /** CPU time per cell in ms (polled every 10 ms). Default: none. */
  cpuTimeMs?: number;
  /** Wall time per cell in ms, from its creation. Default: none (cells run until terminated). */
  wallTimeMs?: number;
  /**
   * Cells a session holds at once (running, terminating, or completed with results not yet
   * observed); more are refused with LIMIT_EXCEEDED. Default 32.
   */
  maxCells?: number;
  /** Nested tool calls in flight per cell; more reject inside the cell. Default 256. */
  maxInFlightCalls?: number;
  /** UTF-8 bytes of output (text, image URLs, notify) per cell; more throw inside the cell. Default 16 MiB. */
  maxOutputBytes?: number;
  /** Pending timers (`setTimeout`) per cell; more throw inside the cell. Default 100,000. */
  maxTimers?: number;
  /** Installs `store` / `load`. Default true. */
  storedValues?: boolean;
  /** What to do when Node runs without `--no-node-snapshot`: warn once (default), throw, or ignore. */
  nodeSnapshotCheck?: 'warn' | 'throw' | 'ignore';
}

let warnedAboutSnapshot = false;

/**
 * Creates a Code Mode runtime: cells run JavaScript (or TypeScript) in isolated-vm isolates off
 * the host thread. Throws a `SwitchyardError` (`CONFIG`) for invalid options.
 */
export function createCodeModeRuntime(options: CodeModeRuntimeOptions = {}): CodeModeRuntime {
  const heapMb = positiveInteger(options.heapMb, 128, 'heapMb', 8);
  const cpuTimeMs = options.cpuTimeMs === undefined ? undefined : positiveInteger(options.cpuTimeMs, 0, 'cpuTimeMs', 1);
  const wallTimeMs = options.wallTimeMs === undefined ? undefined : positiveInteger(options.wallTimeMs, 0, 'wallTimeMs', 1);
  const maxCells = positiveInteger(options.maxCells, 32, 'maxCells', 1);
  const maxInFlightCalls = positiveInteger(options.maxInFlightCalls, 256, 'maxInFlightCalls', 1);
  const maxOutputBytes = positiveInteger(options.maxOutputBytes, 16 * 1024 * 1024, 'maxOutputBytes', 1);
  const maxTimers = positiveInteger(options.maxTimers, 100_000, 'maxTimers', 1);
  const check = options.nodeSnapshotCheck ?? 'warn';
  if (check !== 'ignore') {
    const problem = nodeSnapshotFlagProblem();
    if (problem && check === 'throw') throw new SwitchyardError('CONFIG', problem);
    if (problem && !warnedAboutSnapshot) {
      warnedAboutSnapshot = true;
      process.emitWarning(problem, { code: 'SWITCHYARD_NO_NODE_SNAPSHOT' });
    }
  }
  const nextCellId = createCellIdGenerator();
  const sessions = new Set<Session>();
  let shutdownPromise: Promise<void> | undefined;
  return {
    openSession(host: CellHost): CodeModeSession {
      if (shutdownPromise) throw new SwitchyardError('SHUTTING_DOWN', 'code mode runtime is shutting down');
      if (typeof host !== 'object' || host === null || typeof host.invokeTool !== 'function') {
        throw new SwitchyardError('CONFIG', 'openSession expects a CellHost with invokeTool, notify and cellClosed');
      }
      const session = new Session({
        host,
        limits: { heapMb, cpuTimeMs, wallTimeMs, maxInFlightCalls, maxOutputBytes, maxTimers },
        maxCells,
        storedValues: options.storedValues ?? true,
        nextCellId,
        closed: (closedSession) => sessions.delete(closedSession),
      });
      sessions.add(session);
      return session;
    },
    shutdown(): Promise<void> {
      shutdownPromise ??= Promise.all([...sessions].map((session) => session.shutdown())).then(() => undefined);
      return shutdownPromise;
    },
  };
}

function positiveInteger(value: number | undefined, fallback: number, name: string, minimum: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < minimum) {
    throw new SwitchyardError('CONFIG', `code mode runtime option ${name} must be a number >= ${minimum} (got ${String(value)})`);
  }
  return Math.floor(value);
}
