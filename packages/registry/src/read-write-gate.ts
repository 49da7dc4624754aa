import { SwitchyardError } from '@switchyard/protocol';

/** `shared` slots run together; an `exclusive` holder runs alone. */
export type GateMode = 'shared' | 'exclusive';

/** Gives the slot back. Calling it more than once is harmless. */
export type GateRelease = () => void;

interface Waiter {
  readonly mode: GateMode;
  grant(): void;
}

/**
 * A fair (first-come, first-served) read/write gate: the turn-wide lock: parallel-safe calls share it, the others take it alone.
 * A shared request queued behind an exclusive one waits for it, so an exclusive call is never
 * starved by a stream of parallel-safe calls.
 */
export class ReadWriteGate {
  private shared = 0;
  private exclusive = false;
  private readonly queue: Waiter[] = [];

  /** @param maxShared most `shared` holders at once (admission control); a request past it queues in order. */
  constructor(private readonly maxShared = Infinity) {}

  /** Takes a slot at once when one is free and nobody waits; `undefined` otherwise. Never throws. */
  tryAcquire(mode: GateMode): GateRelease | undefined {
    if (this.queue.length > 0 || !this.canGrant(mode)) return undefined;
    this.take(mode);
    return this.releaser(mode);
  }

  /**
   * Waits for a slot. Rejects with an `ABORTED` error (and leaves the queue) if `signal` aborts
   * first; resolves with the release function otherwise.
   */
  acquire(mode: GateMode, signal?: AbortSignal): Promise<GateRelease> {
    if (signal?.aborted) return Promise.reject(abortedError(signal));
    if (this.queue.length === 0 && this.canGrant(mode)) {
      this.take(mode);
      return Promise.resolve(this.releaser(mode));
    }
    return new Promise<GateRelease>((resolve, reject) => {
      const onAbort = () => {
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
        reject(abortedError(signal));
        this.drain();
      };
      const waiter: Waiter = {
        mode,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.releaser(mode));
        },
      };
      this.queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private canGrant(mode: GateMode): boolean {
    return mode === 'shared' ? !this.exclusive && this.shared < this.maxShared : !this.exclusive && this.shared === 0;
  }

  private take(mode: GateMode): void {
    if (mode === 'shared') this.shared += 1;
    else this.exclusive = true;
  }

  private releaser(mode: GateMode): GateRelease {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (mode === 'shared') this.shared -= 1;
      else this.exclusive = false;
      this.drain();
    };
  }

  private drain(): void {
    while (this.queue.length > 0 && this.canGrant(this.queue[0].mode)) {
      const waiter = this.queue.shift() as Waiter;
      this.take(waiter.mode);
      waiter.grant();
    }
  }
}

function abortedError(signal: AbortSignal | undefined): SwitchyardError {
  return new SwitchyardError('ABORTED', 'cancelled while waiting for the tool gate', { cause: signal?.reason });
}
