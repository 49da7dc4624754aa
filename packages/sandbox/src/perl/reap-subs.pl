# What the reaper and each command of the spawner share: descendants() (every process below this
# one, read from /proc), reap_all() (SIGKILLs and reaps them until none is left) and
# run_reaped(prctl, parent pid, start): become a subreaper that dies with its parent, fork start,
# wait for it, kill and reap whatever it left, exit with its status.
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
    my $reaped = waitpid(-1, WNOHANG);
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
  $0 = 'sy-reaper';
  syscall(0 + $nr_prctl, PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  syscall(0 + $nr_prctl, PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
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
