import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import {
  APPROVAL_POLICIES,
  RespondToModelError,
  SANDBOX_MODES,
  SwitchyardError,
  toolName,
  type ApprovalPolicy,
  type ApprovalProvider,
  type BackgroundDelivery,
  type JsonObject,
  type JsonValue,
  type RunningWork,
  type SandboxMode,
  type StepContext,
  type SwitchyardEvent,
  type ToolExecutor,
  type ToolInvocation,
  type ToolOutput,
} from '@switchyard/protocol';
import { checkOptions, optionRules as rule, type OptionRule, type OptionsShape, abortedMessage, contentItemsToText, invocationArguments, serdeArgumentsParser } from '@switchyard/kit';
import { BARE_PATCH_MESSAGE, isBarePatch, parseApplyPatchCommand, rebasePatchPaths } from './apply-patch-interception';
import { DEFAULT_MAX_CONCURRENT_COMMANDS, SessionAdmission } from './admission';
import { ApprovalMemory, escalationRefusedMessage, requireApproval } from './approval';
import { ExecCommandOutput, type ExecResult } from './exec-output';
import { ExecProcess, type ExecProcessSpec } from './exec-process';
import { EXEC_COMMAND_TYPES, WRITE_STDIN_TYPES, execCommandSpec, writeStdinSpec } from './exec-specs';
import { execCommandHookAdapter, writeStdinHookAdapter, type ExecHookContext } from './hook-adapters';
import { DEFAULT_MAX_RETAINED_BYTES } from './head-tail-buffer';
import { DEFAULT_MAX_PROCESSES, ProcessTable, type ProcessEntry } from './process-table';
import { isKnownSafeCommand } from './safe-command';
import { OPAQUE_LINE_MESSAGE, typeInto } from './typed-line';
import {
  assertSandbox,
  checkSandbox,
  CommandSpawner,
  SpawnerPool,
  findExecutable,
  isLikelySandboxDenial,
  quarantineNewGitMetadata,
  sandboxCommand,
  scanProtectedPaths,
  sandboxEnvironment,
  writableRoots,
  type SandboxCommand,
  type InheritEnv,
  type SandboxLimits,
  type SandboxPolicy,
} from '@switchyard/sandbox';

/** Options of {@link createExecToolset} and {@link execTools}. Each policy falls back to the step's, then to a default. */
export interface ExecToolsOptions {
  /** Workspace root: default working directory, writable in `workspace-write`. Default: the step's `cwd`. */
  root?: string;
  /** Sandbox mode. Default: the step's `sandboxMode`, else `workspace-write`. */
  sandbox?: SandboxMode;
  /** Approval policy. Default: the step's `approvalPolicy`, else `on-request`. */
  approvalPolicy?: ApprovalPolicy;
  /** Who is asked. Default: the step's `approvals`; without one every request is refused. */
  approvals?: ApprovalProvider;
  /** Network access inside the sandbox. Default false. */
  network?: boolean;
  /** Extra writable paths in `workspace-write`. */
  writableRoots?: string[];
  /**
   * Restricted read mode (absolute paths). When given — even empty — a sandboxed command sees only
   * the system directories programs need (`PLATFORM_READ_ROOTS` of `@switchyard/sandbox`: `/usr`,
   * `/bin`, `/sbin`, `/lib*`, `/etc`, read-only), `/dev`, a new `/proc`, a private `/tmp`, its
   * workspace (and `writableRoots`), and these paths read-only: nothing of another workspace.
   * Default: all of `/` read-only, the host's private places hidden. See "Serving many tenants".
   */
  readableRoots?: string[];
  /** The bubblewrap binary (path or name on PATH). Default `bwrap`. */
  bwrapPath?: string;
  /** The unprivileged user sandboxed commands run as when the host runs as root. Default 65534:65534. */
  sandboxUser?: { uid: number; gid: number };
  /** Default shell. Default `$SHELL`, else `/bin/bash`, else `/bin/sh`. */
  shell?: string;
  /** Offer the `login` parameter and run login shells by default. Default false. */
  allowLoginShell?: boolean;
  /** Extra environment variables for every command (after the defaults NO_COLOR, TERM, PAGER, GIT_PAGER). */
  env?: Record<string, string>;
  /**
   * Which host environment variables commands inherit. Sandboxed commands default to `core`: only
   * PATH, HOME, LANG, LC_*, TERM, TZ, USER, SHELL and TMPDIR. `danger-full-access` defaults to
   * `filtered`: everything except names that look like secrets (KEY, SECRET, TOKEN, PASS, PWD,
   * CREDENTIAL, AUTH, DATABASE_URL, …). `all`: every variable. A list of names and `PREFIX*`
   * patterns adds those to the core set. `env` is added either way.
   */
  inheritEnv?: InheritEnv;
  /**
   * Caps per sandboxed command: `pids` (default 512), `memoryBytes` (2 GiB), `tmpBytes` (512 MiB each
   * for the private `/tmp` and `/dev/shm`), `cgroups` (default true: cgroups where writable, else
   * rlimits). A command that runs into a cap gets a `sandbox limit: …` line at the end of its output.
   */
  limits?: SandboxLimits;
  /**
   * Commands without a tty start through a long-lived spawner per session and sandbox policy
   * (default true): `danger-full-access` ones, and sandboxed ones when the host runs as root (the
   * launcher's per-workspace steps done once; bubblewrap still per command). Started by the
   * session's first command, ended with the session ({@link ExecToolset.endSession}, `dispose`
   * with the session id, {@link ExecToolset.shutdown}) or after a minute without commands,
   * restarted when it died. A command pays a message and a fork instead of a process start and
   * keeps its own reaper or sandbox (its tree dies when it ends, is killed, or the spawner dies).
   * False: a launcher or reaper process per command.
   */
  spawner?: boolean;
  /**
   * exec_command calls of one session that run at once (from the sandbox start until the call
   * answers). Default 16; the others wait their turn (a call cancelled while waiting answers
   * "aborted by user"), so 200 calls in one response never start 200 sandboxes together.
   */
  maxConcurrentCommands?: number;
  /** Live processes kept for write_stdin before eviction. Default 64. */
  maxProcesses?: number;
  /** Unread output retained per process (head and tail kept). Default 1 MiB. */
  maxRetainedBytes?: number;
  /**
   * `turn` (default): a process dies when its turn ends ({@link ExecToolset.endTurn}, or at the
   * latest when a call of a later turn of the same session arrives). `session`: processes live until
   * {@link ExecToolset.endSession} of their session or {@link ExecToolset.shutdown} (the reference's behaviour).
   */
  processScope?: 'turn' | 'session';
  /**
   * Called once when the toolset starts shutting down (its `shutdown()`; a session's end does not
   * shut a toolset down, since it may serve other sessions), before its processes are killed — e.g.
   * to remove the host's signal handlers. A throw is ignored.
   */
  onShutdown?: () => void;
  /**
   * The host delivers process exits (`createSession({ background })`, with `processScope:
   * 'session'` so processes outlive their turn): exec_command's description tells the model that
   * polling is unnecessary. The delivery itself happens whenever the calling step carries
   * `background`, with or without this switch. Default false.
   */
  background?: boolean;
}

