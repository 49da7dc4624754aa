import { availableParallelism, totalmem } from 'node:os';
import { SwitchyardError, type CellHost, type CodeModeRuntime, type CodeModeSession, type OpenSessionOptions } from '@switchyard/protocol';
import { checkOptions, createCellIdGenerator } from '@switchyard/kit';
import { checkHost, positiveInteger } from './engine-session';
import { engineOptions, type CodeModeRuntimeOptions } from './code-mode-runtime';
import { RemoteSession, type RuntimePlacement } from './remote-session';
import { REMOTE_RUNTIME_OPTION_RULES } from './runtime-options';
import { DEFAULT_MAX_FRAME_BYTES, MIN_MAX_FRAME_BYTES, type EngineSessionOptions } from './protocol';
import { WorkerPool, type WorkerPoolSettings } from './worker-pool';

/** The worker processes of `isolation: 'process'`. */
export interface ProcessWorkerOptions {
  /**
   * Most worker processes alive at once. Default: sized for the machine, 4 × the available CPUs,
   * at most one per 2 × `memoryMb` of the machine's memory, at least 4 (see `defaultMaxWorkers`).
   */
  max?: number;
  /**
   * `true` (default): a worker serves the sessions of one tenant (`openSession(host, { tenant })`;
   * a session without a tenant is its own), so sessions never share a failure domain; a session's
   * first cell beyond `max` waits up to `admissionMs` for a worker, then fails with "no Code Mode
   * worker is free: …". `false`: sessions share the least loaded worker once `max` are running.
   */
  perSession?: boolean;
  /** How long a session's first cell waits for a free worker when all `max` serve other tenants (ms). Default 5,000. */
  admissionMs?: number;
  /** A worker that served no session for this long ends (ms); the prewarmed spare stays. Default 30,000. */
  idleMs?: number;
  /** Keep one started worker ready, so an `exec` never waits for a process start. Default true. */
  prewarm?: boolean;
  /**
   * Hard cap on a worker's resident memory in MB, polled every 100 ms from the host (the worker is
   * killed over it; its cells fail with the limit named). Also the worker's own
   * `--max-old-space-size`. Default max(1024, 8 × heapMb).
   */
  memoryMb?: number;
  /** A worker that answers no heartbeat for this long is killed (ms). Default 15,000. */
  heartbeatTimeoutMs?: number;
  /** Biggest frame of the runtime protocol either side accepts (bytes). Default 64 MiB. */
  maxFrameBytes?: number;
  /** Start workers through `setpriv --pdeathsig SIGKILL` when it is available (Linux). Default true. */
  deathSignal?: boolean;
  /** Share workers with other runtimes of this process that have the same worker options. Default true. */
  shared?: boolean;
}

/** The settings of a pool, checked and filled in. */
export function workerSettings(options: ProcessWorkerOptions, engine: EngineSessionOptions): WorkerPoolSettings {
  const flag = (value: unknown, fallback: boolean, name: string): boolean => {
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') throw new SwitchyardError('CONFIG', `code mode runtime option workers.${name} must be a boolean (got ${String(value)})`);
    return value;
  };
  const number = (value: number | undefined, fallback: number, name: string, minimum: number) => positiveInteger(value, fallback, `workers.${name}`, minimum);
  const memoryMb = number(options.memoryMb, Math.max(1024, 8 * engine.heapMb), 'memoryMb', 64);
  return {
    max: number(options.max, defaultMaxWorkers(memoryMb), 'max', 1),
    perSession: flag(options.perSession, true, 'perSession'),
    admissionMs: number(options.admissionMs, 5_000, 'admissionMs', 0),
    idleMs: number(options.idleMs, 30_000, 'idleMs', 1),
    prewarm: flag(options.prewarm, true, 'prewarm'),
    memoryMb,
    heartbeatTimeoutMs: number(options.heartbeatTimeoutMs, 15_000, 'heartbeatTimeoutMs', 100),
    maxFrameBytes: number(options.maxFrameBytes, DEFAULT_MAX_FRAME_BYTES, 'maxFrameBytes', MIN_MAX_FRAME_BYTES),
    deathSignal: flag(options.deathSignal, true, 'deathSignal'),
  };
}

/**
 * The default `workers.max`: 4 workers per available CPU (cells mostly wait on tools), at most one
 * per 2 × `memoryMb` of the machine's memory (a worker may grow to `memoryMb` before it is killed;
 * idle, it holds about 45 MB), and at least 4, so that a few sessions never wait for each other.
 */
export function defaultMaxWorkers(memoryMb: number, cpus = availableParallelism(), memoryBytes = totalmem()): number {
  const byMemory = Math.floor(memoryBytes / (1024 * 1024) / (2 * memoryMb));
  return Math.max(4, Math.min(4 * cpus, byMemory));
}

