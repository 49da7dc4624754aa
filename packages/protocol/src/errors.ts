/**
 * Stable error codes. Hosts and tests switch on these, never on messages or `instanceof`.
 *
 * | code | fires when | disposition |
 * |---|---|---|
 * | `RESPOND_TO_MODEL` | a handler refuses a call in a way the model should read | model-visible failure |
 * | `TOOL_NOT_FOUND` | no executor has the call's exact name | model-visible failure |
 * | `INVALID_INPUT` | arguments are malformed JSON or fail the tool's JSON Schema | model-visible failure |
 * | `HOOK_BLOCKED` | a PreToolUse hook blocked the call | model-visible failure |
 * | `ABORTED` | the call was cancelled (turn abort, shutdown) | aborted output |
 * | `FATAL` | the turn cannot continue (e.g. the clock failed) | ends the turn |
 * | `INCOMPATIBLE_PAYLOAD` | a payload kind the executor does not accept (an `exec_command` sent as a custom call) | the call is answered `aborted`; the turn goes on |
 * | `CELL_NOT_FOUND` | Code Mode: no such cell id | model-visible failure |
 * | `LIMIT_EXCEEDED` | a configured resource limit was hit (heap, cells, output, processes) | model-visible failure |
 * | `SANDBOX_UNAVAILABLE` | a sandboxed mode was asked for and cannot be provided | model-visible failure |
 * | `APPROVAL_DENIED` | an approval provider refused | model-visible failure |
 * | `SHUTTING_DOWN` | a session or runtime refuses new work after shutdown began | model-visible failure |
 * | `CONFIG` | a host configuration (hooks.json, options) is invalid | thrown to the host at setup |
 * | `MODEL_ERROR` | a model client failed after its retries | ends the turn |
 * | `INTERNAL` | a broken invariant inside Switchyard | ends the turn |
 * | `INVALID_JOURNAL` | Code Mode: a cell journal (or session state) to restore is corrupted, of another session or cell, or of an unknown format or newer version | that cell fails; model-visible |
 * | `BUSY` | a session already runs a turn and the host asked not to wait (`ifBusy: 'fail'`, `beginTurn()`) | thrown to the host; nothing recorded |
 * | `LEASE_HELD` | another live process holds the session's lease (or took it over from this one) | thrown to the host; the store keeps the last commit |
 * | `STORE_CORRUPT` | a stored session record is corrupted or truncated (bad JSON, a checksum mismatch, a missing part) | thrown to the host for that session only |
 * | `STORE_VERSION` | a stored session record (or an exported session) has a schema version newer than this library reads | thrown to the host for that session only |
 * | `STORE_FAILED` | a session store could not read or write (I/O, a server down) | thrown to the host; the last commit stays loadable |
 */
export type SwitchyardErrorCode =
  | 'RESPOND_TO_MODEL'
  | 'TOOL_NOT_FOUND'
  | 'INVALID_INPUT'
  | 'HOOK_BLOCKED'
  | 'ABORTED'
  | 'FATAL'
  | 'INCOMPATIBLE_PAYLOAD'
  | 'CELL_NOT_FOUND'
  | 'LIMIT_EXCEEDED'
  | 'SANDBOX_UNAVAILABLE'
  | 'APPROVAL_DENIED'
  | 'SHUTTING_DOWN'
  | 'CONFIG'
  | 'MODEL_ERROR'
  | 'INTERNAL'
  | 'INVALID_JOURNAL'
  | 'BUSY'
  | 'LEASE_HELD'
  | 'STORE_CORRUPT'
  | 'STORE_VERSION'
  | 'STORE_FAILED';

/** The codes that end a turn instead of answering the model. */
const FATAL_CODES: ReadonlySet<SwitchyardErrorCode> = new Set(['FATAL', 'MODEL_ERROR', 'INTERNAL']);

/** The cross-copy marker: `Symbol.for` gives the same symbol in every copy of this package. */
export const SWITCHYARD_ERROR = Symbol.for('switchyard.error');

