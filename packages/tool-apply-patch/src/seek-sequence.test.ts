import { describe, expect, it } from 'vitest';
import { LineMatcher, normalizePunctuation, seekSequence } from './seek-sequence';

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

  it('answers what a position-by-position scan of the four passes answers, over many generated files (in-place scan, indexed search, one matcher searched many times)', () => {
    const passes = [(line: string) => line, (line: string) => line.trimEnd(), (line: string) => line.trim(), normalizePunctuation];
    const naive = (lines: string[], pattern: string[], start: number, endOfFile: boolean) => {
      if (pattern.length === 0) return start;
      if (pattern.length > lines.length) return -1;
      const last = lines.length - pattern.length;
      const from = endOfFile ? last : Math.max(0, start);
      for (const normalize of passes) {
        for (let at = from; at <= last; at++) if (pattern.every((line, offset) => normalize(lines[at + offset]) === normalize(line))) return at;
      }
      return -1;
    };
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const alphabet = ['a', 'b', 'a ', ' b', 'c\u2013', 'c-'];
    // Near-misses that exhaust the in-place scan's budget: the indexed search answers the same.
    const near = [...Array.from({ length: 40 }, () => 'a'), 'a', 'b'];
    expect(seekSequence(near, ['a', 'a', 'a', 'b'], 0, false)).toBe(38);
    expect(seekSequence(near, ['a', 'a', 'a', 'c'], 0, false)).toBe(-1);
    expect(seekSequence(near, ['a', 'a', 'a', 'b '], 5, false)).toBe(38);
    for (let round = 0; round < 2000; round++) {
      const lines = Array.from({ length: 1 + random(30) }, () => alphabet[random(alphabet.length)]);
      const matcher = new LineMatcher(lines);
      for (let search = 0; search < 3; search++) {
        const pattern = Array.from({ length: random(5) }, () => alphabet[random(alphabet.length)]);
        const start = random(lines.length + 1);
        const endOfFile = random(4) === 0;
        expect(matcher.seek(pattern, start, endOfFile)).toBe(naive(lines, pattern, start, endOfFile));
        expect(seekSequence(lines, pattern, start, endOfFile)).toBe(naive(lines, pattern, start, endOfFile));
      }
    }
  });
});