/** The two executors plus process hygiene. */
export interface ExecToolset {
  /** `[exec_command, write_stdin]`. */
  readonly tools: [ToolExecutor, ToolExecutor];
  /** Kills every process started in `turnId` (no-op with `processScope: 'session'`). */
  endTurn(turnId: string): Promise<void>;
  /** Kills every process of the session `sessionId` (its calls' `step.sessionId`); the toolset stays open for other sessions. */
  endSession(sessionId: string): Promise<void>;
  /** Kills every process and refuses further calls. Idempotent. */
  shutdown(): Promise<void>;
  /** Ids of the processes still reachable with write_stdin (of one session when `sessionId` is given). */
  liveSessionIds(sessionId?: string): number[];
}

/** `[exec_command, write_stdin]` as a spreadable array that also carries the toolset's hygiene methods. */
export type ExecTools = ToolExecutor[] & Omit<ExecToolset, 'tools'>;

const MIN_YIELD_MS = 250;
const MAX_YIELD_MS = 30_000;
const DEFAULT_EXEC_YIELD_MS = 10_000;
const DEFAULT_WRITE_YIELD_MS = 250;
const MIN_EMPTY_POLL_MS = 5_000;
const MAX_BACKGROUND_POLL_MS = 300_000;

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

interface ExecCommandArgs {
  cmd: string;
  workdir?: string;
  shell?: string;
  tty: boolean;
  yieldTimeMs: number;
  maxOutputTokens?: number;
  login?: boolean;
  escalate: boolean;
  justification?: string;
  prefixRule?: string[];
}


function optional<T>(args: JsonObject, key: string, type: 'string' | 'number' | 'boolean', tool: string): T | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== type || (type === 'number' && !Number.isFinite(value))) {
    throw new RespondToModelError(`${tool}: \`${key}\` must be a ${type}`, { code: 'INVALID_INPUT' });
  }
  return value as T;
}

/**
 * The exec_command arguments. `login` is read only when it is offered (`allowLoginShell`): the
 * handler reads nothing its schema does not declare, so an unoffered `login` is ignored like any
 * unknown property and the command runs as the host configured, with `-c`.
 */
