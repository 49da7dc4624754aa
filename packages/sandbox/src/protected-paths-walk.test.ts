import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { quarantineNewGitMetadata } from './git-quarantine';
import { protectedPaths, scanProtectedPaths } from './protected-paths';
import { makeWorkspace } from './test-support';

// The walk for nested .git reuses what it read of a directory whose change time did not move since
// (settled: changed more than two seconds before that walk). The clock is moved forward so every
// directory made here counts as settled; each change must still be found by the next walk.
const nestedRepos = (root: string) => protectedPaths({ root }).filter((entry) => entry.kind === 'nested-git').map((entry) => entry.path).sort();
let clock = Date.now();
const later = () => vi.setSystemTime((clock += 5_000));

function walkTree(): string {
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
    const root = walkTree();
    expect(nestedRepos(root)).toEqual([join(root, 'd3', 'e4', '.git')]);
    later();
    expect(nestedRepos(root)).toEqual([join(root, 'd3', 'e4', '.git')]);
    mkdirSync(join(root, 'd19', 'e19', 'deeper', '.git'), { recursive: true });
    writeFileSync(join(root, 'd0', 'e0', '.git'), 'gitdir: /elsewhere\n');
    later();
    expect(nestedRepos(root)).toEqual([join(root, 'd0', 'e0', '.git'), join(root, 'd19', 'e19', 'deeper', '.git'), join(root, 'd3', 'e4', '.git')].sort());
    rmSync(join(root, 'd3', 'e4', '.git'), { recursive: true });
    later();
    expect(nestedRepos(root)).toEqual([join(root, 'd0', 'e0', '.git'), join(root, 'd19', 'e19', 'deeper', '.git')].sort());
  });

  test('setting a directory’s times back after planting a .git does not hide it (the change time moves anyway)', () => {
    const root = walkTree();
    const dir = join(root, 'd7', 'e7');
    const saved = join(root, 'times');
    writeFileSync(saved, '');
    execFileSync('touch', ['-r', dir, saved]); // the directory's times, to the nanosecond
    const before = lstatSync(dir, { bigint: true });
    nestedRepos(root);
    later();
    mkdirSync(join(dir, '.git'));
    execFileSync('touch', ['-r', saved, dir]); // what a command in the sandbox can do to hide the change
    expect(lstatSync(dir, { bigint: true }).mtimeNs).toBe(before.mtimeNs);
    expect(nestedRepos(root)).toContain(join(dir, '.git'));
  });

  test('a tree with a repository renamed in is walked; a directory swapped for a link is not followed', () => {
    const root = walkTree();
    const outside = makeWorkspace('walk-cache-outside-');
    mkdirSync(join(outside, 'moved', 'x', '.git'), { recursive: true });
    mkdirSync(join(outside, 'target', '.git'), { recursive: true });
    nestedRepos(root);
    later();
    renameSync(join(outside, 'moved'), join(root, 'd1', 'e1', 'moved'));
    rmSync(join(root, 'd2', 'e2'), { recursive: true });
    symlinkSync(join(outside, 'target'), join(root, 'd2', 'e2'));
    expect(nestedRepos(root)).toEqual([join(root, 'd1', 'e1', 'moved', 'x', '.git'), join(root, 'd3', 'e4', '.git')]);
  });

  test('a repository planted in a directory changed just before the walk is found (not trusted yet)', () => {
    vi.useRealTimers();
    const root = makeWorkspace('walk-cache-fresh-');
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    expect(nestedRepos(root)).toEqual([]);
    mkdirSync(join(root, 'a', 'b', '.git'));
    expect(nestedRepos(root)).toEqual([join(root, 'a', 'b', '.git')]);
  });
});

