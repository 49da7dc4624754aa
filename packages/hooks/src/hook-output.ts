import type { JsonValue } from '@switchyard/protocol';

/** What one handler run produced, whatever ran it (a process or a function). */
export interface HandlerRunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** Set when the handler did not run to a normal end (spawn failure, timeout, abort, throw). */
  error?: string;
  stdoutTruncated?: boolean;
  stderrTruncated?: boolean;
  /** The cap the truncation flags refer to. */
  maxOutputBytes?: number;
}

/** One PreToolUse handler's decision. `ask` is resolved by the engine (approval provider or fail open). */
export interface PreHandlerDecision {
  status: 'continue' | 'block' | 'rewrite' | 'ask' | 'failed';
  /** Block reason (or the `ask` reason). */
  reason?: string;
  updatedInput?: JsonValue;
  /** Failure text when `failed`. */
  error?: string;
  additionalContexts: string[];
  /** `systemMessage`s and ignored fields. */
  warnings: string[];
}

/** One PostToolUse handler's decision. */
export interface PostHandlerDecision {
  status: 'continue' | 'feedback' | 'stop' | 'failed';
  feedback?: string;
  error?: string;
  additionalContexts: string[];
  warnings: string[];
}

interface HookWire {
  continue?: boolean;
  stopReason?: string;
  suppressOutput?: boolean;
  systemMessage?: string;
  decision?: string;
  reason?: string;
  hookSpecificOutput?: {
    decision?: { behavior?: unknown; message?: unknown };
    permissionDecision?: string;
    permissionDecisionReason?: string;
    updatedInput?: JsonValue;
    additionalContext?: string;
    updatedMCPToolOutput?: JsonValue;
  };
}

const STDERR_TRUNCATED = '\n[... stderr truncated ...]';

function trimmedNonEmpty(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  return trimmed ? trimmed : undefined;
}

function looksLikeJson(stdout: string): boolean {
  const start = stdout.trimStart();
  return start.startsWith('{') || start.startsWith('[');
}

type FieldType = 'string' | 'boolean' | 'object' | 'any' | readonly string[];

function fieldOk(value: unknown, type: FieldType): boolean {
  if (value === undefined || value === null) return true;
  if (type === 'any') return true;
  if (Array.isArray(type)) return type.includes(value as string);
  if (type === 'object') return typeof value === 'object' && !Array.isArray(value);
  return typeof value === type;
}

/** Drops `null` fields the way an optional field reads them. */
function present<T>(value: T | null | undefined): T | undefined {
  return value === null ? undefined : value;
}

/**
 * Parses stdout as the hook output object. `undefined` when it is not one: not JSON, not an
 * object, or a field of the wrong type (the reference's strict deserialization).
 */
