# The root launcher, run as root right before bubblewrap (see ROOT_LAUNCHER in launchers.ts):
# perl -e ROOT_LAUNCHER <6 syscall numbers> <uid> <gid> <stage> <n> (<root> <uid> <gid>)×n
#   <m> (<readable path> <uid|-> <gid|->)×m <c> (<cgroup.procs file>)×c -- bwrap …
#@include constants.pl
$0 = 'sy-launcher';
#@include launcher-args.pl
my $c = shift @ARGV;
my @procs = splice(@ARGV, 0, (defined $c && $c =~ /^\d+$/ ? $c : 0));
my $sep = shift @ARGV;
sub fail { print STDERR "sandbox launcher: $_[0]: $!\n"; exit 125 }
defined $sep && $sep eq '--' && @ARGV or do { $! = EINVAL; fail('arguments') };
my $ppid = getppid();
#@include close-from.pl
#@include launcher-stage.pl
#@include launcher-drop.pl
close_from(4);
exec { $ARGV[0] } @ARGV or fail("exec $ARGV[0]");
