import { accessSync, constants as fsConstants, existsSync, lstatSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { RespondToModelError, type SandboxMode } from '@switchyard/protocol';
import { seccompFilterPath } from './seccomp';

/** Where and how a command may run (a sandboxed mode needs bubblewrap on Linux). */
export interface SandboxSettings {
  /** `read-only`, `workspace-write` or `danger-full-access` (no sandbox). */
  mode: SandboxMode;
  /** The workspace root: writable in `workspace-write`, readable in every mode. */
  root: string;
  /** Allow network access inside the sandbox. Default false (a private network namespace). */
  network?: boolean;
  /** More writable paths in `workspace-write` (absolute). */
  writableRoots?: readonly string[];
  /** The bubblewrap binary: an absolute path, or a name searched on `PATH`. Default `bwrap`. */
  bwrapPath?: string;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Resolves a program name on `PATH` (or checks an explicit path). `undefined` when not found. */
export function findExecutable(program: string, searchPath = process.env.PATH ?? ''): string | undefined {
  if (program.includes('/')) return isExecutable(program) ? program : undefined;
  for (const dir of searchPath.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The sandbox-unavailable refusal (never falls back to running unsandboxed). */
function unavailable(mode: SandboxMode, why: string): RespondToModelError {
  return new RespondToModelError(
    `sandbox unavailable: ${why}; refusing to run the command without the ${mode} sandbox (install bubblewrap, or configure the sandbox as danger-full-access)`,
    { code: 'SANDBOX_UNAVAILABLE' },
  );
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Binds `<dir>/.git` (a directory, or a worktree's gitfile) read-only when it exists. */
function protectGit(args: string[], dir: string): void {
  const git = join(dir, '.git');
  if (!existsSync(git)) return;
  const real = realpathOrSelf(git);
  args.push('--ro-bind', real, real);
}

/** True when `path` exists and is not a symlink (`/var/run` usually links to `/run`). */
function isRealDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The `/bin/sh` script that starts bubblewrap: `$0` is the seccomp filter file, opened as fd 3
 * for `--seccomp 3`; `"$@"` is bwrap and its arguments. `exec` keeps one pid (the process group
 * leader the kill logic expects). A shell redirection works the same for pipes and for node-pty,
 * which cannot pass extra file descriptors.
 */
export const SECCOMP_LAUNCHER = 'exec "$@" 3<"$0"';

/**
 * Wraps `argv` for the sandbox. `danger-full-access` returns it unchanged. The sandboxed modes use
 * bubblewrap: the whole file system read-only, a private `/tmp`, the workspace (and
 * `writableRoots`) writable in `workspace-write` except their `.git`, a new PID namespace, no
 * network unless allowed (and without network `/run` hidden), a seccomp filter refusing AF_UNIX sockets,
 * and the sandbox dies with its parent. Throws a `RespondToModelError` with code
 * `SANDBOX_UNAVAILABLE` when bubblewrap cannot be used (not Linux, binary missing).
 */
export function sandboxArgv(
  argv: readonly string[],
  settings: SandboxSettings,
  options: { cwd: string; tty: boolean },
): { file: string; args: string[] } {
  if (settings.mode === 'danger-full-access') return { file: argv[0], args: argv.slice(1) };
  if (process.platform !== 'linux') throw unavailable(settings.mode, `bubblewrap sandboxing needs Linux (this is ${process.platform})`);
  const requested = settings.bwrapPath ?? 'bwrap';
  const bwrap = findExecutable(requested);
  if (!bwrap) throw unavailable(settings.mode, `bubblewrap (${requested}) was not found`);
  let filter: string;
  try {
    filter = seccompFilterPath();
  } catch (error) {
    throw unavailable(settings.mode, `the seccomp filter could not be written (${(error as Error).message})`);
  }
  const root = realpathOrSelf(settings.root);
  const args = ['--die-with-parent'];
  // A new session stops a sandboxed command from injecting input into the host's terminal
  // (TIOCSTI); a tty process already owns a private terminal and needs its session for job control.
  if (!options.tty) args.push('--new-session');
  args.push('--unshare-pid', '--unshare-ipc');
  if (!settings.network) args.push('--unshare-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
  // Hide the host's runtime sockets (docker, D-Bus, systemd). With network allowed /run stays:
  // /etc/resolv.conf often points into it. The seccomp filter below is the real guard either way.
  if (!settings.network) {
    if (isRealDirectory('/run')) args.push('--tmpfs', '/run');
    if (isRealDirectory('/var/run')) args.push('--tmpfs', '/var/run');
  }
  if (settings.mode === 'workspace-write') {
    const writable = [root, ...(settings.writableRoots ?? []).map(realpathOrSelf)];
    for (const path of writable) args.push('--bind', path, path);
    // After the writable binds: a planted .git/hooks/* would run unsandboxed at the next commit.
    for (const path of writable) protectGit(args, path);
  } else {
    // Keep the workspace visible when it lives under the private /tmp.
    args.push('--ro-bind', root, root);
  }
  args.push('--seccomp', '3', '--chdir', realpathOrSelf(options.cwd), '--', ...argv);
  return { file: '/bin/sh', args: ['-c', SECCOMP_LAUNCHER, filter, bwrap, ...args] };
}

const DENIAL_MARKERS = [
  'operation not permitted',
  'permission denied',
  'read-only file system',
  'network is unreachable',
  'seccomp',
  'sandbox',
  'bwrap:',
];

/** True when a finished sandboxed command looks like the sandbox stopped it (non-zero exit + a telltale message). */
export function isLikelySandboxDenial(exitCode: number, output: string): boolean {
  if (exitCode === 0 || exitCode === 127) return false;
  const lower = output.toLowerCase();
  return DENIAL_MARKERS.some((marker) => lower.includes(marker));
}