function parseWire(stdout: string, decisions: readonly string[]): HookWire | undefined {
  let value: unknown;
  try {
    value = JSON.parse(stdout.trim());
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const wire = value as Record<string, unknown>;
  const top: Record<string, FieldType> = {
    continue: 'boolean',
    stopReason: 'string',
    suppressOutput: 'boolean',
    systemMessage: 'string',
    decision: decisions,
    reason: 'string',
    hookSpecificOutput: 'object',
  };
  for (const [key, type] of Object.entries(top)) if (!fieldOk(wire[key], type)) return undefined;
  const specific = present(wire.hookSpecificOutput) as Record<string, unknown> | undefined;
  if (specific) {
    const nested: Record<string, FieldType> = {
      hookEventName: 'string',
      permissionDecision: ['allow', 'deny', 'ask'],
      permissionDecisionReason: 'string',
      additionalContext: 'string',
      updatedInput: 'any',
      updatedMCPToolOutput: 'any',
    };
    for (const [key, type] of Object.entries(nested)) if (!fieldOk(specific[key], type)) return undefined;
  }
  const clean = (record: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(record).filter(([, field]) => field !== null && field !== undefined));
  return { ...clean(wire), ...(specific ? { hookSpecificOutput: clean(specific) } : {}) } as HookWire;
}

function exitFailure(result: HandlerRunResult): string {
  return result.exitCode === null ? 'hook exited without a status code' : `hook exited with code ${result.exitCode}`;
}

function stderrReason(result: HandlerRunResult): string | undefined {
  const reason = trimmedNonEmpty(result.stderr);
  return reason && result.stderrTruncated ? reason + STDERR_TRUNCATED : reason;
}

function stdoutOverflow(result: HandlerRunResult): string | undefined {
  return result.stdoutTruncated ? `hook stdout exceeded ${result.maxOutputBytes ?? 'the'} bytes; output ignored` : undefined;
}

function preInvalidReason(wire: HookWire): string | undefined {
  if (wire.continue === false) return 'PreToolUse hook returned unsupported continue:false';
  if (wire.stopReason !== undefined) return 'PreToolUse hook returned unsupported stopReason';
  if (wire.suppressOutput === true) return 'PreToolUse hook returned unsupported suppressOutput';
  const specific = wire.hookSpecificOutput;
  const useSpecific =
    specific !== undefined &&
    (specific.permissionDecision !== undefined || specific.permissionDecisionReason !== undefined || specific.updatedInput !== undefined);
  if (useSpecific) {
    const decision = specific.permissionDecision;
    if (specific.updatedInput !== undefined && decision !== 'allow') {
      return 'PreToolUse hook returned updatedInput without permissionDecision:allow';
    }
    if (decision === 'allow' && specific.updatedInput === undefined) return 'PreToolUse hook returned unsupported permissionDecision:allow';
    if (decision === 'deny' && !trimmedNonEmpty(specific.permissionDecisionReason)) {
      return 'PreToolUse hook returned permissionDecision:deny without a non-empty permissionDecisionReason';
    }
    if (decision === undefined) return 'PreToolUse hook returned permissionDecisionReason without permissionDecision';
    return undefined;
  }
  if (wire.decision === 'approve') return 'PreToolUse hook returned unsupported decision:approve';
  if (wire.decision === 'block' && !trimmedNonEmpty(wire.reason)) return 'PreToolUse hook returned decision:block without a non-empty reason';
  if (wire.decision === undefined && wire.reason !== undefined) return 'PreToolUse hook returned reason without decision';
  return undefined;
}

/** What a run amounts to before event-specific rules: a failure, an exit 2, nothing, or a hook output object. */
type RunReading = { kind: 'failed'; error: string } | { kind: 'exit-2'; stderr?: string } | { kind: 'nothing' } | { kind: 'output'; wire: HookWire };

/** The rules both events share: spawn/timeout failures, exit codes, the stdout cap and stdout parsing. */
function readRun(result: HandlerRunResult, eventKey: string, decisions: readonly string[]): RunReading {
  if (result.error) return { kind: 'failed', error: result.error };
  if (result.exitCode === 2) return { kind: 'exit-2', stderr: stderrReason(result) };
  if (result.exitCode !== 0) return { kind: 'failed', error: exitFailure(result) };
  const overflow = stdoutOverflow(result);
  if (overflow) return { kind: 'failed', error: overflow };
  if (result.stdout.trim() === '') return { kind: 'nothing' };
  const wire = parseWire(result.stdout, decisions);
  if (wire) return { kind: 'output', wire };
  // Plain text is ignored; something that looks like JSON but is not a valid output fails open.
  return looksLikeJson(result.stdout) ? { kind: 'failed', error: `hook returned invalid ${eventKey} JSON output` } : { kind: 'nothing' };
}

/** Turns a PreToolUse run into a decision. Never throws. */
export function decidePreToolUse(result: HandlerRunResult): PreHandlerDecision {
  const decision: PreHandlerDecision = { status: 'continue', additionalContexts: [], warnings: [] };
  const fail = (error: string): PreHandlerDecision => ({ ...decision, status: 'failed', error });
  const reading = readRun(result, 'pre-tool-use', ['block', 'approve']);
  if (reading.kind === 'failed') return fail(reading.error);
  if (reading.kind === 'nothing') return decision;
  if (reading.kind === 'exit-2') {
    return reading.stderr
      ? { ...decision, status: 'block', reason: reading.stderr }
      : fail('PreToolUse hook exited with code 2 but did not write a blocking reason to stderr');
  }
  const wire = reading.wire;
  if (wire.systemMessage !== undefined) decision.warnings.push(wire.systemMessage);
  const invalid = preInvalidReason(wire);
  if (invalid) return fail(invalid);
  const specific = wire.hookSpecificOutput;
  if (specific?.additionalContext !== undefined) decision.additionalContexts.push(specific.additionalContext);
  switch (specific?.permissionDecision) {
    case 'deny':
      return { ...decision, status: 'block', reason: trimmedNonEmpty(specific.permissionDecisionReason) };
    case 'allow':
      return { ...decision, status: 'rewrite', updatedInput: specific.updatedInput };
    case 'ask':
      return { ...decision, status: 'ask', reason: trimmedNonEmpty(specific.permissionDecisionReason) };
  }
  if (wire.decision === 'block') return { ...decision, status: 'block', reason: trimmedNonEmpty(wire.reason) };
  return decision;
}

/**
 * Turns a PostToolUse (or PostToolUseFailure: the same rules, its feedback replacing the failure
 * text) run into a decision. Never throws.
 */
export function decidePostToolUse(result: HandlerRunResult, event: 'PostToolUse' | 'PostToolUseFailure' = 'PostToolUse'): PostHandlerDecision {
  const decision: PostHandlerDecision = { status: 'continue', additionalContexts: [], warnings: [] };
  const fail = (error: string): PostHandlerDecision => ({ ...decision, status: 'failed', error });
  const reading = readRun(result, event === 'PostToolUse' ? 'post-tool-use' : 'post-tool-use-failure', ['block']);
  if (reading.kind === 'failed') return fail(reading.error);
  if (reading.kind === 'nothing') return decision;
  if (reading.kind === 'exit-2') {
    return reading.stderr
      ? { ...decision, status: 'feedback', feedback: reading.stderr }
      : fail(`${event} hook exited with code 2 but did not write feedback to stderr`);
  }
  const wire = reading.wire;
  if (wire.systemMessage !== undefined) decision.warnings.push(wire.systemMessage);
  const invalid = wire.suppressOutput === true ? `${event} hook returned unsupported suppressOutput` : undefined;
  const block = wire.decision === 'block';
  const invalidBlock = block
    ? trimmedNonEmpty(wire.reason)
      ? undefined
      : `${event} hook returned decision:block without a non-empty reason`
    : wire.continue !== false && wire.reason !== undefined
      ? `${event} hook returned reason without decision`
      : undefined;
  const specific = wire.hookSpecificOutput;
  if (!invalid && !invalidBlock && specific?.additionalContext !== undefined) decision.additionalContexts.push(specific.additionalContext);
  if (specific?.updatedMCPToolOutput !== undefined) decision.warnings.push(`${event} hook returned unsupported updatedMCPToolOutput (ignored)`);
  if (wire.continue === false) {
    const stopText = wire.stopReason ?? `${event} hook stopped execution`;
    return { ...decision, status: 'stop', feedback: trimmedNonEmpty(wire.reason) ?? stopText };
  }
  if (invalid) return fail(invalid);
  if (invalidBlock) return fail(invalidBlock);
  if (block) return { ...decision, status: 'feedback', feedback: wire.reason };
  return decision;
}

/** One lifecycle handler's decision (`allow` / `deny` for PermissionRequest, `block` for the others). */
export interface LifecycleHandlerDecision {
  status: 'continue' | 'block' | 'allow' | 'deny' | 'failed';
  reason?: string;
  error?: string;
  additionalContexts: string[];
  warnings: string[];
}

/** The lifecycle events whose plain (non-JSON) stdout is context for the model, as agent users expect. */
const PLAIN_STDOUT_IS_CONTEXT = new Set(['SessionStart', 'UserPromptSubmit']);

/** The PermissionRequest verdict in `hookSpecificOutput.decision`, or why it is invalid. */
function permissionVerdict(wire: HookWire): Pick<LifecycleHandlerDecision, 'status' | 'reason' | 'error'> | undefined {
  const verdict = wire.hookSpecificOutput?.decision;
  if (verdict === undefined) return undefined;
  if (typeof verdict !== 'object' || verdict === null) return { status: 'failed', error: 'PermissionRequest hook returned a decision that is not an object' };
  if (verdict.behavior === 'allow') return { status: 'allow' };
  if (verdict.behavior === 'deny') {
    const message = typeof verdict.message === 'string' ? trimmedNonEmpty(verdict.message) : undefined;
    return { status: 'deny', reason: message ?? 'denied by a PermissionRequest hook' };
  }
  return { status: 'failed', error: 'PermissionRequest hook returned decision.behavior other than allow or deny' };
}

/**
 * Turns a lifecycle run into a decision: exit 2 with stderr blocks (UserPromptSubmit: the prompt is
 * refused; Stop: the loop continues with it; PermissionRequest: deny); JSON `decision:"block"`
 * with a reason does the same; `hookSpecificOutput.additionalContext` (and, for SessionStart and
 * UserPromptSubmit, plain stdout) is context. Never throws.
 */
export function decideLifecycle(event: string, result: HandlerRunResult): LifecycleHandlerDecision {
  const decision: LifecycleHandlerDecision = { status: 'continue', additionalContexts: [], warnings: [] };
  const fail = (error: string): LifecycleHandlerDecision => ({ ...decision, status: 'failed', error });
  const reading = readRun(result, event, ['block', 'approve']);
  if (reading.kind === 'failed') return fail(reading.error);
  if (reading.kind === 'nothing') {
    const text = trimmedNonEmpty(result.stdout);
    if (text && PLAIN_STDOUT_IS_CONTEXT.has(event)) decision.additionalContexts.push(text);
    return decision;
  }
  const blocking = event === 'PermissionRequest' ? 'deny' : 'block';
  if (reading.kind === 'exit-2') {
    return reading.stderr ? { ...decision, status: blocking, reason: reading.stderr } : fail(`${event} hook exited with code 2 but did not write a reason to stderr`);
  }
  const wire = reading.wire;
  if (wire.systemMessage !== undefined) decision.warnings.push(wire.systemMessage);
  const context = wire.hookSpecificOutput?.additionalContext;
  if (context !== undefined) decision.additionalContexts.push(context);
  if (event === 'PermissionRequest') {
    const verdict = permissionVerdict(wire);
    return verdict ? { ...decision, ...verdict } : decision;
  }
  if (wire.decision === 'block') {
    const reason = trimmedNonEmpty(wire.reason);
    return reason ? { ...decision, status: 'block', reason } : fail(`${event} hook returned decision:block without a non-empty reason`);
  }
  if (wire.continue === false && event === 'UserPromptSubmit') {
    return { ...decision, status: 'block', reason: trimmedNonEmpty(wire.stopReason) ?? 'UserPromptSubmit hook stopped the prompt' };
  }
  return decision;
}
