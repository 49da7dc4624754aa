/**
 * Small perl programs do what Node cannot (it has no `prctl`, `unshare`, `setresuid`, mount API
 * or `execve`): perl's `syscall` reaches the kernel directly, perl-base is part of every
 * Debian/Ubuntu system, and one starts in a few milliseconds (a Node helper takes ~50 ms, a
 * compiled helper would need a toolchain or a binary per platform). Each program is passed with
 * `perl -e`, so nothing is written to disk, and first sets `$0` to a short name (`sy-launcher`,
 * `sy-box-spawner`, `sy-spawner`, `sy-reaper`, `sy-spare`, `sy-seccomp-exec`), so `ps` shows that
 * instead of the program's text.
 *
 * The programs live in `perl/*.pl` (parts shared between programs by `#@include`, kernel numbers
 * and flags as named constants in `perl/constants.pl`); `perl/build-perl.ts` bundles them into
 * `perl/programs.generated.ts` at build time. None says `use strict; use warnings;`: loading those
 * modules is a few milliseconds of every command's start, and they only check the program's text,
 * which never changes — the tests compile every program under `-Mstrict -Mwarnings` instead.
 */

import * as programs from './perl/programs.generated';

/** System call numbers the launchers use, per architecture. */
export interface LauncherSyscalls {
  unshare: number;
  mount: number;
  setgroups: number;
  setresgid: number;
  setresuid: number;
  prctl: number;
}

const SYSCALLS: Partial<Record<NodeJS.Architecture, LauncherSyscalls>> = {
  x64: { unshare: 272, mount: 165, setgroups: 116, setresgid: 119, setresuid: 117, prctl: 157 },
  arm64: { unshare: 97, mount: 40, setgroups: 159, setresgid: 149, setresuid: 147, prctl: 167 },
};

/** The numbers for this architecture, or `undefined` (then the sandbox refuses to start). */
export function launcherSyscalls(arch: NodeJS.Architecture = process.arch): LauncherSyscalls | undefined {
  return SYSCALLS[arch];
}

/* `perl/launcher-args.pl`: The root launcher's first arguments: system call numbers, the sandbox user, the stage, the roots and the readable paths. */

/* `perl/launcher-stage.pl`: Steps 1 and 2 of the root launcher: the same for every command of one workspace and policy. */

/* `perl/launcher-drop.pl`: Steps 3 and 4 of the root launcher, per command: join \`@procs\`, drop every privilege, die with \`$ppid\`. */

/**
 * The root launcher, run as root right before bubblewrap:
 * `perl -e ROOT_LAUNCHER <6 syscall numbers> <uid> <gid> <stage> <n> (<root> <owner uid> <owner gid>)×n <m> (<readable path> <owner uid|-> <owner gid|->)×m <c> (<cgroup.procs file>)×c -- bwrap …`
 *
 * 1. For each owner of a writable root, a user namespace mapping that owner to the sandbox user.
 * 2. A private mount namespace; each root cloned (`open_tree`), idmapped with that namespace
 *    (`mount_setattr`) — files owned by the host user appear owned by the sandbox user, and what
 *    the sandbox user creates is stored as the host user — and attached at `<stage>/<i>`
 *    (`move_mount`) on a fresh tmpfs, reachable whatever the permissions of the root's parents;
 *    each readable path (a file or folder the command needs) cloned to `<stage>/r<k>`, for
 *    bubblewrap to bind read-only where it belongs — as is, or, when its owner is given (the path
 *    itself is closed to other users, e.g. a `0700` checkout), idmapped like a root so the sandbox
 *    user can enter it (bubblewrap's read-only bind still refuses every write).
 * 3. Joins the command's cgroups (writes its pid into each `cgroup.procs`: everything it starts
 *    stays inside, under the group's pids and memory caps).
 * 4. Empties the capability bounding set, drops every group, becomes the sandbox user (which
 *    clears all capabilities), asks for SIGKILL when its parent dies (`PR_SET_PDEATHSIG`) and
 *    checks the parent is still there, closes every descriptor above the seccomp filter's fd 3
 *    (whatever the host inherited), then executes bubblewrap, which runs unprivileged.
 *
 * Any failure prints `sandbox launcher: <step>: <errno text>` and exits 125 before running anything.
 */
export const ROOT_LAUNCHER: string = programs.ROOT_LAUNCHER;

/*
 * `perl/reap-subs.pl`: What the reaper and each command of the spawner share: `descendants()` (every process below this
 * one, read from `/proc`), `reap_all()` (SIGKILLs and reaps them until none is left) and
 * `run_reaped(prctl, parent pid, start)`: become a subreaper that dies with its parent, fork
 * `start`, wait for it, kill and reap whatever it left, exit with its status (see {@link REAPER}).
 */

/**
 * The reaper for unsandboxed (`danger-full-access`) commands:
 * `perl -e REAPER <prctl number> -- <argv>`. It becomes a child subreaper (`PR_SET_CHILD_SUBREAPER`),
 * so whatever the command starts — `setsid`, double forks included — stays its descendant; runs the
 * command; when the command ends (or the reaper is told to stop by SIGTERM/SIGHUP, or by
 * `PR_SET_PDEATHSIG` when its parent dies) it SIGKILLs every descendant (none are left once it has
 * no children: as subreaper it inherits every orphan), reaps them, and exits with
 * the command's status (128 + signal for a signal). SIGINT and SIGQUIT are left to the command.
 * It first closes every descriptor above 2, so the command inherits nothing the host held.
 */
export const REAPER: string = programs.REAPER;