function parseExecArgs(invocation: ToolInvocation, allowLoginShell: boolean): ExecCommandArgs {
  const args = invocationArguments(invocation, 'exec_command');
  const cmd = optional<string>(args, 'cmd', 'string', 'exec_command');
  if (cmd === undefined || cmd.trim() === '') throw new RespondToModelError('exec_command: `cmd` must be a non-empty string', { code: 'INVALID_INPUT' });
  const permissions = optional<string>(args, 'sandbox_permissions', 'string', 'exec_command') ?? 'use_default';
  if (permissions !== 'use_default' && permissions !== 'require_escalated') {
    throw new RespondToModelError(`exec_command: unsupported sandbox_permissions "${permissions}" (use "use_default" or "require_escalated")`, { code: 'INVALID_INPUT' });
  }
  const prefix = args.prefix_rule;
  if (prefix !== undefined && prefix !== null && !(Array.isArray(prefix) && prefix.every((word) => typeof word === 'string'))) {
    throw new RespondToModelError('exec_command: `prefix_rule` must be an array of strings', { code: 'INVALID_INPUT' });
  }
  return {
    cmd,
    workdir: optional<string>(args, 'workdir', 'string', 'exec_command'),
    shell: optional<string>(args, 'shell', 'string', 'exec_command'),
    tty: optional<boolean>(args, 'tty', 'boolean', 'exec_command') ?? false,
    yieldTimeMs: clamp(optional<number>(args, 'yield_time_ms', 'number', 'exec_command') ?? DEFAULT_EXEC_YIELD_MS, MIN_YIELD_MS, MAX_YIELD_MS),
    maxOutputTokens: optional<number>(args, 'max_output_tokens', 'number', 'exec_command'),
    login: allowLoginShell ? optional<boolean>(args, 'login', 'boolean', 'exec_command') : undefined,
    escalate: permissions === 'require_escalated',
    justification: optional<string>(args, 'justification', 'string', 'exec_command'),
    prefixRule: Array.isArray(prefix) ? (prefix as string[]) : undefined,
  };
}

function chunkId(): string {
  return randomBytes(3).toString('hex');
}

function emit(invocation: ToolInvocation, name: string, data: JsonValue): void {
  try {
    invocation.emit?.({ type: 'tool-notification', callId: invocation.callId, name, data } satisfies SwitchyardEvent);
  } catch {
    // a broken listener never breaks a call
  }
}

function abortError(started: number): SwitchyardError {
  return new SwitchyardError('ABORTED', abortedMessage(Date.now() - started, { style: 'shell' }));
}

