/**
 * Why a patch was refused. Stable: hosts switch on it, never on the message.
 *
 * | code | fires when |
 * |---|---|
 * | `INVALID_PATCH` | the Begin/End markers are missing (message `invalid patch: …`) |
 * | `INVALID_HUNK` | a hunk cannot be parsed (message `invalid hunk at line N, …`, `lineNumber` set) |
 * | `VERIFICATION_FAILED` | a file cannot be read, or a chunk's lines / context are not found |
 * | `PATH_OUTSIDE_ROOT` | a path resolves outside the workspace root and the host does not allow it |
 * | `PROTECTED_PATH` | a path is in, or leads through a link into, a protected folder (`.git`, at any depth) |
 * | `LIMIT_EXCEEDED` | the patch, a file or the patch's total bytes exceed a size or line-count cap |
 * | `HELPER_FAILED` | the helper process (which reads and writes for the tool) died, timed out or could not start |
 * | `NO_CHANGES` | the patch has no hunks |
 * | `WRITE_FAILED` | writing failed midway; the files already written were restored |
 * | `ABORTED` | the signal was aborted before anything was written |
 */
export type ApplyPatchErrorCode =
  | 'INVALID_PATCH'
  | 'INVALID_HUNK'
  | 'VERIFICATION_FAILED'
  | 'PATH_OUTSIDE_ROOT'
  | 'PROTECTED_PATH'
  | 'LIMIT_EXCEEDED'
  | 'HELPER_FAILED'
  | 'NO_CHANGES'
  | 'WRITE_FAILED'
  | 'ABORTED';

/** An error of `parsePatch` / `verifyPatch` / `applyPatch`. When thrown, no file has been changed. */
export class ApplyPatchError extends Error {
  readonly code: ApplyPatchErrorCode;
  /** 1-based line of the patch text, for `INVALID_HUNK`. */
  readonly lineNumber?: number;
  /** For `WRITE_FAILED`: paths that could not be restored (empty when the rollback was complete). */
  readonly unrestoredPaths?: readonly string[];

  constructor(
    code: ApplyPatchErrorCode,
    message: string,
    options: { lineNumber?: number; unrestoredPaths?: readonly string[]; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ApplyPatchError';
    this.code = code;
    if (options.lineNumber !== undefined) this.lineNumber = options.lineNumber;
    if (options.unrestoredPaths !== undefined) this.unrestoredPaths = options.unrestoredPaths;
  }
}

/** True for an {@link ApplyPatchError} from any copy of this package (duck-typed on `name` and `code`). */
export function isApplyPatchError(value: unknown): value is ApplyPatchError {
  return value instanceof Error && value.name === 'ApplyPatchError' && typeof (value as { code?: unknown }).code === 'string';
}
