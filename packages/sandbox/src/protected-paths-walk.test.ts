import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { protectedPaths, scanProtectedPaths } from './protected-paths';
import { makeWorkspace } from './test-support';

// The walk for nested .git reuses what it read of a directory whose change time did not move since
// (settled: changed more than two seconds before that walk). The clock is moved forward so every
// directory made here counts as settled; each change must still be found by the next walk.
const nested = (root: string) => protectedPaths({ root }).filter((entry) => entry.kind === 'nested-git').map((entry) => entry.path).sort();
let clock = Date.now();
const later = () => vi.setSystemTime((clock += 5_000));

function tree(): string {
  const root = makeWorkspace('walk-cache-');
  for (let a = 0; a < 20; a++) for (let b = 0; b < 20; b++) mkdirSync(join(root, `d${a}`, `e${b}`), { recursive: true });
  mkdirSync(join(root, 'd3', 'e4', '.git'));
  return root;
}

describe('the nested .git walk, run again on a changed workspace', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    later();
  });
  afterEach(() => vi.useRealTimers());

  test('a repository created deep in a walked tree is found by the next walk, and a removed one is gone', () => {
    const root = tree();
    expect(nested(root)).toEqual([join(root, 'd3', 'e4', '.git')]);
    later();
    expect(nested(root)).toEqual([join(root, 'd3', 'e4', '.git')]);
    mkdirSync(join(root, 'd19', 'e19', 'deeper', '.git'), { recursive: true });
    writeFileSync(join(root, 'd0', 'e0', '.git'), 'gitdir: /elsewhere\n');
    later();
    expect(nested(root)).toEqual([join(root, 'd0', 'e0', '.git'), join(root, 'd19', 'e19', 'deeper', '.git'), join(root, 'd3', 'e4', '.git')].sort());
    rmSync(join(root, 'd3', 'e4', '.git'), { recursive: true });
    later();
    expect(nested(root)).toEqual([join(root, 'd0', 'e0', '.git'), join(root, 'd19', 'e19', 'deeper', '.git')].sort());
  });

  test('setting a directory’s times back after planting a .git does not hide it (the change time moves anyway)', () => {
    const root = tree();
    const dir = join(root, 'd7', 'e7');
    const saved = join(root, 'times');
    writeFileSync(saved, '');
    execFileSync('touch', ['-r', dir, saved]); // the directory's times, to the nanosecond
    const before = lstatSync(dir, { bigint: true });
    nested(root);
    later();
    mkdirSync(join(dir, '.git'));
    execFileSync('touch', ['-r', saved, dir]); // what a command in the sandbox can do to hide the change
    expect(lstatSync(dir, { bigint: true }).mtimeNs).toBe(before.mtimeNs);
    expect(nested(root)).toContain(join(dir, '.git'));
  });

  test('a tree with a repository renamed in is walked; a directory swapped for a link is not followed', () => {
    const root = tree();
    const outside = makeWorkspace('walk-cache-outside-');
    mkdirSync(join(outside, 'moved', 'x', '.git'), { recursive: true });
    mkdirSync(join(outside, 'target', '.git'), { recursive: true });
    nested(root);
    later();
    renameSync(join(outside, 'moved'), join(root, 'd1', 'e1', 'moved'));
    rmSync(join(root, 'd2', 'e2'), { recursive: true });
    symlinkSync(join(outside, 'target'), join(root, 'd2', 'e2'));
    expect(nested(root)).toEqual([join(root, 'd1', 'e1', 'moved', 'x', '.git'), join(root, 'd3', 'e4', '.git')]);
  });

  test('a repository planted in a directory changed just before the walk is found (not trusted yet)', () => {
    vi.useRealTimers();
    const root = makeWorkspace('walk-cache-fresh-');
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    expect(nested(root)).toEqual([]);
    mkdirSync(join(root, 'a', 'b', '.git'));
    expect(nested(root)).toEqual([join(root, 'a', 'b', '.git')]);
  });
});

describe('the walk without blocking the event loop (scanProtectedPaths)', () => {
  test('finds the same paths in the same order as the synchronous walk, cold and warm, and sees changes', async () => {
    const root = tree();
    mkdirSync(join(root, 'd9', 'node_modules', 'pkg', '.git'), { recursive: true });
    writeFileSync(join(root, 'd1', '.git'), 'gitdir: /elsewhere\n');
    const cold = await scanProtectedPaths({ root });
    expect(cold).toEqual(protectedPaths({ root }));
    expect(cold.map((entry) => [entry.kind, entry.path])).toEqual([
      ['root-git', join(root, '.git')],
      ['nested-git', join(root, 'd1', '.git')],
      ['nested-git', join(root, 'd3', 'e4', '.git')],
    ]);
    const ticks: number[] = [];
    const ticking = setInterval(() => ticks.push(Date.now()), 0);
    const warm = await scanProtectedPaths({ root });
    clearInterval(ticking);
    expect(warm).toEqual(cold);
    // 421 directories read in batches: the event loop turned while the walk ran
    expect(ticks.length).toBeGreaterThan(0);
    mkdirSync(join(root, 'd19', 'e19', 'new', '.git'), { recursive: true });
    expect((await scanProtectedPaths({ root })).map((entry) => entry.path)).toContain(join(root, 'd19', 'e19', 'new', '.git'));
  });
});
