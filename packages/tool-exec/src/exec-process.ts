import { spawn as spawnChild, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { killProcessTree as killTree, type CommandSpawner, type SpawnOptions } from '@switchyard/sandbox';
import type { Readable } from 'node:stream';
import { createEventHub } from '@switchyard/kit/internal';
import { isSwitchyardError, RespondToModelError } from '@switchyard/protocol';
import { HeadTailBuffer } from './head-tail-buffer';

const OUTPUT_EVENT = { type: 'output' } as const;

/** How to start one process. `file` + `args` is the final argv (already wrapped by the sandbox). */
export interface ExecProcessSpec {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** A pseudo-terminal (node-pty) instead of pipes; only a tty keeps stdin open. */
  tty: boolean;
  /** Retained unread output, head and tail kept. */
  maxRetainedBytes: number;
  /**
   * Called once when the process ended, before its exit is reported: a line returned (the sandbox
   * cap it ran into) is appended to its output.
   */
  onExit?: () => string | undefined;
  /**
   * Called each time output is taken and once when the process ended: a line returned (what a
   * check found and did, e.g. new git metadata renamed) is appended to the output. A throw or
   * rejection fails the command closed: it is killed, its output is withheld and every later
   * taking of output throws that error (a `RespondToModelError` as it is, anything else wrapped).
   */
  audit?: () => Promise<string | undefined> | string | undefined;
  /**
   * Start `file` + `args` through this session's long-lived spawner (pipes only) instead of a
   * process of its own: the spawner is already running, so the command pays a message and a fork.
   */
  spawner?: CommandSpawner;
  /** With a sandbox launcher as `spawner`: the cgroups the command joins and its seccomp filter (fd 3). */
  spawnOptions?: Pick<SpawnOptions, 'cgroupProcs' | 'fd3' | 'spare'>;
}

type NoteProducer = () => Promise<string | undefined> | string | undefined;

/** Calls a note producer; a throw or rejection is no note. */
async function noteOf(producer: NoteProducer | undefined): Promise<string | undefined> {
  try {
    return await producer?.();
  } catch {
    return undefined;
  }
}

/** Appends the audit and exit notes of `spec` once the process ended (never rejects). */
async function appendExitNote(spec: ExecProcessSpec, execProcess: ExecProcess): Promise<void> {
  execProcess.markEnding();
  await execProcess.runAudit();
  const note = await noteOf(spec.onExit);
  if (note) execProcess.pushOutput(`\n${note}\n`);
}

/** What an audit's throw becomes: a model-visible failure (a `RespondToModelError` stays as it is). */
function auditFailure(error: unknown): Error {
  if (isSwitchyardError(error)) return error;
  const why = error instanceof Error ? error.message : String(error);
  return new RespondToModelError(`exec_command failed closed: the check after the command could not finish (${why}); its output is withheld and it was stopped if still running`, { cause: error });
}

/** How long to keep reading output after the process exited (late pipe / pty data). */
const DRAIN_GRACE_MS = 100;
/**
 * The longest wait for a pipe that stays open after the exit: on a loaded machine the exit can
 * arrive before output written before it (the spawner relays both), so quiet pipes get this long.
 */
const MAX_DRAIN_MS = 1_000;

interface PtyLike {
  readonly pid: number;
  onData(listener: (data: string) => void): unknown;
  onExit(listener: (event: { exitCode: number; signal?: number }) => void): unknown;
  write(data: string): void;
  kill(signal?: string): void;
}

interface PtyModule {
  spawn(file: string, args: string[], options: Record<string, unknown>): PtyLike;
}

let ptyModule: Promise<PtyModule> | undefined;

/** Loads node-pty on first use only, so hosts that never ask for a tty never load a native module. */
function loadPty(): Promise<PtyModule> {
  ptyModule ??= import('@lydell/node-pty').then((mod) => {
    const candidate = mod as unknown as PtyModule & { default?: PtyModule };
    return typeof candidate.spawn === 'function' ? candidate : (candidate.default as PtyModule);
  });
  return ptyModule;
}

/**
 * One running command: output collected into a {@link HeadTailBuffer}, an exit code once it
 * finished, and a kill that takes the whole process group (and any descendant that left it) down.
 */
export class ExecProcess {
  readonly pid: number;
  readonly tty: boolean;
  /** Resolves once the process exited and its output was drained. Never rejects. */
  readonly finished: Promise<void>;
  private readonly buffer: HeadTailBuffer;
  private code: number | undefined;
  private done = false;
  private readonly writer: ((data: string) => void) | undefined;
  private readonly audit: NoteProducer | undefined;
  /** The audits in order (never rejects), and the one queued that has not started (shared by every caller meanwhile). */
  private auditChain: Promise<void> = Promise.resolve();
  private auditWaiting: Promise<void> | undefined;
  private ending = false;
  /** Why the command failed closed (its audit threw): every later taking of output throws it. */
  private failure: Error | undefined;
  // a throwing waker is reported (process warning SWITCHYARD_LISTENER) and never stops the output
  private readonly events = createEventHub<{ type: 'output' }>({ name: 'exec-process' });

  /** Use {@link ExecProcess.start}; the constructor only wires a started process. */
  constructor(init: { pid: number; tty: boolean; buffer: HeadTailBuffer; finished: Promise<void>; writer?: (data: string) => void; audit?: NoteProducer }) {
    this.pid = init.pid;
    this.tty = init.tty;
    this.buffer = init.buffer;
    this.finished = init.finished;
    this.writer = init.writer;
    this.audit = init.audit;
  }

  /**
   * Starts a process. Rejects with the spawn error when it cannot start (missing shell, bad cwd).
   * Every live process is also killed if the host process exits without shutting down.
   */
  static async start(spec: ExecProcessSpec): Promise<ExecProcess> {
    const started = spec.tty ? await startPty(spec) : spec.spawner ? await startSpawned(spec, spec.spawner) : await startPipes(spec);
    trackUntilFinished(started);
    return started;
  }

  /** The exit code (128 + signal number for a signal), or `undefined` while running. */
  get exitCode(): number | undefined {
    return this.done ? this.code : undefined;
  }

  /** True once the process exited and its output was drained. */
  get exited(): boolean {
    return this.done;
  }

  /** Sends `data` to a tty process. Throws when stdin is not available (pipes) or the process ended. */
  write(data: string): void {
    if (!this.writer) throw new Error('stdin is closed for this session; rerun exec_command with tty=true to keep stdin open');
    if (this.done) return;
    this.writer(data);
  }

  /**
   * Takes the output collected since the last call (after the audit's note, if any). Once the
   * process ended, the audit already ran at its exit and nothing of it is left to change anything,
   * so it does not run again. Throws the audit's failure, the output withheld, once it failed.
   */
  async takeOutput(): Promise<string> {
    if (!this.done) await this.runAudit();
    const output = this.buffer.drain();
    if (this.failure) throw this.failure;
    return output;
  }

  /**
   * @internal Runs the spec's audit and appends its note. One audit at a time, in order: a call
   * joins the audit queued and not started yet, else queues a new one after the running one (so
   * it sees everything written before the call, and two audits never rename the same entry at
   * once). Never rejects.
   */
  runAudit(): Promise<void> {
    if (!this.audit) return Promise.resolve();
    if (this.auditWaiting) return this.auditWaiting;
    const next = this.auditChain.then(() => {
      this.auditWaiting = undefined; // started: a later call queues a new one
      return this.auditOnce();
    });
    this.auditWaiting = next;
    this.auditChain = next;
    return next;
  }

  /** @internal The process exited (its group is killed by the caller): a failing audit kills nothing more. */
  markEnding(): void {
    this.ending = true;
  }

  private async auditOnce(): Promise<void> {
    if (this.failure) return;
    try {
      const note = await this.audit?.();
      if (note) this.pushOutput(`\n${note}\n`);
    } catch (error) {
      // Fails closed: nothing of what the check could not vouch for reaches the model.
      this.failure = auditFailure(error);
      // once exited, the pid may already belong to another process: its group was killed at the exit
      if (!this.ending) this.kill();
      this.buffer.drain();
    }
  }

  /** Kills the process group and every descendant with SIGKILL. Safe to call more than once. */
  kill(): void {
    killTree(this.pid);
  }

  /** Called on each chunk of output (used to wake waiters). Returns an unsubscribe function. */
  onOutput(listener: () => void): () => void {
    return this.events.on('output', listener);
  }

  /** @internal */
  pushOutput(chunk: Buffer | string): void {
    this.buffer.push(chunk);
    this.events.emit(OUTPUT_EVENT);
  }

  /** @internal */
  markExited(code: number): void {
    this.code = code;
    this.done = true;
  }
}

const live = new Set<ExecProcess>();
let exitHookInstalled = false;

function trackUntilFinished(execProcess: ExecProcess): void {
  live.add(execProcess);
  void execProcess.finished.then(() => live.delete(execProcess));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const running of live) running.kill();
    });
  }
}

