import type {
  HookCaller,
  InterruptReason,
  InterruptRequest,
  JsonValue,
  LifecycleHookRequestBase,
  PermissionRequestRequest,
  PostToolUseFailureRequest,
  PostToolUseRequest,
  PreToolUseRequest,
  SessionEndRequest,
  SessionStartRequest,
  StopRequest,
  UserPromptSubmitRequest,
} from '@switchyard/protocol';

/** The JSON a PreToolUse hook reads on stdin (plus `caller`). */
export interface PreToolUseHookInput {
  session_id: string;
  turn_id: string;
  transcript_path: string | null;
  cwd: string;
  hook_event_name: 'PreToolUse';
  model: string;
  permission_mode: string;
  tool_name: string;
  tool_input: JsonValue;
  tool_use_id: string;
  caller: HookCaller;
}

/** The JSON a PostToolUse hook reads on stdin: the pre fields plus `tool_response`. */
export interface PostToolUseHookInput extends Omit<PreToolUseHookInput, 'hook_event_name'> {
  hook_event_name: 'PostToolUse';
  tool_response: JsonValue;
}

/** The JSON a PostToolUseFailure hook reads on stdin: the pre fields plus the failure the model would read and its code. */
export interface PostToolUseFailureHookInput extends Omit<PreToolUseHookInput, 'hook_event_name'> {
  hook_event_name: 'PostToolUseFailure';
  /** The failure text the model would read. */
  error: string;
  /** `RESPOND_TO_MODEL` (the tool refused or failed), `TIMEOUT`, `SANDBOX_DENIED`, `LIMIT_EXCEEDED`, … */
  error_code: string;
}

/** The fields every lifecycle hook reads on stdin. */
export interface LifecycleHookInputBase {
  session_id: string;
  /** Present for events inside a turn (UserPromptSubmit, Stop, PermissionRequest). */
  turn_id?: string;
  transcript_path: string | null;
  cwd: string;
  model: string;
  permission_mode: string;
}

/** SessionStart stdin: `source` is `startup` or `resume`. */
export interface SessionStartHookInput extends LifecycleHookInputBase {
  hook_event_name: 'SessionStart';
  source: 'startup' | 'resume';
}

/** UserPromptSubmit stdin: the turn's input text. */
export interface UserPromptSubmitHookInput extends LifecycleHookInputBase {
  hook_event_name: 'UserPromptSubmit';
  prompt: string;
}

/** Stop stdin: `stop_hook_active` is true once this turn continued because of a Stop hook. */
export interface StopHookInput extends LifecycleHookInputBase {
  hook_event_name: 'Stop';
  stop_hook_active: boolean;
  last_assistant_message: string | null;
}

/** SessionEnd stdin. */
export interface SessionEndHookInput extends LifecycleHookInputBase {
  hook_event_name: 'SessionEnd';
  reason: string;
}

/** PermissionRequest stdin: the call that needs approval. */
export interface PermissionRequestHookInput extends LifecycleHookInputBase {
  hook_event_name: 'PermissionRequest';
  tool_name: string;
  tool_input: JsonValue;
  tool_use_id: string;
}

/** Interrupt stdin: why the turn was aborted (`turn_id` is set). */
export interface InterruptHookInput extends LifecycleHookInputBase {
  hook_event_name: 'Interrupt';
  /** `signal` (the host's abort signal), `abort` (`turn.abort()`), `stream-closed` (the host stopped reading the stream), `shutdown`. */
  reason: InterruptReason;
  /** The abort reason's text, when the host gave one. */
  detail: string | null;
}

/** A lifecycle event's stdin. */
export type LifecycleHookInput =
  | SessionStartHookInput
  | UserPromptSubmitHookInput
  | StopHookInput
  | SessionEndHookInput
  | PermissionRequestHookInput
  | InterruptHookInput;

/** The stdin of a tool event (what most function hooks read). */
export type HookInput = PreToolUseHookInput | PostToolUseHookInput | PostToolUseFailureHookInput;

/** The stdin of any event. */
export type AnyHookInput = HookInput | LifecycleHookInput;

/**
 * What a hook may print on stdout (exit 0) or return from a function handler. Fields the reference
 * rejects for an event (e.g. PreToolUse `continue: false`) make the run fail open.
 */
