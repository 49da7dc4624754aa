export { applyPatchTool, APPLY_PATCH_DESCRIPTION, APPLY_PATCH_GRAMMAR, READ_ONLY_SANDBOX_ERROR } from './apply-patch-tool';
export type { ApplyPatchToolOptions, ApplyPatchToolResult } from './apply-patch-tool';

export { parsePatch } from './parse-patch';
export type { ParsedPatch, PatchHunk, UpdateChunk } from './parse-patch';

export { applyPatch, verifyPatch } from './verify-patch';
export { applyPatchInHelper, helperCommand } from './run-helper';
export type { HelperApplyOptions, HelperCommand } from './run-helper';
export { DEFAULT_PATCH_LIMITS } from './limits';
export type { PatchLimits } from './limits';
export { DEFAULT_PROTECTED_NAMES } from './workspace-path';
export type { ApplyPatchOptions, ApplyPatchResult, FileChange, FileState, PatchPlan, VerifyPatchOptions } from './verify-patch';

export { applyChunks } from './apply-chunks';
export { LineMatcher, seekSequence, normalizePunctuation } from './seek-sequence';
export { unifiedDiff, gitFileDiff } from './unified-diff';
export { boundedStructuredPatch, DEFAULT_DIFF_BUDGET } from './bounded-diff';
export type { DiffBudget } from './bounded-diff';

export { createTurnDiffTracker, getTurnDiff, turnDiffTracker, TURN_DIFF_KEY } from './turn-diff';
export type { TurnDiffTracker } from './turn-diff';

export { ApplyPatchError, isApplyPatchError } from './apply-patch-error';
export type { ApplyPatchErrorCode } from './apply-patch-error';

export { VERSION } from './version';
