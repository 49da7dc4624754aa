# Steps 1 and 2 of the root launcher, the same for every command of one workspace and policy: a
# user namespace per owner (mapping it to the sandbox user), a private mount namespace, each root
# idmapped and attached at <stage>/<i>, each readable path at <stage>/r<k>.
my %ns;
for my $r (@roots, grep { $_->[1] ne '-' } @readable) {
  my $key = "$r->[1]:$r->[2]";
  next if $ns{$key};
  pipe(my $ready_r, my $ready_w) or fail('pipe');
  pipe(my $done_r, my $done_w) or fail('pipe');
  my $pid = fork();
  defined $pid or fail('fork');
  if ($pid == 0) {
    close $ready_r; close $done_w;
    syswrite($ready_w, syscall(0 + $NR_UNSHARE, CLONE_NEWUSER) == 0 ? 'k' : 'e');
    my $byte; sysread($done_r, $byte, 1);
    exit 0;
  }
  close $ready_w; close $done_r;
  my $byte = ''; sysread($ready_r, $byte, 1);
  $byte eq 'k' or fail('user namespace for the idmapped workspace');
  for my $map (['uid_map', "$r->[1] $uid 1\n"], ['gid_map', "$r->[2] $gid 1\n"]) {
    open(my $fh, '>', "/proc/$pid/$map->[0]") or fail("open $map->[0]");
    (print $fh $map->[1]) or fail("write $map->[0]");
    close $fh or fail("write $map->[0]");
  }
  open(my $nsfh, '<', "/proc/$pid/ns/user") or fail('open the user namespace');
  $ns{$key} = $nsfh;
  close $done_w; waitpid($pid, 0);
}
syscall(0 + $NR_UNSHARE, CLONE_NEWNS) == 0 or fail('unshare(CLONE_NEWNS)');
syscall(0 + $NR_MOUNT, 0, my $slash = '/', 0, MS_REC | MS_PRIVATE, 0) == 0 or fail('make mounts private');
syscall(0 + $NR_MOUNT, my $fs = 'tmpfs', my $target = $stage, my $type = 'tmpfs', MS_NOSUID | MS_NODEV, my $data = 'mode=0711') == 0 or fail("mount a tmpfs on $stage");
my $i = 0;
for my $r (@roots) {
  my $fd = syscall(NR_OPEN_TREE, AT_FDCWD, my $path = $r->[0], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  $fd >= 0 or fail("open_tree $r->[0]");
  my $attr = pack('QQQQ', MOUNT_ATTR_IDMAP, 0, 0, fileno($ns{"$r->[1]:$r->[2]"}));
  syscall(NR_MOUNT_SETATTR, $fd, my $empty = '', AT_EMPTY_PATH, $attr, MOUNT_ATTR_SIZE) == 0 or fail("idmapped mount of $r->[0]");
  mkdir("$stage/$i") or fail("mkdir $stage/$i");
  syscall(NR_MOVE_MOUNT, $fd, my $none = '', AT_FDCWD, my $to = "$stage/$i", MOVE_MOUNT_F_EMPTY_PATH) == 0 or fail("move_mount $r->[0]");
  $i++;
}
my $k = 0;
for my $r (@readable) {
  my $p = $r->[0];
  my $fd = syscall(NR_OPEN_TREE, AT_FDCWD, my $path = $p, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  $fd >= 0 or fail("open_tree $p");
  if ($r->[1] ne '-') {
    my $attr = pack('QQQQ', MOUNT_ATTR_IDMAP, 0, 0, fileno($ns{"$r->[1]:$r->[2]"}));
    syscall(NR_MOUNT_SETATTR, $fd, my $empty = '', AT_EMPTY_PATH, $attr, MOUNT_ATTR_SIZE) == 0 or fail("idmapped mount of $p");
  }
  my $to = "$stage/r$k";
  if (-d $p) { mkdir($to) or fail("mkdir $to") } else { open(my $fh, '>', $to) or fail("create $to"); close $fh }
  syscall(NR_MOVE_MOUNT, $fd, my $none = '', AT_FDCWD, my $where = $to, MOVE_MOUNT_F_EMPTY_PATH) == 0 or fail("move_mount $p");
  $k++;
}
