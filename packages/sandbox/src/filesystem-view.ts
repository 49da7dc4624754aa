import { existsSync, lstatSync, readlinkSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, sep } from 'node:path';
import type { SandboxPolicy } from './policy';
import { HIDDEN_TMPFS_BYTES } from './resource-limits';
import { isWithin } from './protected-paths';

// What a sandboxed command sees of the file system before the workspace is bound in: everything
// read-only (`/` shown, the host's private places hidden), or — with `readableRoots` — only the
// system directories a program needs to start. Every stat here reads one path the policy names
// (no directory is listed), a few system calls per command; `sandboxCommand` is synchronous.

/**
 * The system directories a restricted sandbox (`readableRoots` given) shows read-only, each only
 * where it exists (a symbolic link such as `/bin → usr/bin` is recreated as the same link): the
 * programs, their libraries and the dynamic linker, and `/etc` (users, name service, certificates,
 * the linker cache, `alternatives`). What `/etc` holds that must stay private (`shadow`, SSH host
 * keys, TLS private keys) is readable only by root or a group the sandbox user is never in.
 * `/nix/store` and `/run/current-system/sw` are where NixOS keeps all of these.
 */
export const PLATFORM_READ_ROOTS: readonly string[] = Object.freeze(['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/nix/store', '/run/current-system/sw']);

/** The places the full view hides under small tmpfs mounts (as root every home, `/root` included; `/run` without network). */
const HIDDEN_PLACES = ['/root', '/home', '/run', '/var/run'] as const;

/** True when `path` exists and is not a symlink (`/var/run` usually links to `/run`). */
function isRealDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** `/dev`, a private sized `/dev/shm`, a new `/proc` with its kernel knobs read-only, a private sized `/tmp`. */
function deviceAndProcArgs(tmpBytes: number): string[] {
  const args = ['--dev', '/dev', '--size', String(tmpBytes), '--tmpfs', '/dev/shm', '--proc', '/proc'];
  for (const entry of ['sys', 'sysrq-trigger', 'irq', 'bus']) {
    if (existsSync(`/proc/${entry}`)) args.push('--ro-bind', `/proc/${entry}`, `/proc/${entry}`);
  }
  args.push('--size', String(tmpBytes), '--tmpfs', '/tmp');
  return args;
}

/**
 * The full view: `/` read-only, private `/tmp` and `/dev/shm` of `tmpBytes` each, and the host's
 * private places hidden under small tmpfs mounts (every tmpfs is sized: an unsized one may take
 * half the host's memory).
 */
function fullViewArgs(policy: SandboxPolicy, asRoot: boolean, tmpBytes: number): string[] {
  const hidden = ['--size', String(HIDDEN_TMPFS_BYTES), '--tmpfs'];
  const args = ['--ro-bind', '/', '/', ...deviceAndProcArgs(tmpBytes)];
  // Hide the host's runtime sockets (docker, D-Bus, systemd). With network allowed /run stays:
  // /etc/resolv.conf often points into it. The seccomp filter is the real guard either way.
  if (!policy.network) {
    if (isRealDirectory('/run')) args.push(...hidden, '/run');
    if (isRealDirectory('/var/run')) args.push(...hidden, '/var/run');
  }
  // Other users' homes (as root: every home, /root included) are hidden; a non-root invoking user
  // keeps its own home, read-only.
  if (isRealDirectory('/root')) args.push(...hidden, '/root');
  if (isRealDirectory('/home')) {
    args.push(...hidden, '/home');
    const home = process.env.HOME ? resolveQuietly(process.env.HOME) : undefined;
    if (!asRoot && home && home.startsWith('/home/') && isRealDirectory(home)) args.push('--ro-bind', home, home);
  }
  return args;
}

