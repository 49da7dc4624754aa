import type { JsonValue } from './json';

/**
 * The session's clock. Injected so tests are deterministic. `now()` may throw or reject: the
 * clock tool turns that into the fatal "failed to read current time: …".
 */
export interface TimeProvider {
  /** The current instant. Called once per use; may be async (an external time source). */
  now(): Date | Promise<Date>;
}

/** A {@link TimeProvider} reading the system clock. */
export const systemTimeProvider: TimeProvider = { now: () => new Date() };

/** A {@link TimeProvider} that always answers `instant` (tests, demos, replay). */
export function fixedTimeProvider(instant: Date | string | number): TimeProvider {
  const date = new Date(instant);
  return { now: () => new Date(date.getTime()) };
}

/** What asks for approval: an exec escalation, a hook's `ask`, a tool's own request. */
export interface ApprovalRequest {
  /** Why approval is needed: `exec` (a command, possibly escalated), `hook` (PreToolUse `ask`), `tool` (anything else). */
  readonly kind: 'exec' | 'hook' | 'tool';
  /** Display name of the tool being called (`inventory__check_stock`). */
  readonly toolName: string;
  /** The call id the approval belongs to. */
  readonly callId: string;
  /** The call's arguments, for `tool` (a function tool's parsed arguments, a freeform tool's input text). */
  readonly input?: JsonValue;
  /** The shell command, for `exec`. */
  readonly command?: string;
  /** The working directory of the command. */
  readonly cwd?: string;
  /** The model's justification (exec `justification`), or a hook's reason. */
  readonly reason?: string;
  /** True when the command asks to run outside the sandbox (`require_escalated`). */
  readonly escalated?: boolean;
  /** Aborted when the call is cancelled; a provider should stop asking then. */
  readonly signal: AbortSignal;
}

/** An approval answer. `approved-for-session` lets providers remember; callers treat it as `approved`. */
export type ApprovalDecision = 'approved' | 'approved-for-session' | 'denied';

/**
 * Asks a person (or a policy) whether something may run. Injected by the host; a throw or
 * rejection counts as `denied`.
 */
export interface ApprovalProvider {
  /**
   * Asks for one decision. Called by exec tools and by hooks that answer `ask`; a throw or rejection counts as
   * `denied`.
   */
  requestApproval(request: ApprovalRequest): Promise<ApprovalDecision>;
}

/** Approval policies of exec tools: when a command may or must ask. */
export type ApprovalPolicy = 'never' | 'on-request' | 'on-failure' | 'untrusted';
/** Every {@link ApprovalPolicy}, for option checks. */
export const APPROVAL_POLICIES: readonly ApprovalPolicy[] = ['never', 'on-request', 'on-failure', 'untrusted'];

/** Sandbox modes for processes started by tools. */
export type SandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access';
/** Every {@link SandboxMode}, for option checks. */
export const SANDBOX_MODES: readonly SandboxMode[] = ['read-only', 'workspace-write', 'danger-full-access'];
