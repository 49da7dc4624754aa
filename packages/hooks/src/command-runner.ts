import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '@switchyard/protocol';

/** Default cap of captured stdout and of captured stderr (each). */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

/** How long pipes may stay open after the hook process exited (a grandchild that escaped the group). */
const CLOSE_GRACE_MS = 500;
/** setTimeout's largest delay; longer timeouts are clamped to it (about 24 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** The failure text of a hook stopped because its call was cancelled. */
export const ABORTED_MESSAGE = 'hook aborted: the tool call was cancelled';

/** The failure text of a hook killed at its timeout. */
export function timeoutMessage(timeoutSec: number): string {
  return `hook timed out after ${timeoutSec}s`;
}

/** Options of {@link runHookCommand}. */
export interface RunHookCommandOptions {
  command: string;
  cwd: string;
  /** What the hook reads on stdin (end of file after it). */
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

/**
 * Puts `input` in a private temporary file (mode 0600, created exclusively) and returns a
 * read-only descriptor on it; the name is removed at once, the open descriptor keeps the content.
 * The hook gets this as its stdin: it can read all of it, end of file included, without the host's
 * event loop writing or closing a pipe, so it answers even while the host thread is stalled.
 */
function stdinFile(input: string): number {
  const path = join(tmpdir(), `switchyard-hook-${process.pid}-${randomBytes(8).toString('hex')}.json`);
  writeFileSync(path, input, { mode: 0o600, flag: 'wx' });
  try {
    return openSync(path, 'r');
  } finally {
    unlinkSync(path);
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
 * Runs one command hook: spawned detached (its own process group) in `cwd` with `input` on stdin
 * (a deleted temporary file, see {@link stdinFile}), stdout and stderr captured up to `maxOutputBytes` each (the rest is drained and dropped). On
 * timeout or abort the whole group is killed; when the hook exits, any process it left in its group
 * is killed too. Resolves once; never rejects.
 *
 * The exit status decides, not the clock: when the timeout fires, the group is killed and the run
 * counts as timed out only if the hook then dies of that kill (or does not die within 0.5 s). A
 * hook that had already exited — its exit not yet seen because the host thread was busy past the
 * deadline — keeps its own status, so a stalled host cannot turn an exit 2 into a timeout. Each
 * grace period ends one event-loop turn late, so pipe data that arrived during a stall is read
 * before the result is settled.
 */
export function runHookCommand(options: RunHookCommandOptions): Promise<HookCommandResult> {
  const limit = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const stdout = new CappedBuffer(limit);
  const stderr = new CappedBuffer(limit);
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    let killedAtTimeout = false;
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
    /** After CLOSE_GRACE_MS, and then one more loop turn (pending I/O first), runs `then` and settles. */
    const grace = (then?: () => void) => {
      clearTimeout(graceTimer);
      graceTimer = setTimeout(() => {
        setImmediate(() => {
          then?.();
          finish();
        });
      }, CLOSE_GRACE_MS);
    };
    const onAbort = () => {
      if (exited) return;
      aborted = true;
      killTree(child);
      grace();
    };

    if (options.signal?.aborted) {
      aborted = true;
      finish();
      return;
    }
    let stdinFd: number | undefined;
    try {
      stdinFd = stdinFile(options.input);
      const windows = process.platform === 'win32';
      child = spawn(windows ? (process.env.COMSPEC ?? 'cmd.exe') : options.shell, windows ? ['/C', options.command] : ['-lc', options.command], {
        cwd: options.cwd,
        env: options.env ?? process.env,
        detached: !windows,
        stdio: [stdinFd, 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (error) {
      spawnError = `failed to spawn hook: ${errorMessage(error)}`;
      finish();
      return;
    } finally {
      // The child holds its own copy of the descriptor.
      if (stdinFd !== undefined) closeSync(stdinFd);
    }
    child.on('error', (error) => {
      spawnError ??= `failed to spawn hook: ${errorMessage(error)}`;
      finish();
    });
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('exit', (code) => {
      exited = true;
      exitCode = code;
      // Killed by the timeout's SIGKILL (no status of its own): that is the timeout. A status
      // means the hook exited by itself, possibly before the (late) timer fired.
      if (killedAtTimeout && code === null) timedOut = true;
      // Leave nothing behind: whatever the hook started in its group dies with it.
      killTree(child);
      grace();
    });
    child.on('close', finish);
    timer = setTimeout(() => {
      if (exited) return;
      killedAtTimeout = true;
      killTree(child);
      // A hook stuck where SIGKILL cannot reach it yet (uninterruptible I/O) still times out.
      grace(() => {
        if (!exited) timedOut = true;
      });
    }, Math.min(options.timeoutSec * 1000, MAX_TIMER_MS));
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
