import { SwitchyardError, type CellHost, type CodeModeRuntime, type CodeModeSession } from '@switchyard/protocol';
import { checkOptions, createCellIdGenerator } from '@switchyard/kit/internal';
import type { Session } from './code-mode-session';
import { createStoredValues } from './code-mode-session';
import { checkHost, createEngineSession } from './engine-session';
import { nodeSnapshotFlagProblem } from './node-snapshot-check';
import { createProcessRuntime, type ProcessWorkerOptions } from './process-runtime';
import type { EngineSessionOptions } from './protocol';
import { CODE_MODE_RUNTIME_OPTION_RULES } from './runtime-options';
import { fillCellLimits, type CellLimitOptions } from './cell-limits';

/**
 * Options of {@link createCodeModeRuntime}; every limit fails only the cell (or call) that hits it.
 * The limits (`heapMb`, `cpuTimeMs`, …, `maxInFlightResultBytes`) are the rows of `CELL_LIMITS`,
 * with their defaults (the README's Limits table).
 */
export interface CodeModeRuntimeOptions extends CellLimitOptions {
  /**
   * Where cells run. `process` (default): in worker processes (`node --no-node-snapshot` running
   * the isolate engine), so a cell that crashes V8 or exhausts memory takes down a worker, never
   * the host. `in-process`: isolates in the host's own process (lower latency; a hostile cell can
   * abort the host, see the README).
   */
  isolation?: 'process' | 'in-process';
  /** Installs `store` / `load`. Default true. */
  storedValues?: boolean;
  /**
   * In-process only: what to do when Node runs without `--no-node-snapshot` (isolated-vm needs it):
   * warn once (default), throw, or ignore. Worker processes always get the flag.
   */
  nodeSnapshotCheck?: 'warn' | 'throw' | 'ignore';
  /** Process isolation: the worker pool (size, prewarming, idle reaping, memory cap). */
  workers?: ProcessWorkerOptions;
}

let warnedAboutSnapshot = false;

/**
 * Creates a Code Mode runtime: cells run JavaScript (or TypeScript) in isolated-vm isolates, in
 * worker processes by default (`isolation: 'in-process'` keeps them in this process). Throws a
 * `SwitchyardError` (`CONFIG`) naming the option (and the closest valid one for an unknown key)
 * for unknown or invalid options, `workers.*` included.
 */
export function createCodeModeRuntime(options: CodeModeRuntimeOptions = {}): CodeModeRuntime {
  checkOptions('createCodeModeRuntime', options, CODE_MODE_RUNTIME_OPTION_RULES);
  const isolation = options.isolation ?? 'process';
  const engine = engineOptions(options);
  if (isolation === 'process') return createProcessRuntime(engine, options.workers ?? {});
  return createInProcessRuntime(engine, options.nodeSnapshotCheck ?? 'warn');
}

/** The per-cell limits, defaults filled in (the options were checked by their rules before). */
export function engineOptions(options: CodeModeRuntimeOptions): EngineSessionOptions {
  return { ...fillCellLimits(options), storedValues: options.storedValues ?? true };
}

/** Cells in isolates of this process (the engine itself; a worker process runs the same code). */
function createInProcessRuntime(engine: EngineSessionOptions, check: 'warn' | 'throw' | 'ignore'): CodeModeRuntime {
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
      checkHost(host);
      // In process this session is its host's: it keeps its cells' journals itself.
      const session = createEngineSession(engine, host, { store: createStoredValues(), nextCellId, closed: (closedSession) => sessions.delete(closedSession), keepJournals: true });
      sessions.add(session);
      return session;
    },
    shutdown(): Promise<void> {
      shutdownPromise ??= Promise.all([...sessions].map((session) => session.shutdown())).then(() => undefined);
      return shutdownPromise;
    },
  };
}
