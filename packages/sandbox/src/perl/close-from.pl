# close_from(from, keep?): closes every descriptor from `from` up, except `keep`: `close_range`
# (Linux 5.9), else each one listed in /proc/self/fd.
sub close_from {
  my ($from, $keep) = @_;
  for my $range (defined $keep ? ([$from, $keep - 1], [$keep + 1, 4294967295]) : ([$from, 4294967295])) {
    next if $range->[0] > $range->[1] || syscall(NR_CLOSE_RANGE, $range->[0], $range->[1], 0) == 0;
    opendir(my $dir, '/proc/self/fd') or next;
    my @open = grep { /^\d+$/ && $_ >= $range->[0] && $_ <= $range->[1] && $_ != fileno($dir) } readdir $dir;
    closedir $dir;
    require POSIX;
    POSIX::close($_) for @open;
  }
}
