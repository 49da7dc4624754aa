/**
 * The elicitations of one server that wait for the user. While any is pending, every call to that
 * server stops counting time: a person answering a question is not the tool being slow.
 */
export class ElicitationPause {
  private pending = 0;
  private readonly listeners = new Set<(paused: boolean) => void>();

  get paused(): boolean {
    return this.pending > 0;
  }

  /** Marks one elicitation pending; the returned function ends it (a second call does nothing). */
  begin(): () => void {
    this.pending++;
    if (this.pending === 1) this.emit(true);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.pending--;
      if (this.pending === 0) this.emit(false);
    };
  }

  /** Calls `listener` with `true` when the first elicitation starts and `false` when the last ends. */
  onChange(listener: (paused: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(paused: boolean): void {
    for (const listener of [...this.listeners]) listener(paused);
  }
}

/** Which limit a call ran into. */
export type CallTimeoutLimit = 'idle' | 'total';

/** Options of {@link CallTimer}. */
export interface CallTimerOptions {
  /** Running time allowed without progress, in milliseconds (`toolTimeoutMs`). */
  readonly idleMs: number;
  /** Running time allowed in all, in milliseconds (`maxCallTimeMs`); none when absent. */
  readonly totalMs?: number;
  /** The server's pending elicitations: while any is pending, no time is counted. */
  readonly pause: ElicitationPause;
  /** Called once, when a limit is reached. */
  readonly onTimeout: (limit: CallTimeoutLimit) => void;
  /** The clock, in milliseconds (`performance.now` by default; tests inject their own). */
  readonly now?: () => number;
}

/**
 * The time limits of one call, counted only while no elicitation of its server is pending:
 * `idleMs` of running time since the start or the last `progress()`, and `totalMs` of running
 * time in all. `dispose()` when the call ends.
 */
export class CallTimer {
  private readonly now: () => number;
  /** Running time counted before the current stretch, since the last progress and in all. */
  private idleBefore = 0;
  private totalBefore = 0;
  /** Start of the current running stretch, `undefined` while paused. */
  private runningSince: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private done = false;
  private readonly stopListening: () => void;

  constructor(private readonly options: CallTimerOptions) {
    this.now = options.now ?? (() => performance.now());
    this.stopListening = options.pause.onChange((paused) => (paused ? this.stop() : this.run()));
    if (!options.pause.paused) this.run();
  }

  /** Progress arrived: the idle limit starts again. */
  progress(): void {
    if (this.done) return;
    this.settle();
    this.idleBefore = 0;
    this.schedule();
  }

  /** Stops counting for good. */
  dispose(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.stopListening();
  }

  private run(): void {
    if (this.done || this.runningSince !== undefined) return;
    this.runningSince = this.now();
    this.schedule();
  }

  private stop(): void {
    if (this.done || this.runningSince === undefined) return;
    this.settle();
    this.runningSince = undefined;
    clearTimeout(this.timer);
  }

  /** Moves the current stretch into the counters. */
  private settle(): void {
    if (this.runningSince === undefined) return;
    const now = this.now();
    this.idleBefore += now - this.runningSince;
    this.totalBefore += now - this.runningSince;
    this.runningSince = now;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.runningSince === undefined) return;
    const idleLeft = this.options.idleMs - this.idleBefore;
    const totalLeft = this.options.totalMs === undefined ? Infinity : this.options.totalMs - this.totalBefore;
    const limit: CallTimeoutLimit = totalLeft < idleLeft ? 'total' : 'idle';
    this.timer = setTimeout(() => this.expire(limit), Math.max(0, Math.min(idleLeft, totalLeft)));
    this.timer.unref?.();
  }

  private expire(limit: CallTimeoutLimit): void {
    if (this.done) return;
    this.dispose();
    this.options.onTimeout(limit);
  }
}
