// The clock tool.
export { clockTool } from './clock-tool';
export type { ClockToolOptions, CurrentTimeResult } from './clock-tool';

// The time reminder a host adds to its requests.
export { timeReminder, createTimeReminderSchedule } from './time-reminder';
export type { TimeReminderOptions, TimeReminderSchedule, TimeReminderScheduleOptions } from './time-reminder';

export { VERSION } from './version';
