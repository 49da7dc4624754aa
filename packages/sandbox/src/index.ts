// Running a command in the sandbox
export { sandboxCommand, DEFAULT_SANDBOX_USER, SECCOMP_LAUNCHER } from './sandbox-command';
export type { SandboxCommand, SandboxCommandOptions } from './sandbox-command';
export { spawnSandboxed } from './spawn-sandboxed';
export type { SpawnSandboxedOptions } from './spawn-sandboxed';
export { checkSandbox, assertSandbox } from './availability';
export type { SandboxCheck } from './availability';
export type { SandboxPolicy, WriteCheck } from './policy';
export { sandboxUnavailable } from './errors';
export type { SandboxMissing, SandboxUnavailableError } from './errors';

// Protected paths
export { protectedPaths, isProtectedPath, ensureGitPlaceholder, writableRoots, resolveExisting, isWithin, GIT_DIR_NAME, MAX_PROTECTED_SCAN_DIRECTORIES, SKIPPED_DIRECTORIES } from './protected-paths';
export type { ProtectedPath } from './protected-paths';
export { checkWritePath } from './policy';

// Environment
export { sandboxEnvironment, CORE_ENV_NAMES, SECRET_NAME } from './environment';
export type { InheritEnv, SandboxEnvironmentOptions } from './environment';

// Process hygiene
export { killProcessTree } from './kill-tree';

// Pieces
export { buildSeccompFilter, seccompFilterPath, seccompSupported } from './seccomp';
export type { SeccompOptions } from './seccomp';
export { findExecutable } from './find-executable';
export { isLikelySandboxDenial } from './denial';

export { VERSION } from './version';
