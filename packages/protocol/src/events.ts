import type { ToolCallSource } from './call';
import type { JsonValue } from './json';
import type { HookEventName } from './hooks';

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
  /** Discriminant. */
  readonly type: 'tool-call-start';
  /**
   * The call's input as it arrived, before any PreToolUse rewrite: a function call's arguments
   * (JSON text, already validated against the tool's schema), a freeform tool's input text; absent
   * for `tool_search`. The payload's own string, passed through unparsed (a listener that shows
   * the arguments of a nested call, which has no model item, parses it).
   */
  readonly input?: string;
}

/** A call finished; emitted exactly once per started call (unless blocked or aborted). */
export interface ToolCallEndEvent extends ToolCallEventBase {
  /** Discriminant. */
  readonly type: 'tool-call-end';
  /**
   * False when the handler threw, a rewrite or validation step failed, or the output's `success` is `false`
   * (`undefined` counts as true).
   */
  readonly success: boolean;
  /** Milliseconds from start to end. */
  readonly durationMs: number;
  /** True when the handler ran (false when a rewrite or validation step failed first). */
  readonly handlerExecuted: boolean;
  /**
   * Why the call failed, when it failed with an error (the handler threw, a rewrite or validation
   * step failed, hooks could not see the output): its stable `code` and the model-visible message.
   * Absent on success and when the tool itself returned a failed output.
   */
  readonly error?: { readonly code: string; readonly message: string };
}

/** A PreToolUse hook blocked the call. Terminal for the call. */
export interface ToolCallBlockedEvent extends ToolCallEventBase {
  /** Discriminant. */
  readonly type: 'tool-call-blocked';
  /** The blocking hook's reason (`no reason given` when it gave none). */
  readonly reason: string;
}

/** The call was cancelled. Terminal for the call. */
export interface ToolCallAbortedEvent extends ToolCallEventBase {
  /** Discriminant. */
  readonly type: 'tool-call-aborted';
  /** Milliseconds the call ran before it was cancelled. */
  readonly durationMs: number;
}

/** A hook handler started (`runId` is `event-key:index:source:tool_use_id`). */
export interface HookStartEvent {
  /** Discriminant. */
  readonly type: 'hook-start';
  /** Id of this handler run; the matching `hook-end` carries the same value. */
  readonly runId: string;
  /** The hook event the handler runs for. */
  readonly event: HookEventName;
  /** The canonical hook tool name (`tool_name` on hook stdin: `Bash`, `apply_patch`, a display name such as `clock__curr_time`); `''` for lifecycle events without a tool. */
  readonly toolName: string;
  /** The session of the call (`session_id` on hook stdin): one engine may serve several sessions. */
  readonly sessionId?: string;
}

/** A hook handler ended with an outcome. */
export interface HookEndEvent {
  /** Discriminant. */
  readonly type: 'hook-end';
  /** Id of the handler run, as on its `hook-start`. */
  readonly runId: string;
  /** The hook event the handler ran for. */
  readonly event: HookEventName;
  /** The canonical hook tool name, as on `hook-start`. */
  readonly toolName: string;
  /** The session of the call, as on `hook-start`. */
  readonly sessionId?: string;
  /** `continue`, `block`, `rewrite`, `feedback`, `stop`, `failed` (fail-open). */
  readonly outcome: 'continue' | 'block' | 'rewrite' | 'feedback' | 'stop' | 'failed';
  /** Milliseconds the handler ran (wall clock). */
  readonly durationMs: number;
  /** Reason, feedback or failure text. */
  readonly message?: string;
  /** Set when the hook failed (could not start, timed out, crashed, printed invalid output), also when that blocked (`failClosed` / `required`). */
  readonly error?: string;
  /** Names the hook: its command or function name and where it was configured. */
  readonly hook?: string;
  /** True for a required hook (its failure blocks). */
  readonly required?: boolean;
}

/** A Code Mode cell started. */
export interface CellStartEvent {
  /** Discriminant. */
  readonly type: 'cell-start';
  /** The cell's id (what `wait` takes as `cell_id`). */
  readonly cellId: string;
  /** The `call_id` of the `exec` call that created the cell. */
  readonly execCallId?: string;
  /**
   * When the cell's creation began, in milliseconds since the Unix epoch (fractional). The event
   * itself is said at the cell's first nested call or notify, or once its creation returned, so it
   * can come after the cell already ran.
   */
  readonly startTime?: number;
}

/** A Code Mode cell ended. */
export interface CellEndEvent {
  /** Discriminant. */
  readonly type: 'cell-end';
  /** The cell's id, as on `cell-start`. */
  readonly cellId: string;
  /** `completed` (the script finished), `failed` (it threw) or `terminated` (stopped before finishing). */
  readonly status: 'completed' | 'failed' | 'terminated';
  /** When `failed`: the script error the model saw after `Script error:` (a limit's message, a lost runtime's cause, the thrown error). */
  readonly error?: string;
}

