# The reaper of an unsandboxed command: perl -e REAPER <prctl number> -- <argv>
#@include constants.pl
$0 = 'sy-reaper';
my $NR_PRCTL = shift @ARGV;
my $sep = shift @ARGV;
defined $sep && $sep eq '--' && @ARGV or do { print STDERR "reaper: bad arguments\n"; exit 125 };
my $ppid = getppid();
#@include close-from.pl
close_from(3);
#@include reap-subs.pl
run_reaped($NR_PRCTL, $ppid, sub { exec { $ARGV[0] } @ARGV or do { print STDERR "$ARGV[0]: $!\n"; exit 127 } });
