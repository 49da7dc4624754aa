import { execFile, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { RespondToModelError } from '@switchyard/protocol';
import { inheritableDescriptors, SECCOMP_EXEC } from './descriptors';
import { sandboxUnavailable } from './errors';
import { findExecutable } from './find-executable';
import { REAPER, ROOT_LAUNCHER, launcherSyscalls, type LauncherSyscalls } from './launchers';
import type { SandboxPolicy } from './policy';
import { baseViewArgs, RESTRICTED_VIEW_END, unsearchableAncestorArgs } from './filesystem-view';
import { commandLimits, HIDDEN_TMPFS_BYTES, trackingGroup, type CommandLimits } from './resource-limits';
import { ensureGitPlaceholder, isWithin, releaseGitPlaceholder, protectedPaths, resolveExisting, writableRoots, type ProtectedPath } from './protected-paths';
import { sandboxPrivateDir, seccompFilterPath, seccompSupported } from './seccomp';
import type { PreparedSpare } from './spawner';

/** The default user of sandboxed commands when the host runs as root (`nobody`). */
export const DEFAULT_SANDBOX_USER = { uid: 65534, gid: 65534 } as const;

/**
 * `$0` is the seccomp filter file, opened as fd 3 for `bwrap --seccomp 3`; `"$@"` is the rest.
 * `exec` keeps one process (the group leader the kill logic expects); a redirection works the same
 * for pipes and for node-pty, which cannot pass extra file descriptors.
 */
export const SECCOMP_LAUNCHER = 'exec "$@" 3<"$0"';

/** Options of {@link sandboxCommand}. */
export interface SandboxCommandOptions {
  /** Working directory of the command (inside the sandbox the same path). */
  cwd: string;
  /** The command gets a terminal (node-pty): no `--new-session`, which would take its job control. */
  tty?: boolean;
  /**
   * `danger-full-access` only: run the command under the reaper (a subreaper that kills whatever
   * the command left behind when it ends, and closes every descriptor above 2 the host inherited).
   * Default true; without perl the command runs directly — refused when the host holds inheritable
   * descriptors. False: the caller starts it through something that closes them (a `CommandSpawner`).
   */
  reaper?: boolean;
  /**
   * Files and folders the command itself needs to start (its interpreter, its script and modules),
   * bound read-only at their real paths even where the sandbox hides them (`/root`, `/home`,
   * `/tmp`, `/run`). As root the launcher stages them before dropping privileges, so a private
   * parent (a `0700` `/root`) does not stop the unprivileged bubblewrap; the files' own
   * permissions still apply to the sandbox user. Bound before the writable roots, so a writable
   * root inside one stays writable. Each must exist.
   */
  readOnlyPaths?: readonly string[];
  /**
   * The policy's protected paths as `scanProtectedPaths(policy)` just found them (walked without
   * blocking the event loop). Without it `sandboxCommand` walks the writable roots itself,
   * synchronously (up to 50,000 directories per root). `workspace-write` only.
   */
  protectedPaths?: readonly ProtectedPath[];
  /** @internal Leave out the protected paths (no placeholder created): used to probe the sandbox. */
  probe?: boolean;
}

/** A command ready for `spawn(file, args)`, plus what the sandbox protects. */
export interface SandboxCommand {
  file: string;
  args: string[];
  /** True when the command runs inside bubblewrap. */
  sandboxed: boolean;
  /** The protected paths mounted read-only (workspace-write), empty otherwise. */
  protected: ProtectedPath[];
  /**
   * The command's resource caps and how they are enforced (`undefined` for `danger-full-access`):
   * call `report()` once it ended (a line naming a cap it ran into) and `release()` to remove its
   * cgroups (ended groups are also removed on the next command and at the host's exit).
   */
  limits?: CommandLimits;
  /**
   * As root, the command in the parts a long-lived sandbox launcher (`CommandSpawner` with
   * `launcher`) takes: the launcher's per-workspace arguments (the same for every command of one
   * workspace and policy; `key` names them, with the roots' device and inode, so a root replaced
   * by another directory gets a new launcher), bubblewrap's argv, the cgroups to join and the
   * seccomp filter for fd 3. `undefined` unprivileged and for `danger-full-access`. `spare()` makes
   * the sandbox of a next command of the same policy ahead (`SpawnOptions.spare`): this command's
   * bubblewrap argv up to `--chdir`, valid while each protected path (and each directory bound in
   * place above one) is the same file as now; `undefined` when a writable root has no `.git` (its
   * placeholder exists only while commands run).
   */
  spawnable?: { key: string; launcher: string[]; argv: string[]; cgroupProcs: string[]; fd3: string; spare: () => PreparedSpare | undefined };
  /**
   * Call once the command ended: removes its cgroups and, after the last command using it, the
   * empty `<root>/.git` placeholder (a workspace that is not a repository keeps no trace).
   * Idempotent; a no-op without a sandbox.
   */
  release(): void;
}

const disableUsernsSupport = new Map<string, boolean>();

/** Whether `bwrap --version` output names 0.8.0 or later (`--disable-userns`). */
function knowsDisableUserns(versionText: string): boolean {
  const version = /(\d+)\.(\d+)/.exec(versionText);
  return version !== null && (Number(version[1]) > 0 || Number(version[2]) >= 8);
}

/**
 * Asks `bwrap --version` without blocking the event loop (once per binary): the availability probe
 * calls it before its first {@link sandboxCommand}, so a host that checks its sandbox (every
 * session with exec tools does) never waits on that process.
 */
export async function learnBubblewrap(bwrap: string): Promise<void> {
  if (disableUsernsSupport.has(bwrap)) return;
  const output = await new Promise<string>((resolve) => {
    execFile(bwrap, ['--version'], { encoding: 'utf8', timeout: 5_000 }, (_error, stdout) => resolve(typeof stdout === 'string' ? stdout : ''));
  });
  disableUsernsSupport.set(bwrap, knowsDisableUserns(output));
}

/**
 * True when this bubblewrap knows `--disable-userns` (0.8.0 and later; asked once per binary).
 * Older ones still get no new user namespaces: the seccomp filter refuses `unshare` and namespace
 * flags of `clone`. Known ahead from the availability probe ({@link learnBubblewrap}); a caller of
 * `sandboxCommand` that never probed pays one synchronous `bwrap --version` per binary and process.
 */
function supportsDisableUserns(bwrap: string): boolean {
  let known = disableUsernsSupport.get(bwrap);
  if (known === undefined) {
    known = knowsDisableUserns(spawnSync(bwrap, ['--version'], { encoding: 'utf8', timeout: 5_000 }).stdout ?? '');
    disableUsernsSupport.set(bwrap, known);
  }
  return known;
}

function isRoot(): boolean {
  return typeof process.geteuid === 'function' && process.geteuid() === 0;
}

/**
 * Wraps `argv` for `policy` (synchronous; throws a `SANDBOX_UNAVAILABLE` `RespondToModelError`
 * naming the missing piece, never falls back to running unsandboxed).
 *
 * - `danger-full-access`: the command itself, under the reaper when perl is there.
 * - `read-only` / `workspace-write`: bubblewrap, always unprivileged: in a new user namespace as the
 *   invoking user — or, when the host runs as root, as `policy.sandboxUser` (default 65534), set up
 *   by the root launcher, which idmaps the workspace so its files stay owned by the host user — with
 *   no capabilities, `no_new_privs`, the seccomp filter, new PID/IPC/UTS/cgroup namespaces, a
 *   private network namespace unless `network`, further user namespaces disabled, and SIGKILL when
 *   its parent dies. The file system is `/` read-only — or, with `policy.readableRoots`, only the
 *   platform directories and those roots — with a directory above a bound path that the sandbox
 *   user cannot search hidden under a tmpfs; `/proc` new with `sys`, `sysrq-trigger`,
 *   `irq`, `bus` read-only; `/tmp` private; `/run` and `/var/run` empty without network; `/root`
 *   and `/home` hidden (the invoking non-root user's own home stays readable); the workspace (and
 *   `writableRoots`) writable in `workspace-write` except the protected paths (`.git`, a
 *   placeholder created when absent), read-only in `read-only`.
 */
export function sandboxCommand(argv: readonly string[], policy: SandboxPolicy, options: SandboxCommandOptions): SandboxCommand {
  if (argv.length === 0) throw new TypeError('sandboxCommand: argv must not be empty');
  if (policy.mode === 'danger-full-access') return fullAccessCommand(argv, options, policy.limits?.cgroups !== false);
  const setup = sandboxSetup(policy, options);
  const { bwrap, asRoot, readable } = setup;
  const writable = policy.mode === 'workspace-write';
  // The roots bound into the sandbox: every writable root, or the workspace alone (read-only).
  const roots = writable ? writableRoots(policy) : [setup.root];
  const stage = join(sandboxPrivateDir(), 'stage');
  const source = bindSource({ roots, stage, asRoot });

  const limits = options.probe ? undefined : commandLimits(policy.limits);
  const tmpBytes = limits?.tmpBytes ?? HIDDEN_TMPFS_BYTES;
  const args = [...namespaceArgs(bwrap, policy, options), ...baseViewArgs(policy, asRoot, tmpBytes)];
  args.push(...unsearchableAncestorArgs([...readable, ...roots], policy, asRoot ? (policy.sandboxUser ?? DEFAULT_SANDBOX_USER) : undefined));
  // What the command needs to start and the readable roots, hidden above or not: as root from the launcher's staged copy.
  readable.forEach((path, index) => args.push('--ro-bind', asRoot ? join(stage, `r${index}`) : path, path));
  roots.forEach((path, index) => {
    args.push(writable ? '--bind' : '--ro-bind', asRoot ? join(stage, String(index)) : path, path);
  });
  const guarded = writable && !options.probe ? protectPaths(options.protectedPaths ?? protectedPaths(policy), source, args) : [];
  if (policy.readableRoots !== undefined) args.push(...RESTRICTED_VIEW_END);
  args.push('--seccomp', '3');
  const sandboxArgs = args.length;
  args.push('--chdir', resolveExisting(options.cwd), '--', ...argv);

  const procsFiles = [...(limits?.procsFiles ?? [])];
  const staging = asRoot ? launcherArgs({ ...setup, policy, roots, stage }) : [];
  const launcher = asRoot ? [setup.perl as string, '-e', ROOT_LAUNCHER, ...staging, String(procsFiles.length), ...procsFiles, '--'] : [];
  const prefix = limits?.prefix ?? [];
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    limits?.release();
    guarded.forEach(releaseGitPlaceholder);
  };
  const argvOf = (end?: number) => [...prefix, bwrap, ...args.slice(0, end)];
  const spare = () => prepareSpare(argvOf(sandboxArgs), setup.filter, guarded);
  const spawnable = asRoot ? { key: JSON.stringify([...staging, ...roots.map(identity)]), launcher: staging, argv: argvOf(), cgroupProcs: procsFiles, fd3: setup.filter, spare } : undefined;
  // The root launcher closes what the host inherited itself; unprivileged, perl does when there is anything to close.
  const [file, ...launch] = asRoot ? ['/bin/sh', '-c', SECCOMP_LAUNCHER, setup.filter, ...launcher] : unprivilegedLauncher(policy.mode, setup.filter);
  return { file, args: [...launch, ...prefix, bwrap, ...args], sandboxed: true, protected: guarded, limits, spawnable, release };
}

