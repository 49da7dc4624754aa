// The apply_patch tool.
export { applyPatchTool } from './apply-patch-tool';
export type { ApplyPatchToolOptions, ApplyPatchToolResult } from './apply-patch-tool';
export type { HelperCommand } from './run-helper';

// The patch library behind it: parse, verify (nothing written), apply.
export { parsePatch } from './parse-patch';
export type { ParsedPatch } from './parse-patch';
export { applyPatch, verifyPatch } from './verify-patch';
export type { ApplyPatchOptions, ApplyPatchResult, PatchPlan, VerifyPatchOptions } from './verify-patch';
export type { PatchLimits } from './limits';

// Errors.
export { ApplyPatchError, isApplyPatchError } from './apply-patch-error';
export type { ApplyPatchErrorCode } from './apply-patch-error';

export { VERSION } from './version';
