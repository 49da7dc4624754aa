import { describe, expect, it } from 'vitest';
import { contentHash } from './content-hash';
import { HelperTurns } from './helper-turn';
import { INLINE_CONTENT_BYTES } from './limits';
import { gitFileDiff } from './unified-diff';
import type { FileState } from './verify-patch';

const state = (before: string | null, after: string | null, path = '/w/f.txt'): FileState => ({ path, displayPath: 'f.txt', before, after });

describe('HelperTurns: the turn baselines a helper keeps', () => {
  it('first touch answers the patch diff and its baseline; later patches the diff from that baseline, without one; nothing is kept until the commit', () => {
    const turns = new HelperTurns();
    const first = turns.answer('t1', [state('a\nb\n', 'a\nB\n')]);
    expect(first.diffs).toEqual([{ path: '/w/f.txt', displayPath: 'f.txt', diff: gitFileDiff('f.txt', 'a\nb\n', 'a\nB\n'), sequence: false, changed: true, baseline: { text: 'a\nb\n' } }]);
    // Not committed (refused, aborted): the next patch is still a first touch.
    expect(turns.answer('t1', [state('a\nb\n', 'a\nC\n')]).diffs[0].baseline).toEqual({ text: 'a\nb\n' });
    first.commit();
    const second = turns.answer('t1', [state('a\nB\n', 'A\nB\n')]);
    expect(second.diffs).toEqual([{ path: '/w/f.txt', displayPath: 'f.txt', diff: gitFileDiff('f.txt', 'a\nb\n', 'A\nB\n'), sequence: false, changed: true }]);
    second.commit();
    // Back to the baseline: unchanged, nothing to show.
    expect(turns.answer('t1', [state('A\nB\n', 'a\nb\n')]).diffs[0]).toMatchObject({ diff: '', changed: false });
  });

  it('a seeded turn diffs against the seed; a large file is kept as its hash and answered in sequence', () => {
    const turns = new HelperTurns();
    turns.seed('t2', new Map([['/w/f.txt', { text: 'x\n' }]]));
    expect(turns.answer('t2', [state('y\n', 'z\n')]).diffs[0]).toMatchObject({ diff: gitFileDiff('f.txt', 'x\n', 'z\n'), sequence: false });
    const big = Array.from({ length: Math.ceil(INLINE_CONTENT_BYTES / 1000) + 1 }, (_, line) => `${line} ${'x'.repeat(1000)}\n`).join('');
    const large = turns.answer('t2', [state(big, `${big}m\n`, '/w/big.txt')]);
    expect(large.diffs[0]).toMatchObject({ sequence: true, changed: true, baseline: { hash: contentHash(big) } });
    large.commit();
    expect(turns.answer('t2', [state(`${big}m\n`, big, '/w/big.txt')]).diffs[0]).toMatchObject({ sequence: true, changed: false });
  });

  it('keeps the 4 most recently used turns: a turn in use is never dropped, the oldest is', () => {
    const turns = new HelperTurns();
    const touch = (token: string) => turns.answer(token, [state('a\n', 'b\n')]).commit();
    touch('active');
    touch('old');
    for (const token of ['t1', 't2', 't3']) {
      touch(token);
      touch('active');
    }
    expect(turns.answer('active', [state('b\n', 'c\n')]).diffs[0].baseline).toBeUndefined();
    expect(turns.answer('old', [state('b\n', 'c\n')]).diffs[0].baseline).toEqual({ text: 'b\n' });
  });
});
