import { describe, expect, it } from 'vitest';
import { compileMatcher } from './matcher';

function matches(matcher: string | undefined, ...names: string[]): boolean {
  const compiled = compileMatcher(matcher);
  if ('error' in compiled) throw new Error(compiled.error);
  return compiled.matcher(names);
}

describe('compileMatcher', () => {
  it.each([
    [undefined, 'Bash', true],
    ['', 'anything', true],
    ['*', 'Edit', true],
    ['Bash', 'Bash', true],
    ['Bash', 'BashOutput', false],
    ['Edit|Write', 'Write', true],
    ['Edit|Write', 'Bash', false],
    ['mcp__memory', 'mcp__memory__create_entities', false],
    ['mcp__memory__create_entities', 'mcp__memory__create_entities', true],
    ['^Bash', 'BashOutput', true],
    ['^Bash$', 'BashOutput', false],
    ['mcp__.*__write.*', 'mcp__filesystem__write_file', true],
    ['mcp__.*__write.*', 'mcp__filesystem__read_file', false],
    ['Out', 'BashOutput', false],
    ['Out.*', 'BashOutput', true],
  ])('%j against %s → %s', (matcher, name, expected) => {
    expect(matches(matcher, name)).toBe(expected);
  });

  it('matches when any of the names (canonical name, then aliases) matches', () => {
    expect(matches('Write', 'apply_patch', 'Write', 'Edit')).toBe(true);
    expect(matches('^Ed', 'apply_patch', 'Write', 'Edit')).toBe(true);
    expect(matches('Bash', 'apply_patch', 'Write', 'Edit')).toBe(false);
  });

  it('reports an invalid regex instead of throwing', () => {
    const compiled = compileMatcher('[');
    expect('error' in compiled && compiled.error).toMatch(/Invalid regular expression/);
  });
});
