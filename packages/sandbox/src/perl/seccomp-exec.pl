# The unprivileged launcher of a host that holds inherited descriptors:
# perl -e SECCOMP_EXEC <seccomp filter> <argv…>
# closes every descriptor above 2, opens the filter as fd 3 (for `bwrap --seccomp 3`), executes argv.
#@include constants.pl
$0 = 'sy-seccomp-exec';
#@include close-from.pl
my $filter = shift @ARGV;
sub fail { print STDERR "sandbox launcher: $_[0]: $!\n"; exit 125 }
defined $filter && @ARGV or do { $! = EINVAL; fail('arguments') };
close_from(3);
open(my $fh, '<', $filter) or fail("open the seccomp filter $filter");
if (fileno($fh) == 3) { fcntl($fh, F_SETFD, 0) } else { require POSIX; POSIX::dup2(fileno($fh), 3) // fail('dup2') }
exec { $ARGV[0] } @ARGV or fail("exec $ARGV[0]");
