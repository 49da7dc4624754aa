import { availableParallelism, totalmem } from 'node:os';
import { SwitchyardError, type CellHost, type CodeModeRuntime, type CodeModeSession, type OpenSessionOptions } from '@switchyard/protocol';
import { checkOptions, createCellIdGenerator } from '@switchyard/kit/internal';
import { checkHost, positiveInteger } from './engine-session';
import { engineOptions, type CodeModeRuntimeOptions } from './code-mode-runtime';
import { RemoteSession, type RuntimePlacement } from './remote-session';
import { REMOTE_RUNTIME_OPTION_RULES } from './runtime-options';
import { DEFAULT_MAX_FRAME_BYTES, MIN_MAX_FRAME_BYTES, type EngineSessionOptions } from './protocol';
import { WorkerPool, type WorkerPoolSettings } from './worker-pool';

/** The worker processes of `isolation: 'process'`. */
export interface ProcessWorkerOptions {
  /**
   * Most worker processes alive at once (a lone lease may start a few more, see the README).
   * Default: sized for the machine by CPUs and by measured memory per session (see `defaultMaxWorkers`).
   */
  max?: number;
  /**
   * Most sessions (with cells; each has isolates of its own) one worker holds at once when tenants
   * share workers. Default 16 (`DEFAULT_SESSIONS_PER_WORKER`), chosen by measured memory per
   * session (PSS). Under `perSession` a tenant's sessions share its one process without this bound.
   */
  sessionsPerWorker?: number;
  /**
   * `false` (the default of `createCodeModeRuntime`): sessions of different tenants share workers
   * (dense placement), except a tenant whose cell crashed a worker, which is placed alone from then
   * on. `true` (the default of `createWorkerPool`): a worker serves the sessions of one tenant
   * (`openSession(host, { tenant })`; a session without a tenant is its own), so tenants never
   * share a process.
   */
  perSession?: boolean;
  /** Longest a session's first cell waits in the admission queue for a place (ms); then it fails. Default 60,000. */
  admissionMs?: number;
  /** Most sessions waiting in the admission queue at once; one more fails at once. Default 1,000. */
  maxQueued?: number;
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

/**
 * PSS (proportional set size, /proc/PID/smaps_rollup) of a started worker before it holds a
 * session, in MB: Node, isolated-vm and the engine. Measured with Node 24 and isolated-vm 6
 * (`tools/bench`, `placement`): 17.5–19 MB.
 */
const WORKER_PSS_MB = 19;
/** PSS one session with a yielded cell adds to its worker, in MB (its isolate, context, prelude and cell): measured 1.3–1.4 MB. */
const SESSION_PSS_MB = 1.4;
/**
 * Sessions per worker by default. Measured PSS per session on shared workers: 5.9 MB at 4 per
 * worker, 2.5 MB at 16, 1.9 MB at 32; past 16 a session saves little memory while a worker's crash
 * touches twice the cells and its one protocol thread serves twice the sessions.
 */
export const DEFAULT_SESSIONS_PER_WORKER = 16;

/** The settings of a pool, checked and filled in (`perSession` defaults to `perSessionDefault`). */
export function workerSettings(options: ProcessWorkerOptions, engine: EngineSessionOptions, perSessionDefault = false): WorkerPoolSettings {
  const flag = (value: unknown, fallback: boolean, name: string): boolean => {
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') throw new SwitchyardError('CONFIG', `code mode runtime option workers.${name} must be a boolean (got ${String(value)})`);
    return value;
  };
  const number = (value: number | undefined, fallback: number, name: string, minimum: number) => positiveInteger(value, fallback, `workers.${name}`, minimum);
  const memoryMb = number(options.memoryMb, Math.max(1024, 8 * engine.heapMb), 'memoryMb', 64);
  const sessionsPerWorker = number(options.sessionsPerWorker, DEFAULT_SESSIONS_PER_WORKER, 'sessionsPerWorker', 1);
  return {
    max: number(options.max, defaultMaxWorkers(sessionsPerWorker), 'max', 1),
    sessionsPerWorker,
    perSession: flag(options.perSession, perSessionDefault, 'perSession'),
    admissionMs: number(options.admissionMs, 60_000, 'admissionMs', 0),
    maxQueued: number(options.maxQueued, 1_000, 'maxQueued', 0),
    idleMs: number(options.idleMs, 30_000, 'idleMs', 1),
    prewarm: flag(options.prewarm, true, 'prewarm'),
    memoryMb,
    heartbeatTimeoutMs: number(options.heartbeatTimeoutMs, 15_000, 'heartbeatTimeoutMs', 100),
    maxFrameBytes: number(options.maxFrameBytes, DEFAULT_MAX_FRAME_BYTES, 'maxFrameBytes', MIN_MAX_FRAME_BYTES),
    deathSignal: flag(options.deathSignal, true, 'deathSignal'),
  };
}

/**
 * The default `workers.max`: 4 workers per available CPU (cells mostly wait on tools; each worker
 * runs its isolates on isolated-vm's own threads), at most as many full workers as fit in a
 * quarter of the machine's memory (its cgroup limit when lower) by measured PSS — a worker of
 * `sessionsPerWorker` sessions with yielded cells is `WORKER_PSS_MB` + `sessionsPerWorker` ×
 * `SESSION_PSS_MB` — and at least 2 (one for shared sessions, one for a session placed alone).
 */
export function defaultMaxWorkers(sessionsPerWorker = DEFAULT_SESSIONS_PER_WORKER, cpus = availableParallelism(), memoryBytes = machineMemory()): number {
  const fullWorkerMb = WORKER_PSS_MB + sessionsPerWorker * SESSION_PSS_MB;
  const byMemory = Math.floor(memoryBytes / (1024 * 1024) / 4 / fullWorkerMb);
  return Math.max(2, Math.min(4 * cpus, byMemory));
}

/** The machine's memory, or the cgroup's limit on this process when lower (bytes). */
function machineMemory(): number {
  const constrained = process.constrainedMemory?.() ?? 0;
  return constrained > 0 ? Math.min(totalmem(), constrained) : totalmem();
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
  const { pool } = current;
  // Each session's placement tells that session's host how its wait in the admission queue goes.
  const placementFor = (host: CellHost): RuntimePlacement => ({
    acquire: (sink, lease) => pool.acquire(sink, { ...lease, report: (event) => host.runtimeEvent?.(event) }),
    isolateTenant: (tenant) => pool.isolateTenant(tenant),
  });
  return runtimeOver(engine, placementFor, async () => {
    current.users--;
    if (current.users > 0) return;
    if (sharedPools.get(key) === current) sharedPools.delete(key);
    await current.pool.shutdown();
  });
}

/** A pool of worker processes (see {@link createWorkerPool}). */
export interface WorkerPoolPlacement extends RuntimePlacement {
  /** Places `tenant`'s sessions on workers no other tenant uses from now on (its current leases stay). */
  isolateTenant(tenant: string): void;
  /** Worker processes started so far, alive now, sessions placed on them, and sessions waiting in the admission queue. */
  stats(): WorkerPoolStats;
  /** Ends every worker (pipes closed, SIGKILL after 1 s); pending acquisitions fail with `SHUTTING_DOWN`. */
  shutdown(): Promise<void>;
}

/** What {@link WorkerPoolPlacement.stats} reports. */
export interface WorkerPoolStats {
  /** Worker processes started since the pool was made. */
  started: number;
  /** Worker processes alive (not ending). */
  workers: number;
  /** Leases held (sessions with cells). */
  sessions: number;
  /** Sessions waiting in the admission queue. */
  waiting: number;
}

/**
 * The worker pool of `isolation: 'process'` as a placement of its own, for a process that serves
 * the runtime protocol to others (a runtime host) and runs cells in worker processes. Tenants are
 * isolated by default here (`perSession: true`: a runtime host serves other parties):
 * `acquire(sink, { tenant })` leases a place on a worker that never serves another tenant.
 * `heapMb` sizes the default `memoryMb`. Invalid options are a `CONFIG` error naming the option.
 */
export function createWorkerPool(options: ProcessWorkerOptions = {}, heapMb = 128): WorkerPoolPlacement {
  const { shared: _shared, ...rest } = options;
  const pool = new WorkerPool(workerSettings(rest, { heapMb } as EngineSessionOptions, true));
  return {
    acquire: (sink, lease) => pool.acquire(sink, lease),
    isolateTenant: (tenant) => pool.isolateTenant(tenant),
    stats: () => pool.stats(),
    shutdown: () => pool.shutdown(),
  };
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
  return runtimeOver(engineOptions(options), () => options.placement, async () => options.onShutdown?.());
}

let sessionSequence = 0;

/** A runtime over placements: `placementFor(host)` is the placement of a session whose host is `host`. */
function runtimeOver(engine: EngineSessionOptions, placementFor: (host: CellHost) => RuntimePlacement, finish: () => Promise<void>): CodeModeRuntime {
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
      const placement = placementFor(host);
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
