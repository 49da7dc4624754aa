export { createSession } from './session';
export { eventToJSON } from './event-json';
export type { EventJsonOptions } from './event-json';
export type { RunTurnOptions, Session, SessionOptions, SessionRetryOptions, Step, Turn, TurnOptions, WakeOptions } from './session-types';
export type { BackgroundCompleteEvent, SessionBackgroundOptions } from './background';
export type { SessionTracer, SessionTracingOptions } from './tracing';
export type { SessionWarningEvent } from './session-hooks';
export type { SessionEvent, SessionEventListener, SessionEventType, SessionLoopEvent, TurnEvent, TurnResult } from './session-events';
export { VERSION } from './version';
