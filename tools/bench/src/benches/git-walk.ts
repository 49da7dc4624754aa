import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
// The walk and the audit from one module instance (the walk's records live in it), as the bench's other internals.
import { quarantineNewGitMetadata } from '../../../../packages/sandbox/src/git-quarantine';
import { scanProtectedPaths } from '../../../../packages/sandbox/src/protected-paths';
import type { Bench, BenchFigure } from '../harness';

/**
 * The `.git` walk a sandboxed command pays before it starts and at its exit, on workspaces of
 * 50,000 and 200,000 directories (`BENCH_GIT_WALK_DIRS=2000,5000` for a smoke run): flat (every
 * folder at the top, the shape of issue 47's attack) and nested (√n folders of √n), each with a
 * repository planted last in the walk's order. Cold: nothing known of the tree; warm: every
 * directory settled and known (one `lstat` each); the audit: the walk at a command's exit that
 * finds and renames the planted repository. Also the longest event-loop stall during a cold walk
 * and the heap the walk's cache keeps per directory.
 */
const SIZES = (process.env.BENCH_GIT_WALK_DIRS ?? '50000,200000').split(',').map(Number);

/** Makes `count` directories below `root` (flat or √n × √n) with one `mkdir -p` per 5,000 names, and `zz/r/.git`. */
function makeTree(root: string, count: number, shape: 'flat' | 'nested'): void {
  const side = Math.ceil(Math.sqrt(count));
  const names: string[] = [];
  for (let index = 0; names.length < count; index++) {
    if (shape === 'flat') names.push(`f${index}`);
    else {
      names.push(`d${index}`);
      for (let inner = 0; inner < side - 1 && names.length < count; inner++) names.push(`d${index}/e${inner}`);
    }
  }
  for (let start = 0; start < names.length; start += 5_000) execFileSync('mkdir', ['-p', ...names.slice(start, start + 5_000)], { cwd: root });
  mkdirSync(join(root, 'zz', 'r', '.git'), { recursive: true });
}

/** Runs `body` and resolves with its milliseconds and the longest gap between event-loop turns meanwhile. */
async function timed<T>(body: () => Promise<T>): Promise<{ ms: number; stallMs: number; value: T }> {
  let last = performance.now();
  let stallMs = 0;
  const ticking = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 1);
  const start = performance.now();
  try {
    const value = await body();
    return { ms: performance.now() - start, stallMs, value };
  } finally {
    clearInterval(ticking);
  }
}

async function walkFigures(count: number, shape: 'flat' | 'nested'): Promise<BenchFigure[]> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `bench-git-walk-${shape}-`)));
  try {
    makeTree(root, count, shape);
    const planted = join(root, 'zz', 'r', '.git');
    const policy = { root };
    const load = loadavg()[0].toFixed(1);
    const heapBefore = (globalThis.gc?.(), process.memoryUsage().heapUsed);
    const cold = await timed(() => scanProtectedPaths(policy));
    if (!cold.value.some((entry) => entry.path === planted)) throw new Error(`the walk missed ${planted}`);
    const heapKept = (globalThis.gc?.(), process.memoryUsage().heapUsed) - heapBefore;
    await new Promise((resolve) => setTimeout(resolve, 2_200)); // the directories' change times settle
    await scanProtectedPaths(policy); // records now settled
    const warm = await timed(() => scanProtectedPaths(policy));
    const before = warm.value.filter((entry) => entry.path !== planted);
    const audit = await timed(() => quarantineNewGitMetadata(policy, before));
    if (audit.value.renamed.length !== 1) throw new Error('the audit did not rename the planted repository');
    const label = `${count.toLocaleString('en-US')} directories, ${shape}`;
    return [
      { name: `.git walk, ${label}, cold (nothing known)`, value: cold.ms, unit: 'ms', note: `longest event-loop stall ${cold.stallMs.toFixed(0)} ms; cache heap ≈ ${Math.round(heapKept / (count + 2))} B per directory; load average ${load}` },
      { name: `.git walk, ${label}, warm (settled, one lstat each)`, value: warm.ms, unit: 'ms', note: `longest event-loop stall ${warm.stallMs.toFixed(0)} ms` },
      { name: `new-.git audit at exit, ${label}, one repository planted last`, value: audit.ms, unit: 'ms', note: `renamed ${audit.value.renamed.length}; load average ${loadavg()[0].toFixed(1)}` },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const bench: Bench = {
  name: 'sandbox .git walk',
  async run(): Promise<BenchFigure[]> {
    const figures: BenchFigure[] = [];
    for (const count of SIZES) {
      for (const shape of ['flat', 'nested'] as const) {
        const measured = await walkFigures(count, shape);
        // each size as it is measured: the largest take minutes on a loaded machine
        for (const figure of measured) process.stderr.write(`  ${figure.name}: ${figure.value.toFixed(0)} ${figure.unit} (${figure.note ?? ''})\n`);
        figures.push(...measured);
      }
    }
    return figures;
  },
};

export default bench;
