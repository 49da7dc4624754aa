import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { constants as osConstants } from 'node:os';
import type { Readable } from 'node:stream';
import { SessionPool } from '@switchyard/kit/internal';
import { findExecutable } from './find-executable';
import { SANDBOX_SPAWNER, SPAWNER, launcherSyscalls } from './launchers';

/** How one command ended. */
export interface SpawnedExit {
  /** The exit code, 128 + signal number for a signal. */
  readonly code: number;
  /** Set when the spawner itself ended while the command ran (the command was killed with it): the line to show. */
  readonly lost?: string;
}

/** Where and how {@link CommandSpawner.spawn} runs a command. */
export interface SpawnOptions {
  cwd: string;
  /** The whole environment. */
  env: Record<string, string>;
  /** Sandbox launcher only: the `cgroup.procs` files the command joins before it drops root. */
  cgroupProcs?: readonly string[];
  /** Sandbox launcher only: the file opened as the command's fd 3 (bubblewrap's `--seccomp 3`). */
  fd3?: string;
  /**
   * Sandbox launcher only: makes the sandbox of the session's next command ahead (a
   * {@link PreparedSpare}, normally this command's own `sandboxCommand(…).spawnable.spare`), asked
   * once this command's start was answered.
   */
  spare?: () => PreparedSpare | undefined;
}

/**
 * A sandbox prepared ahead for a sandbox launcher: bubblewrap already started with a stub as its
 * command, waiting for the next command. The launcher hands that command to it only when the
 * command's bubblewrap argv is `argv` followed by `--chdir <dir> -- <command>` and its seccomp filter
 * is `fd3`; else it is discarded and the command starts its own bubblewrap.
 */
export interface PreparedSpare {
  /** bubblewrap's argv (the rlimit prefix included) up to the command's `--chdir`. */
  readonly argv: readonly string[];
  /** The seccomp filter file, opened as bubblewrap's fd 3. */
  readonly fd3: string;
  /** False once a path it mounts read-only was replaced since (its mount no longer covers that path): it is then discarded. */
  valid(): boolean;
  /** Called once it is used or discarded (or its launcher ended): `valid()` is false from then on. Idempotent. */
  release(): void;
}

/** One command started by a {@link CommandSpawner}. */
export interface SpawnedCommand {
  /** The command's reaper: its process group and session leader. Kill the command with `killProcessTree(pid)`. */
  readonly pid: number;
  /** stdout and stderr, on one pipe, in the order written. */
  readonly output: Readable;
  /** Resolves once the reaper ended (never rejects). */
  readonly exited: Promise<SpawnedExit>;
}

/** Milliseconds {@link CommandSpawner.close} waits for the spawner to leave before SIGKILL. */
const CLOSE_GRACE_MS = 2_000;
/**
 * Milliseconds the spawner has to answer a request: one that does not (stopped by a signal,
 * traced, starved) is killed, so a command cannot hang its session's later commands.
 */
const ANSWER_TIMEOUT_MS = 10_000;
/** Default milliseconds without a command after which the spawner exits (the next command starts a new one). */
const DEFAULT_IDLE_MS = 60_000;
/** The last bytes of the spawner's stderr kept for the message when it ends. */
const STDERR_TAIL = 512;

interface Pending {
  /** The spawner process the request went to. */
  child: ChildProcessWithoutNullStreams;
  state: 'starting' | 'running';
  start?: { resolve: (command: SpawnedCommand) => void; reject: (error: Error) => void };
  exit?: (exit: SpawnedExit) => void;
  /** What makes the next command's sandbox ahead, once this one started. */
  spare?: () => PreparedSpare | undefined;
}

type Refable = { ref?: () => void; unref?: () => void };

/** The spawner and its pipes: what keeps the host's event loop waiting for it. */
const handlesOf = (child: ChildProcessWithoutNullStreams) => [child, child.stdin, child.stdout, child.stderr] as Refable[];

/** Set once {@link CommandSpawner.supported} said yes. */
let supportedHere = false;

const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');

function exitText(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `signal ${signal}` : `exit code ${code}`;
}

