import { SwitchyardError, type CellHost, type CodeModeRuntime, type CodeModeSession } from '@switchyard/protocol';
import { checkOptions, createCellIdGenerator } from '@switchyard/kit/internal';
import type { Session } from './code-mode-session';
import { createStoredValues } from './code-mode-session';
import { checkHost, createEngineSession, defaultMaxJournalBytes, positiveInteger } from './engine-session';
import { nodeSnapshotFlagProblem } from './node-snapshot-check';
import { createProcessRuntime, type ProcessWorkerOptions } from './process-runtime';
import type { EngineSessionOptions } from './protocol';
import { CODE_MODE_RUNTIME_OPTION_RULES, DEFAULT_CPU_TIME_MS } from './runtime-options';
import { maxValueChars } from './value-limit';
import { defaultMaxStoredBytes } from './host-limits';

/** Options of {@link createCodeModeRuntime}; every limit fails only the cell (or call) that hits it. */
export interface CodeModeRuntimeOptions {
  /**
   * Where cells run. `process` (default): in worker processes (`node --no-node-snapshot` running
   * the isolate engine), so a cell that crashes V8 or exhausts memory takes down a worker, never
   * the host. `in-process`: isolates in the host's own process (lower latency; a hostile cell can
   * abort the host, see the README).
   */
  isolation?: 'process' | 'in-process';
  /** V8 heap per cell in MB (isolated-vm `memoryLimit`, minimum 8). Default 128. */
  heapMb?: number;
  /** CPU time per cell in ms (polled every 10 ms); `false` for none. Default 60,000 (`DEFAULT_CPU_TIME_MS`). */
  cpuTimeMs?: number | false;
  /** Wall time per cell in ms, from its creation; `false` (default) for none: cells run until terminated. */
  wallTimeMs?: number | false;
  /**
   * Cells a session holds at once (running, terminating, or completed with results not yet
   * observed); more are refused with LIMIT_EXCEEDED. Default 32.
   */
  maxCells?: number;
  /** Nested tool calls in flight per cell; more reject inside the cell. Default 256. */
  maxInFlightCalls?: number;
  /**
   * Characters of nested-call argument JSON in flight per cell; a call that would go over it
   * rejects inside the cell. Default twice the value size limit: heapMb / 4 Mi (33,554,432 at 128 MB).
   */
  maxInFlightArgumentChars?: number;
  /** UTF-8 bytes of output (text, image URLs, notify) per cell; more throw inside the cell. Default 16 MiB. */
  maxOutputBytes?: number;
  /** `text` / `image` / `notify` calls per cell, empty ones included; more throw inside the cell. Default 100,000. */
  maxOutputItems?: number;
  /** Pending timers (`setTimeout`) per cell; more throw inside the cell. Default 100,000. */
  maxTimers?: number;
  /** Installs `store` / `load`. Default true. */
  storedValues?: boolean;
  /**
   * UTF-8 bytes of a session's stored values (keys and JSON), checked by the agent host when a cell
   * commits: a commit over it fails that cell and stores none of its writes. Also checked inside the
   * isolate against the cell's own writes, so writes that could never commit never leave it. Default
   * heapMb / 4 MiB (33,554,432 at 128 MB), so the snapshot a new cell receives always fits its heap.
   */
  maxStoredBytes?: number;
  /** Keys of a session's stored values (checked like `maxStoredBytes`). Default 10,000. */
  maxStoredKeys?: number;
  /**
   * UTF-8 bytes of one cell's journal, kept by the agent host (the source, the entries, each nested
   * call's record and result): past it the cell runs on but cannot be resumed after a crash or a
   * restart (its failure then says so). `0`: no journals at all. Default heapMb / 8 MiB (16 MiB at 128 MB).
   */
  maxJournalBytes?: number;
  /**
   * Bytes of nested-call results on their way to a runtime (sent, not yet taken by it); a result
   * that would pass it fails its call inside the cell. Default 4 × the value size limit as bytes
   * (heapMb / 2 MiB: 67,108,864 at 128 MB).
   */
  maxInFlightResultBytes?: number;
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

/** Reads and checks the per-cell limits (defaults filled in). */
export function engineOptions(options: CodeModeRuntimeOptions): EngineSessionOptions {
  const heapMb = positiveInteger(options.heapMb, 128, 'heapMb', 8);
  return {
    heapMb,
    cpuTimeMs: optionalLimit(options.cpuTimeMs, DEFAULT_CPU_TIME_MS, 'cpuTimeMs'),
    wallTimeMs: optionalLimit(options.wallTimeMs, undefined, 'wallTimeMs'),
    maxCells: positiveInteger(options.maxCells, 32, 'maxCells', 1),
    maxInFlightCalls: positiveInteger(options.maxInFlightCalls, 256, 'maxInFlightCalls', 1),
    maxInFlightArgumentChars: positiveInteger(options.maxInFlightArgumentChars, 2 * maxValueChars(heapMb), 'maxInFlightArgumentChars', 1),
    maxOutputBytes: positiveInteger(options.maxOutputBytes, 16 * 1024 * 1024, 'maxOutputBytes', 1),
    maxOutputItems: positiveInteger(options.maxOutputItems, 100_000, 'maxOutputItems', 1),
    maxTimers: positiveInteger(options.maxTimers, 100_000, 'maxTimers', 1),
    storedValues: options.storedValues ?? true,
    maxStoredBytes: positiveInteger(options.maxStoredBytes, defaultMaxStoredBytes(heapMb), 'maxStoredBytes', 1),
    maxStoredKeys: positiveInteger(options.maxStoredKeys, 10_000, 'maxStoredKeys', 1),
    maxInFlightResultBytes: positiveInteger(options.maxInFlightResultBytes, 4 * maxValueChars(heapMb), 'maxInFlightResultBytes', 1),
    maxJournalBytes: positiveInteger(options.maxJournalBytes, defaultMaxJournalBytes(heapMb), 'maxJournalBytes', 0),
  };
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

function optionalLimit(value: number | false | undefined, fallback: number | undefined, name: string): number | undefined {
  if (value === false) return undefined;
  if (value === undefined) return fallback;
  return positiveInteger(value, 0, name, 1);
}

