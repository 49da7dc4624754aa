/** Work units one queue may run per turn of the event loop (a nested-call start or a small result is 1; a result costs 1 per MiB). */
const UNITS_PER_TURN = 4;

/**
 * The host work one runtime session causes (starting its nested calls, encoding their results),
 * run in slices of at most {@link UNITS_PER_TURN} units per turn of the event loop, in order. A
 * cell that starts 160 calls whose tools answer at once with 12M characters each would otherwise
 * run every start, dispatch and encoding in one unbroken chain of promise callbacks (tens of
 * seconds of host CPU on a loaded machine), during which no other session's runtime is even read.
 * Between slices the event loop reads every pipe, so other sessions keep their share.
 */
export class TurnQueue {
  private readonly tasks: Array<{ run: () => void; units: number }> = [];
  private scheduled = false;

  /** Runs `run` now when nothing waits and this turn has room, else in order in a later turn. */
  push(run: () => void, units = 1): void {
    this.tasks.push({ run, units });
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.pump());
    }
  }

  private pump(): void {
    let budget = UNITS_PER_TURN;
    while (this.tasks.length > 0 && budget > 0) {
      const task = this.tasks.shift()!;
      budget -= task.units;
      try {
        task.run();
      } catch {
        // each task answers its own failures
      }
    }
    if (this.tasks.length === 0) {
      this.scheduled = false;
      return;
    }
    // setImmediate callbacks queued now run in the next turn, after the event loop polled I/O.
    setImmediate(() => this.pump());
  }
}

/** The units a result costs: 1, plus 1 per MiB of a string. */
export function resultUnits(value: unknown): number {
  return typeof value === 'string' ? 1 + Math.floor(value.length / (1024 * 1024)) : 1;
}
