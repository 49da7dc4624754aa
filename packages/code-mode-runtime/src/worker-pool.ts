import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SwitchyardError } from '@switchyard/protocol';
import { connectRuntime, type RuntimeClient, type RuntimeEventMessage } from './runtime-client';
import { createStreamTransport } from './protocol';
import type { RuntimeLease, RuntimePlacement, RuntimeSink } from './remote-session';

/** Settings of a pool of runtime worker processes (see `ProcessWorkerOptions`, all filled in). */
export interface WorkerPoolSettings {
  max: number;
  perSession: boolean;
  idleMs: number;
  prewarm: boolean;
  memoryMb: number;
  heartbeatTimeoutMs: number;
  maxFrameBytes: number;
  deathSignal: boolean;
  /** How long a session's first cell waits for a free worker when every worker serves another tenant (ms). */
  admissionMs: number;
}

/** How often a worker's resident memory is read while it serves sessions (ms). */
const RSS_POLL_MS = 100;
/** How often an idle worker's memory is read (ms). */
const IDLE_RSS_POLL_MS = 1_000;
/** How long a worker may take to exit after its pipes closed, before SIGKILL (ms). */
const EXIT_GRACE_MS = 1_000;
/** How long after the spare was taken (or a worker died) a new spare is started (ms). */
const SPARE_DELAY_MS = 250;
/** Bytes of a worker's stderr kept to name the cause of a crash. */
const STDERR_TAIL_BYTES = 16 * 1024;

interface Worker {
  readonly id: number;
  child: ChildProcess;
  client?: RuntimeClient;
  ready: Promise<RuntimeClient>;
  readonly sinks: Map<string, RuntimeSink>;
  holds: number;
  /** Why the pool ended it (memory, heartbeat, shutdown); a crash leaves it unset. */
  killCause?: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderrTail: string;
  idleTimer?: NodeJS.Timeout;
  monitor?: NodeJS.Timeout;
  monitorEvery?: number;
  dead: boolean;
  /** Being ended on purpose (idle, shutdown): never picked again. */
  stopping: boolean;
  /**
   * The tenant the worker serves (or served last): with `perSession`, only sessions of that tenant
   * are ever placed on it; a worker that never served one is fresh (undefined).
   */
  tenant?: string;
  /** Admitted to a waiting session that has not registered yet: not to be ended to make room. */
  reserved: number;
  /** When a byte last arrived from the worker (proof of life, whatever the frame). */
  lastHeardAt: number;
  /** Started for one lease alone (a quarantine replay): never placed with another, ended with that lease. */
  alone?: boolean;
}

/** A session's first cell waiting for a worker (admission control). */
interface Waiter {
  tenant: string;
  admit(worker: Worker): void;
  refuse(error: Error): void;
}

let sessionSequence = 0;

/**
 * A small pool of worker processes, each running the isolate engine behind the runtime protocol
 * over its stdio. Sessions lease a worker while they have cells; one worker is kept started ahead
 * of need (prewarmed); workers without sessions for `idleMs` end (the prewarmed spare stays).
 * Every worker dies with its host: its stdin closes when the host goes (the worker exits on EOF),
 * it watches its parent pid, and where `setpriv` is available it is started with
 * `PR_SET_PDEATHSIG = SIGKILL`, which the kernel delivers even if the worker's thread is stuck.
 */
export class WorkerPool implements RuntimePlacement {
  private readonly settings: WorkerPoolSettings;
  private readonly workers = new Set<Worker>();
  private sequence = 0;
  private closing: Promise<void> | undefined;
  /** Starts that failed since the last one that succeeded: no spare is started while a start fails. */
  private startFailures = 0;

  constructor(settings: WorkerPoolSettings) {
    this.settings = settings;
    if (settings.prewarm) this.topUp();
  }

  private live(): Worker[] {
    return [...this.workers].filter((worker) => !worker.alone && !worker.dead && !worker.stopping && !worker.client?.ended && !processEnded(worker.child.pid));
  }

