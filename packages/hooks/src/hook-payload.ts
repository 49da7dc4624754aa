import type { HookCaller, JsonValue, PostToolUseRequest, PreToolUseRequest } from '@switchyard/protocol';

/** The JSON a PreToolUse hook reads on stdin (plus `caller`). */
export interface PreToolUseHookInput {
  session_id: string;
  turn_id: string;
  transcript_path: null;
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

/** Either hook input. */
export type HookInput = PreToolUseHookInput | PostToolUseHookInput;

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
    permissionDecision?: 'allow' | 'deny' | 'ask';
    permissionDecisionReason?: string;
    updatedInput?: JsonValue;
    additionalContext?: string;
    updatedMCPToolOutput?: JsonValue;
  };
}

/**
 * An in-process hook. Receives the same object a command reads on stdin and returns what a command
 * would print (nothing means "continue"). A throw, a rejection or a timeout fails open.
 */
export type FunctionHook = (
  input: HookInput,
  context: { signal: AbortSignal },
) => HookJsonOutput | undefined | void | Promise<HookJsonOutput | undefined | void>;

/** The stdin object of a PreToolUse run, keys in reference order. Aliases are never included. */
export function preToolUseInput(request: PreToolUseRequest): PreToolUseHookInput {
  const { step, caller } = request;
  return {
    session_id: step.sessionId,
    turn_id: step.turnId,
    transcript_path: null,
    cwd: step.cwd,
    hook_event_name: 'PreToolUse',
    model: step.model ?? '',
    permission_mode: step.approvalPolicy ?? 'default',
    tool_name: request.toolName,
    tool_input: request.toolInput,
    tool_use_id: request.toolUseId,
    caller: caller.kind === 'direct' ? { kind: 'direct' } : { kind: 'code-mode', cell_id: caller.cell_id },
  };
}

/** The stdin object of a PostToolUse run. */
export function postToolUseInput(request: PostToolUseRequest): PostToolUseHookInput {
  return { ...preToolUseInput(request), hook_event_name: 'PostToolUse', tool_response: request.toolResponse };
}
