import type { RuntimeClient } from './runtime-client';
import { residentMb } from './worker-process';

/** How often a worker's resident memory is read while it serves sessions (ms). */
const RSS_POLL_MS = 100;
/** How often an idle worker's memory is read (ms). */
const IDLE_RSS_POLL_MS = 1_000;

/** What a {@link WorkerWatch} watches and how it ends a worker. */
export interface WorkerWatchOptions {
  pid(): number | undefined;
  client(): RuntimeClient | undefined;
  settings: { memoryMb: number; heartbeatTimeoutMs: number };
  /** Ends the worker, naming why. */
  kill(cause: string): void;
}

/**
 * One worker's watch from the host: its resident memory (read from /proc asynchronously, at most
 * one read in flight; over `memoryMb` the worker is killed) and its heartbeat (a ping every third
 * of `heartbeatTimeoutMs`; a worker from which nothing arrives for that long after a ping is
 * killed). Any byte from the worker counts as proof of life ({@link heard}).
 */
export class WorkerWatch {
  private timer: NodeJS.Timeout | undefined;
  private everyMs = 0;
  private lastHeardAt = Date.now();
  private lastPing = 0;
  private pingSentAt: number | undefined;
  private lastTick = Date.now();
  private reading = false;
  private stopped = false;

  constructor(private readonly options: WorkerWatchOptions) {}

  /** A byte arrived from the worker. */
  heard(): void {
    this.lastHeardAt = Date.now();
  }

  /** Polls often while the worker serves sessions (`busy`), rarely while it idles. */
  every(busy: boolean): void {
    const every = busy ? RSS_POLL_MS : IDLE_RSS_POLL_MS;
    if (this.stopped || (this.timer && this.everyMs === every)) return;
    if (this.timer) clearInterval(this.timer);
    this.everyMs = every;
    this.timer = setInterval(() => this.tick(), every);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    const now = Date.now();
    // This tick came late: the host's own event loop was busy, so bytes the worker sent meanwhile
    // may still wait unread. The silence is the host's, not the worker's: give it a fresh window.
    if (now - this.lastTick > Math.max(1_000, 10 * this.everyMs) && this.pingSentAt !== undefined) this.pingSentAt = now;
    this.lastTick = now;
    this.readMemory();
    const client = this.options.client();
    if (!client || client.ended) return;
    const { heartbeatTimeoutMs } = this.options.settings;
    const silentMs = now - Math.max(this.pingSentAt ?? 0, this.lastHeardAt);
    if (this.pingSentAt !== undefined && silentMs > heartbeatTimeoutMs) {
      return this.options.kill(`the runtime worker stopped answering (no reply to a heartbeat for ${heartbeatTimeoutMs} ms)`);
    }
    if (this.pingSentAt === undefined && now - this.lastPing > heartbeatTimeoutMs / 3) {
      this.lastPing = now;
      this.pingSentAt = now;
      client.request({ t: 'ping' }).then(
        () => (this.pingSentAt = undefined),
        () => undefined,
      );
    }
  }

  private readMemory(): void {
    if (this.reading) return;
    this.reading = true;
    void residentMb(this.options.pid()).then((rssMb) => {
      this.reading = false;
      const { memoryMb } = this.options.settings;
      if (this.stopped || rssMb === undefined || rssMb <= memoryMb) return;
      this.options.kill(`the runtime worker exceeded its memory limit of ${memoryMb} MB (resident ${Math.round(rssMb)} MB)`);
    });
  }
}
