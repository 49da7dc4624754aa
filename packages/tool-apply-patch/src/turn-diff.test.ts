import { describe, expect, it } from 'vitest';
import { contentHash } from './content-hash';
import { createTurnDiffTracker } from './turn-diff';
import { gitFileDiff } from './unified-diff';
import type { FileState } from './verify-patch';

/** A file state as the helper sends it past INLINE_CONTENT_BYTES: hashes and the diff, no texts. */
function hashed(path: string, before: string | null, after: string | null): FileState {
  return { path: `/w/${path}`, displayPath: path, before: null, after: null, diff: gitFileDiff(path, before, after), hashes: { before: contentHash(before), after: contentHash(after) } };
}
const inline = (path: string, before: string | null, after: string | null): FileState => ({ path: `/w/${path}`, displayPath: path, before, after });

describe('turn diff of files whose texts were left out', () => {
  it('keeps each patch diff in order and the hashes; a file patched back to its baseline drops out', () => {
    const tracker = createTurnDiffTracker();
    tracker.record([hashed('big.txt', 'a\nb\n', 'a\nB\n')]);
    tracker.record([hashed('big.txt', 'a\nB\n', 'A\nB\n')]);
    expect(tracker.unifiedDiff()).toBe(gitFileDiff('big.txt', 'a\nb\n', 'a\nB\n') + gitFileDiff('big.txt', 'a\nB\n', 'A\nB\n'));
    expect(tracker.changedPaths()).toEqual(['big.txt']);
    tracker.record([hashed('big.txt', 'A\nB\n', 'a\nb\n')]);
    expect(tracker.unifiedDiff()).toBe('');
    expect(tracker.changedPaths()).toEqual([]);
  });

  it('a file first seen with its texts and later without: the inline diff so far, then the new patch', () => {
    const tracker = createTurnDiffTracker();
    tracker.record([inline('grow.txt', null, 'one\n')]);
    tracker.record([hashed('grow.txt', 'one\n', 'one\ntwo\n')]);
    tracker.record([inline('grow.txt', 'one\ntwo\n', 'one\ntwo\nthree\n')]);
    expect(tracker.unifiedDiff()).toBe(gitFileDiff('grow.txt', null, 'one\n') + gitFileDiff('grow.txt', 'one\n', 'one\ntwo\n') + gitFileDiff('grow.txt', 'one\ntwo\n', 'one\ntwo\nthree\n'));
  });

  it('diffs from helpers: two workspaces holding the same relative path both show; a file back to its baseline drops out; a seed carries the baselines', () => {
    const tracker = createTurnDiffTracker();
    const first = tracker.helperTurn('key', 1);
    expect(first.seed).toBeUndefined();
    tracker.recordDiffs([
      { path: '/b/x.txt', displayPath: 'x.txt', diff: gitFileDiff('x.txt', 'b\n', 'B\n'), sequence: false, changed: true, baseline: { text: Buffer.from('b\n') } },
      { path: '/a/x.txt', displayPath: 'x.txt', diff: gitFileDiff('x.txt', 'a\n', 'A\n'), sequence: false, changed: true, baseline: { text: Buffer.from('a\n') } },
    ]);
    expect(tracker.unifiedDiff()).toBe(gitFileDiff('x.txt', 'b\n', 'B\n') + gitFileDiff('x.txt', 'a\n', 'A\n'));
    // The same helper: the same token, nothing to seed. Another process: a new token with every baseline.
    expect(tracker.helperTurn('key', 1)).toEqual({ token: first.token });
    const moved = tracker.helperTurn('key', 2);
    expect(moved.token).not.toBe(first.token);
    expect([...(moved.seed ?? new Map())].map(([path, baseline]) => [path, 'text' in baseline ? String(baseline.text) : baseline.hash])).toEqual([
      ['/b/x.txt', 'b\n'],
      ['/a/x.txt', 'a\n'],
    ]);
    tracker.recordDiffs([{ path: '/b/x.txt', displayPath: 'x.txt', diff: '', sequence: false, changed: false }]);
    expect(tracker.unifiedDiff()).toBe(gitFileDiff('x.txt', 'a\n', 'A\n'));
    expect(tracker.changedPaths()).toEqual(['x.txt']);
  });
});