/**
 * How an unprivileged host starts bubblewrap with the seccomp filter as fd 3: `/bin/sh` when the
 * host holds no inheritable descriptor above 2, else perl, which closes them first; without perl
 * then, the refusal (a command must see descriptors 0-2 only).
 */
function unprivilegedLauncher(mode: SandboxPolicy['mode'], filter: string): string[] {
  const inherited = inheritableDescriptors();
  if (inherited.length === 0) return ['/bin/sh', '-c', SECCOMP_LAUNCHER, filter];
  const perl = findExecutable('perl');
  if (!perl) throw sandboxUnavailable(mode, inheritedRefusal(inherited), 'perl');
  return [perl, '-e', SECCOMP_EXEC, filter];
}

/** Why a command cannot start: the host's inherited descriptors, and nothing to close them. */
function inheritedRefusal(inherited: readonly number[]): string {
  return `perl (which closes the ${inherited.length} descriptors this host inherited without close-on-exec, ${inherited.slice(0, 8).join(', ')}, before a command starts) was not found`;
}

/**
 * Joins the tracking group named by `$0` (the command's own pid into its `cgroup.procs`), then
 * becomes the command: everything it starts is in the group before it can start anything. A
 * failed write stops it (exit 2, the shell's message), so no command runs untracked where a group
 * was made.
 */
