import type { ToolCallSource } from './call';
import type { JsonValue } from './json';

/** Fields every tool-call event carries. */
export interface ToolCallEventBase {
  /** The call id of the call. */
  readonly callId: string;
  /** Flat display name of the tool. */
  readonly toolName: string;
  /** Who started the call. */
  readonly source: ToolCallSource;
}

/** A handler is about to run (after lookup, payload check and validation; before pre-hooks). */
export interface ToolCallStartEvent extends ToolCallEventBase {
  readonly type: 'tool-call-start';
}

/** A call finished; emitted exactly once per started call (unless blocked or aborted). */
export interface ToolCallEndEvent extends ToolCallEventBase {
  readonly type: 'tool-call-end';
  readonly success: boolean;
  /** Milliseconds from start to end. */
  readonly durationMs: number;
  /** True when the handler ran (false when a rewrite or validation step failed first). */
  readonly handlerExecuted: boolean;
}

/** A PreToolUse hook blocked the call. Terminal for the call. */
export interface ToolCallBlockedEvent extends ToolCallEventBase {
  readonly type: 'tool-call-blocked';
  readonly reason: string;
}

/** The call was cancelled. Terminal for the call. */
export interface ToolCallAbortedEvent extends ToolCallEventBase {
  readonly type: 'tool-call-aborted';
  readonly durationMs: number;
}

/** A hook handler started (`runId` as reference §4.4: `event-key:index:source:tool_use_id`). */
export interface HookStartEvent {
  readonly type: 'hook-start';
  readonly runId: string;
  readonly event: 'PreToolUse' | 'PostToolUse';
  readonly toolName: string;
}

/** A hook handler ended with an outcome. */
export interface HookEndEvent {
  readonly type: 'hook-end';
  readonly runId: string;
  readonly event: 'PreToolUse' | 'PostToolUse';
  readonly toolName: string;
  /** `continue`, `block`, `rewrite`, `feedback`, `stop`, `failed` (fail-open). */
  readonly outcome: 'continue' | 'block' | 'rewrite' | 'feedback' | 'stop' | 'failed';
  readonly durationMs: number;
  /** Reason, feedback or failure text. */
  readonly message?: string;
}

/** A Code Mode cell started. */
export interface CellStartEvent {
  readonly type: 'cell-start';
  readonly cellId: string;
}

/** A Code Mode cell ended. */
export interface CellEndEvent {
  readonly type: 'cell-end';
  readonly cellId: string;
  readonly status: 'completed' | 'failed' | 'terminated';
}

/** The planner skipped something (duplicate, reserved or invalid tool). */
export interface PlanWarningEvent {
  readonly type: 'plan-warning';
  readonly message: string;
  readonly toolName?: string;
}

/** A tool-specific notification (apply_patch begin/end, exec begin/end, terminal interaction). */
export interface ToolNotificationEvent {
  readonly type: 'tool-notification';
  readonly callId: string;
  /** e.g. `patch-apply-begin`, `patch-apply-end`, `exec-command-begin`, `exec-command-end`, `terminal-interaction`. */
  readonly name: string;
  readonly data: JsonValue;
}

/** Every event Switchyard emits, discriminated on `type`. */
export type SwitchyardEvent =
  | ToolCallStartEvent
  | ToolCallEndEvent
  | ToolCallBlockedEvent
  | ToolCallAbortedEvent
  | HookStartEvent
  | HookEndEvent
  | CellStartEvent
  | CellEndEvent
  | PlanWarningEvent
  | ToolNotificationEvent;

/** The `type` of an event. */
export type SwitchyardEventType = SwitchyardEvent['type'];

/** A listener for one event type. */
export type SwitchyardEventListener<T extends SwitchyardEventType> = (event: Extract<SwitchyardEvent, { type: T }>) => void;

/** The public subscription surface: `on(type, listener)` returns an unsubscribe function. */
export interface SwitchyardEventSource {
  on<T extends SwitchyardEventType>(type: T, listener: SwitchyardEventListener<T>): () => void;
}
