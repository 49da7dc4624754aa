# The long-lived spawner of one session's unsandboxed commands: perl -e SPAWNER <prctl number>
#@include constants.pl
$0 = 'sy-spawner';
my $NR_PRCTL = shift @ARGV;
my $ppid = getppid();
my $BOXES = 0;
#@include close-from.pl
close_from(3);
#@include reap-subs.pl
sub serve { run_reaped($NR_PRCTL, $ppid, $_[0]) }
sub command {
  my ($cwd, $argv, $env, $files, $fd3) = @_;
  (@$files == 0 && $fd3 eq '') or do { print STDERR "spawner: no cgroups or fd 3 here\n"; POSIX::_exit(125) };
  chdir($cwd) or do { print STDERR "spawner: chdir $cwd: $!\n"; POSIX::_exit(125) };
  %ENV = map { split(/=/, $_, 2) } @$env;
  close_from(3);
  exec { $argv->[0] } @$argv or do { print STDERR "$argv->[0]: $!\n"; POSIX::_exit(127) };
}
#@include spawn-loop.pl