const JOIN_GROUP = 'echo $$ > "$0" || exit 2; exec "$@"';

/**
 * `danger-full-access`: the command itself, under the reaper when perl is there, and in a tracking
 * cgroup of its own as root (`release()` kills whatever is left in it: a descendant that killed
 * its reaper and daemonized is still there).
 */
function fullAccessCommand(command: readonly string[], options: SandboxCommandOptions, cgroups: boolean): SandboxCommand {
  const perl = options.reaper === false ? undefined : findExecutable('perl');
  const syscalls = launcherSyscalls();
  const reaped = perl !== undefined && syscalls !== undefined && process.platform === 'linux';
  // Without the reaper nothing would close what the host inherited (a caller passing `reaper: false` starts it through a spawner, which does).
  const inherited = reaped || options.reaper === false ? [] : inheritableDescriptors();
  if (inherited.length > 0) throw new RespondToModelError(`exec_command cannot start the command: ${inheritedRefusal(inherited)}; install perl`, { code: 'SANDBOX_UNAVAILABLE' });
  const group = options.probe || !cgroups ? undefined : trackingGroup();
  const argv = group ? ['/bin/sh', '-c', JOIN_GROUP, group.procsFile, ...command] : command;
  const release = () => group?.release();
  if (!reaped) return { file: argv[0], args: argv.slice(1), sandboxed: false, protected: [], release };
  return { file: perl, args: ['-e', REAPER, String(syscalls.prctl), '--', ...argv], sandboxed: false, protected: [], release };
}

