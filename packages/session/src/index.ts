export { createSession } from './session';
export type { RunTurnOptions, Session, SessionOptions, Step, Turn, TurnOptions, TurnResult } from './session';
export { createScriptedModel } from './scripted-model';
export type { ScriptedModel, ScriptedModelOptions, ScriptedResponse } from './scripted-model';
export type { SessionTracer, SessionTracingOptions } from './tracing';
export type { SessionEvent, SessionEventListener, SessionEventType, SessionLoopEvent } from './session-events';
export { VERSION } from './version';
