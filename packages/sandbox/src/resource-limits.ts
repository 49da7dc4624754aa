import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { findExecutable } from './find-executable';

// Synchronous on purpose, every file-system call in this file: each reads or writes the cgroup or
// /proc file system, which the kernel serves from memory (no disk, no walk), a few per command
// start and end; the host's `exit` handler, which cannot wait, removes the groups left the same way.

/** Caps on what one sandboxed command may use. Each applies to the command and everything it starts. */
export interface SandboxLimits {
  /** Processes and threads at once. Default {@link DEFAULT_SANDBOX_LIMITS}.pids (512). */
  pids?: number;
  /**
   * Memory in bytes: with cgroups the group's resident memory, page cache and tmpfs pages together;
   * with the rlimit fallback the address space of each process. Default 2 GiB.
   */
  memoryBytes?: number;
  /** Size of each private tmpfs (`/tmp`, `/dev/shm`), in bytes. Default 512 MiB. */
  tmpBytes?: number;
  /** Use cgroups where writable (default true); false: always the rlimit fallback. */
  cgroups?: boolean;
}

/** The defaults of {@link SandboxLimits}. */
export const DEFAULT_SANDBOX_LIMITS = { pids: 512, memoryBytes: 2 * 1024 ** 3, tmpBytes: 512 * 1024 ** 2 } as const;

/** The size of the tmpfs mounts that only hide host places (`/run`, `/root`, `/home`): nothing belongs there. */
export const HIDDEN_TMPFS_BYTES = 16 * 1024 ** 2;

/**
 * How the caps of one command are enforced: a cgroup of its own (v2, or v1 `pids` + `memory`)
 * when the host runs as root and the hierarchy is writable; else rlimits set by `prlimit`
 * (`RLIMIT_NPROC`, counted per user, and `RLIMIT_AS`, per process); `none` when neither exists.
 */
export type LimitMechanism = 'cgroup-v2' | 'cgroup-v1' | 'rlimit' | 'none';

/** The caps of one command and how they are enforced. */
export interface AppliedLimits {
  readonly mechanism: LimitMechanism;
  readonly pids: number;
  readonly memoryBytes: number;
  readonly tmpBytes: number;
}

/** One command's caps, with what the launcher must do and the clean-up after it. */
export interface CommandLimits extends AppliedLimits {
  /** `cgroup.procs` files the (root) launcher writes its pid into before dropping privileges. */
  readonly procsFiles: readonly string[];
  /** The argv prefix that sets the rlimits (`prlimit … --`), empty with cgroups. */
  readonly prefix: readonly string[];
  /** A line naming the cap the command ran into (read once it ended), or `undefined`. */
  report(): string | undefined;
  /** Removes the command's cgroups once they are empty (retried in the background). Idempotent. */
  release(): void;
}

const CGROUP_ROOT = '/sys/fs/cgroup';
let counter = 0;
/** Groups of commands that were released (ended), removed once empty. */
const pending = new Set<string>();
/** Every group this host made and has not removed: removed at the host's exit. */
const made = new Set<string>();
let exitHook = false;

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** The count after `key` in a flat-keyed cgroup file (`pids.events`, `memory.events`, `memory.oom_control`). */
function counted(path: string, key: string): number {
  const match = new RegExp(`^${key} (\\d+)$`, 'm').exec(readText(path));
  return match ? Number(match[1]) : 0;
}

/** Our own cgroup per v1 controller (`pids` → `/a/b`) and under v2 (`''`). */
function ownCgroups(): Map<string, string> {
  const own = new Map<string, string>();
  for (const line of readText('/proc/self/cgroup').split('\n')) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    for (const controller of controllers.split(',')) own.set(controller, path);
  }
  return own;
}

function removeGroup(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** Removes the groups whose commands ended; the rest stay pending (a process may still be exiting). */
function sweep(groups: Set<string> = pending): void {
  for (const dir of groups) {
    if (!removeGroup(dir)) continue;
    pending.delete(dir);
    made.delete(dir);
  }
}

/** Tracking groups not yet released: whatever is left in them is killed at the host's exit. */
const tracking = new Set<string>();

function track(dirs: readonly string[]): void {
  dirs.forEach((dir) => made.add(dir));
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    tracking.forEach(killGroup);
    sweep(made);
  });
}

const swept = new Set<string>();

/**
 * Removes the empty groups of hosts that are gone (a host killed by a signal runs no exit
 * handler): `switchyard-<pid>-<n>` beside `dir` whose pid no longer exists. Once per parent.
 */
function sweepDeadHosts(dir: string): void {
  const parent = dirname(dir);
  if (swept.has(parent)) return;
  swept.add(parent);
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^switchyard-(\d+)-\d+$/.exec(name)?.[1];
    if (pid && Number(pid) !== process.pid && !existsSync(`/proc/${pid}`)) removeGroup(join(parent, name));
  }
}