/**
 * One long-lived command spawner: started by the first command, then sent each command as one
 * line, so a command pays a message and a fork instead of a process start. Unsandboxed (`SPAWNER`)
 * every command keeps what the per-command reaper gives it: its own session and process group, a
 * subreaper that kills whatever it left (`setsid` and double forks included) when it ends, SIGKILL
 * of its tree with the spawner or the host; an unsandboxed command can reach the spawner (same
 * user), which gives it nothing it does not already have. With `launcher` (`SANDBOX_SPAWNER`, as
 * root) it is the sandbox launcher of one workspace and policy and each command is bubblewrap,
 * which its commands cannot see. Started again by the next command when it died or sat idle;
 * {@link close} ends it. Any answer that breaks the protocol stops it (its commands end with a
 * clear note).
 */
export class CommandSpawner {
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly idleMs: number;
  /** Why the host killed a spawner, for the message its commands get. */
  private readonly why = new WeakMap<ChildProcessWithoutNullStreams, string>();

  /**
   * True where it can run: Linux, perl, and known system call numbers. Asked before every command,
   * so a yes is remembered (a search of `PATH` costs a failed `access` per directory); a no is
   * asked again, so perl installed later is used.
   */
  static supported(): boolean {
    supportedHere ||= process.platform === 'linux' && launcherSyscalls() !== undefined && findExecutable('perl') !== undefined;
    return supportedHere;
  }

  private readonly launcher: readonly string[] | undefined;
  private starting: Promise<ChildProcessWithoutNullStreams> | undefined;

  /**
   * @param options.launcher the root launcher's staging arguments (`sandboxCommand`'s
   * `spawnable.launcher`): the spawner is then the long-lived sandbox launcher of that workspace and
   * policy (`SANDBOX_SPAWNER`, as root), and each command is bubblewrap's argv with its cgroups and
   * seccomp filter. Without it: unsandboxed commands, each under its own reaper (`SPAWNER`).
   */
  constructor(options: { idleMs?: number; launcher?: readonly string[] } = {}) {
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.launcher = options.launcher;
  }

  /** The running spawner's pid, if one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Starts `argv` in `cwd` with exactly `env`. Rejects when it cannot start (the spawner could not
   * be started, `cwd` is not a directory, the spawner ended meanwhile); a missing program is an
   * exit code 127 with its message in the output, as a shell would say.
   */
  async spawn(argv: readonly string[], options: SpawnOptions): Promise<SpawnedCommand> {
    if (this.closed) throw new Error('the command spawner was closed with its session');
    if (argv.length === 0) throw new TypeError('CommandSpawner.spawn: argv must not be empty');
    const child = await this.ensure();
    const id = this.nextId++;
    const env = Object.entries(options.env).map(([name, value]) => hex(`${name}=${value}`));
    const procs = options.cgroupProcs ?? [];
    const line = ['R', String(id), hex(options.cwd), String(argv.length), ...argv.map(hex), String(env.length), ...env, String(procs.length), ...procs.map(hex), hex(options.fd3 ?? '')].join(' ');
    const started = new Promise<SpawnedCommand>((resolve, reject) => this.pending.set(id, { child, state: 'starting', start: { resolve, reject }, spare: options.spare }));
    this.busy(child);
    // The prepared sandbox is used by this request or discarded by it: either way the command's own
    // sandboxCommand holds what protects it now.
    const spare = this.prepared?.child === child ? this.prepared.spare : undefined;
    if (spare && !spare.valid()) child.stdin.write('D 0\n');
    this.dropPrepared();
    child.stdin.write(`${line}\n`);
    const timer = setTimeout(() => {
      if (this.pending.get(id)?.state !== 'starting') return;
      this.why.set(child, `it did not answer within ${ANSWER_TIMEOUT_MS / 1000} s and was killed`);
      child.kill('SIGKILL');
    }, ANSWER_TIMEOUT_MS);
    return started.finally(() => clearTimeout(timer));
  }

  /** The sandbox prepared ahead in the running launcher, if any. */
  private prepared: { child: ChildProcessWithoutNullStreams; spare: PreparedSpare } | undefined;

