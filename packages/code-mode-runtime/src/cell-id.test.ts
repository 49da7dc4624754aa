import { expect, it } from 'vitest';
import { CELL_ID_ALPHABET, createCellIdGenerator } from './cell-id';

it('makes 16-character ids from the reference alphabet, unique within and across runtimes', () => {
  expect(CELL_ID_ALPHABET).toBe('0123456789abcdefghjkmnpqrstvwxyz');
  const first = createCellIdGenerator();
  const second = createCellIdGenerator();
  const ids = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    for (const id of [first(), second()]) {
      expect(id).toMatch(/^[0123456789abcdefghjkmnpqrstvwxyz]{16}$/);
      ids.add(id);
    }
  }
  expect(ids.size).toBe(4000);
});
