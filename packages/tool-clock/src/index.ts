export { clockTool, formatCurrentTime, readCurrentTime, CLOCK_NAMESPACE_DESCRIPTION, CURR_TIME_DESCRIPTION } from './clock-tool';
export type { ClockToolOptions, CurrentTimeResult } from './clock-tool';

export { timeReminder, createTimeReminderSchedule } from './time-reminder';
export type { TimeReminderOptions, TimeReminderSchedule, TimeReminderScheduleOptions } from './time-reminder';

export { VERSION } from './version';
