/**
 * Two tiny perl programs do what Node cannot (it has no `prctl`, `unshare`, `setresuid`, mount
 * API or `execve`): perl's `syscall` reaches the kernel directly, perl-base is part of every
 * Debian/Ubuntu system, and one starts in a few milliseconds (a Node helper takes ~50 ms, a
 * compiled helper would need a toolchain or a binary per platform). Each program is passed with
 * `perl -e`, so nothing is written to disk.
 *
 * Neither program says `use strict; use warnings;`: loading those modules is a few milliseconds of
 * every command's start, and they only check the program's text, which never changes — the tests
 * compile both programs under `-Mstrict -Mwarnings` instead.
 */

import { CLOSE_FROM } from './descriptors';

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

/** The root launcher's first arguments: system call numbers, the sandbox user, the stage, the roots and the readable paths. */
const LAUNCHER_ARGS = String.raw`
my ($NR_UNSHARE, $NR_MOUNT, $NR_SETGROUPS, $NR_SETRESGID, $NR_SETRESUID, $NR_PRCTL, $uid, $gid, $stage, $n) = splice(@ARGV, 0, 10);
my @roots; push @roots, [splice(@ARGV, 0, 3)] for 1 .. $n;
my $m = shift @ARGV;
my @readable; push @readable, [splice(@ARGV, 0, 3)] for 1 .. (defined $m && $m =~ /^\d+$/ ? $m : 0);
`;

/** Steps 1 and 2 of the root launcher: the same for every command of one workspace and policy. */
const LAUNCHER_STAGE = String.raw`my %ns;
for my $r (@roots, grep { $_->[1] ne '-' } @readable) {
  my $key = "$r->[1]:$r->[2]";
  next if $ns{$key};
  pipe(my $ready_r, my $ready_w) or fail('pipe');
  pipe(my $done_r, my $done_w) or fail('pipe');
  my $pid = fork();
  defined $pid or fail('fork');
  if ($pid == 0) {
    close $ready_r; close $done_w;
    syswrite($ready_w, syscall(0 + $NR_UNSHARE, 0x10000000) == 0 ? 'k' : 'e');
    my $byte; sysread($done_r, $byte, 1);
    exit 0;
  }
  close $ready_w; close $done_r;
  my $byte = ''; sysread($ready_r, $byte, 1);
  $byte eq 'k' or fail('user namespace for the idmapped workspace');
  for my $map (['uid_map', "$r->[1] $uid 1\n"], ['gid_map', "$r->[2] $gid 1\n"]) {
    open(my $fh, '>', "/proc/$pid/$map->[0]") or fail("open $map->[0]");
    (print $fh $map->[1]) or fail("write $map->[0]");
    close $fh or fail("write $map->[0]");
  }
  open(my $nsfh, '<', "/proc/$pid/ns/user") or fail('open the user namespace');
  $ns{$key} = $nsfh;
  close $done_w; waitpid($pid, 0);
}
syscall(0 + $NR_UNSHARE, 0x00020000) == 0 or fail('unshare(CLONE_NEWNS)');
syscall(0 + $NR_MOUNT, 0, my $slash = '/', 0, 0x44000, 0) == 0 or fail('make mounts private');
syscall(0 + $NR_MOUNT, my $fs = 'tmpfs', my $target = $stage, my $type = 'tmpfs', 0x6, my $data = 'mode=0711') == 0 or fail("mount a tmpfs on $stage");
my $i = 0;
for my $r (@roots) {
  my $fd = syscall(428, -100, my $path = $r->[0], 0x80001);
  $fd >= 0 or fail("open_tree $r->[0]");
  my $attr = pack('QQQQ', 0x00100000, 0, 0, fileno($ns{"$r->[1]:$r->[2]"}));
  syscall(442, $fd, my $empty = '', 0x1000, $attr, 32) == 0 or fail("idmapped mount of $r->[0]");
  mkdir("$stage/$i") or fail("mkdir $stage/$i");
  syscall(429, $fd, my $none = '', -100, my $to = "$stage/$i", 4) == 0 or fail("move_mount $r->[0]");
  $i++;
}
my $k = 0;
for my $r (@readable) {
  my $p = $r->[0];
  my $fd = syscall(428, -100, my $path = $p, 0x80001);
  $fd >= 0 or fail("open_tree $p");
  if ($r->[1] ne '-') {
    my $attr = pack('QQQQ', 0x00100000, 0, 0, fileno($ns{"$r->[1]:$r->[2]"}));
    syscall(442, $fd, my $empty = '', 0x1000, $attr, 32) == 0 or fail("idmapped mount of $p");
  }
  my $to = "$stage/r$k";
  if (-d $p) { mkdir($to) or fail("mkdir $to") } else { open(my $fh, '>', $to) or fail("create $to"); close $fh }
  syscall(429, $fd, my $none = '', -100, my $where = $to, 4) == 0 or fail("move_mount $p");
  $k++;
}
`;

