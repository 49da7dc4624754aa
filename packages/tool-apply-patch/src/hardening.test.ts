import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPatch as applyJsdiff, parsePatch as parseJsdiff } from 'diff';
import { ApplyPatchError } from './apply-patch-error';
import { boundedStructuredPatch } from './bounded-diff';
import { createTurnDiffTracker } from './turn-diff';
import { applyPatch, verifyPatch, type VerifyPatchOptions } from './verify-patch';
import { formatPatch } from 'diff';
import { patchFailure, workspaceFolders, wrap } from './test-support';

let base: string;
let root: string;
let outside: string;

beforeEach(async () => ({ base, root, outside } = await workspaceFolders('apply-patch-hardening-')));
afterEach(() => rm(base, { recursive: true, force: true }));

/** Every entry below `folder`, recursively (names only). */
async function filesUnder(folder: string): Promise<string[]> {
  return (await readdir(folder, { recursive: true })).map(String).sort();
}

describe('git metadata and protected names are refused at any depth', () => {
  beforeEach(async () => {
    await mkdir(join(root, '.git', 'hooks'), { recursive: true });
    await writeFile(join(root, '.git', 'config'), '[core]\n');
    await mkdir(join(root, 'sub', '.git'), { recursive: true });
    await mkdir(join(root, 'wt'), { recursive: true });
    await writeFile(join(root, 'wt', '.git'), 'gitdir: ../.git/worktrees/wt\n');
  });

  const cases: Array<[string, string[]]> = [
    ['.git/config', ['*** Add File: .git/config', '+[core]', '+\tfsmonitor = touch /tmp/pwned']],
    ['.git/hooks/pre-commit', ['*** Add File: .git/hooks/pre-commit', '+#!/bin/sh']],
    ['sub/.git/config', ['*** Add File: sub/.git/config', '+x']],
    ['deep/er/.git/HEAD', ['*** Add File: deep/er/.git/HEAD', '+x']],
    ['.GIT/config', ['*** Add File: .GIT/config', '+x']],
    ['wt/.git', ['*** Update File: wt/.git', '-gitdir: ../.git/worktrees/wt', '+gitdir: /elsewhere']],
    ['.git/config', ['*** Delete File: .git/config']],
  ];
  for (const [path, lines] of cases) {
    it(`${lines[0]} → PROTECTED_PATH naming ${path}`, async () => {
      const before = await filesUnder(root);
      const error = await patchFailure(root, wrap(...lines));
      expect(error.code).toBe('PROTECTED_PATH');
      expect(error.message).toBe(`path '${path}' is inside ${path.includes('.GIT') ? '.GIT' : '.git'}, which apply_patch does not change`);
      expect(await filesUnder(root)).toEqual(before);
      expect(await readFile(join(root, '.git', 'config'), 'utf8')).toBe('[core]\n');
    });
  }

  it('a move into .git, and a link leading into .git, are refused too; absolute spellings as well', async () => {
    await writeFile(join(root, 'a.txt'), 'a\n');
    expect((await patchFailure(root, wrap('*** Update File: a.txt', '*** Move to: .git/info/a.txt', '-a', '+b'))).message).toBe(
      "path '.git/info/a.txt' is inside .git, which apply_patch does not change",
    );
    await symlink(join(root, '.git'), join(root, 'meta'));
    await symlink('.git/config', join(root, 'cfg'));
    expect((await patchFailure(root, wrap('*** Add File: meta/config', '+x'))).message).toBe("path 'meta/config' leads into .git, which apply_patch does not change");
    expect((await patchFailure(root, wrap('*** Update File: cfg', '-[core]', '+[evil]'))).message).toBe("path 'cfg' leads into .git, which apply_patch does not change");
    expect((await patchFailure(root, wrap(`*** Add File: ${join(root, 'sub', '.git', 'x')}`, '+x'))).code).toBe('PROTECTED_PATH');
    expect(await readFile(join(root, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('a\n');
  });

  it('other names can be protected; a name that only contains .git is fine', async () => {
    expect((await patchFailure(root, wrap('*** Add File: .hg/hgrc', '+x'), { protectedNames: ['.git', '.hg'] })).code).toBe('PROTECTED_PATH');
    await applyPatch(wrap('*** Add File: my.git/notes.txt', '+ok', '*** Add File: .gitignore', '+dist'), { root });
    expect(await readFile(join(root, '.gitignore'), 'utf8')).toBe('dist\n');
  });
});

describe('bounded work', () => {
  it('a file over the size cap is refused with its size, never read in parts', async () => {
    await writeFile(join(root, 'big.txt'), Buffer.alloc(2048, 10));
    const error = await patchFailure(root, wrap('*** Update File: big.txt', '@@', '-', '+x'), { limits: { maxFileBytes: 1024 } });
    expect(error.code).toBe('LIMIT_EXCEEDED');
    expect(error.message).toBe('big.txt is 2 KiB; apply_patch edits files of at most 1 KiB');
    expect((await patchFailure(root, wrap('*** Add File: new.txt', `+${'y'.repeat(2000)}`), { limits: { maxFileBytes: 1024 } })).message).toBe(
      'new.txt would be 2 KiB; apply_patch writes files of at most 1 KiB',
    );
  });

  it('line, patch and total caps', async () => {
    await writeFile(join(root, 'lines.txt'), 'a\n'.repeat(50));
    expect((await patchFailure(root, wrap('*** Update File: lines.txt', '-a', '+b'), { limits: { maxFileLines: 40 } })).message).toBe(
      'lines.txt has more than 40 lines; apply_patch edits files of at most 40 lines',
    );
    expect((await patchFailure(root, wrap('*** Add File: p.txt', `+${'z'.repeat(3000)}`), { limits: { maxPatchBytes: 2048 } })).message).toMatch(
      /^the patch is 3 KiB; apply_patch accepts patches of at most 2 KiB$/,
    );
    const many = Array.from({ length: 4 }, (_, index) => [`*** Add File: t${index}.txt`, `+${'q'.repeat(400)}`]).flat();
    expect((await patchFailure(root, wrap(...many), { limits: { maxTotalBytes: 1000 } })).message).toBe(
      'the patch reads and writes more than 1000 bytes in total; split it into smaller patches',
    );
    expect(await filesUnder(root)).toEqual(['lines.txt']);
  });

  it('a 30,000-line near-miss against a 60,000-line file answers "could not find" quickly', async () => {
    // Every pattern line occurs in the file, and the pattern matches at half the positions for
    // 29,999 lines before its last line breaks the alternation.
    const file = Array.from({ length: 60_000 }, (_, index) => `line ${index % 2}`);
    await writeFile(join(root, 'near.txt'), `${file.join('\n')}\n`);
    const pattern = [...file.slice(0, 29_999).map((line) => ` ${line}`), ' line 0'];
    const started = performance.now();
    const error = await patchFailure(root, wrap('*** Update File: near.txt', '@@', ...pattern, '+added'));
    const elapsed = performance.now() - started;
    expect(error.code).toBe('VERIFICATION_FAILED');
    expect(error.message.startsWith(`Failed to find expected lines in ${root}/near.txt:\nline 0\nline 1\n`)).toBe(true);
    // A scan position by position makes ~4.5e8 line comparisons per pass here, four passes; the
    // index and Knuth–Morris–Pratt take a linear pass each.
    expect(elapsed).toBeLessThan(5_000);
  });

  it('a 10,000-line rewrite then a second patch: the turn diff is bounded and computed once per change', async () => {
    const old = Array.from({ length: 10_000 }, (_, index) => `old line ${index}`).join('\n') + '\n';
    const fresh = Array.from({ length: 10_000 }, (_, index) => `new line ${index * 7}`);
    await writeFile(join(root, 'rewrite.txt'), old);
    await writeFile(join(root, 'other.txt'), 'one\n');
    const tracker = createTurnDiffTracker();
    const started = performance.now();
    const first = await applyPatch(wrap('*** Delete File: rewrite.txt', '*** Add File: rewrite.txt', ...fresh.map((line) => `+${line}`)), { root });
    tracker.record(first.files);
    const firstDiff = tracker.unifiedDiff();
    const second = await applyPatch(wrap('*** Update File: other.txt', '-one', '+two'), { root });
    tracker.record(second.files);
    const secondDiff = tracker.unifiedDiff();
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(5_000);
    // The bounded diff is still exact: applying it to the old file gives the new one.
    const rewriteDiff = secondDiff.slice(0, secondDiff.indexOf('diff --git a/rewrite.txt'));
    expect(rewriteDiff.startsWith('diff --git a/other.txt b/other.txt\n')).toBe(true);
    const [parsed] = parseJsdiff(secondDiff.slice(secondDiff.indexOf('diff --git a/rewrite.txt')));
    expect(applyJsdiff(old, parsed)).toBe(`${fresh.join('\n')}\n`);
    expect(secondDiff.endsWith(firstDiff)).toBe(true);
  });
});

describe('boundedStructuredPatch falls back to an exact coarse diff', () => {
  it('past the budget the middle is removed and re-added; the result still applies', () => {
    const samples: Array<[string, string]> = [
      ['a\nb\nc\nd\ne\n', 'a\nb\nX\nY\ne\n'],
      ['', 'new\n'],
      ['gone\n', ''],
      ['a\nb', 'a\nc'],
      ['same\nend', 'same\nend\n'],
      ['x\n'.repeat(10), 'x\n'.repeat(9) + 'y\n'],
    ];
    for (const [before, after] of samples) {
      const coarse = boundedStructuredPatch('a', 'b', before, after, 3, { maxEditLength: 1, maxWork: 1, maxChars: 0 });
      expect(applyJsdiff(before, formatPatch(coarse))).toBe(after);
    }
    const coarse = boundedStructuredPatch('a', 'b', 'a\nb\nc\nd\ne\n', 'a\nb\nX\nY\ne\n', 1, { maxEditLength: 1, maxWork: 1, maxChars: 0 });
    expect(coarse.hunks).toEqual([{ oldStart: 2, oldLines: 4, newStart: 2, newLines: 4, lines: [' b', '-c', '-d', '+X', '+Y', ' e'] }]);
  });
});

describe('paths are walked without following links', () => {
  it('a link inside the root is followed by the walk itself: relative, absolute, chained, and .. within the root', async () => {
    await mkdir(join(root, 'real', 'deep'), { recursive: true });
    await writeFile(join(root, 'real', 'deep', 'f.txt'), 'f\n');
    await symlink('real/deep', join(root, 'rel'));
    await symlink(join(root, 'real'), join(root, 'abs'));
    await symlink('rel', join(root, 'chain'));
    await symlink('../real', join(root, 'real', 'up'));
    await applyPatch(wrap('*** Update File: chain/f.txt', '-f', '+g', '*** Add File: abs/deep/n.txt', '+n', '*** Add File: real/up/up/m.txt', '+m'), { root });
    expect(await readFile(join(root, 'real', 'deep', 'f.txt'), 'utf8')).toBe('g\n');
    expect(await readFile(join(root, 'real', 'deep', 'n.txt'), 'utf8')).toBe('n\n');
    expect(await readFile(join(root, 'real', 'm.txt'), 'utf8')).toBe('m\n');
    await symlink('../../..', join(root, 'real', 'deep', 'escape'));
    expect((await patchFailure(root, wrap('*** Add File: real/deep/escape/x.txt', '+x'))).message).toBe(
      "path 'real/deep/escape/x.txt' resolves outside the workspace root through a symbolic link",
    );
    await symlink('loop-b', join(root, 'loop-a'));
    await symlink('loop-a', join(root, 'loop-b'));
    expect((await patchFailure(root, wrap('*** Add File: loop-a/x.txt', '+x'))).message).toBe('Failed to resolve loop-a/x.txt: Too many levels of symbolic links');
  });
});
