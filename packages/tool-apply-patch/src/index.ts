export { applyPatchTool, APPLY_PATCH_DESCRIPTION, APPLY_PATCH_GRAMMAR, READ_ONLY_SANDBOX_ERROR } from './apply-patch-tool';
export type { ApplyPatchToolOptions, ApplyPatchToolResult } from './apply-patch-tool';

export { parsePatch } from './parse-patch';
export type { ParsedPatch, PatchHunk, UpdateChunk } from './parse-patch';

export { applyPatch, verifyPatch } from './verify-patch';
export type { ApplyPatchOptions, ApplyPatchResult, FileChange, FileState, PatchPlan, VerifyPatchOptions } from './verify-patch';

export { applyChunks } from './apply-chunks';
export { seekSequence, normalizePunctuation } from './seek-sequence';
export { unifiedDiff, gitFileDiff } from './unified-diff';

export { createTurnDiffTracker, getTurnDiff, turnDiffTracker, TURN_DIFF_KEY } from './turn-diff';
export type { TurnDiffTracker } from './turn-diff';

export { ApplyPatchError, isApplyPatchError } from './apply-patch-error';
export type { ApplyPatchErrorCode } from './apply-patch-error';

export { VERSION } from './version';
