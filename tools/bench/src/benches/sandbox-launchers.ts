/**
 * What the sandbox's perl programs cost per command, and what a compiled helper would cost instead
 * (the decision in packages/sandbox/README.md, "Why perl"). Per program: perl's start alone
 * (`perl -e 0`), start + compile of the program (`perl -c -e PROGRAM`: compile only, `use`/`require`
 * at the top included), and the floor any helper pays, a fork + exec of a small compiled program
 * that makes the same first system call (`prctl(PR_SET_CHILD_SUBREAPER)`) and exits — built here
 * with `cc` when there is one (else `/bin/true`). Each as wall time (spawned from Node, in
 * alternation) and as CPU time (user + system, from a shell loop's `times`). Sizes are the bytes
 * `ps` shows for each program.
 *
 * `BENCH_RUNS=3 pnpm bench sandbox-launchers` smoke-runs it; the figures are only worth anything
 * on a quiet machine.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExecutable } from '@switchyard/sandbox';
// The programs as the sandbox passes them (they are not part of the package's entry).
import { REAPER, ROOT_LAUNCHER, SANDBOX_SPAWNER, SPARE_STUB, SPAWNER } from '../../../../packages/sandbox/src/launchers';
import { alternatingMedians, compare, type Bench, type BenchFigure } from '../harness';

const RUNS = Number(process.env.BENCH_RUNS ?? 31);
const PROGRAMS = { ROOT_LAUNCHER, REAPER, SPAWNER, SANDBOX_SPAWNER, SPARE_STUB };
const HELPER_C = `#include <sys/prctl.h>
int main(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : 1; }
`;

/** Runs `file args` to its end; rejects on a non-zero exit (a broken run must not look fast). */
function run(file: string, args: readonly string[]): () => Promise<void> {
  return () =>
    new Promise((resolve, reject) => {
      const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${file} exited ${code}: ${stderr}`))));
    });
}

/**
 * CPU milliseconds (user + system) one run of `file args` costs, from the shell's `times` over
 * `count` runs: unlike wall time, it hardly moves when other work shares the cores.
 */
function cpuPerRun(file: string, args: readonly string[], count: number): number {
  const loop = 'i=0; while [ $i -lt "$0" ]; do "$@" >/dev/null 2>&1 || exit 1; i=$((i+1)); done; times';
  const out = spawnSync('/bin/sh', ['-c', loop, String(count), file, ...args], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`${file} failed: ${out.stderr}`);
  const [user, system] = [...out.stdout.trim().split('\n')[1].matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60_000 + Number(m[2]) * 1000);
  return (user + system) / count;
}

/** A compiled helper's floor: the C program above, built static when the toolchain can, or `/bin/true`. */
function compiledHelper(dir: string): { file: string; name: string } {
  const cc = findExecutable('cc');
  if (cc) {
    writeFileSync(join(dir, 'helper.c'), HELPER_C);
    for (const flags of [['-static'], []]) {
      const built = spawnSync(cc, ['-O2', ...flags, '-o', join(dir, 'helper'), join(dir, 'helper.c')]);
      if (built.status === 0) return { file: join(dir, 'helper'), name: `compiled helper (C${flags.length ? ', static' : ''})` };
    }
  }
  return { file: '/bin/true', name: 'exec of /bin/true' };
}

const bench: Bench = {
  name: 'sandbox launchers',
  async run() {
    const perl = findExecutable('perl');
    if (!perl) return [{ name: 'perl', value: 0, unit: 'ms', note: 'perl is not installed: nothing to measure' }];
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-launchers-bench-'));
    try {
      const helper = compiledHelper(dir);
      const names = Object.keys(PROGRAMS) as (keyof typeof PROGRAMS)[];
      const bodies = [run(helper.file, []), run(perl, ['-e', '0']), ...names.map((name) => run(perl, ['-c', '-e', PROGRAMS[name]]))];
      const [floor, bare, ...compiled] = await alternatingMedians(bodies, RUNS, 2);
      const cpuRuns = RUNS * 4;
      const cpuFloor = cpuPerRun(helper.file, [], cpuRuns);
      const cpuBare = cpuPerRun(perl, ['-e', '0'], cpuRuns);
      const figures: BenchFigure[] = [
        { name: helper.name, value: floor, unit: 'ms', note: 'fork + exec + one prctl: what any helper pays' },
        compare('perl start (`perl -e 0`)', bare, 'ms', { name: helper.name, value: floor }),
        { name: `${helper.name}, CPU`, value: cpuFloor, unit: 'ms' },
        compare('perl start, CPU', cpuBare, 'ms', { name: `${helper.name}, CPU`, value: cpuFloor }),
      ];
      names.forEach((name, i) => {
        const bytes = Buffer.byteLength(PROGRAMS[name]);
        const cpu = cpuPerRun(perl, ['-c', '-e', PROGRAMS[name]], cpuRuns);
        figures.push(compare(`${name}: perl start + compile, CPU`, cpu, 'ms', { name: `${helper.name}, CPU`, value: cpuFloor }, { note: `compile alone ${(cpu - cpuBare).toFixed(2)} ms of CPU` }));
        figures.push(compare(`${name}: perl start + compile`, compiled[i], 'ms', { name: helper.name, value: floor }, { note: `compile alone ${(compiled[i] - bare).toFixed(2)} ms; ${bytes} bytes of program text in argv (what ps shows)` }));
      });
      return figures;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
export default bench;