/** What a bubblewrap sandbox needs, every piece checked (in this order) before any argument is built. */
interface SandboxSetup {
  readonly syscalls: LauncherSyscalls;
  readonly bwrap: string;
  /** The workspace root, resolved. */
  readonly root: string;
  /** `policy.readableRoots` (those that exist) and `readOnlyPaths`, resolved, without duplicates. */
  readonly readable: readonly string[];
  readonly asRoot: boolean;
  /** The root launcher's interpreter (as root only). */
  readonly perl: string | undefined;
  /** The seccomp filter file. */
  readonly filter: string;
}

/**
 * Finds or refuses each piece of the sandbox: a `SANDBOX_UNAVAILABLE` error naming the first one
 * missing. Synchronous (`sandboxCommand` is): each call names one path — the root, each readable
 * path, `bwrap` and `perl` on `PATH` — a few system calls per command, no directory listed.
 */
function sandboxSetup(policy: SandboxPolicy, options: SandboxCommandOptions): SandboxSetup {
  const mode = policy.mode;
  if (process.platform !== 'linux') throw sandboxUnavailable(mode, `bubblewrap sandboxing needs Linux (this is ${process.platform})`, 'linux');
  const syscalls = launcherSyscalls();
  if (!seccompSupported() || !syscalls) throw sandboxUnavailable(mode, `no seccomp filter for the ${process.arch} architecture`, 'architecture');
  const requested = policy.bwrapPath ?? 'bwrap';
  const bwrap = findExecutable(requested);
  if (!bwrap) throw sandboxUnavailable(mode, `bubblewrap (${requested}) was not found`, 'bubblewrap');
  const root = resolveExisting(policy.root);
  let rootIsDirectory = false;
  try {
    rootIsDirectory = statSync(root).isDirectory();
  } catch {
    // reported below
  }
  if (!rootIsDirectory) throw sandboxUnavailable(mode, `the workspace root ${root} is not a directory`, 'workspace');
  const needed = (options.readOnlyPaths ?? []).map((path) => {
    if (!existsSync(path)) throw new TypeError(`sandboxCommand: readOnlyPaths entry ${path} does not exist`);
    return resolveExisting(path);
  });
  // a listed readable root that does not exist (yet) is left out: there is nothing to show
  const listed = (policy.readableRoots ?? []).filter((path) => existsSync(path)).map(resolveExisting);
  const readable = [...new Set([...listed, ...needed])];
  const asRoot = isRoot();
  const perl = asRoot ? findExecutable('perl') : undefined;
  if (asRoot && !perl) throw sandboxUnavailable(mode, 'perl (the launcher that drops root before bubblewrap) was not found', 'perl');
  let filter: string;
  try {
    filter = seccompFilterPath({ network: policy.network });
  } catch (error) {
    throw sandboxUnavailable(mode, `the seccomp filter could not be written (${(error as Error).message})`, 'seccomp');
  }
  return { syscalls, bwrap, root, readable, asRoot, perl, filter };
}