/**
 * SIGKILLs what is left of an ended process's group. Not the /proc sweep of {@link ExecProcess.kill}:
 * once the process was reaped its children belong to its reaper or init (a sandboxed command's die
 * with its PID namespace, an unsandboxed one's with the perl reaper), so a sweep from its pid finds
 * nothing — or the children of a new process that reused the pid — and reads every process's
 * /proc entry for it. Never throws.
 */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is already empty
  }
}

function signalExitCode(signal: NodeJS.Signals | number | null | undefined): number {
  if (typeof signal === 'number') return 128 + signal;
  if (!signal) return 1;
  return 128 + (osConstants.signals[signal] ?? 0);
}

/**
 * Settles a pipe-connected process once it exited with `exitCode` and its output is drained: the
 * output's `close`, else {@link DRAIN_GRACE_MS} without new data once some arrived (a background
 * grandchild may still hold the pipes), {@link MAX_DRAIN_MS} at most. Nothing outlives the command,
 * so what is left of its group is killed first.
 */
function settleWhenDrained(run: { spec: ExecProcessSpec; execProcess: ExecProcess; isClosed: () => boolean; onClose: (listener: () => void) => void; lastDataAt: () => number | undefined; resolve: () => void }, exitCode: number): void {
  const { spec, execProcess } = run;
  let settled = false;
  const settle = () => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    killGroup(execProcess.pid);
    void appendExitNote(spec, execProcess).then(() => {
      execProcess.markExited(exitCode);
      run.resolve();
    });
  };
  const exitedAt = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    const now = Date.now();
    const quietSince = Math.max(exitedAt, run.lastDataAt() ?? 0);
    // no output at all yet: the pipe may still be on its way, so wait up to the cap
    const done = now - exitedAt >= MAX_DRAIN_MS || (run.lastDataAt() !== undefined && now - quietSince >= DRAIN_GRACE_MS);
    if (done) settle();
    else timer = setTimeout(check, DRAIN_GRACE_MS / 2);
  };
  if (run.isClosed()) return settle();
  timer = setTimeout(check, DRAIN_GRACE_MS);
  run.onClose(settle);
}

