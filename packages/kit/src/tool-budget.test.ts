import { describe, expect, it } from 'vitest';
import { createPriorityRanker, estimateTokens, selectWithinBudget } from './tool-budget';
import { toolName } from '@switchyard/protocol';

describe('estimateTokens', () => {
  it('costs words, numbers, punctuation and whitespace as o200k splits them', () => {
    expect(estimateTokens('')).toBe(0);
    // " world" joins its space; a lone space before punctuation too
    expect(estimateTokens('hello world')).toBe(2);
    expect(estimateTokens('hello, world')).toBe(3);
    // one token per 6 letters; a lower→upper change starts a new word
    expect(estimateTokens('internationalz')).toBe(3);
    expect(estimateTokens('getInvoice')).toBe(3);
    expect(estimateTokens('getinvoice')).toBe(2);
    // "_name" joins its punctuation; `":"` is one token before a word
    expect(estimateTokens('get_invoice')).toBe(3);
    expect(estimateTokens('get__invoice')).toBe(4);
    expect(estimateTokens('{"type":"object"}')).toBe(5);
    expect(estimateTokens('12345')).toBe(3);
    expect(estimateTokens('a\n\nb')).toBe(3);
    expect(estimateTokens('東京都')).toBe(3);
    expect(estimateTokens('мир')).toBe(1);
  });

  it('is additive up to the seams and never negative', () => {
    const text = 'Fetch one invoice of a customer by its number.';
    expect(Math.abs(estimateTokens(text + text) - 2 * estimateTokens(text))).toBeLessThanOrEqual(2);
    expect(estimateTokens('\u{1F642}'.repeat(10))).toBeGreaterThan(0);
  });
});

describe('createPriorityRanker', () => {
  it('ranks a tool by the first hint naming it: display name, code-mode name, bare name or namespace', () => {
    const rank = createPriorityRanker(['mail', 'clock__curr_time', 'lookup', 'mcp__docs__search', 'mail']);
    expect(rank(toolName('send', 'mail'))).toBe(0);
    expect(rank(toolName('curr_time', 'clock'))).toBe(1);
    expect(rank(toolName('lookup'))).toBe(2);
    expect(rank(toolName('search', 'mcp__docs__'))).toBe(3);
    expect(rank(toolName('other'))).toBe(Infinity);
    expect(createPriorityRanker(undefined)(toolName('x'))).toBe(Infinity);
  });
});

describe('selectWithinBudget', () => {
  it('keeps items while they fit, skips ones that do not, and pays a group once', () => {
    const items = [
      { cost: 5, group: 'a' },
      { cost: 50, group: 'b' },
      { cost: 5, group: 'a' },
      { cost: 3, group: 'c' },
    ];
    const kept = selectWithinBudget(items, 21, (item, opened) => ({ cost: item.cost + (opened.has(item.group) ? 0 : 4), opens: item.group }));
    expect(kept).toEqual([items[0], items[2], items[3]]);
    expect(selectWithinBudget(items, 20, (item, opened) => ({ cost: item.cost + (opened.has(item.group) ? 0 : 4), opens: item.group }))).toEqual([items[0], items[2]]);
    expect(selectWithinBudget(items, 0, (item) => ({ cost: item.cost }))).toEqual([]);
  });

  it('stops looking after 64 items in a row that do not fit', () => {
    const items = [...Array.from({ length: 64 }, () => 100), 1];
    expect(selectWithinBudget(items, 10, (cost) => ({ cost }))).toEqual([]);
    expect(selectWithinBudget(items.slice(1), 10, (cost) => ({ cost }))).toEqual([1]);
  });
});
