import { readdirSync, readFileSync } from 'node:fs';
import * as programs from './perl/programs.generated';

/**
 * A host may have inherited open descriptors without close-on-exec (a service manager's sockets,
 * a parent's connection, a file a supervisor opened as root): Node and libuv mark only their own,
 * so every process the host starts would hold them, and bubblewrap passes them into the sandbox,
 * where no seccomp rule stops a command reading, writing or accepting on one it already holds.
 * Every launcher therefore closes all descriptors above its standard ones before the command
 * runs.
 */

/**
 * Perl: `close_from(from, keep?)` closes every descriptor from `from` up, except `keep`:
 * `close_range` (Linux 5.9; the same number on every architecture), else each one listed in
 * `/proc/self/fd`.
 */
export const CLOSE_FROM: string = programs.CLOSE_FROM;

/**
 * The unprivileged launcher of a host that holds inherited descriptors: `perl -e SECCOMP_EXEC
 * <seccomp filter> <argv…>` closes every descriptor above 2, opens the filter as fd 3 (for
 * `bwrap --seccomp 3`) and executes `argv`. (Where nothing is inherited, `/bin/sh` opens fd 3: a
 * shell cannot close descriptors above 9.)
 */
export const SECCOMP_EXEC: string = programs.SECCOMP_EXEC;

/** `O_CLOEXEC` in the octal `flags:` line of `/proc/<pid>/fdinfo/<fd>`. */
const O_CLOEXEC = 0o2000000;

/**
 * This process's descriptors above 2 that a child would inherit (no close-on-exec), from
 * `/proc/self/fdinfo`; empty where `/proc` is absent. Synchronous: `sandboxCommand` is; it lists
 * this process's own descriptors (a few dozen entries of `/proc`, never a disk) once per command.
 */
export function inheritableDescriptors(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    const fd = Number(entry);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) found.push(fd);
    } catch {
      // closed meanwhile (the listing's own descriptor, among others)
    }
  }
  return found;
}