/**
 * Creates one group per controller directory, with its limits; undoes the lot on any failure.
 * Synchronous on purpose, once per command: a `mkdir` and a few short writes in the cgroup file
 * system, which the kernel serves from memory (no disk, no walk); the dead-host sweep reads one
 * directory once per process.
 */
function makeGroups(groups: ReadonlyArray<{ dir: string; files: ReadonlyArray<[string, string, boolean?]> }>): boolean {
  const created: string[] = [];
  try {
    for (const { dir, files } of groups) {
      sweepDeadHosts(dir);
      mkdirSync(dir);
      created.push(dir);
      for (const [file, value, optional] of files) {
        try {
          writeFileSync(join(dir, file), value);
        } catch (error) {
          if (!optional) throw error;
        }
      }
    }
    return true;
  } catch {
    created.reverse().forEach(removeGroup);
    return false;
  }
}

/** v1: a child of our own `pids` and `memory` groups (the host's own limits still apply above it). */
function cgroupV1(limits: AppliedLimits, name: string): CommandLimits | undefined {
  const own = ownCgroups();
  const pidsParent = join(CGROUP_ROOT, 'pids', own.get('pids') ?? '/');
  const memoryParent = join(CGROUP_ROOT, 'memory', own.get('memory') ?? '/');
  if (!own.has('pids') || !own.has('memory') || !existsSync(join(pidsParent, 'cgroup.procs')) || !existsSync(join(memoryParent, 'cgroup.procs'))) return undefined;
  const pids = join(pidsParent, name);
  const memory = join(memoryParent, name);
  const bytes = String(limits.memoryBytes);
  const ok = makeGroups([
    { dir: pids, files: [['pids.max', String(limits.pids)]] },
    { dir: memory, files: [['memory.limit_in_bytes', bytes], ['memory.memsw.limit_in_bytes', bytes, true]] },
  ]);
  if (!ok) return undefined;
  return groupLimits({ ...limits, mechanism: 'cgroup-v1' }, [pids, memory], () => ({
    refused: counted(join(pids, 'pids.events'), 'max'),
    oomKills: counted(join(memory, 'memory.oom_control'), 'oom_kill'),
  }));
}

/**
 * v2: a sibling of our own group (a group holding processes cannot hand controllers to children),
 * when our group already has `pids` and `memory` — that is, its parent delegates them.
 */
function cgroupV2(limits: AppliedLimits, name: string): CommandLimits | undefined {
  const mount = existsSync(join(CGROUP_ROOT, 'cgroup.controllers')) ? CGROUP_ROOT : join(CGROUP_ROOT, 'unified');
  const path = ownCgroups().get('');
  if (path === undefined || path === '/') return undefined;
  const own = join(mount, path);
  const controllers = readText(join(own, 'cgroup.controllers')).split(/\s+/);
  if (!controllers.includes('pids') || !controllers.includes('memory')) return undefined;
  const dir = join(dirname(own), name);
  const ok = makeGroups([{ dir, files: [['pids.max', String(limits.pids)], ['memory.max', String(limits.memoryBytes)], ['memory.swap.max', '0', true]] }]);
  if (!ok) return undefined;
  return groupLimits({ ...limits, mechanism: 'cgroup-v2' }, [dir], () => ({
    refused: counted(join(dir, 'pids.events'), 'max'),
    oomKills: counted(join(dir, 'memory.events'), 'oom_kill'),
  }));
}

function mib(bytes: number): string {
  return `${Math.round(bytes / 1024 ** 2)} MiB`;
}

/**
 * Removes `dirs` once their last process is gone: now, else retried every 100 ms for 5 s, then
 * every second up to 30 s (then on the next command, and at exit). A killed process holds its
 * group until its parent reaps it, and an orphan's parent is init, which may reap late.
 */
function removeWhenEmpty(dirs: readonly string[]): void {
  dirs.forEach((dir) => pending.add(dir));
  let tries = 0;
  const retry = () => {
    sweep();
    tries++;
    if (dirs.some((dir) => pending.has(dir)) && tries < 75) setTimeout(retry, tries < 50 ? 100 : 1000).unref();
  };
  retry();
}

