export { createSession } from './session';
export type { RunTurnOptions, Session, SessionOptions, SessionRetryOptions, Step, Turn, TurnOptions } from './session';
export type { SessionTracer, SessionTracingOptions } from './tracing';
export type { SessionWarningEvent } from './session-hooks';
export type { SessionEvent, SessionEventListener, SessionEventType, SessionLoopEvent, TurnEvent, TurnResult } from './session-events';
export { VERSION } from './version';
