import { describe, expect, it } from 'vitest';
import { parseExecSource } from './pragma';

const err = (input: string) => {
  try {
    parseExecSource(input);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a pragma error');
};

describe('parseExecSource', () => {
  it('returns the whole input as code when there is no pragma', () => {
    expect(parseExecSource('text(1)\ntext(2)')).toEqual({ code: 'text(1)\ntext(2)' });
    expect(parseExecSource('// a comment\ntext(1)')).toEqual({ code: '// a comment\ntext(1)' });
  });

  it('parses the pragma fields and strips the pragma line', () => {
    expect(parseExecSource('  // @exec: {"yield_time_ms": 100, "max_output_tokens": 20}\ntext(1)')).toEqual({ code: 'text(1)', yieldTimeMs: 100, maxOutputTokens: 20 });
    expect(parseExecSource('// @exec: {"yield_time_ms": null}\nx')).toEqual({ code: 'x' });
  });

  it('answers every malformed input with the reference text', () => {
    expect(err('   \n ')).toBe(
      'exec expects raw JavaScript source text (non-empty). Provide JS only, optionally with first-line `// @exec: {"yield_time_ms": 10000, "max_output_tokens": 1000}`.',
    );
    expect(err('// @exec: {"yield_time_ms": 1}')).toBe('exec pragma must be followed by JavaScript source on subsequent lines');
    expect(err('// @exec: {"yield_time_ms": 1}\n   ')).toBe('exec pragma must be followed by JavaScript source on subsequent lines');
    expect(err('// @exec:   \ncode')).toBe('exec pragma must be a JSON object with supported fields `yield_time_ms` and `max_output_tokens`');
    expect(err('// @exec: [1]\ncode')).toBe('exec pragma must be a JSON object with supported fields `yield_time_ms` and `max_output_tokens`');
    expect(err('// @exec: "max_output_tokens": 10\ncode')).toBe('exec pragma must be valid JSON with supported fields `yield_time_ms` and `max_output_tokens`: trailing characters at line 1 column 20');
    expect(err('// @exec: {yield\ncode')).toBe('exec pragma must be valid JSON with supported fields `yield_time_ms` and `max_output_tokens`: key must be a string at line 1 column 2');
    expect(err('// @exec: {"timeout": 1}\ncode')).toBe('exec pragma only supports `yield_time_ms` and `max_output_tokens`; got `timeout`');
    for (const bad of ['-1', '1.5', '"10"']) {
      expect(err(`// @exec: {"yield_time_ms": ${bad}}\ncode`)).toMatch(/^exec pragma fields `yield_time_ms` and `max_output_tokens` must be non-negative safe integers: /);
    }
    expect(err('// @exec: {"max_output_tokens": 9007199254740993}\ncode')).toBe('exec pragma field `max_output_tokens` must be a non-negative safe integer');
  });
});