  async acquire(sink: RuntimeSink, options?: { tenant?: string; alone?: boolean }): Promise<RuntimeLease> {
    if (this.closing) throw new SwitchyardError('SHUTTING_DOWN', 'code mode runtime is shutting down');
    const key = `s${++sessionSequence}`;
    // Without a tenant key every lease is a tenant of its own.
    const tenant = options?.tenant ?? `lease ${key}`;
    // A lone lease (a quarantine replay) gets a worker of its own, beyond `max` while it lives.
    let worker = options?.alone ? Object.assign(this.start(), { alone: true }) : this.pick(tenant);
    if (!worker) {
      worker = await this.waitForWorker(tenant);
      worker.reserved--;
    }
    worker.tenant = tenant;
    worker.sinks.set(key, sink);
    this.clearIdle(worker);
    this.monitor(worker);
    this.topUpSoon();
    let client: RuntimeClient;
    // A host awaiting a worker's start must not exit for lack of anything else to do.
    this.hold(worker, +1);
    try {
      client = await worker.ready;
    } catch (error) {
      worker.sinks.delete(key);
      throw error;
    } finally {
      this.hold(worker, -1);
    }
    let released = false;
    return {
      client,
      key,
      hold: () => {
        this.hold(worker, +1);
        let done = false;
        return () => {
          if (done) return;
          done = true;
          this.hold(worker, -1);
        };
      },
      release: () => {
        if (released) return;
        released = true;
        worker.sinks.delete(key);
        if (worker.alone) void this.stop(worker, 'the runtime worker was idle');
        else if (worker.sinks.size === 0) this.idle(worker);
        this.admitWaiting();
      },
    };
  }

  private readonly waiters: Waiter[] = [];

