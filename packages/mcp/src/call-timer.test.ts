import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallTimer, ElicitationPause, type CallTimeoutLimit } from './call-timer';

describe('CallTimer: a call\'s time limits, counted only while no elicitation of its server is pending', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  function start(options: { idleMs: number; totalMs?: number }, pause = new ElicitationPause()) {
    const fired: Array<{ limit: CallTimeoutLimit; at: number }> = [];
    const began = Date.now();
    const timer = new CallTimer({ ...options, pause, now: () => Date.now(), onTimeout: (limit) => fired.push({ limit, at: Date.now() - began }) });
    return { timer, fired, pause };
  }

  it('times out after the idle limit without progress; progress starts it again', () => {
    const { timer, fired } = start({ idleMs: 1000 });
    vi.advanceTimersByTime(900);
    timer.progress();
    vi.advanceTimersByTime(900);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual([{ limit: 'idle', at: 1900 }]);
  });

  it('does not count the time an elicitation is pending, and resumes with what was left', () => {
    const { fired, pause } = start({ idleMs: 1000 });
    vi.advanceTimersByTime(600);
    const end = pause.begin();
    vi.advanceTimersByTime(60_000); // the user takes a minute to answer
    expect(fired).toEqual([]);
    end();
    vi.advanceTimersByTime(399);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([{ limit: 'idle', at: 61_000 }]);
  });

  it('stays paused until the last of several elicitations ends; a second end() of one changes nothing', () => {
    const { fired, pause } = start({ idleMs: 1000 });
    const first = pause.begin();
    const second = pause.begin();
    first();
    first();
    vi.advanceTimersByTime(5000);
    expect(fired).toEqual([]);
    second();
    vi.advanceTimersByTime(1000);
    expect(fired.map((entry) => entry.limit)).toEqual(['idle']);
  });

  it('a call that starts while an elicitation is pending waits for it to end before counting', () => {
    const pause = new ElicitationPause();
    const end = pause.begin();
    const { fired } = start({ idleMs: 1000 }, pause);
    vi.advanceTimersByTime(10_000);
    expect(fired).toEqual([]);
    end();
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual([{ limit: 'idle', at: 11_000 }]);
  });

  it('the total limit counts running time across progress, without the paused time', () => {
    const { timer, fired, pause } = start({ idleMs: 1000, totalMs: 2500 });
    for (let step = 0; step < 2; step++) {
      vi.advanceTimersByTime(800);
      timer.progress();
    }
    const end = pause.begin();
    vi.advanceTimersByTime(30_000);
    end();
    vi.advanceTimersByTime(800);
    timer.progress();
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual([{ limit: 'total', at: 32_500 }]);
  });

  it('never fires once disposed, and stops listening to the pause', () => {
    const { timer, fired, pause } = start({ idleMs: 1000 });
    timer.dispose();
    pause.begin()();
    vi.advanceTimersByTime(5000);
    expect(fired).toEqual([]);
  });
});
