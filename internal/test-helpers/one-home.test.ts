import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { helpersWithManyHomes, isTestFile, topLevelHelpers, trackedTestFiles } from './one-home';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('one home per test helper', () => {
  it('finds top-level function declarations and function-valued consts, not nested ones or values', () => {
    const source = [
      'export async function until() {}',
      'function say(text: string) { return text; }',
      'const outputOf = (item: unknown) => item;',
      'export const texts = async function () {};',
      'const wrapped = ((x: number) => x) as (x: number) => number;',
      'const limit = 5;',
      'class Harness { helper() {} }',
      "describe('x', () => { function nested() {} const inner = () => 1; });",
    ].join('\n');
    expect(topLevelHelpers(source)).toEqual(['until', 'say', 'outputOf', 'texts', 'wrapped']);
  });

  it('names a helper declared in two files, with both files', () => {
    const files = new Map([
      ['a.test.ts', 'function sleep() {}\nfunction only() {}'],
      ['b/test/helpers.ts', 'export const sleep = () => 0;'],
    ]);
    expect([...helpersWithManyHomes(files)]).toEqual([['sleep', ['a.test.ts', 'b/test/helpers.ts']]]);
  });

  it('counts test files, support files and testing entries; not sources, declarations or examples', () => {
    expect(['packages/kit/src/a.test.ts', 'packages/mcp/test/helpers.ts', 'packages/sandbox/src/test-support.ts', 'packages/session/src/testing/scripted-model.ts', 'tools/reliability/test/fixtures/bomb-host.ts', 'internal/test-helpers/poll.ts', 'internal/config/proc.ts'].every(isTestFile)).toBe(true);
    expect(['packages/kit/src/budget.ts', 'packages/kit/dist/a.test.d.ts', 'examples/weather/weather-plugin/src/plugin.test.ts', 'packages/mcp/test/fixtures/server.mjs'].some(isTestFile)).toBe(false);
  });

  it('no helper in the repository is declared in more than one test file', () => {
    const many = helpersWithManyHomes(trackedTestFiles(root));
    const listed = [...many].map(([name, paths]) => `${name}: ${paths.join(', ')}`);
    expect(listed).toEqual([]);
  });
});