/*
 * `perl/spawn-loop.pl`: The request loop of both long-lived spawners ({@link SPAWNER}, {@link SANDBOX_SPAWNER}). It
 * makes the spawner a child subreaper that dies with its parent (SIGTERM by `PR_SET_PDEATHSIG`)
 * and reads requests, one a line, from stdin; every field but the first two is hex-encoded bytes:
 *
 * - `R <id> <cwd> <argc> <arg>×argc <envc> <NAME=value>×envc <pc> <cgroup.procs file>×pc <fd3>` —
 *   run a command in a fork of the spawner: one that starts a new session (the command's process
 *   group is the fork's pid), takes stdin `/dev/null` and stdout + stderr on a fresh pipe, and
 *   through the program's `serve(body)` (the plain spawner: a reaper whose child runs `body`,
 *   forked ahead too; the sandbox launcher: `body` in the fork itself) reads the request and calls
 *   the program's `command(cwd, argv, env, procs, fd3)`. The fork is made ahead of the
 *   request (a spare, forked once the spawner sat 50 ms without a message or right after the exit
 *   of the last running command was reported, so its cost falls outside a command's start and
 *   outside a short command's run, and a command sent right after another finds it) and handed the request on its
 *   own pipe; without a spare, one is forked on the spot. Answers `S <id> <pid> <fd>`: the fork's
 *   pid and the spawner's fd of the pipe's read end, which the host opens through
 *   `/proc/<spawner>/fd/<fd>` (as root or as the same user) and closes here with `C <id>` once
 *   the command ended (no message while it starts).
 *   Answers `E <id> <message>` when it cannot start (a missing `cwd`, no fork).
 * - `C <id>` — closes the spawner's copy of the read end of command `id`.
 * - `P <id> <argc> <arg>×argc <fd3>` (sandbox launcher only) — prepares the next command's
 *   sandbox: a fork like the spare's that executes (`box_exec`) bubblewrap's argv `arg…` with
 *   `--chdir / --` and the stub ({@link SPARE_STUB}) as its command, the stub reading one request
 *   from a pipe only the spawner writes. A later `R` whose argv is exactly `arg…` then `--chdir
 *   <dir> -- <command>`, with the same `fd3`, is handed to it once its processes joined the
 *   request's cgroups (answered `S` with its pid, like a fork); any other `R` kills it and takes
 *   the fork. One at a time; it serves one request.
 * - `D <id>` — kills the prepared sandbox unused.
 *
 * When a fork ends it answers `X <id> <code>` (its exit code, 128 + signal for a signal).
 * Processes that outlived a fork killed by a signal are reparented to the spawner (it is their
 * subreaper): it SIGKILLs them. A malformed line, or the end of stdin, ends it; its forks die with
 * it (`PR_SET_PDEATHSIG`; a spare on the end of its request pipe). It also looks for ended forks
 * once a second, so a wake-up lost to a command draining its wake pipe (same user, reopened
 * through `/proc`) only delays an exit.
 */

/**
 * The long-lived spawner of one session's unsandboxed commands: `perl -e SPAWNER <prctl number>`,
 * started once, so a command pays a message and a fork instead of a perl start (the requests:
 * `SPAWN_LOOP`; no cgroup files, no fd 3). Each fork becomes the command's own reaper
 * (`run_reaped`: a subreaper that dies with the spawner and kills whatever the command left,
 * `setsid` and double forks included) and runs the command in `cwd` with exactly `env`. It closes
 * every descriptor above 2 at its start and again right before each command (whatever the host
 * inherited).
 */
export const SPAWNER: string = programs.SPAWNER;

/**
 * The command of a sandbox prepared ahead (`SANDBOX_SPAWNER`'s `P`): `perl -e SPARE_STUB <fd>`,
 * started by bubblewrap inside the finished sandbox (seccomp applied, its own PID namespace and
 * `/tmp`, as the sandbox user), so it can do nothing the command could not. It blocks reading ONE
 * request from the pipe `<fd>` (hex fields: `<dir> <argc> <arg>×argc <envc> <NAME=value>×envc`),
 * closes it, enters `dir`, takes exactly that environment with `PWD=<dir>` (bubblewrap sets it
 * after its `--chdir`) and executes the command in its own place
 * (its pid, and so bubblewrap's exit status, become the command's). A pipe closed without a request
 * (the sandbox was discarded) ends it quietly. Failures say what bubblewrap would (`bwrap: Can't
 * chdir to …`, `bwrap: execvp …`, exit 1), since the command would have met them there.
 */
export const SPARE_STUB: string = programs.SPARE_STUB;

/**
 * The long-lived launcher of one session's sandboxed commands, as root:
 * `perl -e SANDBOX_SPAWNER <the root launcher's arguments up to the readable paths>`. It does the
 * root launcher's per-workspace steps once — a user namespace per owner of a root, its own mount
 * namespace with the idmapped roots and readable paths staged (`LAUNCHER_STAGE`) — then serves
 * requests (`SPAWN_LOOP`, with `P` and `D`: a sandbox prepared ahead). Each fork does the per-command steps: opens the seccomp filter `fd3`
 * as fd 3, enters `cwd`, takes `env`, joins the command's cgroups, drops every privilege, dies
 * with the spawner (`LAUNCHER_DROP`), then executes `argv` (bubblewrap, which makes the command's
 * own user, PID, IPC, UTS, cgroup and network namespaces, private `/tmp`, and kills everything
 * with its PID namespace). A failure before the command runs prints `sandbox launcher: <step>:
 * <errno text>` and exits 125. Like the root launcher it closes every descriptor above the
 * filter's fd 3 (whatever the host inherited) before bubblewrap runs.
 */
export const SANDBOX_SPAWNER: string = programs.SANDBOX_SPAWNER;