/** Steps 3 and 4 of the root launcher, per command: join \`@procs\`, drop every privilege, die with \`$ppid\`. */
const LAUNCHER_DROP = String.raw`for my $file (@procs) {
  open(my $fh, '>', $file) or fail("join the cgroup $file");
  (print $fh "$$\n") or fail("join the cgroup $file");
  close $fh or fail("join the cgroup $file");
}
syscall(0 + $NR_PRCTL, 24, $_, 0, 0, 0) for 0 .. 63;
syscall(0 + $NR_SETGROUPS, 0, 0) == 0 or fail('setgroups');
syscall(0 + $NR_SETRESGID, 0 + $gid, 0 + $gid, 0 + $gid) == 0 or fail('setresgid');
syscall(0 + $NR_SETRESUID, 0 + $uid, 0 + $uid, 0 + $uid) == 0 or fail('setresuid');
syscall(0 + $NR_PRCTL, 1, 9, 0, 0, 0) == 0 or fail('prctl(PR_SET_PDEATHSIG)');
exit 125 if getppid() != $ppid;
`;

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
export const ROOT_LAUNCHER = String.raw`${LAUNCHER_ARGS}my $c = shift @ARGV;
my @procs = splice(@ARGV, 0, (defined $c && $c =~ /^\d+$/ ? $c : 0));
my $sep = shift @ARGV;
sub fail { print STDERR "sandbox launcher: $_[0]: $!\n"; exit 125 }
defined $sep && $sep eq '--' && @ARGV or do { $! = 22; fail('arguments') };
my $ppid = getppid();
${CLOSE_FROM}${LAUNCHER_STAGE}${LAUNCHER_DROP}close_from(4);
exec { $ARGV[0] } @ARGV or fail("exec $ARGV[0]");
`;

/**
 * What the reaper and each command of the spawner share: `descendants()` (every process below this
 * one, read from `/proc`), `reap_all()` (SIGKILLs and reaps them until none is left) and
 * `run_reaped(prctl, parent pid, start)`: become a subreaper that dies with its parent, fork
 * `start`, wait for it, kill and reap whatever it left, exit with its status (see {@link REAPER}).
 */