describe('the walk without blocking the event loop (scanProtectedPaths)', () => {
  test('finds the same paths in the same order as the synchronous walk, cold and warm, and sees changes', async () => {
    const root = walkTree();
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

describe('the walk’s bound (limits.gitWalkDirectories): past it, nothing is vouched for', () => {
  // walkTree(): the root, 20 directories, 400 below them (421; d3/e4/.git is not entered).
  const before = (bound: number) =>
    `sandbox: nothing was run: the workspace holds more than ${bound} directories (node_modules not counted), more than the sandbox searches for .git metadata to keep read-only; remove the directories that are not needed (with sandbox_permissions "require_escalated"), or ask the user to raise the sandbox limit gitWalkDirectories`;

  test('a tree of exactly the bound is walked whole; one directory more is a LIMIT_EXCEEDED refusal, synchronous or not', async () => {
    const root = walkTree();
    // node_modules is not counted: 50 directories there change nothing
    for (let index = 0; index < 50; index++) mkdirSync(join(root, 'd5', 'node_modules', `p${index}`), { recursive: true });
    const whole = await scanProtectedPaths({ root, limits: { gitWalkDirectories: 421 } });
    expect(whole.map((entry) => entry.path)).toEqual([join(root, '.git'), join(root, 'd3', 'e4', '.git')]);
    const refused = await scanProtectedPaths({ root, limits: { gitWalkDirectories: 420 } }).then(
      () => undefined,
      (error: unknown) => error as Error & { code: string },
    );
    expect([refused?.name, refused?.code, refused?.message]).toEqual(['RespondToModelError', 'LIMIT_EXCEEDED', before(420)]);
    expect(() => protectedPaths({ root, limits: { gitWalkDirectories: 420 } })).toThrow(before(420));
    // the default bound walks it whole
    expect(await scanProtectedPaths({ root })).toEqual(whole);
  });

  test('after a command: what the bounded walk found is renamed, then the check fails closed naming what it renamed', async () => {
    const root = walkTree();
    const policy = { root, limits: { gitWalkDirectories: 425 } };
    const known = await scanProtectedPaths(policy);
    // a repository early in the walk (breadth first: d0/e0 comes right after the top level), then 10 directories more
    mkdirSync(join(root, 'd0', 'e0', 'planted', '.git'), { recursive: true });
    for (let index = 0; index < 10; index++) mkdirSync(join(root, 'd19', 'e19', `x${index}`));
    const failure = await quarantineNewGitMetadata(policy, known).then(
      () => undefined,
      (error: unknown) => error as Error & { code: string },
    );
    expect(failure?.code).toBe('LIMIT_EXCEEDED');
    expect(failure?.message).toMatch(
      /^sandbox: the command failed closed: the workspace now holds more than 425 directories \(node_modules not counted\), so the search for \.git metadata the command may have created \(whose hooks and config the host's git would run\) could not finish; its output is withheld and it was stopped if still running\. Do not run git there; remove the directories that are not needed \(with sandbox_permissions "require_escalated"\), or ask the user to raise the sandbox limit gitWalkDirectories\nsandbox: new git metadata d0\/e0\/planted\/\.git was renamed to d0\/e0\/planted\/\.git\.untrusted-[0-9a-f]{6}: /,
    );
    expect(existsSync(join(root, 'd0', 'e0', 'planted', '.git'))).toBe(false);
  });

  test.each([0, -1, 2.5, Number.NaN, '1000'])('limits.gitWalkDirectories %s is a CONFIG error naming the option', async (value) => {
    const root = makeWorkspace('walk-bound-');
    const policy = { root, limits: { gitWalkDirectories: value as number } };
    const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
    const message = `sandbox policy: option \`limits.gitWalkDirectories\` must be an integer ≥ 1; got ${shown}`;
    const error = await scanProtectedPaths(policy).then(
      () => undefined,
      (thrown: unknown) => thrown as Error & { code: string },
    );
    expect([error?.code, error?.message]).toEqual(['CONFIG', message]);
    expect(() => protectedPaths(policy)).toThrow(message);
  });
});