/**
 * A Code Mode runtime (for example a worker process holding cells) ended unexpectedly. Each cell
 * in `cellIds` that can be resumed from its journal is replayed on another runtime (a
 * `cell-resumed` event each) and goes on as if nothing happened; any other is gone: an `exec` /
 * `wait` waiting on it answers `Script failed` with `exec runtime ended unexpectedly: <cause>`.
 * Stored values committed before stay intact; the next `exec` gets a healthy runtime.
 */
export interface RuntimeLostEvent {
  /** Discriminant. */
  readonly type: 'runtime-lost';
  /** What ended it, as the model sees it after "exec runtime ended unexpectedly: " (a signal, an exit code, the memory limit hit, a protocol violation). */
  readonly cause: string;
  /** The cells it held, of the session the event is reported to (possibly empty). */
  readonly cellIds: readonly string[];
}

/** The runtime stopped a cell because it hit a limit (CPU time, wall time, heap, a flood of messages). */
export interface CellLimitExceededEvent {
  /** Discriminant. */
  readonly type: 'cell-limit-exceeded';
  /** The cell that hit the limit. */
  readonly cellId: string;
  /** The failure text the cell's observation carries as its error; names the limit and its value. */
  readonly message: string;
}

/**
 * A cell whose runtime ended was replayed from its journal on another runtime: it goes on where it
 * was, its nested calls not run again, the output already observed not emitted again.
 */
export interface CellResumedEvent {
  /** Discriminant. */
  readonly type: 'cell-resumed';
  readonly cellId: string;
  /** What ended the runtime it was on (as in `runtime-lost`). */
  readonly cause: string;
  /** How many runtimes the cell has lost so far (1 the first time). */
  readonly attempt: number;
  /** The replay runs on a runtime of its own (quarantine: it lost a runtime shared with others twice). */
  readonly alone: boolean;
}

/**
 * A session's cell waits for a place on a Code Mode runtime (every worker of the pool is full, or
 * the session needs a worker of its own): reported when it starts waiting and about once a second
 * while it waits. The model sees nothing while the session waits; its `exec` answers once the cell
 * has run, or fails if a bound of the queue is hit (see {@link RuntimeRefusedEvent}).
 */
export interface RuntimeQueuedEvent {
  /** Discriminant. */
  readonly type: 'runtime-queued';
  /** 1-based place in the queue: sessions served before this one, plus one (round robin across tenants, first come first served within a tenant). */
  readonly position: number;
  /** Sessions waiting in all. */
  readonly waiting: number;
  /** How long the session has waited so far (ms). */
  readonly waitedMs: number;
}

/** A session that waited for a place on a Code Mode runtime got one: its cell starts now. */
export interface RuntimeAdmittedEvent {
  /** Discriminant. */
  readonly type: 'runtime-admitted';
  /** How long the session waited (ms). */
  readonly waitedMs: number;
}

/**
 * A session was refused a place on a Code Mode runtime: the queue was full (`queue-full`) or it
 * waited as long as the pool allows (`wait-timeout`). Its `exec` failed with `message`, the only
 * moment the model learns that it waited.
 */
export interface RuntimeRefusedEvent {
  /** Discriminant. */
  readonly type: 'runtime-refused';
  /** Which bound was hit. */
  readonly reason: 'queue-full' | 'wait-timeout';
  /** The model-visible failure text of the `exec` (names the bound and its option). */
  readonly message: string;
  /** How long the session waited before it was refused (ms; 0 when the queue was full). */
  readonly waitedMs: number;
}

/** The planner skipped something (duplicate, reserved or invalid tool). */
export interface PlanWarningEvent {
  /** Discriminant. */
  readonly type: 'plan-warning';
  /** What was skipped and why, for the host's log. */
  readonly message: string;
  /** The tool concerned, when the warning is about one. */
  readonly toolName?: string;
}

/** A tool-specific notification (apply_patch begin/end, exec begin/end, terminal interaction). */
export interface ToolNotificationEvent {
  /** Discriminant. */
  readonly type: 'tool-notification';
  /** The call the notification belongs to. */
  readonly callId: string;
  /** e.g. `patch-apply-begin`, `patch-apply-end`, `exec-command-begin`, `exec-command-end`, `terminal-interaction`. */
  readonly name: string;
  /** Notification-specific JSON (shape defined by the emitting tool). */
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
  | RuntimeLostEvent
  | CellLimitExceededEvent
  | CellResumedEvent
  | RuntimeQueuedEvent
  | RuntimeAdmittedEvent
  | RuntimeRefusedEvent
  | PlanWarningEvent
  | ToolNotificationEvent;

/** The `type` of an event. */
export type SwitchyardEventType = SwitchyardEvent['type'];

/** A listener for one event type. */
export type SwitchyardEventListener<T extends SwitchyardEventType> = (event: Extract<SwitchyardEvent, { type: T }>) => void;
