import { expect, it } from 'vitest';
import { CELL_ID_ALPHABET, CELL_ID_PATTERN } from '@switchyard/protocol';
import { createCellIdGenerator } from './cell-id';

it('makes 16-character ids from the reference alphabet, unique within and across generators', () => {
  expect(CELL_ID_ALPHABET).toBe('0123456789abcdefghjkmnpqrstvwxyz');
  const first = createCellIdGenerator();
  const second = createCellIdGenerator();
  const ids = new Set<string>();
  const counts = new Map<string, number>();
  for (let i = 0; i < 2000; i++) {
    for (const id of [first(), second()]) {
      expect(id).toMatch(/^[0123456789abcdefghjkmnpqrstvwxyz]{16}$/);
      expect(id).toMatch(CELL_ID_PATTERN);
      ids.add(id);
      for (const char of id) counts.set(char, (counts.get(char) ?? 0) + 1);
    }
  }
  expect(ids.size).toBe(4000);
  // every character of the alphabet is used (64,000 characters, ~2,000 each): the bits are not stuck
  expect(counts.size).toBe(32);
  for (const count of counts.values()) expect(count).toBeGreaterThan(1000);
});

it('host-chosen ids: 1-64 characters of [0-9A-Za-z_-]', () => {
  for (const ok of ['a', 'cell-1', 'A_b-9', 'x'.repeat(64)]) expect(ok).toMatch(CELL_ID_PATTERN);
  for (const bad of ['', 'x'.repeat(65), 'a b', 'a\nb', 'é', 'a/b']) expect(bad).not.toMatch(CELL_ID_PATTERN);
});