const REAP_SUBS = String.raw`
sub descendants {
  my %kids;
  opendir(my $dir, '/proc') or return ();
  for my $entry (readdir $dir) {
    next unless $entry =~ /^\d+$/;
    open(my $fh, '<', "/proc/$entry/stat") or next;
    my $stat = <$fh>; close $fh;
    next unless defined $stat && $stat =~ /.*\)\s+\S+\s+(\d+)/s;
    push @{ $kids{$1} }, $entry;
  }
  my @found; my @queue = ($$);
  while (@queue) { my $p = shift @queue; for my $c (@{ $kids{$p} || [] }) { push @found, $c; push @queue, $c } }
  return @found;
}
sub reap_all {
  for (1 .. 1000) {
    my $reaped = waitpid(-1, 1);
    last if $reaped == -1;
    next if $reaped > 0;
    my @all = descendants();
    kill 'KILL', @all if @all;
    last if waitpid(-1, 0) == -1;
  }
}
sub run_reaped {
  my ($nr_prctl, $ppid, $start) = @_;
  my $stopping = sub { reap_all(); exit 143 };
  $SIG{TERM} = $stopping; $SIG{HUP} = $stopping;
  syscall(0 + $nr_prctl, 36, 1, 0, 0, 0);
  syscall(0 + $nr_prctl, 1, 15, 0, 0, 0);
  exit 125 if getppid() != $ppid;
  my $child = fork();
  defined $child or do { print STDERR "reaper: fork: $!\n"; exit 125 };
  if ($child == 0) { $SIG{TERM} = 'DEFAULT'; $SIG{HUP} = 'DEFAULT'; $start->() }
  $SIG{INT} = 'IGNORE'; $SIG{QUIT} = 'IGNORE';
  my $status = 0;
  for (;;) {
    my $pid = waitpid(-1, 0);
    if ($pid == $child) { $status = $?; last }
    if ($pid == -1) { last }
  }
  reap_all();
  my $code = ($status & 127) ? 128 + ($status & 127) : $status >> 8;
  # Where POSIX is loaded (the spawner), _exit skips perl's global destruction: a fork has nothing to flush.
  POSIX::_exit($code) if defined &POSIX::_exit;
  exit($code);
}
`;

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
export const REAPER = String.raw`
my $NR_PRCTL = shift @ARGV;
my $sep = shift @ARGV;
defined $sep && $sep eq '--' && @ARGV or do { print STDERR "reaper: bad arguments\n"; exit 125 };
my $ppid = getppid();
${CLOSE_FROM}close_from(3);
${REAP_SUBS}run_reaped($NR_PRCTL, $ppid, sub { exec { $ARGV[0] } @ARGV or do { print STDERR "$ARGV[0]: $!\n"; exit 127 } });
`;

