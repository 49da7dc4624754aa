import { call, NumberOf } from './primordials';

const sliceText: (text: string, start: number) => string = call.bind(String.prototype.slice);

/**
 * The cell's journal as the prelude keeps it: what entered the cell, in delivery order, as the
 * compact text of `CellJournalRecord.entries` — `r<N>` (the result of `tool-N` was delivered),
 * `t<id>.<id>…` (a batch of timers fired), `d<ms>` or `d<ms>*<count>` (the clock was read; equal
 * reads in a row are counted). Entries are pending until the next message leaves the cell, which
 * carries them (`take`), so they reach the runtime before anything that could depend on them;
 * entries never taken were never observable, and a replay may produce new values for them.
 *
 * In a replay the recorded clock values are answered again, in order (`times`, as
 * `[ms, count, ms, count, …]`), and neither they nor the deliveries the runtime marks as replayed
 * are recorded again; past them the clock is live again, never earlier than the last recorded read.
 */
export function createJournal(times: readonly number[] | undefined, liveNow: () => number) {
  let pending = '';
  let lastTime = 0;
  let lastCount = 0;
  let replayIndex = 0;
  let replayLeft = times !== undefined && times.length > 1 ? times[1] : 0;
  let floor = -Infinity;
  if (times !== undefined) for (let i = 0; i + 1 < times.length; i += 2) if (times[i] > floor) floor = times[i];

  function flushTime(): void {
    if (lastCount === 0) return;
    pending += (pending === '' ? 'd' : ',d') + lastTime + (lastCount > 1 ? '*' + lastCount : '');
    lastCount = 0;
  }
  function entry(text: string): void {
    flushTime();
    pending += pending === '' ? text : ',' + text;
  }
  /** The recorded clock value to answer now, or undefined once the recorded reads are used up. */
  function replayedTime(): number | undefined {
    while (times !== undefined && replayLeft === 0 && replayIndex + 3 < times.length) {
      replayIndex += 2;
      replayLeft = times[replayIndex + 1];
    }
    if (times === undefined || replayLeft <= 0) return undefined;
    replayLeft--;
    return times[replayIndex];
  }
  return {
    /** A read of the clock (`Date.now()`, `new Date()`, `Date()`, a date-less `Intl.DateTimeFormat` format). */
    now(): number {
      const replayed = replayedTime();
      if (replayed !== undefined) return replayed;
      let value = liveNow();
      if (value < floor) value = floor;
      if (lastCount > 0 && value === lastTime) lastCount++;
      else {
        flushTime();
        lastTime = value;
        lastCount = 1;
      }
      return value;
    },
    /** The result of `tool-N` entered the cell (`replayed`: delivered from the journal, already in it). */
    resolved(id: string, replayed: boolean): void {
      if (!replayed) entry('r' + NumberOf(sliceText(id, 5)));
    },
    /** A batch of timers entered the cell. */
    timers(ids: readonly number[], replayed: boolean): void {
      if (replayed) return;
      let text = 't';
      for (let i = 0; i < ids.length; i++) text += (i === 0 ? '' : '.') + ids[i];
      entry(text);
    },
    /** The pending entries, now leaving the cell with a message (undefined: none). */
    take(): string | undefined {
      flushTime();
      if (pending === '') return undefined;
      const text = pending;
      pending = '';
      return text;
    },
  };
}
