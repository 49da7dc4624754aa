# Steps 3 and 4 of the root launcher, per command: join @procs, drop every privilege, die with $ppid.
for my $file (@procs) {
  open(my $fh, '>', $file) or fail("join the cgroup $file");
  (print $fh "$$\n") or fail("join the cgroup $file");
  close $fh or fail("join the cgroup $file");
}
syscall(0 + $NR_PRCTL, PR_CAPBSET_DROP, $_, 0, 0, 0) for 0 .. CAP_LAST;
syscall(0 + $NR_SETGROUPS, 0, 0) == 0 or fail('setgroups');
syscall(0 + $NR_SETRESGID, 0 + $gid, 0 + $gid, 0 + $gid) == 0 or fail('setresgid');
syscall(0 + $NR_SETRESUID, 0 + $uid, 0 + $uid, 0 + $uid) == 0 or fail('setresuid');
syscall(0 + $NR_PRCTL, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == 0 or fail('prctl(PR_SET_PDEATHSIG)');
exit 125 if getppid() != $ppid;
