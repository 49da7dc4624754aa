import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { becomes, until, useCleanups } from './index';

describe('until / becomes', () => {
  it('until resolves once the check holds, and rejects naming what it waited for', async () => {
    let n = 0;
    await until(() => ++n >= 3, 'three asks', 1_000, 1);
    expect(n).toBe(3);
    await expect(until(() => false, 'the impossible', 30, 5)).rejects.toThrow('timed out waiting for the impossible (30 ms)');
  });

  it('becomes answers whether the check came true in time', async () => {
    expect(await becomes(() => false, 30, 5)).toBe(false);
    let n = 0;
    expect(await becomes(() => ++n >= 2, 1_000, 1)).toBe(true);
  });
});

describe('useCleanups', () => {
  const { scratch, defer } = useCleanups();
  const seen: { dir?: string; order: string[] } = { order: [] };

  it('gives a fresh folder and registers cleanups', () => {
    seen.dir = scratch('switchyard-test-helpers');
    expect(existsSync(seen.dir)).toBe(true);
    expect(defer('first', (name) => seen.order.push(name))).toBe('first');
    defer('second', (name) => seen.order.push(name));
  });

  it('removed the folder and ran the cleanups last first after the previous test', () => {
    expect(existsSync(seen.dir!)).toBe(false);
    expect(seen.order).toEqual(['second', 'first']);
  });
});