/**
 * The request loop of both long-lived spawners ({@link SPAWNER}, {@link SANDBOX_SPAWNER}). It
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
const SPAWN_LOOP = String.raw`
syscall(0 + $NR_PRCTL, 36, 1, 0, 0, 0);
syscall(0 + $NR_PRCTL, 1, 15, 0, 0, 0);
exit 125 if getppid() != $ppid;
$SIG{PIPE} = 'IGNORE';
my (%reaper, %held, $spare, $box);
pipe(my $wake_r, my $wake_w) or exit 125;
my $flags = fcntl($wake_w, 3, 0); fcntl($wake_w, 4, 2048 | $flags);
require POSIX;
$SIG{CHLD} = sub { syswrite($wake_w, 'c') };
sub say_line { syswrite(STDOUT, "$_[0]\n") or exit 0 }
sub unhex { return pack('H*', $_[0]) }
sub orphans {
  my @found = descendants();
  my %mine = map { $_ => 1 } keys %reaper, ($spare ? $spare->{pid} : ()), ($box ? $box->{pid} : ());
  return grep { !$mine{$_} && !is_below($_, \%mine) } @found;
}
sub is_below {
  my ($pid, $mine) = @_;
  for (1 .. 64) {
    open(my $fh, '<', "/proc/$pid/stat") or return 0;
    my $stat = <$fh>; close $fh;
    return 0 unless defined $stat && $stat =~ /.*\)\s+\S+\s+(\d+)/s;
    $pid = $1;
    return 1 if $mine->{$pid};
    return 0 if $pid == $$ || $pid <= 1;
  }
  return 0;
}
sub reap {
  my ($stray, $reported) = (0, 0);
  while ((my $pid = waitpid(-1, 1)) > 0) {
    my $status = $?;
    my $id = delete $reaper{$pid};
    if ($spare && $pid == $spare->{pid}) { close $spare->{r}; close $spare->{req}; $spare = undef; next }
    if ($box && $pid == $box->{pid}) { close $box->{r}; close $box->{req}; $box = undef; next }
    if (!defined $id) { $stray = 1; next }
    $stray = 1 if $status & 127;
    say_line("X $id " . (($status & 127) ? 128 + ($status & 127) : $status >> 8));
    $reported = 1;
  }
  if ($stray) { my @left = orphans(); kill 'KILL', @left if @left }
  return $reported;
}
sub parse {
  my @f = @_;
  my $cwd = unhex(shift(@f) // '');
  my $argc = shift(@f) // 0;
  my @argv = map { unhex($_) } splice(@f, 0, $argc);
  my $envc = shift(@f) // 0;
  my @env = map { unhex($_) } splice(@f, 0, $envc);
  my $pc = shift(@f) // 0;
  my @files = map { unhex($_) } splice(@f, 0, $pc);
  my $fd3 = unhex(shift(@f) // '');
  (@argv && @argv == $argc && @env == $envc && @files == $pc && !@f) or return ();
  return ($cwd, \@argv, \@env, \@files, $fd3);
}
# A fork shares its parent's memory until one of them writes a page, and each first write is a
# page fault (tens of microseconds in a virtual machine; a request's parse takes hundreds). So
# before a request arrives, the spare and the spawner after an idle fork run a parse of a request
# of the usual size (the spare also takes its environment, replaced by the request's): the pages
# that work writes are their own by the time a real request comes.
my $WARM = join(' ', '2f', 3, ('41' x 16) x 3, 64, (map { unpack('H*', "W$_=" . ('x' x 60)) } 1 .. 64), 0, '');
sub warm { my @parsed = parse(split(/ /, $WARM, -1)); %ENV = map { split(/=/, $_, 2) } @{ $parsed[2] || [] } if $_[0] }
# In a fork of the spawner: its own session, stdin /dev/null, stdout and stderr on the pipe \$w;
# nothing of the spawner's other forks kept.
sub forked {
  my ($w) = @_;
  $SIG{CHLD} = 'DEFAULT'; $SIG{PIPE} = 'DEFAULT';
  close $_ for values %held;
  close $wake_r; close $wake_w;
  for my $other ($spare, $box) { if ($other) { close $other->{r}; close $other->{req} } }
  POSIX::setsid();
  open(STDIN, '<', '/dev/null') or POSIX::_exit(125);
  open(STDOUT, '>&', $w) or POSIX::_exit(125);
  open(STDERR, '>&', $w) or POSIX::_exit(125);
  close $w;
}
# P <id> <argc> <arg>×argc <fd3>: a sandbox prepared ahead (see box_exec), replacing the one there.
sub box_prepare {
  my @f = @_;
  my $argc = shift(@f) // 0;
  my @argv = map { unhex($_) } splice(@f, 0, $argc);
  my $fd3 = unhex(shift(@f) // '');
  (@argv && @argv == $argc && !@f) or exit 125;
  box_discard();
  my $fork = fork_waiting(sub { box_exec(\@argv, $fd3, $_[0]) }) or return;
  $box = { %$fork, argv => \@argv, fd3 => $fd3 };
}
# D <id>: the prepared sandbox is killed unused (its exit is reaped like any stray).
sub box_discard {
  my $b = $box or return;
  $box = undef;
  kill 'KILL', $b->{pid};
  close $b->{r}; close $b->{req};
}
# Moves the prepared sandbox's processes into the command's cgroups, parents before children (a
# child forked after its parent moved is born inside); false when a step fails.
sub box_join {
  my ($top, @files) = @_;
  return 1 unless @files;
  my @queue = ($top);
  while (defined(my $p = shift @queue)) {
    for my $file (@files) {
      open(my $fh, '>', $file) or return 0;
      (print $fh "$p\n") or return 0;
      close $fh or return 0;
    }
    open(my $kids, '<', "/proc/$p/task/$p/children") or return 0;
    push @queue, split(' ', <$kids> // '');
  }
  return 1;
}
# The prepared sandbox for this request, handed its command, or undef (then it was discarded): used
# once, and only when the request's bubblewrap argv is the sandbox's followed by --chdir <dir> --
# <command>, with the same seccomp filter, and its processes joined the command's cgroups.
sub box_take {
  my ($cwd, $argv, $env, $files, $fd3) = @_;
  my $b = $box or return undef;
  $box = undef;
  my $n = @{ $b->{argv} };
  my $fits = @$argv > $n + 3 && $fd3 eq $b->{fd3} && $argv->[$n] eq '--chdir' && $argv->[$n + 2] eq '--';
  for my $i (0 .. $n - 1) { last unless $fits; $fits = $argv->[$i] eq $b->{argv}[$i] }
  if (!$fits || !box_join($b->{pid}, @$files)) {
    kill 'KILL', $b->{pid};
    close $b->{r}; close $b->{req};
    return undef;
  }
  my @tail = @$argv[$n + 3 .. $#$argv];
  syswrite($b->{req}, join(' ', unpack('H*', $argv->[$n + 1]), scalar(@tail), (map { unpack('H*', $_) } @tail), scalar(@$env), map { unpack('H*', $_) } @$env) . "\n");
  close $b->{req};
  return $b;
}
# A fork (see forked) with an output pipe and a request pipe, running body(<request pipe's read
# end>) and never returning; here { pid, r: the output's read end, req: the request's write end }, or
# undef when a pipe or the fork failed.
sub fork_waiting {
  my ($body) = @_;
  pipe(my $r, my $w) or return undef;
  pipe(my $req_r, my $req_w) or return undef;
  my $parent = $$;
  my $pid = fork();
  defined $pid or return undef;
  if ($pid == 0) {
    close $r; close $req_w; $ppid = $parent;
    forked($w);
    $body->($req_r);
    POSIX::_exit(125);
  }
  close $w; close $req_r;
  return { pid => $pid, r => $r, req => $req_w };
}
sub prepare {
  $spare = fork_waiting(sub {
    my ($req_r) = @_;
    serve(sub {
      # Forked on the spot, the request is already there: no time to win.
      my $bits = ''; vec($bits, fileno($req_r), 1) = 1;
      warm(1) unless select($bits, undef, undef, 0);
      my $line = ' ' x 65536; $line = '';
      while (index($line, "\n") < 0) { my $got = sysread($req_r, $line, 65536, length $line); POSIX::_exit(0) unless $got }
      close $req_r;
      chomp $line;
      my @request = parse(split(/ /, $line, -1));
      command(@request) if @request;
      POSIX::_exit(125);
    });
  });
}
sub run {
  my ($id, @f) = @_;
  my @request = parse(@f) or exit 125;
  -d $request[0] or return say_line("E $id " . unpack('H*', "cwd $request[0] is not a directory"));
  my $fork = box_take(@request);
  if (!$fork) {
    prepare() unless $spare;
    $fork = $spare or return say_line("E $id " . unpack('H*', "fork: $!"));
    $spare = undef;
    syswrite($fork->{req}, join(' ', @f) . "\n");
    close $fork->{req};
  }
  $reaper{$fork->{pid}} = $id; $held{$id} = $fork->{r};
  say_line("S $id $fork->{pid} " . fileno($fork->{r}));
}
my ($buf, $exited) = ('', 0);
for (;;) {
  my $rin = ''; vec($rin, 0, 1) = 1; vec($rin, fileno($wake_r), 1) = 1;
  my $n = select(my $rout = $rin, undef, undef, $spare ? 1 : 0.05);
  sysread($wake_r, my $junk, 4096) if $n > 0 && vec($rout, fileno($wake_r), 1);
  $exited = 1 if reap();
  my $asked = $n > 0 && vec($rout, 0, 1);
  if (!$spare && ($n == 0 || ($exited && !%reaper && !$asked))) { prepare(); warm() }
  $exited = 0 if $spare || $asked;
  next unless $asked;
  my $got = sysread(STDIN, $buf, 65536, length $buf);
  next if !defined $got && $! == 4;
  exit 0 unless $got;
  while ($buf =~ s/^([^\n]*)\n//) {
    my ($op, $id, @f) = split(/ /, $1, -1);
    defined $id && $id =~ /^\d+$/ or exit 125;
    if ($op eq 'C' && !@f) { close(delete $held{$id}) if $held{$id} }
    elsif ($op eq 'R') { run($id, @f) }
    elsif ($op eq 'P' && $BOXES) { box_prepare(@f) }
    elsif ($op eq 'D' && !@f) { box_discard() }
    else { exit 125 }
  }
}
`;

/**
 * The long-lived spawner of one session's unsandboxed commands: `perl -e SPAWNER <prctl number>`,
 * started once, so a command pays a message and a fork instead of a perl start (the requests:
 * `SPAWN_LOOP`; no cgroup files, no fd 3). Each fork becomes the command's own reaper
 * (`run_reaped`: a subreaper that dies with the spawner and kills whatever the command left,
 * `setsid` and double forks included) and runs the command in `cwd` with exactly `env`. It closes
 * every descriptor above 2 at its start and again right before each command (whatever the host
 * inherited).
 */
