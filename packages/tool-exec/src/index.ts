// Executors
export { createExecToolset, execTools } from './exec-tools';
export type { ExecToolset, ExecTools, ExecToolsOptions } from './exec-tools';

// Output
export { ExecCommandOutput, DEFAULT_MAX_OUTPUT_TOKENS } from './exec-output';
export type { ExecCodeModeResult, ExecResult } from './exec-output';

// Specs
export { EXEC_COMMAND_DESCRIPTION, WRITE_STDIN_DESCRIPTION, execCommandSpec, writeStdinSpec } from './exec-specs';

// Sandbox and approvals
export { findExecutable, isLikelySandboxDenial } from '@switchyard/sandbox';
export { EXEC_REJECTED_MESSAGE, escalationRefusedMessage } from './approval';
export { isKnownSafeCommand } from './safe-command';

// apply_patch interception
export { APPLY_PATCH_WARNING, BARE_PATCH_MESSAGE, isBarePatch, parseApplyPatchCommand, rebasePatchPaths } from './apply-patch-interception';
export type { ApplyPatchCommand } from './apply-patch-interception';

export { VERSION } from './version';