/**
 * Base of every Switchyard error. Carries a stable {@link SwitchyardErrorCode}; `cause` is kept
 * via the standard `Error` option. Stamped with {@link SWITCHYARD_ERROR} so
 * {@link isSwitchyardError} works across two loaded copies of this package (plugins may bundle their own).
 */
export class SwitchyardError extends Error {
  /** Stable machine-readable code. */
  readonly code: SwitchyardErrorCode;
  /** Marker for {@link isSwitchyardError}; do not rely on `instanceof`. */
  readonly [SWITCHYARD_ERROR] = true as const;

  constructor(code: SwitchyardErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'SwitchyardError';
  }

  /** True when this error ends the turn rather than answering the model. */
  get fatal(): boolean {
    return FATAL_CODES.has(this.code);
  }
}

/**
 * A `SwitchyardError` about one Code Mode cell: `cellId` names it. A cell creation cancelled after
 * the cell was made rejects with one (`ABORTED`; the cell runs on, so the host can still observe
 * or terminate it).
 */
export class CellError extends SwitchyardError {
  readonly cellId: string;
  constructor(code: SwitchyardErrorCode, message: string, cellId: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.cellId = cellId;
    this.name = 'CellError';
  }
}

/** The cell an error names: a {@link CellError}'s `cellId`, or any error's string `cellId` (from another copy of this package). */
export function cellIdOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const cellId = (error as { cellId?: unknown }).cellId;
  return typeof cellId === 'string' ? cellId : undefined;
}

/**
 * A model-visible failure: the message becomes the tool output text with `success: false`
 * (reference `FunctionCallError::RespondToModel`). Throw it from a handler to refuse a call politely.
 */
export class RespondToModelError extends SwitchyardError {
  constructor(message: string, options?: { cause?: unknown; code?: SwitchyardErrorCode }) {
    super(options?.code ?? 'RESPOND_TO_MODEL', message, options);
    this.name = 'RespondToModelError';
  }
}

/**
 * Ends the turn with no output item (reference `FunctionCallError::Fatal`). Its display text is
 * `"Fatal error: {message}"` (see {@link formatToolError}).
 */
export class FatalToolError extends SwitchyardError {
  constructor(message: string, options?: { cause?: unknown; code?: SwitchyardErrorCode }) {
    super(options?.code ?? 'FATAL', message, options);
    this.name = 'FatalToolError';
  }
}

/**
 * True for any error created by any copy of `@switchyard/protocol` (checks the `Symbol.for`
 * marker and a string `code`). Never throws, whatever `value` is (getters are not invoked beyond the marker).
 */
export function isSwitchyardError(value: unknown): value is SwitchyardError {
  if (typeof value !== 'object' || value === null) return false;
  try {
    return (value as Record<symbol, unknown>)[SWITCHYARD_ERROR] === true && typeof (value as { code?: unknown }).code === 'string';
  } catch {
    return false;
  }
}

/** True when `value` is a Switchyard error that ends the turn (`FATAL`, `INCOMPATIBLE_PAYLOAD`, …). */
export function isFatalError(value: unknown): boolean {
  return isSwitchyardError(value) && FATAL_CODES.has(value.code);
}

/** True when `value` is a Switchyard error with the given code. */
export function hasErrorCode(value: unknown, code: SwitchyardErrorCode): boolean {
  return isSwitchyardError(value) && value.code === code;
}

/**
 * The reference's display text for a tool error: `"Fatal error: m"` for fatal errors, the bare
 * message otherwise; for a non-Switchyard value, its message or `String(value)`. Never throws.
 */
export function formatToolError(error: unknown): string {
  if (isFatalError(error)) return `Fatal error: ${(error as Error).message}`;
  return errorMessage(error);
}

/** A best-effort message for any thrown value. Never throws. */
export function errorMessage(error: unknown): string {
  try {
    if (error instanceof Error) return error.message;
    if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
      return (error as { message: string }).message;
    }
    return String(error);
  } catch {
    return 'unknown error';
  }
}
