import { isAbsolute, resolve } from 'node:path';
import { APPROVAL_POLICIES, SANDBOX_MODES, type ApprovalPolicy, type ApprovalProvider, type SandboxMode, type StepContext } from '@switchyard/protocol';
import { optionRules as rule, type OptionRule, type OptionsShape } from '@switchyard/kit/internal';
import { findExecutable, sandboxEnvironment, writableRoots, type InheritEnv, type SandboxLimits, type SandboxPolicy } from '@switchyard/sandbox';

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
   * `gitWalkDirectories` (default 250,000): the most directories per writable root the `.git` walk
   * before and after each `workspace-write` command visits; past it the command fails closed
   * (`LIMIT_EXCEEDED`: not run, or its output withheld).
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

const absolutePath: OptionRule = (value) => (typeof value === 'string' && isAbsolute(value) ? undefined : 'must be an absolute path');

/** The rules `createExecToolset` checks the options against (a bad one is a `CONFIG` error naming it). */
export const EXEC_OPTION_RULES: OptionsShape<ExecToolsOptions> = {
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
    gitWalkDirectories: rule.number({ min: 1, integer: true }),
  }),
  spawner: rule.boolean(),
  maxConcurrentCommands: rule.number({ min: 1, integer: true }),
  maxProcesses: rule.number({ min: 1, integer: true }),
  maxRetainedBytes: rule.number({ min: 1, integer: true }),
  processScope: rule.oneOf('turn', 'session'),
  onShutdown: rule.function(),
  background: rule.boolean(),
};

/** The policies of one call: the options', else the step's, else the defaults. */
export interface CallSettings {
  readonly root: string;
  readonly sandbox: SandboxMode;
  readonly policy: ApprovalPolicy;
  readonly approvals: ApprovalProvider | undefined;
}

export function resolveSettings(options: ExecToolsOptions, step: StepContext): CallSettings {
  return {
    root: resolve(options.root ?? step.cwd),
    sandbox: options.sandbox ?? step.sandboxMode ?? 'workspace-write',
    policy: options.approvalPolicy ?? step.approvalPolicy ?? 'on-request',
    approvals: options.approvals ?? step.approvals,
  };
}

/** The working directory of a call: `workdir` (relative to the root) or the root. */
export function resolveWorkdir(root: string, workdir: string | undefined): string {
  return workdir ? (isAbsolute(workdir) ? workdir : resolve(root, workdir)) : root;
}

/** The host's shell (found on PATH with one `access` per entry and candidate). */
function defaultShell(): string {
  const candidates = [process.env.SHELL, '/bin/bash', '/bin/sh'].filter((value): value is string => Boolean(value));
  return candidates.find((candidate) => findExecutable(candidate)) ?? '/bin/sh';
}

export function resolveShell(options: ExecToolsOptions, shell: string | undefined): string {
  return shell ?? options.shell ?? defaultShell();
}

export function sandboxPolicy(options: ExecToolsOptions, root: string, mode: SandboxMode): SandboxPolicy {
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

/** The environment of one command: the mode's inherited variables, our defaults, then `env`. */
export function commandEnvironment(policy: SandboxPolicy, tty: boolean, options: ExecToolsOptions): Record<string, string> {
  return sandboxEnvironment({
    mode: policy.mode,
    inheritEnv: options.inheritEnv,
    env: { NO_COLOR: '1', TERM: tty ? 'xterm-256color' : 'dumb', PAGER: 'cat', GIT_PAGER: 'cat', ...(options.env ?? {}) },
    writable: policy.mode === 'workspace-write' ? writableRoots(policy) : [],
  });
}
