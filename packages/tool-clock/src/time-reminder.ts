import { systemTimeProvider, type MessageItem, type TimeProvider } from '@switchyard/protocol';
import { formatCurrentTime, readCurrentTime } from './clock-tool';

/** Options of {@link timeReminder}. */
export interface TimeReminderOptions {
  /** Where the time comes from. Default: the system clock. */
  timeProvider?: TimeProvider;
}

/**
 * The reminder a host can insert before a model request: a developer message
 * whose text is "It is YYYY-MM-DD HH:MM:SS UTC.". Throws a `FatalToolError` when the clock fails.
 */
export async function timeReminder(options: TimeReminderOptions = {}): Promise<MessageItem> {
  const instant = await readCurrentTime(options.timeProvider ?? systemTimeProvider);
  return { type: 'message', role: 'developer', content: [{ type: 'input_text', text: formatCurrentTime(instant) }] };
}

/** Options of {@link createTimeReminderSchedule}. */
export interface TimeReminderScheduleOptions {
  /** Deliver at least every N model requests (default 1: before every request). */
  interval?: number;
}

/** Decides when a reminder is due; see {@link createTimeReminderSchedule}. */
export interface TimeReminderSchedule {
  /**
   * Call once per model request. True when the reminder should be inserted: on the first request,
   * when `contextWindowId` changed since the last delivery (e.g. after compaction), or when
   * `interval` requests have passed since the last delivery.
   */
  due(request?: { contextWindowId?: string }): boolean;
}

/**
 * The reference's delivery rule for the reminder. Throws a `RangeError` for an interval that is
 * not a positive integer.
 */
export function createTimeReminderSchedule(options: TimeReminderScheduleOptions = {}): TimeReminderSchedule {
  const interval = options.interval ?? 1;
  if (!Number.isInteger(interval) || interval < 1) throw new RangeError(`interval must be a positive integer, got ${interval}`);
  let delivered = false;
  let lastWindowId: string | undefined;
  let sinceDelivery = 0;
  return {
    due(request = {}) {
      sinceDelivery += 1;
      const windowChanged = delivered && request.contextWindowId !== lastWindowId;
      if (!delivered || windowChanged || sinceDelivery >= interval) {
        delivered = true;
        lastWindowId = request.contextWindowId;
        sinceDelivery = 0;
        return true;
      }
      return false;
    },
  };
}
