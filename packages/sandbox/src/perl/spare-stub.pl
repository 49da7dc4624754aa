# The command of a sandbox prepared ahead: perl -e SPARE_STUB <fd>, inside the finished sandbox.
# Reads ONE request from the pipe <fd> (hex: <dir> <argc> <arg>×argc <envc> <NAME=value>×envc),
# enters dir, takes that environment and executes the command in its own place.
$0 = 'sy-spare';
open(my $in, '<&=', $ARGV[0]) or exit 0;
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
