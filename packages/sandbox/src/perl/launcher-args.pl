# The root launcher's first arguments: system call numbers, the sandbox user, the stage, the roots
# (path, owner uid, owner gid) and the readable paths (path, owner uid|-, owner gid|-).
my ($NR_UNSHARE, $NR_MOUNT, $NR_SETGROUPS, $NR_SETRESGID, $NR_SETRESUID, $NR_PRCTL, $uid, $gid, $stage, $n) = splice(@ARGV, 0, 10);
my @roots; push @roots, [splice(@ARGV, 0, 3)] for 1 .. $n;
my $m = shift @ARGV;
my @readable; push @readable, [splice(@ARGV, 0, 3)] for 1 .. (defined $m && $m =~ /^\d+$/ ? $m : 0);
