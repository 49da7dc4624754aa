import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** What one run of a reference program cost, as the runner measured it. */
export interface RunnerSample {
  /** Wall milliseconds from the fork to the reaped exit. */
  wallMs: number;
  /** CPU milliseconds (user + system) of the program, from `times` (10 ms ticks). */
  cpuMs: number;
}

/**
 * Forks, execs and reaps one program per request line (`<cwd>\t<file>\t<arg>…`, stdio to
 * /dev/null), and answers `<exit status> <wall ns> <child CPU ticks>`: the reference program's
 * start and run measured by a small parent, as a shell runs it.
 */
const RUNNER = String.raw`
use strict; use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC); use POSIX ();
$| = 1;
while (my $line = <STDIN>) {
  chomp $line;
  my ($cwd, @argv) = split(/\t/, $line);
  my @before = times;
  my $start = clock_gettime(CLOCK_MONOTONIC);
  my $pid = fork();
  if ($pid == 0) {
    chdir($cwd) or POSIX::_exit(126);
    open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null');
    exec { $argv[0] } @argv or POSIX::_exit(127);
  }
  waitpid($pid, 0);
  my $status = $?;
  my $wall = clock_gettime(CLOCK_MONOTONIC) - $start;
  my @after = times;
  printf("%d %d %.6f\n", $status >> 8, int($wall * 1e9), ($after[2] + $after[3]) - ($before[2] + $before[3]));
}
`;

/**
 * A long-lived perl process that runs the benches' reference programs (`git apply`). The bench
 * process then never forks while it measures: a fork marks the forking process's whole memory
 * copy-on-write, and the first write to each page afterwards faults again — measured here
 * (a PVM guest, where a fault costs tens of µs) as +1,000–1,700 minor faults and +20–40 ms in the
 * 100 × 20 apply_patch run timed right after a `git` spawned by the bench process. That cost is
 * the reference's fork charged to the subject; a host using the tool does not fork per patch (its
 * helper does the work). The reference is timed inside the runner: fork, exec, run, reap, by a
 * parent as small as a shell — the cheapest start a native tool gets.
 */
export class ProcessRunner {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = '';
  private waiting: ((line: string) => void) | undefined;

  constructor() {
    this.child = spawn('perl', ['-e', RUNNER], { stdio: 'pipe' });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.buffer += chunk;
      const end = this.buffer.indexOf('\n');
      if (end === -1) return;
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 1);
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve?.(line);
    });
  }

  /** Runs `file args` in `cwd`; throws on a non-zero exit (a broken reference must not look fast). */
  run(cwd: string, file: string, args: readonly string[]): Promise<RunnerSample> {
    const fields = [cwd, file, ...args];
    if (fields.some((field) => /[\t\n]/.test(field))) throw new Error('process runner: a field holds a tab or newline');
    return new Promise((resolve, reject) => {
      this.waiting = (line) => {
        const [status, wallNs, cpuSeconds] = line.split(' ').map(Number);
        if (status !== 0) reject(new Error(`${file} ${args.join(' ')} exited ${status}`));
        else resolve({ wallMs: wallNs / 1e6, cpuMs: cpuSeconds * 1000 });
      };
      this.child.stdin.write(`${fields.join('\t')}\n`);
    });
  }

  close(): void {
    this.child.stdin.end();
  }
}
