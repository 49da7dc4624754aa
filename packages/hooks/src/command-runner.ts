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
  /** The shell; run as `<shell> -c <command>` (`-lc` with `loginShell`; `%COMSPEC% /C` on Windows). */
  shell: string;
  /** Run the shell as a login shell (`-lc`): slower (profiles are read), for hooks that need the login environment. */
  loginShell?: boolean;
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
  return new Promise((resolve) => new HookRun(options, resolve).start());
}

/** One hook process from spawn to its single result (see {@link runHookCommand}). */
class HookRun {
  private readonly stdout: CappedBuffer;
  private readonly stderr: CappedBuffer;
  private settled = false;
  private timedOut = false;
  private killedAtTimeout = false;
  private aborted = false;
  private spawnError: string | undefined;
  private exitCode: number | null = null;
  private exited = false;
  private child: ChildProcess | undefined;
  private timer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: RunHookCommandOptions,
    private readonly resolve: (result: HookCommandResult) => void,
  ) {
    const limit = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.stdout = new CappedBuffer(limit);
    this.stderr = new CappedBuffer(limit);
  }

  start(): void {
    if (this.options.signal?.aborted) {
      this.aborted = true;
      this.finish();
      return;
    }
    const child = this.spawn();
    if (child) this.watch(child);
  }

  /** Starts the hook with its stdin file; on failure settles with the spawn error and returns undefined. */
  private spawn(): ChildProcess | undefined {
    const options = this.options;
    let stdinFd: number | undefined;
    try {
      stdinFd = stdinFile(options.input);
      const windows = process.platform === 'win32';
      this.child = spawn(windows ? (process.env.COMSPEC ?? 'cmd.exe') : options.shell, windows ? ['/C', options.command] : [options.loginShell ? '-lc' : '-c', options.command], {
        cwd: options.cwd,
        env: options.env ?? process.env,
        detached: !windows,
        stdio: [stdinFd, 'pipe', 'pipe'],
        windowsHide: true,
      });
      return this.child;
    } catch (error) {
      this.spawnError = `failed to spawn hook: ${errorMessage(error)}`;
      this.finish();
      return undefined;
    } finally {
      // The child holds its own copy of the descriptor.
      if (stdinFd !== undefined) closeSync(stdinFd);
    }
  }

  private watch(child: ChildProcess): void {
    child.on('error', (error) => {
      this.spawnError ??= `failed to spawn hook: ${errorMessage(error)}`;
      this.finish();
    });
    child.stdout?.on('data', (chunk: Buffer) => this.stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    child.on('exit', (code) => this.onExit(child, code));
    child.on('close', this.finish);
    this.timer = setTimeout(() => this.onTimeout(child), Math.min(this.options.timeoutSec * 1000, MAX_TIMER_MS));
    this.options.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  private onExit(child: ChildProcess, code: number | null): void {
    this.exited = true;
    this.exitCode = code;
    // Killed by the timeout's SIGKILL (no status of its own): that is the timeout. A status
    // means the hook exited by itself, possibly before the (late) timer fired.
    if (this.killedAtTimeout && code === null) this.timedOut = true;
    // Leave nothing behind: whatever the hook started in its group dies with it.
    killTree(child);
    this.grace();
  }

  private onTimeout(child: ChildProcess): void {
    if (this.exited) return;
    this.killedAtTimeout = true;
    killTree(child);
    // A hook stuck where SIGKILL cannot reach it yet (uninterruptible I/O) still times out.
    this.grace(() => {
      if (!this.exited) this.timedOut = true;
    });
  }

  private readonly onAbort = () => {
    if (this.exited) return;
    this.aborted = true;
    killTree(this.child as ChildProcess);
    this.grace();
  };

  /** After CLOSE_GRACE_MS, and then one more loop turn (pending I/O first), runs `then` and settles. */
  private grace(then?: () => void): void {
    clearTimeout(this.graceTimer);
    this.graceTimer = setTimeout(() => {
      setImmediate(() => {
        then?.();
        this.finish();
      });
    }, CLOSE_GRACE_MS);
  }

  private readonly finish = () => {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    clearTimeout(this.graceTimer);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    const error =
      this.spawnError ??
      (this.timedOut ? timeoutMessage(this.options.timeoutSec) : this.aborted ? ABORTED_MESSAGE : undefined);
    this.resolve({
      exitCode: error ? null : this.exitCode,
      stdout: this.stdout.text(),
      stderr: this.stderr.text(),
      stdoutTruncated: this.stdout.truncated,
      stderrTruncated: this.stderr.truncated,
      error,
      timedOut: this.timedOut,
      aborted: this.aborted,
      pid: this.child?.pid,
    });
  };
}