function groupLimits(limits: AppliedLimits, dirs: string[], usage: () => { refused: number; oomKills: number }): CommandLimits {
  track(dirs);
  let released = false;
  return {
    ...limits,
    procsFiles: dirs.map((dir) => join(dir, 'cgroup.procs')),
    prefix: [],
    report() {
      const { refused, oomKills } = usage();
      const lines: string[] = [];
      if (refused > 0) lines.push(`sandbox limit: the command reached its limit of ${limits.pids} processes (${refused} new processes were refused)`);
      if (oomKills > 0) lines.push(`sandbox limit: the command reached its memory limit of ${mib(limits.memoryBytes)} (${oomKills} processes were killed)`);
      return lines.length > 0 ? lines.join('\n') : undefined;
    },
    release() {
      if (released) return;
      released = true;
      removeWhenEmpty(dirs);
    },
  };
}

function rlimits(limits: AppliedLimits): CommandLimits {
  const prlimit = findExecutable('prlimit');
  const none = { report: () => undefined, release: () => undefined, procsFiles: [] };
  if (!prlimit) return { ...limits, mechanism: 'none', prefix: [], ...none };
  return { ...limits, mechanism: 'rlimit', prefix: [prlimit, `--nproc=${limits.pids}`, `--as=${limits.memoryBytes}`, '--'], ...none };
}

function isRoot(): boolean {
  return typeof process.geteuid === 'function' && process.geteuid() === 0;
}

/**
 * The caps of one sandboxed command: cgroups when the host runs as root and they are writable (v2
 * first, then v1), else rlimits. Groups are named `switchyard-<host pid>-<n>` beside (v2) or below
 * (v1) the host's own, so the host's own limits still cover them; ended ones are removed on the
 * next command, by `release()`, and at the host's exit.
 */
export function commandLimits(requested: SandboxLimits = {}): CommandLimits {
  sweep();
  const limits: AppliedLimits = {
    mechanism: 'none',
    pids: requested.pids ?? DEFAULT_SANDBOX_LIMITS.pids,
    memoryBytes: requested.memoryBytes ?? DEFAULT_SANDBOX_LIMITS.memoryBytes,
    tmpBytes: requested.tmpBytes ?? DEFAULT_SANDBOX_LIMITS.tmpBytes,
  };
  if (requested.cgroups !== false && isRoot() && process.platform === 'linux') {
    const name = `switchyard-${process.pid}-${++counter}`;
    const group = cgroupV2(limits, name) ?? cgroupV1(limits, name);
    if (group) return group;
  }
  return rlimits(limits);
}

/**
 * A cgroup that only tracks: one unsandboxed command and everything it starts, wherever they go in
 * the process tree (a descendant that kills its reaper and daemonizes is reparented to pid 1 but
 * stays in its group). No caps.
 */
export interface TrackingGroup {
  /** The `cgroup.procs` file the command writes its own pid into before it runs. */
  readonly procsFile: string;
  /** Kills every process in the group, then removes it once empty (retried in the background). Idempotent. */
  release(): void;
}

/**
 * SIGKILLs every process of the group `dir`: v2 by `cgroup.kill`; v1 by first setting `pids.max`
 * to 0 (no process of the group can fork any more) and then killing what `cgroup.procs` lists,
 * until it lists nothing. Never throws.
 */
function killGroup(dir: string): void {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
  } catch {
    // v1, or a kernel before 5.14
  }
  try {
    writeFileSync(join(dir, 'pids.max'), '0');
  } catch {
    // no pids controller in this group
  }
  for (let round = 0; round < 20; round++) {
    const pids = readText(join(dir, 'cgroup.procs')).split('\n').filter(Boolean).map(Number);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

/**
 * A tracking group for one unsandboxed command when the host runs as root and a hierarchy is
 * writable: v2 beside the host's own group, else a child of its v1 `pids` group; `undefined`
 * otherwise (an unprivileged host cannot make one).
 */
export function trackingGroup(): TrackingGroup | undefined {
  if (!isRoot() || process.platform !== 'linux') return undefined;
  sweep();
  const name = `switchyard-${process.pid}-${++counter}`;
  const own = ownCgroups();
  const v2 = existsSync(join(CGROUP_ROOT, 'cgroup.controllers')) ? CGROUP_ROOT : join(CGROUP_ROOT, 'unified');
  const path = own.get('');
  const candidates = [
    ...(path !== undefined && path !== '/' ? [join(dirname(join(v2, path)), name)] : []),
    ...(own.has('pids') ? [join(CGROUP_ROOT, 'pids', own.get('pids') as string, name)] : []),
  ];
  const dir = candidates.find((candidate) => existsSync(join(dirname(candidate), 'cgroup.procs')) && makeGroups([{ dir: candidate, files: [] }]));
  if (!dir) return undefined;
  track([dir]);
  tracking.add(dir);
  let released = false;
  return {
    procsFile: join(dir, 'cgroup.procs'),
    release() {
      if (released) return;
      released = true;
      killGroup(dir);
      tracking.delete(dir);
      removeWhenEmpty([dir]);
    },
  };
}