function resolveQuietly(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The restricted view: an empty, sized, read-only root (see {@link RESTRICTED_VIEW_END}) holding the
 * platform directories, `/dev`, `/proc`, a private `/tmp`; with network, the file `/etc/resolv.conf`
 * links to (systemd-resolved keeps it under `/run`).
 */
function restrictedViewArgs(policy: SandboxPolicy, tmpBytes: number): string[] {
  const args = ['--size', String(HIDDEN_TMPFS_BYTES), '--tmpfs', '/'];
  for (const path of PLATFORM_READ_ROOTS) {
    let stat: Stats;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else if (stat.isDirectory()) args.push('--ro-bind', path, path);
  }
  args.push(...deviceAndProcArgs(tmpBytes));
  if (policy.network) {
    const resolver = resolveQuietly('/etc/resolv.conf');
    if (resolver && !PLATFORM_READ_ROOTS.some((root) => isWithin(root, resolver))) args.push('--ro-bind', resolver, resolver);
  }
  return args;
}

/** Ends a restricted view: its root tmpfs becomes read-only once every mount point in it was made. */
export const RESTRICTED_VIEW_END: readonly string[] = Object.freeze(['--remount-ro', '/']);

/** The file system a sandboxed command starts from, before the roots are bound in: full or restricted (`policy.readableRoots` given). */
export function baseViewArgs(policy: SandboxPolicy, asRoot: boolean, tmpBytes: number): string[] {
  return policy.readableRoots === undefined ? fullViewArgs(policy, asRoot, tmpBytes) : restrictedViewArgs(policy, tmpBytes);
}

/** Whether the sandbox user may search (`x`) a directory: as root the sandbox user, else this user. */
function searchable(stat: Stats, user: { uid: number; gid: number } | undefined): boolean {
  if (!user) return true; // a non-root host's sandbox user is the host user: what it cannot reach, it could not bind either
  if (stat.uid === user.uid) return (stat.mode & 0o100) !== 0;
  if (stat.gid === user.gid) return (stat.mode & 0o010) !== 0;
  return (stat.mode & 0o001) !== 0;
}

/**
 * The full view shows `/` as it is, so a directory above a bound path that the sandbox user cannot
 * search (a data directory at mode 0700) would stop bubblewrap from making the mount point
 * (`Can't mkdir parents …: Permission denied`). The topmost such directory of each path is hidden
 * under a small tmpfs instead, in which bubblewrap makes the mount points: the command sees the
 * bound paths and nothing else of it — nothing it could read before. Directories under a hidden
 * place (`/root`, `/home`, …) already are such tmpfs mounts. `user`: the sandbox user as root,
 * `undefined` otherwise (nothing to hide).
 */
export function unsearchableAncestorArgs(paths: readonly string[], policy: SandboxPolicy, user: { uid: number; gid: number } | undefined): string[] {
  if (policy.readableRoots !== undefined || !user) return [];
  const hide = new Set<string>();
  for (const path of paths) {
    const found = topmostUnsearchable(path, user);
    if (found && !HIDDEN_PLACES.some((place) => isWithin(place, found)) && !paths.some((other) => other !== path && isWithin(other, found))) hide.add(found);
  }
  // a directory inside another one hidden here is covered by that one's tmpfs
  const list = [...hide].filter((dir) => ![...hide].some((other) => other !== dir && isWithin(other, dir)));
  return list.sort((a, b) => a.length - b.length).flatMap((dir) => ['--size', String(HIDDEN_TMPFS_BYTES), '--tmpfs', dir]);
}

/** The topmost directory strictly above `path` the sandbox user cannot search, or `undefined`. */
function topmostUnsearchable(path: string, user: { uid: number; gid: number }): string | undefined {
  if (!isAbsolute(path)) return undefined;
  const ancestors: string[] = [];
  for (let dir = dirname(path); dir !== sep && dir !== dirname(dir); dir = dirname(dir)) ancestors.unshift(dir);
  for (const dir of ancestors) {
    try {
      if (!searchable(statSync(dir), user)) return dir;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