/**
 * Where bubblewrap finds a path (as root: inside the idmapped copy of its root, staged by the
 * launcher under `stage`); `undefined` for a path outside every root.
 */
function bindSource({ roots, stage, asRoot }: { roots: readonly string[]; stage: string; asRoot: boolean }): (path: string) => string | undefined {
  return (path) => {
    if (!asRoot) return path;
    let best = -1;
    roots.forEach((candidate, index) => {
      if (isWithin(candidate, path) && (best < 0 || candidate.length > roots[best].length)) best = index;
    });
    if (best < 0) return undefined;
    const rest = relative(roots[best], path);
    return rest ? join(stage, String(best), rest) : join(stage, String(best));
  };
}

/** The namespaces and process flags: no user namespaces inside, a new session (unless a tty), no network unless allowed. */
function namespaceArgs(bwrap: string, policy: SandboxPolicy, options: SandboxCommandOptions): string[] {
  const args = ['--unshare-user', ...(supportsDisableUserns(bwrap) ? ['--disable-userns'] : []), '--die-with-parent'];
  // A new session stops a sandboxed command from injecting input into the host's terminal
  // (TIOCSTI); a tty process already owns a private terminal and needs its session for job control.
  if (!options.tty) args.push('--new-session');
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (!policy.network) args.push('--unshare-net');
  return args;
}

/**
 * Binds the protected paths read-only into `args`, after the writable binds: a planted
 * .git/hooks/* or .git/config would run unsandboxed at the user's next git command. Returns them.
 */
function protectPaths(list: readonly ProtectedPath[], source: (path: string) => string | undefined, args: string[]): ProtectedPath[] {
  const entries = list.filter((entry) => source(entry.path) !== undefined); // a .git linking outside every root is read-only already
  // Every directory between a writable root and a nested .git becomes a mount point of itself
  // (still writable), so it cannot be renamed away: `mv sub x && mkdir -p sub/.git` would
  // otherwise put a fresh, writable sub/.git/config where git expects the nested repository.
  for (const dir of ancestorsOf(entries)) args.push('--bind', source(dir) as string, dir);
  const guarded: ProtectedPath[] = [];
  for (const entry of entries) {
    ensureGitPlaceholder(entry);
    args.push('--ro-bind', source(entry.path) as string, entry.path);
    guarded.push(entry);
  }
  return guarded;
}

