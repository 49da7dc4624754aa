import { describe, expect, it } from 'vitest';
import { normalizePunctuation, seekSequence } from './seek-sequence';

describe('seekSequence', () => {
  it('finds an exact match from the start position', () => {
    expect(seekSequence(['foo', 'bar', 'baz', 'bar', 'baz'], ['bar', 'baz'], 0, false)).toBe(1);
    expect(seekSequence(['foo', 'bar', 'baz', 'bar', 'baz'], ['bar', 'baz'], 2, false)).toBe(3);
  });

  it('ignores trailing whitespace in the second pass', () => {
    expect(seekSequence(['foo   ', 'bar\t\t'], ['foo', 'bar'], 0, false)).toBe(0);
  });

  it('ignores leading and trailing whitespace in the third pass', () => {
    expect(seekSequence(['    foo   ', '   bar\t'], ['foo', 'bar'], 0, false)).toBe(0);
  });

  it('normalizes Unicode dashes, quotes and spaces in the last pass', () => {
    expect(seekSequence(['x = a \u2013 b', 'say(\u201Chi\u201D, \u2018x\u2019)', 'a\u00A0b'], ['x = a - b', 'say("hi", \'x\')', 'a b'], 0, false)).toBe(0);
    expect(normalizePunctuation('  \u2014\u2212\u201E\u201B\u3000x ')).toBe('--"\' x');
  });

  it('prefers an earlier pass over an earlier position', () => {
    expect(seekSequence(['foo  ', 'foo'], ['foo'], 0, false)).toBe(1);
  });

  it('matches an empty pattern at start and never a pattern longer than the file', () => {
    expect(seekSequence(['a'], [], 5, false)).toBe(5);
    expect(seekSequence(['just one line'], ['too', 'many', 'lines'], 0, false)).toBe(-1);
  });

  it('with end of file only tries the last position', () => {
    expect(seekSequence(['a', 'b', 'a', 'c'], ['a'], 0, true)).toBe(-1);
    expect(seekSequence(['a', 'b', 'a'], ['a'], 0, true)).toBe(2);
  });
});
