import { spawn, type ChildProcess } from 'node:child_process';
import { errorMessage } from '@switchyard/protocol';

/** Default cap of captured stdout and of captured stderr (each). */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

/** How long pipes may stay open after the hook process exited (a grandchild that escaped the group). */
const CLOSE_GRACE_MS = 500;
/** setTimeout's largest delay; longer timeouts are clamped to it (about 24 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** The failure text of a hook stopped because its call was cancelled. */
export const ABORTED_MESSAGE = 'hook aborted: the tool call was cancelled';

/** The failure text of a hook killed at its timeout (reference §4.4). */
export function timeoutMessage(timeoutSec: number): string {
  return `hook timed out after ${timeoutSec}s`;
}

/** Options of {@link runHookCommand}. */
export interface RunHookCommandOptions {
  command: string;
  cwd: string;
  /** Written to stdin, then stdin is closed. */
  input: string;
  timeoutSec: number;
  /** The shell; run as `<shell> -lc <command>` (`%COMSPEC% /C` on Windows). */
  shell: string;
  env?: NodeJS.ProcessEnv;
  maxOutputBytes?: number;
  signal?: AbortSignal;
}

/** What a hook process did. `error` is set when it did not run to a normal exit. */
export interface HookCommandResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** Spawn failure, timeout or abort, as the text a warning carries. */
  error?: string;
  timedOut: boolean;
  aborted: boolean;
  pid?: number;
}

class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly limit: number) {}
  push(chunk: Buffer): void {
    const room = this.limit - this.size;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    if (chunk.length > room) {
      this.chunks.push(chunk.subarray(0, room));
      this.size = this.limit;
      this.truncated = true;
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** Kills the whole process group of a detached child (POSIX) or the child itself (Windows). Never throws. */
function killTree(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    if (process.platform === 'win32') child.kill('SIGKILL');
    else process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * Runs one command hook: spawned detached (its own process group) in `cwd` with `input` on stdin,
 * stdout and stderr captured up to `maxOutputBytes` each (the rest is drained and dropped). On
 * timeout or abort the whole group is killed; when the hook exits, any process it left in its group
 * is killed too. Resolves once; never rejects.
 */
export function runHookCommand(options: RunHookCommandOptions): Promise<HookCommandResult> {
  const limit = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const stdout = new CappedBuffer(limit);
  const stderr = new CappedBuffer(limit);
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    let aborted = false;
    let spawnError: string | undefined;
    let exitCode: number | null = null;
    let exited = false;
    let child: ChildProcess;
    let timer: NodeJS.Timeout | undefined;
    let graceTimer: NodeJS.Timeout | undefined;

    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      options.signal?.removeEventListener('abort', onAbort);
      child?.stdout?.destroy();
      child?.stderr?.destroy();
      const error =
        spawnError ??
        (timedOut ? timeoutMessage(options.timeoutSec) : aborted ? ABORTED_MESSAGE : undefined);
      resolve({
        exitCode: error ? null : exitCode,
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        error,
        timedOut,
        aborted,
        pid: child?.pid,
      });
    };
    const onAbort = () => {
      if (exited) return;
      aborted = true;
      killTree(child);
      graceTimer ??= setTimeout(finish, CLOSE_GRACE_MS);
    };

    if (options.signal?.aborted) {
      aborted = true;
      finish();
      return;
    }
    try {
      const windows = process.platform === 'win32';
      child = spawn(windows ? (process.env.COMSPEC ?? 'cmd.exe') : options.shell, windows ? ['/C', options.command] : ['-lc', options.command], {
        cwd: options.cwd,
        env: options.env ?? process.env,
        detached: !windows,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (error) {
      spawnError = `failed to spawn hook: ${errorMessage(error)}`;
      finish();
      return;
    }
    child.on('error', (error) => {
      spawnError ??= `failed to spawn hook: ${errorMessage(error)}`;
      finish();
    });
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stdin?.on('error', () => {
      // The hook may exit without reading stdin (EPIPE); that is not a failure.
    });
    child.stdin?.end(options.input);
    child.on('exit', (code) => {
      exited = true;
      exitCode = code;
      // Leave nothing behind: whatever the hook started in its group dies with it.
      killTree(child);
      graceTimer ??= setTimeout(finish, CLOSE_GRACE_MS);
    });
    child.on('close', finish);
    timer = setTimeout(() => {
      if (exited) return;
      timedOut = true;
      killTree(child);
      graceTimer ??= setTimeout(finish, CLOSE_GRACE_MS);
    }, Math.min(options.timeoutSec * 1000, MAX_TIMER_MS));
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
