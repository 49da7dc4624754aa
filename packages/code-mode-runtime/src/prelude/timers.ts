import type { PreludeLimits } from './bridge';
import type { Send } from './channel';
import type { CellState } from './output';
import { NumberOf, createNull, finite, trunc } from './primordials';
import { timerDelay } from './values';

/**
 * `setTimeout` / `clearTimeout` inside the cell: the callbacks stay in the isolate, the runtime
 * keeps the clock (`set-timer`, `clear-timer`) and enters with the ids that are due (`fire`).
 */
export function createTimers(limits: PreludeLimits, state: CellState, send: Send) {
  const timers = createNull<() => void>();
  let timerSequence = 0;
  let liveTimers = 0;
  function setTimeout(callback?: unknown, delayMs?: unknown): number {
    if (typeof callback !== 'function') throw 'setTimeout expects a function callback';
    const delay = timerDelay(delayMs);
    if (liveTimers >= limits.maxTimers) {
      throw 'exec timer limit exceeded: this cell already has ' + limits.maxTimers + ' pending timers (limit)';
    }
    const id = ++timerSequence;
    timers[id] = callback as () => void;
    liveTimers++;
    if (!state.finished) send('set-timer', id, delay);
    return id;
  }
  function clearTimeout(id?: unknown): void {
    if (id === undefined || id === null) return;
    let value: number;
    try {
      value = NumberOf(id);
    } catch {
      throw 'clearTimeout expects a numeric timeout id';
    }
    if (!state.finished && finite(value) && value > 0) {
      const key = trunc(value);
      if (timers[key] !== undefined) {
        delete timers[key];
        liveTimers--;
        send('clear-timer', key);
      }
    }
  }
  /** Runs the due timers in order; a throwing callback settles the cell as failed (`onError`). */
  function fire(ids: readonly number[], onError: (error: unknown) => void): void {
    for (let i = 0; i < ids.length && !state.finished; i++) {
      const callback = timers[ids[i]];
      if (callback === undefined) continue;
      delete timers[ids[i]];
      liveTimers--;
      try {
        callback();
      } catch (error) {
        onError(error);
      }
    }
  }
  return { setTimeout, clearTimeout, fire };
}