  /**
   * Admission control: every worker serves another tenant, so the session waits (at most
   * `admissionMs`) for one to be released or to end, and is then refused with a model-visible
   * failure, never placed beside another tenant's cells.
   */
  private waitForWorker(tenant: string): Promise<Worker> {
    return new Promise<Worker>((resolve, reject) => {
      const timer = setTimeout(() => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        const sessions = this.live().reduce((sum, worker) => sum + worker.sinks.size, 0);
        reject(
          new SwitchyardError(
            'RESPOND_TO_MODEL',
            `no Code Mode worker is free: ${sessions} sessions hold the pool's ${this.settings.max} workers (waited ${this.settings.admissionMs} ms; workers.max ${this.settings.max})`,
          ),
        );
      }, this.settings.admissionMs);
      const waiter: Waiter = {
        tenant,
        admit: (worker) => {
          clearTimeout(timer);
          resolve(worker);
        },
        refuse: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** Hands freed workers to waiting sessions, oldest first. */
  private admitWaiting(): void {
    while (this.waiters.length > 0 && !this.closing) {
      const worker = this.pick(this.waiters[0]!.tenant);
      if (!worker) return;
      const waiter = this.waiters.shift()!;
      // Claimed now, so that the next waiter does not get the same fresh worker.
      worker.tenant = waiter.tenant;
      worker.reserved++;
      waiter.admit(worker);
    }
  }

  /** Ends every worker: pipes closed first (a worker exits on EOF), SIGKILL after 1 s. */
  shutdown(): Promise<void> {
    if (this.topUpTimer) clearTimeout(this.topUpTimer);
    for (const waiter of this.waiters.splice(0)) waiter.refuse(new SwitchyardError('SHUTTING_DOWN', 'code mode runtime is shutting down'));
    this.closing ??= Promise.all([...this.workers].map((worker) => this.stop(worker, 'the exec runtime was shut down'))).then(() => undefined);
    return this.closing;
  }

  /**
   * The worker for a session of `tenant`, or undefined when it must wait. With `perSession` (the
   * default): a worker of the same tenant, else a fresh one, else a new one within `max`, else an
   * idle worker of another tenant is ended to make room; never a worker serving another tenant.
   * Without `perSession`: an idle worker, a new one, else the least loaded.
   */
  private pick(tenant: string): Worker | undefined {
    const live = this.live();
    if (!this.settings.perSession) {
      const idle = live.find((worker) => worker.sinks.size === 0);
      if (idle) return idle;
      if (live.length < this.settings.max) return this.start();
      return live.reduce((best, worker) => (worker.sinks.size < best.sinks.size ? worker : best));
    }
    const own = live.filter((worker) => worker.tenant === tenant);
    if (own.length > 0) return own.reduce((best, worker) => (worker.sinks.size < best.sinks.size ? worker : best));
    const fresh = live.find((worker) => worker.tenant === undefined);
    if (fresh) return fresh;
    if (live.length < this.settings.max) return this.start();
    const parked = live.find((worker) => worker.sinks.size === 0 && worker.reserved === 0);
    if (!parked) return undefined;
    // It served another tenant: it ends rather than carrying that tenant's process into this one.
    void this.stop(parked, 'the runtime worker was idle');
    return this.start();
  }

  private topUpTimer: NodeJS.Timeout | undefined;

  /**
   * A replacement spare, a moment after the spare was taken: a short-lived host (one command, one
   * cell) is done before it would start, a long-lived one has it ready for its next session or a crash.
   */
  private topUpSoon(): void {
    if (!this.settings.prewarm || this.topUpTimer) return;
    this.topUpTimer = setTimeout(() => {
      this.topUpTimer = undefined;
      this.topUp();
    }, SPARE_DELAY_MS);
    this.topUpTimer.unref();
  }

  /** Keeps one idle worker started when prewarming, within `max`. */
  private topUp(): void {
    if (!this.settings.prewarm || this.closing || this.startFailures > 0) return;
    const live = this.live();
    const spareExists = live.some((worker) => (this.settings.perSession ? worker.tenant === undefined : worker.sinks.size === 0));
    if (live.length >= this.settings.max || spareExists) return;
    const spare = this.start();
    // A spare that fails to start is not replaced until the next acquisition (no spawn loop).
    spare.ready.catch(() => undefined);
    this.idle(spare);
  }

  private start(): Worker {
    const entry = workerEntry();
    const args = [
      '--no-node-snapshot',
      `--max-old-space-size=${this.settings.memoryMb}`,
      ...entry.execArgv,
      entry.file,
      `--max-frame-bytes=${this.settings.maxFrameBytes}`,
    ];
    const setpriv = this.settings.deathSignal ? setprivPath() : undefined;
    const command = setpriv ?? process.execPath;
    const commandArgs = setpriv ? ['--pdeathsig', 'SIGKILL', '--', process.execPath, ...args] : args;
    // An empty environment: the worker runs untrusted code and needs none of the host's secrets.
    const child = spawn(command, commandArgs, { cwd: entry.cwd, env: {}, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    const worker: Worker = {
      id: ++this.sequence,
      child,
      ready: undefined as never,
      sinks: new Map(),
      holds: 0,
      exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
      stderrTail: '',
      dead: false,
      stopping: false,
      lastHeardAt: Date.now(),
      reserved: 0,
    };
    this.workers.add(worker);
    // Any byte from the worker proves its event loop runs: a heartbeat answer queued behind bulk
    // frames (stored values, results) cannot make a busy but healthy worker look dead.
    child.stdout!.on('data', () => {
      worker.lastHeardAt = Date.now();
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => {
      worker.stderrTail = (worker.stderrTail + text).slice(-STDERR_TAIL_BYTES);
    });
    child.once('error', (error) => {
      worker.killCause ??= `the runtime worker could not be started: ${error.message}`;
    });
    void worker.exited.then(() => this.died(worker));
    const transport = createStreamTransport({ readable: child.stdout!, writable: child.stdin!, maxFrameBytes: this.settings.maxFrameBytes });
    worker.ready = connectRuntime({
      transport,
      maxFrameBytes: this.settings.maxFrameBytes,
      decideCause: (reason) => this.causeOf(worker, reason),
      onEvent: (message) => this.route(worker, message),
      onLost: (cause) => {
        worker.killCause ??= cause;
        this.kill(worker);
        for (const sink of [...worker.sinks.values()]) sink.onLost(cause);
        worker.sinks.clear();
      },
    }).then((client) => {
      worker.client = client;
      this.startFailures = 0;
      this.setRef(worker);
      return client;
    });
    worker.ready.catch(() => {
      this.startFailures++;
      this.kill(worker);
    });
    this.setRef(worker);
    return worker;
  }

  /** Messages for sessions the worker no longer serves still get their exactly-once answer. */
  private route(worker: Worker, message: RuntimeEventMessage): void {
    const session = 'session' in message ? message.session : undefined;
    const sink = session === undefined ? undefined : worker.sinks.get(session);
    if (sink) return sink.onEvent(message);
    if (message.t === 'call') worker.client?.post({ t: 'call-result', call: message.call, ok: false, error: `exec cell ${message.cellId} not found` });
  }

  /** Why a worker's connection ended: the pool's own reason, a protocol reason, or the exit status and V8's last words. */
  private async causeOf(worker: Worker, reason: string | undefined): Promise<string> {
    if (worker.killCause) return worker.killCause;
    if (reason?.startsWith('protocol violation')) {
      worker.killCause = reason;
      return reason;
    }
    // Pipes closed (or a write to them failed, EPIPE, which may come before the exit is seen): give
    // the process a moment to report how it ended. (These timers keep the event loop alive: whoever
    // waits on the lost cells is answered before the host may exit.)
    const status = await Promise.race([worker.exited, delay(EXIT_GRACE_MS, true).then(() => undefined)]);
    if (worker.killCause) return worker.killCause;
    if (!status) {
      worker.killCause = reason ? `the runtime worker's pipes failed (${reason}) and it did not exit` : 'the runtime worker closed its pipes and did not exit';
      return worker.killCause;
    }
    await delay(20, true); // the rest of stderr
    return describeExit(status, worker.stderrTail);
  }

  private died(worker: Worker): void {
    if (worker.dead) return;
    worker.dead = true;
    this.workers.delete(worker);
    this.clearIdle(worker);
    if (worker.monitor) clearInterval(worker.monitor);
    queueMicrotask(() => this.admitWaiting());
    // The client reports the loss to the sessions (onLost) once the cause is known; a new spare is started meanwhile.
    this.topUpSoon();
  }

  private hold(worker: Worker, delta: number): void {
    worker.holds += delta;
    this.setRef(worker);
  }

  /** A worker keeps the host's event loop alive only while a session waits on it. */
  private setRef(worker: Worker): void {
    const keep = worker.holds > 0;
    const child = worker.child as ChildProcess & { unref(): void; ref(): void };
    if (keep) child.ref();
    else child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) {
      const handle = stream as unknown as { ref?: () => void; unref?: () => void } | null;
      if (keep) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  private idle(worker: Worker): void {
    this.clearIdle(worker);
    this.monitor(worker);
    if (this.closing || worker.dead) return;
    worker.idleTimer = setTimeout(() => {
      worker.idleTimer = undefined;
      if (worker.sinks.size > 0 || worker.reserved > 0 || worker.dead || worker.stopping) return;
      const idleOthers = this.live().filter((other) => other !== worker && other.sinks.size === 0);
      // The prewarmed spare stays (a fresh worker, with perSession); any other idle worker ends.
      const spare = this.settings.perSession ? worker.tenant === undefined : idleOthers.length === 0;
      if (this.settings.prewarm && spare) return;
      void this.stop(worker, 'the runtime worker was idle');
    }, this.settings.idleMs);
    worker.idleTimer.unref();
  }

  private clearIdle(worker: Worker): void {
    if (worker.idleTimer) clearTimeout(worker.idleTimer);
    worker.idleTimer = undefined;
  }

  /** Watches the worker's resident memory (and its heartbeat while it serves sessions). */
  private monitor(worker: Worker): void {
    const every = worker.sinks.size > 0 ? RSS_POLL_MS : IDLE_RSS_POLL_MS;
    if (worker.monitor && worker.monitorEvery === every) return;
    if (worker.monitor) clearInterval(worker.monitor);
    worker.monitorEvery = every;
    let lastPing = 0;
    let pingSentAt: number | undefined;
    let lastTick = Date.now();
    worker.monitor = setInterval(() => {
      if (worker.dead) return;
      const tick = Date.now();
      // This tick came late: the host's own event loop was busy, so bytes the worker sent meanwhile
      // may still wait unread. The silence is the host's, not the worker's: give it a fresh window.
      if (tick - lastTick > Math.max(1_000, 10 * every) && pingSentAt !== undefined) pingSentAt = tick;
      lastTick = tick;
      const rssMb = residentMb(worker.child.pid);
      if (rssMb !== undefined && rssMb > this.settings.memoryMb) {
        worker.killCause ??= `the runtime worker exceeded its memory limit of ${this.settings.memoryMb} MB (resident ${Math.round(rssMb)} MB)`;
        return this.kill(worker);
      }
      const client = worker.client;
      if (!client || client.ended) return;
      const now = Date.now();
      const silentMs = now - Math.max(pingSentAt ?? 0, worker.lastHeardAt);
      if (pingSentAt !== undefined && silentMs > this.settings.heartbeatTimeoutMs) {
        worker.killCause ??= `the runtime worker stopped answering (no reply to a heartbeat for ${this.settings.heartbeatTimeoutMs} ms)`;
        return this.kill(worker);
      }
      if (pingSentAt === undefined && now - lastPing > this.settings.heartbeatTimeoutMs / 3) {
        lastPing = now;
        pingSentAt = now;
        client.request({ t: 'ping' }).then(
          () => (pingSentAt = undefined),
          () => undefined,
        );
      }
    }, every);
    worker.monitor.unref();
  }

  private kill(worker: Worker): void {
    if (worker.dead) return;
    worker.stopping = true;
    try {
      worker.child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }

  /** Ends one worker gracefully: its cells are lost with `cause` (sessions usually released it before). */
  private async stop(worker: Worker, cause: string): Promise<void> {
    if (worker.dead) return;
    worker.stopping = true;
    worker.killCause ??= cause;
    this.clearIdle(worker);
    // Whoever awaits shutdown waits for the exit: keep the event loop alive until then.
    this.hold(worker, +1);
    worker.client?.close(cause);
    worker.child.stdin?.end();
    const exited = await Promise.race([worker.exited.then(() => true), delay(EXIT_GRACE_MS).then(() => false)]);
    if (!exited) {
      this.kill(worker);
      await worker.exited;
    }
    for (const sink of [...worker.sinks.values()]) sink.onLost(cause);
    worker.sinks.clear();
  }
}

let entry: { file: string; execArgv: string[]; cwd: string } | undefined;

/**
 * The worker entry: `dist/worker.js` beside the built package. Running from source (this
 * monorepo's tests), `src/worker.ts` through tsx, unless `dist/worker.js` is at least as new as
 * every source file (a fresh build starts in a fraction of tsx's time).
 */
function workerEntry(): { file: string; execArgv: string[]; cwd: string } {
  if (entry) return entry;
  const here = fileURLToPath(import.meta.url);
  const folder = dirname(here);
  if (!here.endsWith('.ts')) return (entry = { file: join(folder, 'worker.js'), execArgv: [], cwd: folder });
  const root = dirname(folder);
  const built = join(root, 'dist', 'worker.js');
  try {
    const builtAt = statSync(built).mtimeMs;
    const newest = Math.max(...readdirSync(folder).map((name) => statSync(join(folder, name)).mtimeMs));
    if (builtAt >= newest) return (entry = { file: built, execArgv: [], cwd: join(root, 'dist') });
  } catch {
    // no build: run the sources
  }
  return (entry = { file: join(folder, 'worker.ts'), execArgv: ['--conditions=@switchyard/source', '--import', 'tsx'], cwd: root });
}

let setpriv: string | null | undefined;

/** `setpriv` when it is on PATH and supports `--pdeathsig` (util-linux ≥ 2.33), else undefined. */
function setprivPath(): string | undefined {
  if (setpriv === undefined) {
    setpriv = null;
    if (process.platform === 'linux') {
      for (const folder of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
        const candidate = join(folder, 'setpriv');
        if (!folder || !existsSync(candidate)) continue;
        const probe = spawnSync(candidate, ['--pdeathsig', 'SIGKILL', '--', process.execPath, '-e', ''], { stdio: 'ignore', timeout: 10_000 });
        if (probe.status === 0) setpriv = candidate;
        break;
      }
    }
  }
  return setpriv ?? undefined;
}

/**
 * True when the process is known to be gone or a zombie (Linux /proc): killed a moment ago, its
 * exit not yet seen by this event loop. Such a worker is not handed to a session. Elsewhere: false.
 */
function processEnded(pid: number | undefined): boolean {
  if (pid === undefined || !hasProc()) return false;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return true;
  }
  // "pid (comm) S …": the state follows the last ')' (comm may hold parentheses)
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X';
}

let procMounted: boolean | undefined;
const hasProc = () => (procMounted ??= process.platform === 'linux' && existsSync(`/proc/${process.pid}/stat`));

/** Resident memory of a process in MB (`VmRSS` of /proc/<pid>/status, Linux); undefined where there is no /proc. */
export function residentMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** "the runtime worker crashed with SIGTRAP (V8: Fatal JavaScript invalid size error 169220804)". */
export function describeExit(status: { code: number | null; signal: NodeJS.Signals | null }, stderr: string): string {
  const last = fatalLine(stderr);
  const detail = last ? ` (${last})` : '';
  if (status.signal === 'SIGKILL' || status.signal === 'SIGTERM' || status.signal === 'SIGINT') return `the runtime worker was killed by ${status.signal}${detail}`;
  if (status.signal) return `the runtime worker crashed with ${status.signal}${detail}`;
  return `the runtime worker exited with code ${status.code}${detail}`;
}

/** What a worker's stderr says killed it (V8's fatal error, a heap out-of-memory abort, an uncaught exception), shortened. */
function fatalLine(stderr: string): string | undefined {
  const lines = stderr
    .split('\n')
    .map((line) => line.replace(/^#\s*/, '').trim())
    // V8's banner says where ("Fatal error in , line 0"); the next line says what
    .filter((line) => line && !/^Fatal error in .*, line \d+$/.test(line));
  const shorten = (line: string) => (line.length > 200 ? `${line.slice(0, 200)}…` : line);
  const fatal = lines.find((line) => /^Fatal /.test(line)) ?? lines.find((line) => /FATAL ERROR/.test(line));
  if (fatal) return shorten(fatal);
  if (/is_heap_oom = 1|heap out of memory/.test(stderr)) {
    const limit = /heap_size_limit = (\d+)/.exec(stderr);
    return `V8 ran out of heap memory${limit ? ` at a heap limit of ${Math.round(Number(limit[1]) / (1024 * 1024))} MB` : ''}`;
  }
  const error = lines.find((line) => /^\w*Error\b/.test(line));
  return error ? shorten(error) : undefined;
}

const delay = (ms: number, keepAlive = false) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (!keepAlive) timer.unref?.();
  });