  /** Forgets the prepared sandbox and releases what it held (the launcher discards or uses it). */
  private dropPrepared(): void {
    const prepared = this.prepared;
    this.prepared = undefined;
    prepared?.spare.release();
  }

  /** `P 0 <argc> <arg>×argc <fd3>`: the launcher starts the next command's bubblewrap now, with the stub as its command. */
  private prepare(child: ChildProcessWithoutNullStreams, make: () => PreparedSpare | undefined): void {
    if (this.closed || this.prepared || this.child !== child || child.exitCode !== null || child.signalCode !== null) return;
    let spare: PreparedSpare | undefined;
    try {
      spare = make();
    } catch {
      return; // the next command builds its own sandbox (and meets the error itself)
    }
    if (!spare) return;
    this.prepared = { child, spare };
    child.stdin.write(`${['P', '0', String(spare.argv.length), ...spare.argv.map(hex), hex(spare.fd3)].join(' ')}\n`);
  }

  /** Ends the spawner (its running commands are killed by their reapers); later spawns are refused. */
  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (!child) return;
    await this.stop(child);
  }

  private async stop(child: ChildProcessWithoutNullStreams): Promise<void> {
    clearTimeout(this.idleTimer);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_GRACE_MS);
    await gone;
    clearTimeout(timer);
  }

  /** The running spawner, or a new one (one start shared by concurrent commands). */
  private ensure(): Promise<ChildProcessWithoutNullStreams> {
    const running = this.child;
    if (running && running.exitCode === null && running.signalCode === null) return Promise.resolve(running);
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async start(): Promise<ChildProcessWithoutNullStreams> {
    const perl = findExecutable('perl');
    const syscalls = launcherSyscalls();
    if (!perl || !syscalls) throw new Error('the command spawner needs perl and a known architecture');
    const args = this.launcher ? ['-e', SANDBOX_SPAWNER, ...this.launcher] : ['-e', SPAWNER, String(syscalls.prctl)];
    const child = spawn(perl, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: {} });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    child.on('error', () => undefined);
    child.stdin.on('error', () => undefined);
    if (this.closed) {
      child.kill('SIGKILL');
      throw new Error('the command spawner was closed with its session');
    }
    this.child = child;
    this.listen(child);
    return child;
  }

  private listen(child: ChildProcessWithoutNullStreams): void {
    let buffer = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL)));
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (!this.answer(child, line)) {
          // Not what the spawner says. Trust nothing more from it.
          this.why.set(child, 'it broke the protocol and was killed');
          child.kill('SIGKILL');
          return;
        }
      }
    });
    // 'close', not 'exit': the answers it wrote before it ended are read first.
    child.once('close', (code, signal) => {
      const why = this.why.get(child) ?? exitText(code, signal);
      this.lost(child, `${why}${stderr.trim() ? `: ${stderr.trim()}` : ''}`);
    });
  }

  /** Handles one answer; false when it breaks the protocol. */
  private answer(child: ChildProcessWithoutNullStreams, line: string): boolean {
    const fields = line.split(' ');
    const id = Number(fields[1]);
    const entry = this.pending.get(id);
    if (!entry || entry.child !== child || !/^\d+$/.test(fields[1] ?? '')) return false;
    if (fields[0] === 'S' && fields.length === 4 && entry.state === 'starting') return this.started(child, id, entry, Number(fields[2]), Number(fields[3]));
    if (fields[0] === 'E' && fields.length === 3 && entry.state === 'starting' && /^[0-9a-f]*$/.test(fields[2])) {
      this.pending.delete(id);
      entry.start?.reject(new Error(Buffer.from(fields[2], 'hex').toString('utf8')));
      this.idleWhenDone(child);
      return true;
    }
    if (fields[0] === 'X' && fields.length === 3 && entry.state === 'running' && /^\d+$/.test(fields[2])) {
      this.pending.delete(id);
      // Its copy of the read end is closed now, not at the start: a message then would wake the
      // spawner while the command starts, and a command's output reads to its end either way.
      child.stdin.write(`C ${id}\n`);
      entry.exit?.({ code: Number(fields[2]) });
      this.idleWhenDone(child);
      return true;
    }
    return false;
  }

  /**
   * `S <id> <pid> <fd>`: opens the output pipe through /proc (the spawner closes its copy at `C`, sent
   * at the exit). Synchronous on purpose: one `open`, `fstat` and (on a mismatch) `close` of a pipe
   * through /proc per command, none of which waits on a disk.
   */
  private started(child: ChildProcessWithoutNullStreams, id: number, entry: Pending, pid: number, fd: number): boolean {
    if (!Number.isInteger(pid) || pid <= 1 || !Number.isInteger(fd) || fd < 3) return false;
    let output: Socket;
    try {
      // Non-blocking: a pipe whose writers already closed (the command ended) opens at once and reads to its end.
      const handle = openSync(`/proc/${child.pid}/fd/${fd}`, constants.O_RDONLY | constants.O_NONBLOCK);
      if (!fstatSync(handle).isFIFO()) {
        closeSync(handle);
        return false;
      }
      output = new Socket({ fd: handle, readable: true, writable: false });
    } catch {
      return false;
    }
    entry.state = 'running';
    const exited = new Promise<SpawnedExit>((resolve) => (entry.exit = resolve));
    entry.start?.resolve({ pid, output, exited });
    entry.start = undefined;
    // After the answer, outside the command's start: the next command finds its sandbox made.
    const make = entry.spare;
    if (make) setImmediate(() => this.prepare(child, make));
    return true;
  }

  /** The spawner ended: commands still starting fail, running ones end (their reapers killed them). */
  private lost(child: ChildProcessWithoutNullStreams, how: string): void {
    if (this.child === child) {
      this.child = undefined;
      clearTimeout(this.idleTimer);
    }
    if (this.prepared?.child === child) this.dropPrepared();
    const signal = osConstants.signals.SIGKILL;
    for (const [id, entry] of this.pending) {
      if (entry.child !== child) continue;
      this.pending.delete(id);
      const lost = `exec_command: the session's command spawner (pid ${child.pid}) ended (${how}) while this command ran; the command and everything it started were killed`;
      if (entry.start) entry.start.reject(new Error(`the session's command spawner (pid ${child.pid}) ended (${how}) before the command started`));
      else entry.exit?.({ code: 128 + signal, lost });
    }
  }

  /** Holds the host's event loop while a command is starting or running. */
  private busy(child: ChildProcessWithoutNullStreams): void {
    clearTimeout(this.idleTimer);
    for (const handle of handlesOf(child)) handle.ref?.();
  }

  /** With no command left: lets the host exit, and the spawner exit after `idleMs`. */
  private idleWhenDone(child: ChildProcessWithoutNullStreams): void {
    if (this.pending.size > 0 || this.child !== child) return;
    for (const handle of handlesOf(child)) handle.unref?.();
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.pending.size > 0 || this.child !== child) return;
      // Forgotten first: a command arriving while it leaves starts a new spawner.
      this.child = undefined;
      void this.stop(child);
    }, this.idleMs);
    this.idleTimer.unref();
  }
}

/**
 * The spawners of one tool: one per session and key (the sandbox policy and workspace), so two
 * sessions never share a spawner. `close(sessionId)` ends a session's spawners.
 */
export class SpawnerPool {
  private readonly pool = new SessionPool<CommandSpawner>();

  constructor(private readonly options: { idleMs?: number } = {}) {}

  /**
   * The spawner of `sessionId` for `key`, created (not yet started) on first use; `launcher` makes
   * it a sandbox launcher (see {@link CommandSpawner}), and belongs in `key`.
   */
  spawnerFor(sessionId: string, key: string, launcher?: readonly string[]): CommandSpawner {
    return this.pool.get(sessionId, key, () => new CommandSpawner({ ...this.options, launcher }));
  }

  /** Ends the spawners of `sessionId` (every spawner without one) and waits until they are gone. */
  close(sessionId?: string): Promise<void> {
    return this.pool.close(sessionId);
  }
}
