import { describe, expect, it } from 'vitest';
import { fixedTimeProvider, isFatalError } from '@switchyard/protocol';
import { createTimeReminderSchedule, timeReminder } from './time-reminder';

describe('timeReminder', () => {
  it('is a developer message carrying the clock sentence', async () => {
    expect(await timeReminder({ timeProvider: fixedTimeProvider('2024-02-29T12:00:00Z') })).toEqual({
      type: 'message',
      role: 'developer',
      content: [{ type: 'input_text', text: 'It is 2024-02-29 12:00:00 UTC.' }],
    });
  });

  it('fails with the fatal clock error', async () => {
    const error = await timeReminder({ timeProvider: { now: () => Promise.reject(new Error('down')) } }).catch((caught: unknown) => caught);
    expect(isFatalError(error)).toBe(true);
    expect((error as Error).message).toBe('failed to read current time: down');
  });
});

describe('createTimeReminderSchedule', () => {
  it('with the default interval is due before every request', () => {
    const schedule = createTimeReminderSchedule();
    expect([schedule.due(), schedule.due(), schedule.due()]).toEqual([true, true, true]);
  });

  it('is due on the first request, every N requests, and when the context window changes', () => {
    const schedule = createTimeReminderSchedule({ interval: 3 });
    const answers = ['w1', 'w1', 'w1', 'w1', 'w2', 'w2', 'w2', 'w2'].map((id) => schedule.due({ contextWindowId: id }));
    expect(answers).toEqual([true, false, false, true, true, false, false, true]);
  });

  it('refuses an interval that is not a positive integer', () => {
    expect(() => createTimeReminderSchedule({ interval: 0 })).toThrow('interval must be a positive integer, got 0');
    expect(() => createTimeReminderSchedule({ interval: 1.5 })).toThrow(RangeError);
  });
});
