# The request loop of both long-lived spawners (see SPAWN_LOOP's description in launchers.ts): a
# child subreaper that dies with its parent, reading one request a line from stdin (R run, C close,
# P prepare a sandbox, D discard it) and answering S, E and X lines on stdout.
syscall(0 + $NR_PRCTL, PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
syscall(0 + $NR_PRCTL, PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
exit 125 if getppid() != $ppid;
$SIG{PIPE} = 'IGNORE';
my (%reaper, %held, $spare, $box);
pipe(my $wake_r, my $wake_w) or exit 125;
my $flags = fcntl($wake_w, F_GETFL, 0); fcntl($wake_w, F_SETFL, O_NONBLOCK | $flags);
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
  while ((my $pid = waitpid(-1, WNOHANG)) > 0) {
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
# In a fork of the spawner: its own session, stdin /dev/null, stdout and stderr on the pipe $w;
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
  next if !defined $got && $! == EINTR;
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