/** Pools shared by runtimes with the same worker settings; a pool ends with the last runtime using it. */
const sharedPools = new Map<string, { pool: WorkerPool; users: number }>();

/**
 * Cells in worker processes: each session's cells run on a leased worker; stored values and cell
 * ids stay with the host (see `RemoteSession`), so a worker's death fails only its cells.
 */
export function createProcessRuntime(engine: EngineSessionOptions, options: ProcessWorkerOptions): CodeModeRuntime {
  const settings = workerSettings(options, engine);
  const shared = options.shared ?? true;
  const key = JSON.stringify(settings);
  let entry = shared ? sharedPools.get(key) : undefined;
  if (!entry) {
    entry = { pool: new WorkerPool(settings), users: 0 };
    if (shared) sharedPools.set(key, entry);
  }
  entry.users++;
  const current = entry;
  return runtimeOver(engine, current.pool, async () => {
    current.users--;
    if (current.users > 0) return;
    if (sharedPools.get(key) === current) sharedPools.delete(key);
    await current.pool.shutdown();
  });
}

/** A pool of worker processes that isolates tenants (see {@link createWorkerPool}). */
export interface WorkerPoolPlacement extends RuntimePlacement {
  /** Ends every worker (pipes closed, SIGKILL after 1 s); pending acquisitions fail with `SHUTTING_DOWN`. */
  shutdown(): Promise<void>;
}

/**
 * The worker pool of `isolation: 'process'` as a placement of its own, for a process that serves
 * the runtime protocol to others (a runtime host) and runs each tenant's cells in worker processes:
 * `acquire(sink, { tenant })` leases a worker that never serves another tenant. `heapMb` sizes the
 * default `memoryMb`. Invalid options are a `CONFIG` error naming the option.
 */
export function createWorkerPool(options: ProcessWorkerOptions = {}, heapMb = 128): WorkerPoolPlacement {
  const { shared: _shared, ...rest } = options;
  const pool = new WorkerPool(workerSettings(rest, { heapMb } as EngineSessionOptions));
  return { acquire: (sink, lease) => pool.acquire(sink, lease), shutdown: () => pool.shutdown() };
}

/** Options of {@link createRemoteRuntime}. */
export interface RemoteRuntimeOptions extends Omit<CodeModeRuntimeOptions, 'isolation' | 'workers' | 'nodeSnapshotCheck'> {
  /** Where cells go: leases of connections to runtimes (see `RuntimePlacement`). */
  placement: RuntimePlacement;
  /** Called once by `shutdown()` after every session has shut down (release what the placement holds). */
  onShutdown?(): Promise<void> | void;
}

/**
 * A runtime whose cells run wherever `placement` puts them, over the runtime protocol (the process
 * runtime is this with a pool of worker processes). Stored values, cell ids and failure
 * containment live here, with the host, whatever the transport. Unknown or invalid options are a
 * `CONFIG` error naming the option.
 */
export function createRemoteRuntime(options: RemoteRuntimeOptions): CodeModeRuntime {
  checkOptions('createRemoteRuntime', options, REMOTE_RUNTIME_OPTION_RULES);
  return runtimeOver(engineOptions(options), options.placement, async () => options.onShutdown?.());
}

let sessionSequence = 0;

function runtimeOver(engine: EngineSessionOptions, placement: RuntimePlacement, finish: () => Promise<void>): CodeModeRuntime {
  const nextCellId = createCellIdGenerator();
  const sessions = new Set<RemoteSession>();
  let shutdownPromise: Promise<void> | undefined;
  return {
    openSession(host: CellHost, options?: OpenSessionOptions): CodeModeSession {
      if (shutdownPromise) throw new SwitchyardError('SHUTTING_DOWN', 'code mode runtime is shutting down');
      checkHost(host);
      if (options?.tenant !== undefined && typeof options.tenant !== 'string') throw new SwitchyardError('CONFIG', `openSession option tenant must be a string (got ${String(options.tenant)})`);
      // Without a tenant key, the session is a tenant of its own (a name no host-given key can have).
      const tenant = options?.tenant === undefined ? `session #${++sessionSequence}` : `tenant ${options.tenant}`;
      const session: RemoteSession = new RemoteSession({ host, engine, placement, nextCellId, tenant, closed: () => sessions.delete(session) });
      sessions.add(session);
      return session;
    },
    shutdown(): Promise<void> {
      shutdownPromise ??= (async () => {
        await Promise.all([...sessions].map((session) => session.shutdown()));
        await finish();
      })();
      return shutdownPromise;
    },
  };
}
