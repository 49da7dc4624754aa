import { SwitchyardError } from '@switchyard/protocol';

/** What a turn does when another turn of its session runs: wait its turn (default) or fail at once with `BUSY`. */
export type IfBusy = 'wait' | 'fail';

/** The `BUSY` error: `session` already runs a turn. */
export function busyError(sessionId: string, what: string): SwitchyardError {
  return new SwitchyardError('BUSY', `session ${sessionId} already runs a turn: ${what}`);
}

/**
 * One turn at a time per session: turns of the loop (`runTurn`, `streamTurn`, wake turns) enter in
 * the order they asked, each after the one before it left. Leaving hands the gate to the next waiter
 * synchronously, so nothing (a wake turn looking for an idle session) slips in between two queued
 * turns. Host-driven turns (`beginTurn()`) are ordered by their host: they may overlap each other,
 * are refused while a loop turn runs or waits, and a loop turn waits until every one of them ended.
 */
export class TurnGate {
  private held = false;
  private hostTurns = 0;
  private readonly waiters: Array<{ enter: () => void }> = [];

  /** A turn runs, or one waits. */
  get busy(): boolean {
    return this.held || this.hostTurns > 0 || this.waiters.length > 0;
  }

  /** Enters a loop turn when nobody runs or waits; false otherwise. */
  tryEnter(): boolean {
    if (this.busy) return false;
    this.held = true;
    return true;
  }

  /** Enters a host-driven turn unless a loop turn runs or waits; false otherwise. */
  tryEnterHost(): boolean {
    if (this.held || this.waiters.length > 0) return false;
    this.hostTurns++;
    return true;
  }

  /** Enters a loop turn after every turn that asked before; rejects (`ABORTED`) when `signal` aborts first, taking no place. */
  enter(signal?: AbortSignal): Promise<void> {
    if (this.tryEnter()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        enter: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(new SwitchyardError('ABORTED', 'turn aborted while it waited for the running turn', { cause: signal?.reason }));
        // the turn behind it may be free to go now
        this.handOn();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Leaves (a loop turn, or a host-driven one with `host`): the next waiter holds the gate once it is free. */
  leave(host = false): void {
    if (host) this.hostTurns--;
    else this.held = false;
    this.handOn();
  }

  private handOn(): void {
    if (this.held || this.hostTurns > 0) return;
    const next = this.waiters.shift();
    if (!next) return;
    this.held = true;
    next.enter();
  }
}
