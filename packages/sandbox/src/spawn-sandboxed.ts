import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { assertSandbox } from './availability';
import { sandboxEnvironment, type InheritEnv } from './environment';
import type { SandboxPolicy } from './policy';
import { scanProtectedPaths, writableRoots } from './protected-paths';
import { sandboxCommand } from './sandbox-command';

/** Options of {@link spawnSandboxed}. */
export interface SpawnSandboxedOptions {
  /** Working directory (default: the policy's root). */
  cwd?: string;
  /** The whole environment. Default: {@link sandboxEnvironment} of the mode, `inheritEnv` and `extraEnv`. */
  env?: Record<string, string>;
  /** Which host variables to inherit when `env` is not given. */
  inheritEnv?: InheritEnv;
  /** Variables added to the default environment. */
  extraEnv?: Record<string, string>;
  /** Default `['pipe', 'pipe', 'pipe']`. */
  stdio?: StdioOptions;
  /** What the command needs to start, bound read-only where the sandbox would hide it (see `sandboxCommand`). */
  readOnlyPaths?: readonly string[];
}

/**
 * Spawns `argv` inside the sandbox of `policy` (see `sandboxCommand`): checks first that the
 * sandbox can start (rejects with the `SANDBOX_UNAVAILABLE` refusal naming the missing piece,
 * never runs unsandboxed), walks the writable roots for `.git` on the thread pool (rejects with
 * the `LIMIT_EXCEEDED` refusal when a root holds more directories than
 * `limits.gitWalkDirectories`), then starts the process in its own process group. The process dies
 * with its PID namespace (sandboxed) or its reaper (`danger-full-access`), and with the host.
 * Kill it with `killProcessTree(child.pid)`.
 */
export async function spawnSandboxed(argv: readonly string[], policy: SandboxPolicy, options: SpawnSandboxedOptions = {}): Promise<ChildProcess> {
  await assertSandbox(policy);
  const cwd = options.cwd ?? policy.root;
  // walked without blocking the event loop (rejects with the LIMIT_EXCEEDED refusal past the walk's bound), then handed to the sandbox
  const protectedPaths = policy.mode === 'workspace-write' ? await scanProtectedPaths(policy) : undefined;
  const command = sandboxCommand(argv, policy, { cwd, readOnlyPaths: options.readOnlyPaths, protectedPaths });
  const env =
    options.env ??
    sandboxEnvironment({ mode: policy.mode, inheritEnv: options.inheritEnv, env: options.extraEnv, writable: policy.mode === 'workspace-write' ? writableRoots(policy) : [] });
  const child = spawn(command.file, command.args, { cwd, env, stdio: options.stdio ?? ['pipe', 'pipe', 'pipe'], detached: true });
  child.once('exit', command.release);
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) => {
      command.release();
      reject(error);
    });
  });
  return child;
}