export const SPAWNER = String.raw`
my $NR_PRCTL = shift @ARGV;
my $ppid = getppid();
my $BOXES = 0;
${CLOSE_FROM}close_from(3);
${REAP_SUBS}
sub serve { run_reaped($NR_PRCTL, $ppid, $_[0]) }
sub command {
  my ($cwd, $argv, $env, $files, $fd3) = @_;
  (@$files == 0 && $fd3 eq '') or do { print STDERR "spawner: no cgroups or fd 3 here\n"; POSIX::_exit(125) };
  chdir($cwd) or do { print STDERR "spawner: chdir $cwd: $!\n"; POSIX::_exit(125) };
  %ENV = map { split(/=/, $_, 2) } @$env;
  close_from(3);
  exec { $argv->[0] } @$argv or do { print STDERR "$argv->[0]: $!\n"; POSIX::_exit(127) };
}
${SPAWN_LOOP}`;

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
export const SPARE_STUB = String.raw`open(my $in, '<&=', $ARGV[0]) or exit 0;
my $line = '';
while (index($line, "\n") < 0) { sysread($in, $line, 65536, length $line) or exit 0 }
close $in;
chomp $line;
my @f = split(/ /, $line, -1);
my $dir = pack('H*', shift(@f) // '');
my $argc = shift(@f) // 0;
my @argv = map { pack('H*', $_) } splice(@f, 0, $argc);
my $envc = shift(@f) // 0;
%ENV = map { split(/=/, pack('H*', $_), 2) } splice(@f, 0, $envc);
@argv or exit 0;
chdir($dir) or do { print STDERR "bwrap: Can't chdir to $dir: $!\n"; exit 1 };
$ENV{PWD} = $dir;
exec { $argv[0] } @argv or do { print STDERR "bwrap: execvp $argv[0]: $!\n"; exit 1 };
`;

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
export const SANDBOX_SPAWNER = String.raw`${LAUNCHER_ARGS}
sub fail { print STDERR "sandbox launcher: $_[0]: $!\n"; defined &POSIX::_exit ? POSIX::_exit(125) : exit 125 }
(defined $n && @roots == $n && !@ARGV) or do { $! = 22; fail('arguments') };
my $ppid = getppid();
my @procs;
${CLOSE_FROM}close_from(3);
${LAUNCHER_STAGE}${REAP_SUBS}
my $BOXES = 1;
my $STUB = <<'END_STUB';
${SPARE_STUB}END_STUB
sub serve { $_[0]->() }
sub filter_fd3 {
  open(my $filter, '<', $_[0]) or fail("open the seccomp filter $_[0]");
  if (fileno($filter) == 3) { fcntl($filter, 2, 0) } else { POSIX::dup2(fileno($filter), 3) // fail('dup2') }
}
sub command {
  my ($cwd, $argv, $env, $files, $fd3) = @_;
  filter_fd3($fd3);
  chdir($cwd) or fail("chdir $cwd");
  %ENV = map { split(/=/, $_, 2) } @$env;
  @procs = @$files;
${LAUNCHER_DROP}  close_from(4);
  exec { $argv->[0] } @$argv or fail("exec $argv->[0]");
}
sub box_exec {
  my ($prefix, $fd3, $req) = @_;
  # F_DUPFD: a copy of the request pipe at fd 10 or above, without close-on-exec, for the stub.
  my $keep = fcntl($req, 0, 10) or fail('dup the request pipe');
  close $req;
  filter_fd3($fd3);
  chdir('/') or fail('chdir /');
  %ENV = ();
  @procs = ();
${LAUNCHER_DROP}  close_from(4, 0 + $keep);
  my @argv = (@$prefix, '--chdir', '/', '--', $^X, '-e', $STUB, 0 + $keep);
  exec { $argv[0] } @argv or fail("exec $argv[0]");
}
${SPAWN_LOOP}`;