/** Waits until the process finished, `ms` passed, or the call was aborted (then throws ABORTED). */
async function waitForProcess(execProcess: ExecProcess, ms: number, signal: AbortSignal, started: number): Promise<void> {
  if (signal.aborted) throw abortError(started);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolveAbort) => {
    onAbort = () => resolveAbort('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  const deadline = new Promise<'deadline'>((resolveDeadline) => (timer = setTimeout(() => resolveDeadline('deadline'), ms)));
  try {
    const outcome = await Promise.race([execProcess.finished.then(() => 'finished' as const), deadline, aborted]);
    if (outcome === 'aborted') throw abortError(started);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** The host's shell (found on PATH with one `access` per entry and candidate). */
function defaultShell(): string {
  const candidates = [process.env.SHELL, '/bin/bash', '/bin/sh'].filter((value): value is string => Boolean(value));
  return candidates.find((candidate) => findExecutable(candidate)) ?? '/bin/sh';
}

/** The environment of one command: the mode's inherited variables, our defaults, then `env`. */
function commandEnvironment(policy: SandboxPolicy, tty: boolean, options: ExecToolsOptions): Record<string, string> {
  return sandboxEnvironment({
    mode: policy.mode,
    inheritEnv: options.inheritEnv,
    env: { NO_COLOR: '1', TERM: tty ? 'xterm-256color' : 'dumb', PAGER: 'cat', GIT_PAGER: 'cat', ...(options.env ?? {}) },
    writable: policy.mode === 'workspace-write' ? writableRoots(policy) : [],
  });
}

function textOf(output: ToolOutput, callId: string): string {
  const item = output.toResponseItem(callId, { kind: 'custom', input: '' });
  if (item.type === 'tool_search_output') return JSON.stringify(item.tools);
  return typeof item.output === 'string' ? item.output : contentItemsToText(item.output);
}

const absolutePath: OptionRule = (value) => (typeof value === 'string' && isAbsolute(value) ? undefined : 'must be an absolute path');

const EXEC_OPTION_RULES: OptionsShape<ExecToolsOptions> = {
  root: rule.string(),
  sandbox: rule.oneOf(...SANDBOX_MODES),
  approvalPolicy: rule.oneOf(...APPROVAL_POLICIES),
  approvals: rule.object(),
  network: rule.boolean(),
  writableRoots: rule.listOf(rule.string()),
  readableRoots: rule.listOf(absolutePath),
  bwrapPath: rule.string(),
  sandboxUser: rule.shape<{ uid: number; gid: number }>({ uid: rule.required(rule.number({ min: 0, integer: true })), gid: rule.required(rule.number({ min: 0, integer: true })) }),
  shell: rule.string(),
  allowLoginShell: rule.boolean(),
  env: rule.object(),
  inheritEnv: rule.anyOf(rule.oneOf('core', 'filtered', 'all'), rule.listOf(rule.string())),
  limits: rule.shape<SandboxLimits>({
    pids: rule.number({ min: 1, integer: true }),
    memoryBytes: rule.number({ min: 1, integer: true }),
    tmpBytes: rule.number({ min: 1, integer: true }),
    cgroups: rule.boolean(),
  }),
  spawner: rule.boolean(),
  maxConcurrentCommands: rule.number({ min: 1, integer: true }),
  maxProcesses: rule.number({ min: 1, integer: true }),
  maxRetainedBytes: rule.number({ min: 1, integer: true }),
  processScope: rule.oneOf('turn', 'session'),
  onShutdown: rule.function(),
  background: rule.boolean(),
};

/** What the two executors of one toolset share. */
interface ToolsetState {
  readonly options: ExecToolsOptions;
  readonly table: ProcessTable;
  readonly memory: ApprovalMemory;
  /** Processes started by a call that has not answered yet (not in the table until then), with their session. */
  readonly inFlight: Map<ExecProcess, string>;
  readonly scope: 'turn' | 'session';
  readonly allowLoginShell: boolean;
  /** At most `maxConcurrentCommands` exec_command calls of one session run at once. */
  readonly admission: SessionAdmission;
  /** The long-lived spawners of unsandboxed commands, one per session. */
  readonly spawners: SpawnerPool;
  shuttingDown: boolean;
}

/** The policies of one call: the options', else the step's, else the defaults. */
interface CallSettings {
  readonly root: string;
  readonly sandbox: SandboxMode;
  readonly policy: ApprovalPolicy;
  readonly approvals: ApprovalProvider | undefined;
}

function ensureOpen(state: ToolsetState): void {
  if (state.shuttingDown) throw new RespondToModelError('exec tools are shut down', { code: 'SHUTTING_DOWN' });
}

/** Kills the processes of earlier turns of the same session (the fallback when nobody calls endTurn). */
function sweepEarlierTurns(state: ToolsetState, step: StepContext): void {
  if (state.scope !== 'turn') return;
  state.table.killWhere((entry) => entry.sessionId === step.sessionId && entry.turnId !== step.turnId);
}

/** The working directory of a call: `workdir` (relative to the root) or the root. */
function resolveWorkdir(root: string, workdir: string | undefined): string {
  return workdir ? (isAbsolute(workdir) ? workdir : resolve(root, workdir)) : root;
}

function resolveShell(options: ExecToolsOptions, shell: string | undefined): string {
  return shell ?? options.shell ?? defaultShell();
}

function resolveSettings(options: ExecToolsOptions, step: StepContext): CallSettings {
  return {
    root: resolve(options.root ?? step.cwd),
    sandbox: options.sandbox ?? step.sandboxMode ?? 'workspace-write',
    policy: options.approvalPolicy ?? step.approvalPolicy ?? 'on-request',
    approvals: options.approvals ?? step.approvals,
  };
}

function hookContextOf(state: ToolsetState): ExecHookContext {
  return {
    resolve: (invocation, args) => ({
      workdir: resolveWorkdir(resolve(state.options.root ?? invocation.step.cwd), typeof args.workdir === 'string' ? args.workdir : undefined),
      shell: resolveShell(state.options, typeof args.shell === 'string' ? args.shell : undefined),
    }),
    sessionCommand: (id, invocation) => state.table.get(id, invocation.step.sessionId)?.command,
    sessionLine: (id, invocation) => state.table.get(id, invocation.step.sessionId)?.typed,
  };
}

function sandboxPolicy(options: ExecToolsOptions, root: string, mode: SandboxMode): SandboxPolicy {
  return {
    mode,
    root,
    network: options.network,
    writableRoots: options.writableRoots,
    ...(options.readableRoots !== undefined ? { readableRoots: options.readableRoots } : {}),
    bwrapPath: options.bwrapPath,
    sandboxUser: options.sandboxUser,
    limits: options.limits,
  };
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

/** Runs one process for at most `yieldTimeMs`; returns it with its output so far. */
async function runOnce(run: {
  state: ToolsetState;
  invocation: ToolInvocation;
  args: ExecCommandArgs;
  cwd: string;
  sandbox: SandboxPolicy;
  started: number;
}): Promise<{ execProcess: ExecProcess; output: string }> {
  const { state, invocation, args, cwd, sandbox, started } = run;
  const shell = resolveShell(state.options, args.shell);
  // one `access` per PATH entry (synchronous, no directory listed): a shell removed since stays a clear refusal
  if (!findExecutable(shell)) throw new RespondToModelError(`exec_command failed for \`${args.cmd}\`: shell not found: ${shell}`);
  const login = args.login ?? state.allowLoginShell;
  // A sandboxed mode is proven to start (bubblewrap, user namespaces, seccomp) before anything runs.
  await assertSandbox(sandbox);
  const spawned = spawnerAllowed(state, args.tty);
  // The protected paths are walked without blocking the event loop, then handed to the sandbox.
  const scanned = sandbox.mode === 'workspace-write' ? await scanProtectedPaths(sandbox) : undefined;
  // Through the spawner an unsandboxed command gets its reaper there, not a reaper process of its own.
  const wrapped = sandboxCommand([shell, login ? '-lc' : '-c', args.cmd], sandbox, { cwd, tty: args.tty, reaper: !spawned, protectedPaths: scanned });
  if (wrapped.limits) {
    const { mechanism, pids, memoryBytes, tmpBytes } = wrapped.limits;
    emit(invocation, 'sandbox-limits', { mechanism, pids, memory_bytes: memoryBytes, tmp_bytes: tmpBytes });
  }
  let execProcess: ExecProcess;
  try {
    execProcess = await ExecProcess.start({
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
  state.inFlight.set(execProcess, invocation.step.sessionId);
  try {
    await waitForProcess(execProcess, args.yieldTimeMs, invocation.signal, started);
  } catch (error) {
    execProcess.kill();
    throw error;
  } finally {
    state.inFlight.delete(execProcess);
  }
  return { execProcess, output: await execProcess.takeOutput() };
}

/** An `apply_patch` heredoc run through exec_command goes to the apply_patch tool (when the step has it). */
async function interceptApplyPatch(run: { invocation: ToolInvocation; args: ExecCommandArgs; cwd: string; root: string; started: number }): Promise<ExecCommandOutput | undefined> {
  const { invocation, args, cwd, root, started } = run;
  const parsed = parseApplyPatchCommand(args.cmd);
  const applyPatch = toolName('apply_patch');
  if (!parsed || !invocation.tools?.has(applyPatch)) return undefined;
  const directory = parsed.cd ? resolve(cwd, parsed.cd) : cwd;
  const patch = rebasePatchPaths(parsed.patch, directory, root);
  const output = await invocation.tools.call(applyPatch, { kind: 'custom', input: patch }, { signal: invocation.signal });
  // As the reference: the apply_patch tool's own answer, no warning line; a success inside the shell
  // tool's `Wall time … Output:` frame, a failure as it is.
  const text = textOf(output, invocation.callId);
  if (output.success === false) throw new RespondToModelError(text);
  return new ExecCommandOutput({ chunkId: '', wallTimeMs: Date.now() - started, output: text, maxOutputTokens: args.maxOutputTokens, countTokens: false });
}

/** A command line as the reference prints it: words joined by spaces, single-quoted unless plain. */
function shellJoin(words: readonly string[]): string {
  return words.map((word) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The checks before anything runs: the workdir a directory, escalation allowed, no bare patch. */
async function checkCommand(run: { state: ToolsetState; args: ExecCommandArgs; settings: CallSettings; cwd: string }): Promise<void> {
  const { state, args, settings, cwd } = run;
  let reason: string | undefined = 'No such file or directory (os error 2)';
  try {
    reason = (await stat(cwd)).isDirectory() ? undefined : 'Not a directory (os error 20)';
  } catch {
    // reported below
  }
  if (reason) {
    // the reference's words: its process creation fails on the missing directory
    const line = shellJoin([resolveShell(state.options, args.shell), (args.login ?? state.allowLoginShell) ? '-lc' : '-c', args.cmd]);
    throw new RespondToModelError(`exec_command failed for \`${line}\`: CreateProcess { message: "Rejected(\\"Failed to create unified exec process: ${reason}\\")" }`);
  }
  if (args.escalate && settings.policy !== 'on-request') {
    throw new RespondToModelError(escalationRefusedMessage(settings.policy), { code: 'APPROVAL_DENIED' });
  }
  if (isBarePatch(args.cmd)) throw new RespondToModelError(BARE_PATCH_MESSAGE);
}

/** The approval request of this command; `escalated` asks to run it outside the sandbox. */
function approvalRequest(run: { invocation: ToolInvocation; args: ExecCommandArgs; cwd: string }, request: { escalated: boolean; reason: string | undefined }) {
  return {
    kind: 'exec' as const,
    toolName: 'exec_command',
    callId: run.invocation.callId,
    command: run.args.cmd,
    cwd: run.cwd,
    reason: request.reason,
    escalated: request.escalated,
    signal: run.invocation.signal,
  };
}

/** Asks for approval where the policy wants it; returns the sandbox mode the command runs in. */
async function approveCommand(run: { state: ToolsetState; invocation: ToolInvocation; args: ExecCommandArgs; cwd: string; settings: CallSettings }): Promise<SandboxMode> {
  const { state, args, settings } = run;
  if (args.escalate) {
    await requireApproval(settings.approvals, approvalRequest(run, { escalated: true, reason: args.justification }), state.memory, args.prefixRule);
    return 'danger-full-access';
  }
  if (settings.policy === 'untrusted' && !isKnownSafeCommand(args.cmd)) {
    await requireApproval(settings.approvals, approvalRequest(run, { escalated: false, reason: args.justification }), state.memory, args.prefixRule);
  }
  return settings.sandbox;
}

/** Runs the command in `mode`; under `on-failure`, a likely sandbox denial is retried outside the sandbox once approved. */
async function runWithDenialRetry(run: {
  state: ToolsetState;
  invocation: ToolInvocation;
  args: ExecCommandArgs;
  cwd: string;
  settings: CallSettings;
  mode: SandboxMode;
  started: number;
}): Promise<{ execProcess: ExecProcess; output: string; sandboxDenied: boolean }> {
  const { state, settings, mode } = run;
  const first = await runOnce({ ...run, sandbox: sandboxPolicy(state.options, settings.root, mode) });
  const denied = mode !== 'danger-full-access' && first.execProcess.exited && isLikelySandboxDenial(first.execProcess.exitCode as number, first.output);
  if (!denied || settings.policy !== 'on-failure') return { ...first, sandboxDenied: denied };
  await requireApproval(settings.approvals, approvalRequest(run, { escalated: true, reason: 'The command failed in the sandbox; run it again without the sandbox?' }), state.memory);
  return { ...(await runOnce({ ...run, sandbox: sandboxPolicy(state.options, settings.root, 'danger-full-access') })), sandboxDenied: false };
}

/** The answer of a run: the exit code when it finished, else a session id for write_stdin. */
function answerExec(run: {
  state: ToolsetState;
  invocation: ToolInvocation;
  args: ExecCommandArgs;
  result: { execProcess: ExecProcess; output: string; sandboxDenied: boolean };
  started: number;
}): ExecCommandOutput {
  const { state, invocation, args, started } = run;
  const { execProcess, output } = run.result;
  const result: ExecResult = { chunkId: chunkId(), wallTimeMs: Date.now() - started, output, maxOutputTokens: args.maxOutputTokens };
  if (execProcess.exited) {
    emit(invocation, 'exec-command-end', { command: args.cmd, exit_code: execProcess.exitCode as number });
    return new ExecCommandOutput({ ...result, exitCode: execProcess.exitCode, hookCommand: args.cmd, ...(run.result.sandboxDenied ? { sandboxDenied: true } : {}) });
  }
  if (state.shuttingDown) {
    execProcess.kill();
    throw new RespondToModelError('exec tools are shut down', { code: 'SHUTTING_DOWN' });
  }
  const step = invocation.step;
  const entry = state.table.add({ process: execProcess, command: args.cmd, callId: invocation.callId, sessionId: step.sessionId, turnId: step.turnId });
  // the model's own calls only: a cell's nested call id is not one the model could match
  if (step.background && invocation.source.kind === 'direct') deliverOnExit(state, entry, step.background, { started, maxOutputTokens: args.maxOutputTokens });
  return new ExecCommandOutput({ ...result, sessionId: entry.id });
}

/**
 * When a process that outlived its exec_command call exits while no write_stdin waits on it, its
 * exit and remaining output go to the session's background inbox as another
 * `function_call_output` of that exec_command call, and the process leaves the table (a later
 * write_stdin finds no such process, as after any reported exit). A process killed with its turn,
 * its session or by eviction has already left the table: nothing is delivered for it.
 */
function deliverOnExit(state: ToolsetState, entry: ProcessEntry, background: BackgroundDelivery, run: { started: number; maxOutputTokens?: number }): void {
  const callId = entry.callId as string;
  void entry.process.finished.then(async () => {
    if (background.signal.aborted || entry.polls > 0 || state.table.get(entry.id, entry.sessionId) !== entry) return;
    state.table.remove(entry.id);
    const exitCode = entry.process.exitCode;
    const output = new ExecCommandOutput({ chunkId: chunkId(), wallTimeMs: Date.now() - run.started, output: await entry.process.takeOutput(), exitCode, maxOutputTokens: run.maxOutputTokens });
    const item = output.toResponseItem(callId, { kind: 'function', arguments: '{}' });
    background.complete({ callId, processId: entry.id, status: exitCode === 0 ? 'completed' : 'failed', item });
  });
}

/** exec_command: checks, apply_patch interception, approval, the sandboxed run, the answer. */
async function handleExecCommand(state: ToolsetState, invocation: ToolInvocation): Promise<ExecCommandOutput> {
  const started = Date.now();
  ensureOpen(state);
  const args = parseExecArgs(invocation, state.allowLoginShell);
  sweepEarlierTurns(state, invocation.step);
  const settings = resolveSettings(state.options, invocation.step);
  const cwd = resolveWorkdir(settings.root, args.workdir);
  await checkCommand({ state, args, settings, cwd });
  const intercepted = await interceptApplyPatch({ invocation, args, cwd, root: settings.root, started });
  if (intercepted) return intercepted;
  const mode = await approveCommand({ state, invocation, args, cwd, settings });
  const release = await state.admission.acquire(invocation.step.sessionId, invocation.signal, () => abortError(started));
  try {
    ensureOpen(state);
    emit(invocation, 'exec-command-begin', { command: args.cmd, cwd, tty: args.tty, sandbox: mode });
    const result = await runWithDenialRetry({ state, invocation, args, cwd, settings, mode, started });
    return answerExec({ state, invocation, args, result, started });
  } finally {
    release();
  }
}

interface WriteStdinArgs {
  id: number;
  chars: string;
  requestedYield: number;
  maxOutputTokens?: number;
}

function parseWriteArgs(invocation: ToolInvocation): WriteStdinArgs {
  const args = invocationArguments(invocation, 'write_stdin');
  const id = optional<number>(args, 'session_id', 'number', 'write_stdin');
  if (id === undefined) throw new RespondToModelError('write_stdin: `session_id` is required', { code: 'INVALID_INPUT' });
  return {
    id,
    chars: optional<string>(args, 'chars', 'string', 'write_stdin') ?? '',
    requestedYield: optional<number>(args, 'yield_time_ms', 'number', 'write_stdin') ?? DEFAULT_WRITE_YIELD_MS,
    maxOutputTokens: optional<number>(args, 'max_output_tokens', 'number', 'write_stdin'),
  };
}

/** write_stdin: writes `chars` (an empty write is a poll), waits, answers with the output so far. */
async function handleWriteStdin(state: ToolsetState, invocation: ToolInvocation): Promise<ExecCommandOutput> {
  const started = Date.now();
  ensureOpen(state);
  const { id, chars, requestedYield, maxOutputTokens } = parseWriteArgs(invocation);
  sweepEarlierTurns(state, invocation.step);
  const entry: ProcessEntry | undefined = state.table.get(id, invocation.step.sessionId);
  if (!entry) throw new RespondToModelError(`write_stdin failed: Unknown process id ${id}`);
  state.table.touch(entry);
  const execProcess = entry.process;
  if (chars !== '') {
    const typed = typeInto(entry.typed, chars);
    // A line edited with keys the hooks cannot follow is not submitted: the hook saw something else.
    if (execProcess.tty && typed.submitsOpaque) throw new RespondToModelError(OPAQUE_LINE_MESSAGE);
    try {
      execProcess.write(chars);
    } catch (error) {
      throw new RespondToModelError(`write_stdin failed: ${(error as Error).message}`);
    }
    entry.typed = typed.after;
    emit(invocation, 'terminal-interaction', { session_id: id, stdin: chars });
  }
  const yieldMs = chars === '' ? clamp(requestedYield, MIN_EMPTY_POLL_MS, MAX_BACKGROUND_POLL_MS) : clamp(requestedYield, MIN_YIELD_MS, MAX_YIELD_MS);
  entry.polls++;
  try {
    await waitForProcess(execProcess, yieldMs, invocation.signal, started);
  } catch (error) {
    state.table.remove(id);
    execProcess.kill();
    throw error;
  } finally {
    entry.polls--;
  }
  const result: ExecResult = { chunkId: chunkId(), wallTimeMs: Date.now() - started, output: await execProcess.takeOutput(), maxOutputTokens };
  if (execProcess.exited) {
    state.table.remove(id);
    emit(invocation, 'exec-command-end', { command: entry.command, exit_code: execProcess.exitCode as number, session_id: id });
    return new ExecCommandOutput({ ...result, exitCode: execProcess.exitCode, hookCommand: entry.command, hookCallId: entry.callId });
  }
  return new ExecCommandOutput({ ...result, sessionId: id, hookCommand: entry.command });
}

/** Waits until each process finished, at most 1 s each (they were already killed). */
async function waitForExit(processes: ExecProcess[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise((done) => (timer = setTimeout(done, 1_000)));
  try {
    await Promise.all(processes.map((execProcess) => Promise.race([execProcess.finished, deadline])));
  } finally {
    clearTimeout(timer);
  }
}

const killAndWait = (entries: ProcessEntry[]) => waitForExit(entries.map((entry) => entry.process));

async function endTurnOf(state: ToolsetState, turnId: string): Promise<void> {
  if (state.scope !== 'turn') return;
  await killAndWait(state.table.killWhere((entry) => entry.turnId === turnId));
}

async function endSessionOf(state: ToolsetState, sessionId: string): Promise<void> {
  const running = [...state.inFlight].filter(([, owner]) => owner === sessionId).map(([execProcess]) => execProcess);
  for (const execProcess of running) execProcess.kill();
  await Promise.all([killAndWait(state.table.killWhere((entry) => entry.sessionId === sessionId)), waitForExit(running)]);
  await state.spawners.close(sessionId);
}

/**
 * What the session calls when it ends. It ends that session's processes when it says which session
 * it is (`{ sessionId }`); without that, one toolset may serve several sessions, so nothing is
 * killed and nothing is shut down — another session's processes and calls are never touched.
 * Processes still die with their turn (`processScope: 'turn'`), by eviction, `endSession`, or
 * `shutdown()`.
 */
async function disposeFromSession(state: ToolsetState, context: unknown): Promise<void> {
  const sessionId = (context as { sessionId?: unknown } | undefined)?.sessionId;
  if (typeof sessionId === 'string') await endSessionOf(state, sessionId);
}

/**
 * What a persisted session records at each commit: the processes of `sessionId` that outlive their
 * call (a session resumed elsewhere reports them lost). Turn-scoped ones die with their turn, so
 * only `processScope: 'session'` reports any.
 */
function runningWorkOf(state: ToolsetState, sessionId: string): RunningWork[] {
  if (state.scope !== 'session') return [];
  const work: RunningWork[] = [];
  for (const id of state.table.ids(sessionId)) {
    const entry = state.table.get(id, sessionId);
    if (entry && entry.callId !== undefined && !entry.process.exited) work.push({ callId: entry.callId, processId: entry.id, command: entry.command });
  }
  return work;
}

async function shutdownToolset(state: ToolsetState): Promise<void> {
  if (!state.shuttingDown) {
    try {
      state.options.onShutdown?.();
    } catch {
      // the host's hook must not stop the processes from being killed
    }
  }
  state.shuttingDown = true;
  const running = [...state.inFlight.keys()];
  for (const execProcess of running) execProcess.kill();
  await Promise.all([killAndWait(state.table.killWhere(() => true)), waitForExit(running)]);
  await state.spawners.close();
}

/**
 * What the session hears at creation: a sandboxed mode this machine cannot enforce (no bubblewrap,
 * no user namespaces, not Linux — every macOS host) refuses every command, and only the model
 * would be told; the host hears it before the first call.
 */
async function checkSetupOf(options: ExecToolsOptions, context: { cwd: string; sandboxMode?: SandboxMode }): Promise<readonly string[]> {
  const mode = options.sandbox ?? context.sandboxMode ?? 'workspace-write';
  if (mode === 'danger-full-access') return [];
  try {
    const check = await checkSandbox(sandboxPolicy(options, resolve(options.root ?? context.cwd), mode));
    if (check.available) return [];
    return [`exec_command cannot run commands in the "${mode}" sandbox on this machine, so it will refuse every command: ${check.error.message} (sandbox: 'danger-full-access' runs them unsandboxed)`];
  } catch (error) {
    return [`exec_command could not check its sandbox: ${(error as Error).message}`];
  }
}

/**
 * Creates the `exec_command` and `write_stdin` executors sharing one process
 * table, plus `endTurn` / `shutdown` to kill process groups. Commands run through the sandbox and
 * approval policy of the options, else of the calling step (see {@link ExecToolsOptions}).
 */
export function createExecToolset(options: ExecToolsOptions = {}): ExecToolset {
  checkOptions('execTools', options, EXEC_OPTION_RULES);
  const state: ToolsetState = {
    options,
    table: new ProcessTable(options.maxProcesses ?? DEFAULT_MAX_PROCESSES),
    memory: new ApprovalMemory(),
    inFlight: new Map(),
    scope: options.processScope ?? 'turn',
    allowLoginShell: options.allowLoginShell ?? false,
    admission: new SessionAdmission(options.maxConcurrentCommands ?? DEFAULT_MAX_CONCURRENT_COMMANDS),
    spawners: new SpawnerPool(),
    shuttingDown: false,
  };
  const hookContext = hookContextOf(state);
  const execCommand: ToolExecutor = {
    name: toolName('exec_command'),
    spec: execCommandSpec({ allowLoginShell: state.allowLoginShell, background: options.background }),
    supportsParallelToolCalls: true,
    abortStyle: 'shell',
    hookPayload: execCommandHookAdapter(hookContext),
    // Read as the reference reads them (serde): its error texts, unknown properties ignored — an
    // unoffered `login` among them (the handler reads only what the spec declares).
    parseArguments: serdeArgumentsParser({ name: 'ExecCommandArgs', schema: execCommandSpec({ allowLoginShell: state.allowLoginShell }).parameters, types: EXEC_COMMAND_TYPES }),
    handle: (invocation) => handleExecCommand(state, invocation),
    checkSetup: (context) => checkSetupOf(options, context),
  };
  const writeStdin: ToolExecutor = {
    name: toolName('write_stdin'),
    spec: writeStdinSpec(),
    supportsParallelToolCalls: false,
    abortStyle: 'shell',
    hookPayload: writeStdinHookAdapter(hookContext),
    parseArguments: serdeArgumentsParser({ name: 'WriteStdinArgs', schema: writeStdinSpec().parameters, types: WRITE_STDIN_TYPES }),
    handle: (invocation) => handleWriteStdin(state, invocation),
  };
  const endTurn = (turnId: string) => endTurnOf(state, turnId);
  const shutdown = () => shutdownToolset(state);
  const lifecycle = { onTurnEnd: endTurn, dispose: (context?: unknown) => disposeFromSession(state, context), runningWork: (context: { sessionId: string }) => runningWorkOf(state, context.sessionId) };
  return {
    // The session calls onTurnEnd / dispose (each shared function once): turn-scoped processes need
    // no wiring; a toolset shared by several sessions stays open until the host's shutdown().
    tools: [{ ...execCommand, ...lifecycle }, { ...writeStdin, ...lifecycle }],
    endTurn,
    endSession: (sessionId) => endSessionOf(state, sessionId),
    shutdown,
    liveSessionIds: (sessionId) => state.table.ids(sessionId),
  };
}

/**
 * `[exec_command, write_stdin]` for a host's tool list (`tools: [...execTools(options)]`), with
 * `endTurn(turnId)`, `shutdown()` and `liveSessionIds()` attached to the array.
 */
export function execTools(options: ExecToolsOptions = {}): ExecTools {
  const toolset = createExecToolset(options);
  const list = [...toolset.tools] as ExecTools;
  list.endTurn = toolset.endTurn;
  list.endSession = toolset.endSession;
  list.shutdown = toolset.shutdown;
  list.liveSessionIds = toolset.liveSessionIds;
  return list;
}
