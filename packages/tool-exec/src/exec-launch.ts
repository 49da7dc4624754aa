import { RespondToModelError, type ToolInvocation } from '@switchyard/protocol';
import {
  assertSandbox,
  CommandSpawner,
  findExecutable,
  quarantineNewGitMetadata,
  sandboxCommand,
  scanProtectedPaths,
  type SandboxCommand,
  type SandboxPolicy,
} from '@switchyard/sandbox';
import { emit } from './call-progress';
import type { ExecCommandArgs } from './exec-arguments';
import { commandEnvironment, resolveShell } from './exec-options';
import { ExecProcess, type ExecProcessSpec } from './exec-process';
import { DEFAULT_MAX_RETAINED_BYTES } from './head-tail-buffer';
import type { ToolsetState } from './toolset-state';

/** What starting one command needs from its exec_command call (an `ExecCall` is one). */
export interface LaunchRequest {
  readonly state: ToolsetState;
  readonly invocation: ToolInvocation;
  readonly args: ExecCommandArgs;
  readonly cwd: string;
}

/** The line naming a sandbox cap the ended command ran into; then its cgroups and placeholder are removed. */
function afterExit(wrapped: SandboxCommand): string | undefined {
  try {
    return wrapped.limits?.report();
  } finally {
    wrapped.release();
  }
}

/** Whether this command may go through a long-lived spawner at all (no tty, not switched off, where it runs). */
function spawnerAllowed(state: ToolsetState, tty: boolean): boolean {
  return !tty && state.options.spawner !== false && CommandSpawner.supported();
}

/**
 * How the wrapped command starts: through the session's long-lived spawner for `danger-full-access`
 * (the plain spawner) or as root in a sandbox (the sandbox launcher of its workspace and policy,
 * bubblewrap per command, the next command's started ahead once this one started), else as a
 * process of its own.
 */
function launchOf(state: ToolsetState, wrapped: SandboxCommand, sessionId: string, spawned: boolean): Pick<ExecProcessSpec, 'file' | 'args' | 'spawner' | 'spawnOptions'> {
  const direct = { file: wrapped.file, args: wrapped.args };
  if (!spawned) return direct;
  if (!wrapped.sandboxed) return { ...direct, spawner: state.spawners.spawnerFor(sessionId, 'danger-full-access') };
  const spawnable = wrapped.spawnable;
  if (!spawnable) return direct;
  const spawner = state.spawners.spawnerFor(sessionId, spawnable.key, spawnable.launcher);
  return { file: spawnable.argv[0], args: spawnable.argv.slice(1), spawner, spawnOptions: { cgroupProcs: spawnable.cgroupProcs, fd3: spawnable.fd3, spare: spawnable.spare } };
}

/** Wraps the command for `sandbox`: proven to start, protected paths scanned, its caps announced. */
async function wrapCommand(request: LaunchRequest, sandbox: SandboxPolicy, spawned: boolean): Promise<SandboxCommand> {
  const { state, invocation, args, cwd } = request;
  const shell = resolveShell(state.options, args.shell);
  // one `access` per PATH entry (synchronous, no directory listed): a shell removed since stays a clear refusal
  if (!findExecutable(shell)) throw new RespondToModelError(`exec_command failed for \`${args.cmd}\`: shell not found: ${shell}`);
  const login = args.login ?? state.allowLoginShell;
  // A sandboxed mode is proven to start (bubblewrap, user namespaces, seccomp) before anything runs.
  await assertSandbox(sandbox);
  // The protected paths are walked without blocking the event loop, then handed to the sandbox.
  const scanned = sandbox.mode === 'workspace-write' ? await scanProtectedPaths(sandbox) : undefined;
  // Through the spawner an unsandboxed command gets its reaper there, not a reaper process of its own.
  const wrapped = sandboxCommand([shell, login ? '-lc' : '-c', args.cmd], sandbox, { cwd, tty: args.tty, reaper: !spawned, protectedPaths: scanned });
  if (wrapped.limits) {
    const { mechanism, pids, memoryBytes, tmpBytes } = wrapped.limits;
    emit(invocation, 'sandbox-limits', { mechanism, pids, memory_bytes: memoryBytes, tmp_bytes: tmpBytes });
  }
  return wrapped;
}

/** Starts the call's command in `sandbox`; a command that cannot start is the model's error. */
export async function launchCommand(request: LaunchRequest, sandbox: SandboxPolicy): Promise<ExecProcess> {
  const { state, invocation, args, cwd } = request;
  const spawned = spawnerAllowed(state, args.tty);
  const wrapped = await wrapCommand(request, sandbox, spawned);
  try {
    return await ExecProcess.start({
      ...launchOf(state, wrapped, invocation.step.sessionId, spawned),
      cwd,
      env: commandEnvironment(sandbox, args.tty, state.options),
      tty: args.tty,
      maxRetainedBytes: state.options.maxRetainedBytes ?? DEFAULT_MAX_RETAINED_BYTES,
      onExit: () => afterExit(wrapped),
      audit: wrapped.protected.length > 0 ? async () => (await quarantineNewGitMetadata(sandbox, wrapped.protected)).note : undefined,
    });
  } catch (error) {
    wrapped.release();
    throw new RespondToModelError(`exec_command failed for \`${args.cmd}\`: Failed to create unified exec process: ${(error as Error).message}`, { cause: error });
  }
}
