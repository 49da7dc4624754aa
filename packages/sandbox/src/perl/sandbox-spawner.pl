# The long-lived launcher of one session's sandboxed commands, as root:
# perl -e SANDBOX_SPAWNER <the root launcher's arguments up to the readable paths>
#@include constants.pl
$0 = 'sy-box-spawner';
#@include launcher-args.pl
sub fail { print STDERR "sandbox launcher: $_[0]: $!\n"; defined &POSIX::_exit ? POSIX::_exit(125) : exit 125 }
(defined $n && @roots == $n && !@ARGV) or do { $! = EINVAL; fail('arguments') };
my $ppid = getppid();
my @procs;
#@include close-from.pl
close_from(3);
#@include launcher-stage.pl
#@include reap-subs.pl
my $BOXES = 1;
my $STUB = <<'END_STUB';
#@include spare-stub.pl
END_STUB
sub serve { $_[0]->() }
sub filter_fd3 {
  open(my $filter, '<', $_[0]) or fail("open the seccomp filter $_[0]");
  if (fileno($filter) == 3) { fcntl($filter, F_SETFD, 0) } else { POSIX::dup2(fileno($filter), 3) // fail('dup2') }
}
sub command {
  my ($cwd, $argv, $env, $files, $fd3) = @_;
  filter_fd3($fd3);
  chdir($cwd) or fail("chdir $cwd");
  %ENV = map { split(/=/, $_, 2) } @$env;
  @procs = @$files;
#@include launcher-drop.pl
  close_from(4);
  exec { $argv->[0] } @$argv or fail("exec $argv->[0]");
}
sub box_exec {
  my ($prefix, $fd3, $req) = @_;
  # a copy of the request pipe at fd 10 or above, without close-on-exec, for the stub
  my $keep = fcntl($req, F_DUPFD, 10) or fail('dup the request pipe');
  close $req;
  filter_fd3($fd3);
  chdir('/') or fail('chdir /');
  %ENV = ();
  @procs = ();
#@include launcher-drop.pl
  close_from(4, 0 + $keep);
  my @argv = (@$prefix, '--chdir', '/', '--', $^X, '-e', $STUB, 0 + $keep);
  exec { $argv[0] } @argv or fail("exec $argv[0]");
}
#@include spawn-loop.pl
