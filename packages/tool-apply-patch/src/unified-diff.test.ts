import { applyPatch as applyDiff } from 'diff';
import { describe, expect, it } from 'vitest';
import { applyChunksWithDiff } from './apply-chunks';
import type { UpdateChunk } from './parse-patch';
import { gitFileDiff, gitFileDiffOfReplacements, unifiedDiff } from './unified-diff';

/** A small deterministic generator (tests must not depend on Math.random). */
function random(seed: number) {
  let state = seed;
  return (max: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % max;
  };
}

describe('unifiedDiff', () => {
  it('prints hunks only, with one line of context by default', () => {
    expect(unifiedDiff('a\nb\nc\nd\ne\n', 'a\nb\nC\nd\ne\n')).toBe('@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n');
    expect(unifiedDiff('same\n', 'same\n')).toBe('');
  });

  it('marks a missing final newline', () => {
    expect(unifiedDiff('a\nb', 'a\nb\n')).toBe('@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n');
  });
});

describe('gitFileDiff', () => {
  it('writes git headers for changes, creations and deletions', () => {
    expect(gitFileDiff('dir/f.txt', 'x\n', 'y\n')).toBe('diff --git a/dir/f.txt b/dir/f.txt\n--- a/dir/f.txt\n+++ b/dir/f.txt\n@@ -1,1 +1,1 @@\n-x\n+y\n');
    expect(gitFileDiff('n.txt', null, 'new\n')).toBe('diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,1 @@\n+new\n');
    expect(gitFileDiff('d.txt', 'old\n', null)).toBe('diff --git a/d.txt b/d.txt\ndeleted file mode 100644\n--- a/d.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-old\n');
    expect(gitFileDiff('same.txt', 'x\n', 'x\n')).toBe('');
  });
});

describe('per-file diffs computed on the changed windows only', () => {
  it('equal the whole-file diff of the library, over many generated edits', () => {
    const next = random(7);
    for (let round = 0; round < 500; round++) {
      const count = 1 + next(60);
      const eol = round % 5 === 0 ? '\r\n' : '\n';
      const lines = Array.from({ length: count }, (_, index) => `line ${round}.${index}`);
      const before = lines.join(eol) + (round % 7 === 0 ? '' : eol);
      const chunks: UpdateChunk[] = [];
      for (let at = next(4); at < count; at += 1 + next(8)) {
        const length = Math.min(count - at, 1 + next(3));
        const context = lines.slice(at, at + length);
        const added = Array.from({ length: next(3) }, (_, index) => `new ${round}.${at}.${index}`);
        const keepFirst = next(2) === 0;
        chunks.push({
          oldLines: context,
          newLines: keepFirst ? [context[0], ...added] : added,
          isEndOfFile: false,
        });
        at += length;
      }
      const { content, unifiedDiff: windowed, edits } = applyChunksWithDiff(before, chunks, 'f.txt');
      expect(windowed, `round ${round}`).toBe(unifiedDiff(before, content));
      // The git diff of the file (3 lines of context, headers) on the windows equals the whole-file one.
      const path = round % 3 === 0 ? 'dir/with space.txt' : 'src/f.txt';
      expect(gitFileDiffOfReplacements(path, before, content, edits!.eol, edits!.replacements), `round ${round} (git)`).toBe(gitFileDiff(path, before, content));
    }
  });

  it('apply exactly when lines repeat (a small alphabet: removed, added and context lines collide)', () => {
    const next = random(11);
    for (let round = 0; round < 500; round++) {
      const count = 1 + next(30);
      const lines = Array.from({ length: count }, () => `w${next(4)}`);
      const before = `${lines.join('\n')}\n`;
      const chunks: UpdateChunk[] = [];
      for (let at = next(3); at < count; at += 2 + next(6)) {
        const length = Math.min(count - at, 1 + next(3));
        chunks.push({ oldLines: lines.slice(at, at + length), newLines: Array.from({ length: next(4) }, () => `w${next(5)}`), isEndOfFile: false });
        at += length;
      }
      const { content, unifiedDiff: windowed } = applyChunksWithDiff(before, chunks, 'f.txt');
      // Where repeated lines make the alignment ambiguous the windows may place a change elsewhere
      // than a whole-file diff would; either way the diff must turn `before` into `content`.
      expect(content === before ? windowed : applyDiff(before, windowed), `round ${round}`).toBe(content === before ? '' : content);
    }
  });

  it('cover the file ends: added final newline, folded final empty line, emptied file, CRLF', () => {
    const cases: Array<[string, UpdateChunk[]]> = [
      ['a\nb\nc\nd\ne\nf\ng', [{ oldLines: ['a'], newLines: ['A'], isEndOfFile: false }]],
      ['one\n\n', [{ oldLines: [], newLines: ['two'], isEndOfFile: false }]],
      ['x\ny\n', [{ oldLines: ['x', 'y'], newLines: [], isEndOfFile: false }]],
      ['a\r\nb\r\nc\r\n', [{ oldLines: ['b'], newLines: ['B', 'B2'], isEndOfFile: false }]],
      ['', [{ oldLines: [], newLines: ['first'], isEndOfFile: false }]],
    ];
    for (const [before, chunks] of cases) {
      const { content, unifiedDiff: windowed } = applyChunksWithDiff(before, chunks, 'f.txt');
      expect(windowed, JSON.stringify(before)).toBe(unifiedDiff(before, content));
    }
  });
});
