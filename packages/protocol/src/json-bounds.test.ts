import { describe, expect, it } from 'vitest';
import { DEFAULT_HOOK_INPUT_BOUNDS, jsonBoundsViolation } from './json-bounds';

const nestedJson = (depth: number): unknown => JSON.parse('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));

describe('jsonBoundsViolation', () => {
  it('accepts plain JSON within the bounds', () => {
    expect(jsonBoundsViolation({ cmd: 'ls', list: [1, 'two', null, true, { x: [] }] })).toBeUndefined();
    expect(jsonBoundsViolation('text')).toBeUndefined();
    expect(jsonBoundsViolation(nestedJson(DEFAULT_HOOK_INPUT_BOUNDS.maxDepth))).toBeUndefined();
    expect(jsonBoundsViolation(Object.create(null))).toBeUndefined();
  });

  it('refuses values nested past maxDepth, however deep, without recursion', () => {
    expect(jsonBoundsViolation(nestedJson(101))).toBe('it is nested deeper than 100 levels');
    // 200,000 levels: a recursive walk (or JSON.stringify) would overflow the stack here.
    const deep: unknown[] = [];
    let cursor = deep;
    for (let level = 0; level < 200_000; level++) cursor = (cursor[0] = []) as unknown[];
    expect(jsonBoundsViolation(deep)).toBe('it is nested deeper than 100 levels');
    expect(jsonBoundsViolation([[[1]]], { maxDepth: 2, maxChars: 100 })).toBe('it is nested deeper than 2 levels');
  });

  it('refuses cycles (by depth) and values larger than maxChars', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(jsonBoundsViolation(cycle)).toBe('it is nested deeper than 100 levels');
    expect(jsonBoundsViolation({ s: 'x'.repeat(1000) }, { maxDepth: 10, maxChars: 999 })).toBe('it is larger than 999 characters');
    // A shared subtree counts every time it is reached, as serialization would.
    const shared = ['y'.repeat(100)];
    expect(jsonBoundsViolation(Array.from({ length: 20 }, () => shared), { maxDepth: 10, maxChars: 1500 })).toBe('it is larger than 1500 characters');
  });

  it('names what is not plain JSON and where', () => {
    expect(jsonBoundsViolation({ a: [1, { f: () => 1 }] })).toBe('it holds a function at a[1].f');
    expect(jsonBoundsViolation({ n: 10n })).toBe('it holds a bigint at n');
    expect(jsonBoundsViolation([undefined])).toBe('it holds an undefined value at [0]');
    expect(jsonBoundsViolation({ n: Number.NaN })).toBe('it holds a non-finite number at n');
    expect(jsonBoundsViolation({ d: new Date(0) })).toBe('it holds a non-plain object at d');
    const hostile = new Proxy({}, { ownKeys: () => { throw new Error('no keys'); } });
    expect(jsonBoundsViolation(hostile)).toBe('it cannot be read as JSON (no keys)');
  });
});