/** Collects a process's output streams into its buffer; the returned flag says when they all closed. */
function collectOutput(
  execProcess: ExecProcess,
  streams: ReadonlyArray<Readable | null | undefined>,
): { isClosed: () => boolean; onClose: (listener: () => void) => void; lastDataAt: () => number | undefined } {
  const open = streams.filter((stream): stream is Readable => stream !== null && stream !== undefined);
  let remaining = open.length;
  let lastDataAt: number | undefined;
  const listeners: Array<() => void> = [];
  for (const stream of open) {
    stream.on('data', (chunk: Buffer) => {
      lastDataAt = Date.now();
      execProcess.pushOutput(chunk);
    });
    stream.on('error', () => undefined);
    stream.once('close', () => {
      if (--remaining === 0) listeners.splice(0).forEach((listener) => listener());
    });
  }
  return { isClosed: () => remaining === 0, onClose: (listener) => (remaining === 0 ? listener() : listeners.push(listener)), lastDataAt: () => lastDataAt };
}

async function startPipes(spec: ExecProcessSpec): Promise<ExecProcess> {
  const child: ChildProcess = spawnChild(spec.file, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true, // own process group (pgid = pid): one kill reaches every child
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  const pid = child.pid as number;
  let resolveFinished!: () => void;
  const finished = new Promise<void>((resolve) => (resolveFinished = resolve));
  const buffer = new HeadTailBuffer(spec.maxRetainedBytes);
  const execProcess = new ExecProcess({ pid, tty: false, buffer, finished, audit: spec.audit });
  const output = collectOutput(execProcess, [child.stdout, child.stderr]);
  child.on('error', () => undefined);
  child.once('exit', (code, signal) => settleWhenDrained({ spec, execProcess, ...output, resolve: resolveFinished }, code ?? signalExitCode(signal)));
  return execProcess;
}

/**
 * Starts the command through the session's spawner: its reaper's pid stands for it (its process
 * group; the kill takes that group and every descendant), stdout and stderr arrive on one pipe,
 * the exit code as the spawner's message. When the spawner itself ends meanwhile, the command was
 * killed with it and the output says so.
 */
async function startSpawned(spec: ExecProcessSpec, spawner: CommandSpawner): Promise<ExecProcess> {
  const command = await spawner.spawn([spec.file, ...spec.args], { cwd: spec.cwd, env: spec.env, ...spec.spawnOptions });
  let resolveFinished!: () => void;
  const finished = new Promise<void>((resolve) => (resolveFinished = resolve));
  const buffer = new HeadTailBuffer(spec.maxRetainedBytes);
  const execProcess = new ExecProcess({ pid: command.pid, tty: false, buffer, finished, audit: spec.audit });
  const output = collectOutput(execProcess, [command.output]);
  void command.exited.then(({ code, lost }) => {
    if (lost) execProcess.pushOutput(`\n${lost}\n`);
    settleWhenDrained({ spec, execProcess, ...output, resolve: resolveFinished }, code);
  });
  return execProcess;
}

async function startPty(spec: ExecProcessSpec): Promise<ExecProcess> {
  const pty = await loadPty();
  const terminal = pty.spawn(spec.file, spec.args, {
    name: spec.env.TERM ?? 'xterm-256color',
    cols: 80,
    rows: 24,
    cwd: spec.cwd,
    env: spec.env,
  });
  let resolveFinished!: () => void;
  const finished = new Promise<void>((resolve) => (resolveFinished = resolve));
  const buffer = new HeadTailBuffer(spec.maxRetainedBytes);
  const execProcess = new ExecProcess({ pid: terminal.pid, tty: true, buffer, finished, writer: (data) => terminal.write(data), audit: spec.audit });
  let lastData = Date.now();
  terminal.onData((data) => {
    lastData = Date.now();
    execProcess.pushOutput(data);
  });
  terminal.onExit(({ exitCode, signal }) => {
    const code = signal ? signalExitCode(signal) : exitCode;
    // Let late pty data arrive: settle after a short quiet period (bounded, in case a leftover
    // child keeps writing; the kill below ends it).
    const exitedAt = Date.now();
    const check = () => {
      if (Date.now() - lastData >= DRAIN_GRACE_MS / 2 || Date.now() - exitedAt >= DRAIN_GRACE_MS * 5) {
        killGroup(terminal.pid);
        void appendExitNote(spec, execProcess).then(() => {
          execProcess.markExited(code);
          resolveFinished();
        });
      } else setTimeout(check, DRAIN_GRACE_MS / 2);
    };
    setTimeout(check, DRAIN_GRACE_MS / 2);
  });
  return execProcess;
}