export interface HookJsonOutput {
  continue?: boolean;
  stopReason?: string;
  suppressOutput?: boolean;
  /** Reported to the host as a warning. */
  systemMessage?: string;
  /** Legacy decision: `block` blocks (PreToolUse) or gives feedback (PostToolUse). */
  decision?: 'block' | 'approve';
  reason?: string;
  hookSpecificOutput?: {
    hookEventName?: string;
    /** PermissionRequest: allow or deny the call instead of asking the approval provider. */
    decision?: { behavior: 'allow' | 'deny'; message?: string };
    permissionDecision?: 'allow' | 'deny' | 'ask';
    permissionDecisionReason?: string;
    updatedInput?: JsonValue;
    additionalContext?: string;
    updatedMCPToolOutput?: JsonValue;
  };
}

/**
 * An in-process hook. Receives the same object a command reads on stdin and returns what a command
 * would print (nothing means "continue"). A throw, a rejection or a timeout fails open. Typed for
 * the tool events; a hook registered for a lifecycle event receives that event's
 * {@link LifecycleHookInput} (check `hook_event_name`, or cast).
 */
export type FunctionHook = (
  input: HookInput,
  context: { signal: AbortSignal },
) => HookJsonOutput | undefined | void | Promise<HookJsonOutput | undefined | void>;

/** The stdin object of a PreToolUse run, keys in reference order. Aliases are never included. */
export function preToolUseInput(request: PreToolUseRequest, transcriptPath?: string): PreToolUseHookInput {
  const { step, caller } = request;
  return {
    session_id: step.sessionId,
    turn_id: step.turnId,
    transcript_path: transcriptPath ?? null,
    cwd: step.cwd,
    hook_event_name: 'PreToolUse',
    model: step.model ?? '',
    permission_mode: step.approvalPolicy ?? 'default',
    tool_name: request.toolName,
    tool_input: request.toolInput,
    tool_use_id: request.toolUseId,
    caller: caller.kind === 'direct' ? { kind: 'direct' } : { kind: 'code-mode', cell_id: caller.cell_id, ...(caller.background ? { background: true as const } : {}) },
  };
}

/** The stdin object of a PostToolUse run. */
export function postToolUseInput(request: PostToolUseRequest, transcriptPath?: string): PostToolUseHookInput {
  return { ...preToolUseInput(request, transcriptPath), hook_event_name: 'PostToolUse', tool_response: request.toolResponse };
}

/** The stdin object of a PostToolUseFailure run. */
export function postToolUseFailureInput(request: PostToolUseFailureRequest, transcriptPath?: string): PostToolUseFailureHookInput {
  return { ...preToolUseInput(request, transcriptPath), hook_event_name: 'PostToolUseFailure', error: request.error, error_code: request.errorCode };
}

/** The fields every lifecycle stdin starts with. */
function lifecycleBase(request: LifecycleHookRequestBase, transcriptPath: string | undefined): LifecycleHookInputBase {
  return {
    session_id: request.sessionId,
    ...(request.turnId !== undefined ? { turn_id: request.turnId } : {}),
    transcript_path: request.transcriptPath ?? transcriptPath ?? null,
    cwd: request.cwd,
    model: request.model ?? '',
    permission_mode: request.permissionMode ?? 'default',
  };
}

/** The requests of the lifecycle events, by event name. */
export interface LifecycleRequests {
  SessionStart: SessionStartRequest;
  UserPromptSubmit: UserPromptSubmitRequest;
  Stop: StopRequest;
  SessionEnd: SessionEndRequest;
  PermissionRequest: PermissionRequestRequest;
  Interrupt: InterruptRequest;
}

/** The stdin object of a lifecycle event. */
export function lifecycleInput<E extends keyof LifecycleRequests>(event: E, request: LifecycleRequests[E], transcriptPath?: string): LifecycleHookInput {
  const base = lifecycleBase(request, transcriptPath);
  switch (event) {
    case 'SessionStart':
      return { ...base, hook_event_name: 'SessionStart', source: (request as SessionStartRequest).source };
    case 'UserPromptSubmit':
      return { ...base, hook_event_name: 'UserPromptSubmit', prompt: (request as UserPromptSubmitRequest).prompt };
    case 'Stop': {
      const stop = request as StopRequest;
      return { ...base, hook_event_name: 'Stop', stop_hook_active: stop.stopHookActive, last_assistant_message: stop.lastAssistantMessage ?? null };
    }
    case 'SessionEnd':
      return { ...base, hook_event_name: 'SessionEnd', reason: (request as SessionEndRequest).reason };
    case 'Interrupt': {
      const interrupt = request as InterruptRequest;
      return { ...base, hook_event_name: 'Interrupt', reason: interrupt.reason, detail: interrupt.detail ?? null };
    }
    default: {
      const permission = request as PermissionRequestRequest;
      return { ...base, hook_event_name: 'PermissionRequest', tool_name: permission.toolName, tool_input: permission.toolInput, tool_use_id: permission.toolUseId };
    }
  }
}
