# Kernel numbers and flags the launchers pass to `syscall`, `fcntl` and `waitpid`, as constant
# subs perl folds into the code at compile time (no module to load). The system call numbers that
# differ per architecture are arguments of each program instead (`launcherSyscalls()`); the new
# mount API and `close_range` have the same numbers everywhere.
sub NR_CLOSE_RANGE () { 436 }
sub NR_OPEN_TREE () { 428 }
sub NR_MOVE_MOUNT () { 429 }
sub NR_MOUNT_SETATTR () { 442 }
sub CLONE_NEWUSER () { 0x10000000 }
sub CLONE_NEWNS () { 0x00020000 }
sub MS_NOSUID () { 0x2 }
sub MS_NODEV () { 0x4 }
sub MS_REC () { 0x4000 }
sub MS_PRIVATE () { 0x40000 }
sub AT_FDCWD () { -100 }
sub AT_EMPTY_PATH () { 0x1000 }
sub OPEN_TREE_CLONE () { 0x1 }
sub OPEN_TREE_CLOEXEC () { 0x80000 }
sub MOVE_MOUNT_F_EMPTY_PATH () { 0x4 }
sub MOUNT_ATTR_IDMAP () { 0x00100000 }
# sizeof(struct mount_attr): attr_set, attr_clr, propagation, userns_fd (four u64)
sub MOUNT_ATTR_SIZE () { 32 }
sub PR_SET_PDEATHSIG () { 1 }
sub PR_CAPBSET_DROP () { 24 }
sub PR_SET_CHILD_SUBREAPER () { 36 }
# the highest capability number the bounding set is emptied up to
sub CAP_LAST () { 63 }
sub SIGKILL () { 9 }
sub SIGTERM () { 15 }
sub F_DUPFD () { 0 }
sub F_SETFD () { 2 }
sub F_GETFL () { 3 }
sub F_SETFL () { 4 }
sub O_NONBLOCK () { 04000 }
sub WNOHANG () { 1 }
sub EINTR () { 4 }
sub EINVAL () { 22 }
