// Running a command in the sandbox
export { sandboxCommand } from './sandbox-command';
export type { SandboxCommand, SandboxCommandOptions } from './sandbox-command';
export { spawnSandboxed } from './spawn-sandboxed';
export type { SpawnSandboxedOptions } from './spawn-sandboxed';
export { CommandSpawner, SpawnerPool } from './spawner';
export type { PreparedSpare, SpawnedCommand, SpawnedExit, SpawnOptions } from './spawner';
export { checkWritePath } from './policy';
export { PLATFORM_READ_ROOTS } from './filesystem-view';
export type { SandboxPolicy, WriteCheck } from './policy';
export { scanProtectedPaths, writableRoots } from './protected-paths';
export { DEFAULT_SANDBOX_LIMITS } from './resource-limits';
export { quarantineNewGitMetadata } from './git-quarantine';
export type { GitQuarantine } from './git-quarantine';
export type { AppliedLimits, CommandLimits, LimitMechanism, SandboxLimits } from './resource-limits';
export type { ProtectedPath } from './protected-paths';

// Whether it can start, and the refusal when it cannot
export { checkSandbox, assertSandbox } from './availability';
export type { SandboxCheck } from './availability';
export type { SandboxMissing, SandboxUnavailableError } from './errors';

// Environment
export { sandboxEnvironment } from './environment';
export type { InheritEnv, SandboxEnvironmentOptions } from './environment';

// Process hygiene and the pieces the built-in tools share
export { killProcessTree } from './kill-tree';
export { findExecutable } from './find-executable';
export { isLikelySandboxDenial } from './denial';

export { VERSION } from './version';
