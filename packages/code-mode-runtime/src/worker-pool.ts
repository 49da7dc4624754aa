import type { ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { SwitchyardError } from '@switchyard/protocol';
import { connectRuntime, type RuntimeClient, type RuntimeEventMessage } from './runtime-client';
import { createStreamTransport } from './protocol';
import type { RuntimeLease, RuntimePlacement, RuntimeSink } from './remote-session';
import { AdmissionQueue, type AdmissionEvent } from './admission-queue';
import { accepts, aloneOverflow, describePool, drainTarget, preferred, type PlacedWorker, type PlacementTicket } from './placement-rules';
import { WorkerWatch } from './worker-watch';
import { delay, describeExit, processEnded, startWorkerProcess } from './worker-process';

/** Settings of a pool of runtime worker processes (see `ProcessWorkerOptions`, all filled in). */
export interface WorkerPoolSettings {
  max: number;
  /** Most sessions one worker holds at once. */
  sessionsPerWorker: number;
  perSession: boolean;
  idleMs: number;
  prewarm: boolean;
  memoryMb: number;
  heartbeatTimeoutMs: number;
  maxFrameBytes: number;
  deathSignal: boolean;
  /** Longest a session waits in the admission queue (ms). */
  admissionMs: number;
  /** Most sessions waiting in the admission queue at once. */
  maxQueued: number;
}

/** `acquire` options the pool takes beyond a placement's: where a waiting session's host hears of its wait. */
export interface PoolAcquireOptions {
  tenant?: string;
  alone?: boolean;
  report?(event: AdmissionEvent): void;
}

/** How long a worker may take to exit after its pipes closed, before SIGKILL (ms). */
const EXIT_GRACE_MS = 1_000;
/** How long after the spare was taken (or a worker died) a new spare is started (ms). */
const SPARE_DELAY_MS = 250;
/** Bytes of a worker's stderr kept to name the cause of a crash. */
const STDERR_TAIL_BYTES = 16 * 1024;
/** Tenants remembered as isolated (`isolateTenant`); past it the oldest is forgotten. */
const MAX_ISOLATED_TENANTS = 10_000;
/** Placements retried when the chosen worker turns out dead, or fails to start, before its lease was handed out. */
const PLACEMENT_ATTEMPTS = 3;
/**
 * Worker processes starting at once, at most (one per CPU, at least 2): a start is mostly CPU
 * (Node, isolated-vm), so more at once only makes each take longer — under load, long enough to
 * miss its handshake. Sessions that need a worker meanwhile wait in the admission queue.
 */
const MAX_STARTING = Math.max(2, availableParallelism());

interface Lease {
  readonly sink: RuntimeSink;
  readonly tenant: string;
  /** Still being handed out: a loss meanwhile makes `acquire` place again instead of reporting it. */
  placing: boolean;
  lostWhilePlacing?: string;
}

interface Worker extends PlacedWorker {
  readonly id: number;
  child?: ChildProcess;
  client?: RuntimeClient;
  ready: Promise<RuntimeClient>;
  readonly leases: Map<string, Lease>;
  readonly tenants: Map<string, number>;
  holds: number;
  /** Why the pool ended it (memory, heartbeat, shutdown); a crash leaves it unset. */
  killCause?: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderrTail: string;
  idleTimer?: NodeJS.Timeout;
  watch?: WorkerWatch;
  dead: boolean;
  /** Being ended on purpose (idle, excess, shutdown, found dead): never picked again. */
  stopping: boolean;
}

interface Ticket extends PlacementTicket {
  readonly key: string;
  readonly sink: RuntimeSink;
}

let sessionSequence = 0;

/**
 * A pool of worker processes, each running the isolate engine behind the runtime protocol over
 * its stdio. Sessions hold a place on a worker while they have cells. By default sessions of
 * different tenants share workers (dense placement, up to `sessionsPerWorker` each; a tenant made
 * isolated is placed alone), `perSession` gives each tenant workers of its own, and a lone lease
 * (`alone`) gets a worker nobody else uses. Sessions beyond the pool wait in a fair queue
 * ({@link AdmissionQueue}). One worker is kept started ahead of need (prewarmed); workers without
 * sessions for `idleMs` end. A warm worker is never ended to start another, except under
 * `perSession`, where a worker never passes from one tenant to another.
 * Every worker dies with its host: its stdin closes when the host goes (the worker exits on EOF),
 * it watches its parent pid, and where `setpriv` is available it is started with
 * `PR_SET_PDEATHSIG = SIGKILL`, which the kernel delivers even if the worker's thread is stuck.
 */
export class WorkerPool implements RuntimePlacement {
  private readonly settings: WorkerPoolSettings;
  private readonly workers = new Set<Worker>();
  private readonly queue: AdmissionQueue<Ticket, Worker>;
  private readonly isolated = new Set<string>();
  private sequence = 0;
  private starts = 0;
  /** Workers started whose handshake has not settled yet. */
  private starting = 0;
  /** A worker of this pool has started once: a later failed start is taken as transient (retried). */
  private startedOnce = false;
  private closing: Promise<void> | undefined;
  /** Starts that failed since the last one that succeeded: no spare is started while a start fails. */
  private startFailures = 0;
  private topUpTimer: NodeJS.Timeout | undefined;

  constructor(settings: WorkerPoolSettings) {
    this.settings = settings;
    this.queue = new AdmissionQueue(settings, () => describePool(this.live(), settings));
    if (settings.prewarm) this.topUp();
  }

  /** Processes started, alive, sessions placed and waiting (for tests and a host's metrics). */
  stats(): { started: number; workers: number; sessions: number; waiting: number } {
    const live = this.live();
    return { started: this.starts, workers: live.length, sessions: live.reduce((sum, worker) => sum + worker.leases.size, 0), waiting: this.queue.size };
  }

  /** `tenant`'s sessions are placed on workers no other tenant uses from now on (its current leases stay where they are). */
  isolateTenant(tenant: string): void {
    this.isolated.delete(tenant);
    this.isolated.add(tenant);
    if (this.isolated.size > MAX_ISOLATED_TENANTS) this.isolated.delete(this.isolated.values().next().value!);
  }

  async acquire(sink: RuntimeSink, options: PoolAcquireOptions = {}): Promise<RuntimeLease> {
    if (this.closing) throw shuttingDown();
    const key = `s${++sessionSequence}`;
    // Without a tenant key every lease is a tenant of its own.
    const tenant = options.tenant ?? `lease ${key}`;
    const alone = options.alone === true;
    const ticket: Ticket = { key, sink, tenant, alone, urgent: alone, ...(options.report && { report: options.report }) };
    for (let attempt = 1; ; attempt++) {
      if (this.closing) throw shuttingDown();
      const startsBefore = this.starts;
      const worker = this.place(ticket) ?? (await this.waitForPlace(ticket));
      // A worker that fails to start fails the acquisition when no worker of this pool ever started
      // (no spawn loop on a broken install); otherwise, and for a worker that was there before (a
      // spare killed a moment ago), the session is placed again.
      const retry = attempt < PLACEMENT_ATTEMPTS && (this.starts === startsBefore || this.startedOnce);
      const client = await this.readyFor(worker, ticket, retry);
      if (!client) continue;
      const lease = worker.leases.get(key)!;
      // Found dead after it was chosen (killed a moment ago, its exit not yet seen): placed again.
      const gone = lease.lostWhilePlacing !== undefined || (await processEnded(worker.child?.pid));
      if (!gone) {
        lease.placing = false;
        return this.leaseOf(worker, key, client);
      }
      worker.stopping = true;
      this.unregister(worker, key);
      if (attempt >= PLACEMENT_ATTEMPTS) throw new Error(`exec runtime failed to start: ${lease.lostWhilePlacing ?? 'the runtime worker ended before its first cell'}`);
    }
  }

  /** Ends every worker: pipes closed first (a worker exits on EOF), SIGKILL after 1 s. */
  shutdown(): Promise<void> {
    if (this.topUpTimer) clearTimeout(this.topUpTimer);
    this.queue.refuseAll(shuttingDown());
    this.closing ??= Promise.all([...this.workers].map((worker) => this.stop(worker, 'the exec runtime was shut down'))).then(() => undefined);
    return this.closing;
  }

  private live(): Worker[] {
    return [...this.workers].filter((worker) => !worker.dead && !worker.stopping && !worker.client?.ended);
  }

  /** Places the ticket now (its lease registered on the worker), or undefined when it must wait. */
  private place(ticket: Ticket): Worker | undefined {
    if (this.closing) return undefined;
    const worker = this.choose(ticket);
    if (!worker) return undefined;
    this.undrain(ticket);
    worker.leases.set(ticket.key, { sink: ticket.sink, tenant: ticket.tenant, placing: true });
    worker.tenants.set(ticket.tenant, (worker.tenants.get(ticket.tenant) ?? 0) + 1);
    if (this.settings.perSession) worker.tenant = ticket.tenant;
    if (ticket.alone) worker.alone = true;
    this.clearIdle(worker);
    this.watch(worker);
    this.topUpSoon();
    return worker;
  }

  /**
   * The worker for the ticket, or undefined: a worker that accepts it (its own tenant's first, then
   * the fullest, so that sessions pack and idle workers can end), else a new one within `max` (a
   * lone lease: up to `aloneOverflow(max)` beyond it). Under `perSession` only, an idle worker of
   * another tenant is ended to make room. Never a worker that must not take it.
   */
  private choose(ticket: Ticket): Worker | undefined {
    const live = this.live();
    const isolated = (tenant: string) => this.isolated.has(tenant);
    const candidates = live.filter((worker) => accepts(worker, ticket, this.settings, isolated));
    if (candidates.length > 0) return preferred(candidates, ticket);
    if (this.starting >= MAX_STARTING) return undefined;
    if (live.length < this.settings.max) return this.start();
    if (ticket.alone && live.length < this.settings.max + aloneOverflow(this.settings.max)) return this.start();
    if (!this.settings.perSession) return undefined;
    const parked = live.find((worker) => worker.leases.size === 0 && !worker.alone && (worker.drainingFor === undefined || worker.drainingFor === ticket));
    if (!parked) return undefined;
    // It served another tenant: it ends rather than carrying that tenant's process into this one.
    void this.stop(parked, 'the runtime worker was idle');
    return this.start();
  }

  /** Waits in the admission queue; a session that waits for a worker of its own has one emptied for it. */
  private async waitForPlace(ticket: Ticket): Promise<Worker> {
    const waiting = this.queue.wait(ticket);
    this.drain();
    try {
      return await waiting;
    } catch (error) {
      // Refused (a bound, shutdown): a worker emptied for it takes others again.
      if (this.undrain(ticket)) this.admitWaiting();
      throw error;
    }
  }

  /** Workers emptied for `ticket` take anyone again (it was placed, or left the queue); true when there was one. */
  private undrain(ticket: Ticket): boolean {
    let found = false;
    for (const worker of this.workers) {
      if (worker.drainingFor !== ticket) continue;
      worker.drainingFor = undefined;
      found = true;
      if (worker.leases.size === 0) this.idle(worker);
    }
    return found;
  }

  /** Hands places to waiting sessions in the queue's fair order, then empties a worker for the first one still waiting, if it needs one. */
  private admitWaiting(): void {
    if (this.closing) return;
    this.queue.admit((ticket) => this.place(ticket));
    this.drain();
  }

  /**
   * A session that only an empty worker can take (an isolated tenant, a new tenant under
   * `perSession`) would wait while others take every freed place: the worker that empties soonest
   * (fewest sessions) takes nobody new until it is empty, then goes to it. One worker at a time.
   */
  private drain(): void {
    if (this.queue.size === 0 || [...this.workers].some((worker) => worker.drainingFor !== undefined && !worker.dead)) return;
    const target = drainTarget(this.live(), this.queue.order(), this.settings, (tenant) => this.isolated.has(tenant));
    if (target) target.worker.drainingFor = target.ticket;
  }

  /** The worker's client once it said hello; a failed start fails the acquisition, or answers undefined when `retry` (its lease removed either way). */
  private async readyFor(worker: Worker, ticket: Ticket, retry: boolean): Promise<RuntimeClient | undefined> {
    // A host awaiting a worker's start must not exit for lack of anything else to do.
    this.hold(worker, +1);
    try {
      return await worker.ready;
    } catch (error) {
      this.unregister(worker, ticket.key);
      if (retry) return undefined;
      throw error;
    } finally {
      this.hold(worker, -1);
    }
  }

  private leaseOf(worker: Worker, key: string, client: RuntimeClient): RuntimeLease {
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
        this.unregister(worker, key);
        this.admitWaiting();
      },
    };
  }

  /** Takes a lease off its worker; an emptied worker idles, or ends at once when the pool is over `max` (a lone lease's extra worker). */
  private unregister(worker: Worker, key: string): void {
    const lease = worker.leases.get(key);
    if (!lease) return;
    worker.leases.delete(key);
    const left = (worker.tenants.get(lease.tenant) ?? 1) - 1;
    if (left > 0) worker.tenants.set(lease.tenant, left);
    else worker.tenants.delete(lease.tenant);
    if (worker.leases.size > 0) return;
    worker.alone = false;
    if (worker.dead || worker.stopping) return;
    if (this.live().length > this.settings.max) void this.stop(worker, 'the runtime worker was not needed any more');
    else this.idle(worker);
  }

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

  /** Keeps one empty worker started when prewarming (never used by a tenant, with `perSession`), within `max`. */
  private topUp(): void {
    if (!this.settings.prewarm || this.closing || this.startFailures > 0 || this.starting >= MAX_STARTING) return;
    const live = this.live();
    if (live.length >= this.settings.max || live.some((worker) => this.isSpare(worker))) return;
    const spare = this.start();
    // A spare that fails to start is not replaced until the next acquisition (no spawn loop).
    spare.ready.catch(() => undefined);
    this.idle(spare);
  }

  private isSpare(worker: Worker): boolean {
    return worker.leases.size === 0 && worker.drainingFor === undefined && (!this.settings.perSession || worker.tenant === undefined);
  }

  private start(): Worker {
    this.starts++;
    this.starting++;
    let markExited!: (status: { code: number | null; signal: NodeJS.Signals | null }) => void;
    const worker: Worker = {
      id: ++this.sequence,
      ready: undefined as never,
      leases: new Map(),
      tenants: new Map(),
      alone: false,
      holds: 0,
      exited: new Promise((resolve) => (markExited = resolve)),
      stderrTail: '',
      dead: false,
      stopping: false,
    };
    this.workers.add(worker);
    void worker.exited.then(() => this.died(worker));
    worker.ready = startWorkerProcess(this.settings).then(
      (child) => this.connect(worker, child, markExited),
      (error: unknown) => {
        markExited({ code: null, signal: null });
        throw error;
      },
    );
    worker.ready.then(
      () => {
        this.startFailures = 0;
        this.startedOnce = true;
        this.started();
      },
      () => {
        this.startFailures++;
        this.kill(worker);
        this.started();
      },
    );
    return worker;
  }

  /** A start settled: a session waiting for a start may have its turn, and the spare its top-up. */
  private started(): void {
    this.starting--;
    this.admitWaiting();
    this.topUpSoon();
  }

  /** Wires a started process to its worker record and says hello over its stdio. */
  private connect(worker: Worker, child: ChildProcess, markExited: (status: { code: number | null; signal: NodeJS.Signals | null }) => void): Promise<RuntimeClient> {
    worker.child = child;
    child.once('exit', (code, signal) => markExited({ code, signal }));
    child.once('error', (error) => {
      worker.killCause ??= `the runtime worker could not be started: ${error.message}`;
      if (child.pid === undefined) markExited({ code: null, signal: null });
    });
    if (worker.stopping) this.kill(worker);
    this.setRef(worker);
    // Any byte from the worker proves its event loop runs: a heartbeat answer queued behind bulk
    // frames (stored values, results) cannot make a busy but healthy worker look dead.
    child.stdout!.on('data', () => worker.watch?.heard());
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => {
      worker.stderrTail = (worker.stderrTail + text).slice(-STDERR_TAIL_BYTES);
    });
    const transport = createStreamTransport({ readable: child.stdout!, writable: child.stdin!, maxFrameBytes: this.settings.maxFrameBytes });
    return connectRuntime({
      transport,
      maxFrameBytes: this.settings.maxFrameBytes,
      decideCause: (reason) => this.causeOf(worker, reason),
      onEvent: (message) => this.route(worker, message),
      onLost: (cause) => {
        worker.killCause ??= cause;
        this.kill(worker);
        this.lose(worker, cause);
      },
    }).then((client) => {
      worker.client = client;
      this.setRef(worker);
      return client;
    });
  }

  /** Tells every session on the worker that it is gone (a lease still being handed out is placed again instead). */
  private lose(worker: Worker, cause: string): void {
    for (const [key, lease] of [...worker.leases]) {
      if (lease.placing) {
        lease.lostWhilePlacing ??= cause;
        continue;
      }
      worker.leases.delete(key);
      lease.sink.onLost(cause);
    }
    worker.tenants.clear();
    for (const lease of worker.leases.values()) worker.tenants.set(lease.tenant, (worker.tenants.get(lease.tenant) ?? 0) + 1);
  }

  /** Messages for sessions the worker no longer serves still get their exactly-once answer. */
  private route(worker: Worker, message: RuntimeEventMessage): void {
    const session = 'session' in message ? message.session : undefined;
    const lease = session === undefined ? undefined : worker.leases.get(session);
    if (lease) return lease.sink.onEvent(message);
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
    worker.watch?.stop();
    worker.drainingFor = undefined;
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
    const child = worker.child as (ChildProcess & { unref(): void; ref(): void }) | undefined;
    if (!child) return;
    const keep = worker.holds > 0;
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
    this.watch(worker);
    if (this.closing || worker.dead) return;
    worker.idleTimer = setTimeout(() => {
      worker.idleTimer = undefined;
      if (worker.leases.size > 0 || worker.drainingFor !== undefined || worker.dead || worker.stopping) return;
      const otherSpare = this.live().some((other) => other !== worker && this.isSpare(other));
      // The prewarmed spare stays; any other idle worker ends.
      if (this.settings.prewarm && this.isSpare(worker) && !otherSpare) return;
      void this.stop(worker, 'the runtime worker was idle');
    }, this.settings.idleMs);
    worker.idleTimer.unref();
  }

  private clearIdle(worker: Worker): void {
    if (worker.idleTimer) clearTimeout(worker.idleTimer);
    worker.idleTimer = undefined;
  }

  /** Watches the worker's resident memory (and its heartbeat while it serves sessions). */
  private watch(worker: Worker): void {
    worker.watch ??= new WorkerWatch({
      pid: () => worker.child?.pid,
      client: () => worker.client,
      settings: this.settings,
      kill: (cause) => {
        worker.killCause ??= cause;
        this.kill(worker);
      },
    });
    worker.watch.every(worker.leases.size > 0);
  }

  private kill(worker: Worker): void {
    if (worker.dead) return;
    worker.stopping = true;
    try {
      worker.child?.kill('SIGKILL');
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
    worker.child?.stdin?.end();
    const exited = await Promise.race([worker.exited.then(() => true), delay(EXIT_GRACE_MS).then(() => false)]);
    if (!exited) {
      this.kill(worker);
      await worker.exited;
    }
    this.lose(worker, cause);
  }
}

const shuttingDown = () => new SwitchyardError('SHUTTING_DOWN', 'code mode runtime is shutting down');