/** The directories between a writable root and a nested `.git`, outermost first. */
function ancestorsOf(entries: readonly ProtectedPath[]): string[] {
  const ancestors = new Set<string>();
  for (const entry of entries) {
    for (let dir = dirname(entry.path); dir !== entry.root && isWithin(entry.root, dir); dir = dirname(dir)) ancestors.add(dir);
  }
  return [...ancestors].sort((a, b) => a.length - b.length);
}

/**
 * Device, inode and birth time of a path (`-` when missing): the birth time tells a directory
 * made anew from one that reused a freed inode number. Synchronous: one `lstat` per protected path,
 * when a prepared sandbox is made or used.
 */
function birthIdentity(path: string): string {
  try {
    const stat = lstatSync(path, { bigint: true });
    return `${stat.dev}:${stat.ino}:${stat.birthtimeNs}`;
  } catch {
    return '-';
  }
}

/**
 * The next command's sandbox, made ahead from this one's bubblewrap argv (up to `--chdir`), or
 * `undefined` where it would need a `.git` placeholder. A path it mounts read-only
 * (or binds in place above one) that was removed or replaced since is no longer covered by its
 * mount (the kernel detaches a mount whose directory is removed in another mount namespace), so
 * `valid()` compares each with what it was.
 */
function prepareSpare(argv: string[], fd3: string, guarded: readonly ProtectedPath[]): PreparedSpare | undefined {
  // A root without .git is protected by a placeholder that exists only while its commands run
  // (a workspace that is not a repository keeps no trace); a prepared sandbox would need it to stay.
  if (guarded.some((entry) => entry.kind === 'root-git' && !entry.exists)) return undefined;
  const paths = [...guarded.map((entry) => entry.path), ...ancestorsOf(guarded)];
  const seen = paths.map(birthIdentity);
  let released = false;
  return {
    argv,
    fd3,
    valid: () => !released && paths.every((path, index) => birthIdentity(path) === seen[index]),
    release: () => {
      released = true;
    },
  };
}

/** Device and inode of a path: a directory replaced at the same path is another one (synchronous: one `stat`, per root and command). */
function identity(path: string): string {
  const stat = statSync(path);
  return `${stat.dev}:${stat.ino}`;
}

/**
 * The root launcher's per-workspace arguments (system call numbers, the sandbox user, the stage,
 * the roots idmapped to their owners, the readable paths): the launcher stages the roots and drops
 * root before bubblewrap; the cgroups and `--` follow. Synchronous: one `stat` per root and readable path.
 */
function launcherArgs(options: SandboxSetup & { policy: SandboxPolicy; roots: readonly string[]; stage: string }): string[] {
  const { policy, roots, readable, syscalls } = options;
  const user = policy.sandboxUser ?? DEFAULT_SANDBOX_USER;
  const owners = roots.flatMap((path) => {
    const stat = statSync(path);
    return [path, String(stat.uid), String(stat.gid)];
  });
  const launcher = [syscalls.unshare, syscalls.mount, syscalls.setgroups, syscalls.setresgid, syscalls.setresuid, syscalls.prctl].map(String);
  // A readable path other users cannot enter or read (a checkout in a 0700 temporary folder) is
  // idmapped for the sandbox user; the rest is shown as is.
  const readers = readable.flatMap((path) => {
    const stat = statSync(path);
    const need = stat.isDirectory() || (stat.mode & 0o111) !== 0 ? 0o005 : 0o004;
    return (stat.mode & need) === need ? [path, '-', '-'] : [path, String(stat.uid), String(stat.gid)];
  });
  launcher.push(String(user.uid), String(user.gid), options.stage, String(roots.length), ...owners, String(readable.length), ...readers);
  return launcher;
}
