import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatFunction, judge, MAX_FUNCTION_LINES, measurePackages, measureSource } from './function-length.ts';

const body = (lines: number) => Array.from({ length: lines - 2 }, (_, index) => `  const v${index} = ${index};`).join('\n');

describe('measureSource', () => {
  it('measures declarations, closures, arrows and object-literal methods, each with its name path', () => {
    const text = [
      'export function outer(options: { a: number }) {', // 1
      '  const inner = (x: number) => {', // 2
      '    return x;', // 3
      '  };', // 4
      '  const tool = {', // 5
      '    async handle() {', // 6
      '      return 1;', // 7
      '    },', // 8
      '    name: function () { return 2; },', // 9
      '  };', // 10
      '  return [inner, tool];', // 11
      '}', // 12
      'class Runner { run() {', // 13
      '  return 3;', // 14
      '} }', // 15
    ].join('\n');
    const found = measureSource('a.ts', text).map(({ name, line, lines }) => ({ name, line, lines }));
    expect(found).toEqual([
      { name: 'outer', line: 1, lines: 12 },
      { name: 'outer > inner', line: 2, lines: 3 },
      { name: 'outer > tool.handle', line: 6, lines: 3 },
      { name: 'outer > tool.name', line: 9, lines: 1 },
      { name: 'Runner.run', line: 13, lines: 3 },
    ]);
  });

  it('reads a `// long-function: <why>` comment above the function, its statement or its property', () => {
    const text = [
      '// long-function: one state machine reads better whole',
      `export function a() {\n${body(90)}\n}`,
      '/** Doc. */',
      '// long-function: a table of cases',
      `const b = () => {\n${body(90)}\n};`,
      'const o = {',
      '  // long-function: the protocol handshake in order',
      `  c: async () => {\n${body(90)}\n  },`,
      '};',
      '// long-function:',
      `function d() {\n${body(90)}\n}`,
      '// a plain comment',
      `function e() {\n${body(90)}\n}`,
    ].join('\n');
    const found = Object.fromEntries(measureSource('b.ts', text).map((fn) => [fn.name, fn.justification]));
    expect(found).toEqual({
      a: 'one state machine reads better whole',
      b: 'a table of cases',
      'o.c': 'the protocol handshake in order',
      d: undefined, // a marker without a reason justifies nothing
      e: undefined,
    });
  });

  it('judges: over the limit unjustified fails, justified passes, a justification on a short function is stale', () => {
    const text = [
      `function long() {\n${body(MAX_FUNCTION_LINES + 1)}\n}`,
      `function limit() {\n${body(MAX_FUNCTION_LINES)}\n}`,
      `// long-function: reason\nfunction kept() {\n${body(MAX_FUNCTION_LINES + 5)}\n}`,
      `// long-function: reason\nfunction short() {\n${body(10)}\n}`,
    ].join('\n');
    const verdict = judge(measureSource('c.ts', text));
    expect(verdict.unjustified.map((fn) => [fn.name, fn.lines])).toEqual([['long', MAX_FUNCTION_LINES + 1]]);
    expect(verdict.justified.map((fn) => fn.name)).toEqual(['kept']);
    expect(verdict.stale.map((fn) => fn.name)).toEqual(['short']);
  });
});

describe('packages/*/src', () => {
  it(`has no function over ${MAX_FUNCTION_LINES} lines without a "// long-function: <why>" comment, and no stale one`, () => {
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const functions = measurePackages(root);
    expect(functions.length).toBeGreaterThan(500); // the scan found the sources
    expect(functions.some((fn) => fn.file.endsWith('.test.ts'))).toBe(false);
    const verdict = judge(functions);
    expect(verdict.unjustified.map(formatFunction)).toEqual([]);
    expect(verdict.stale.map(formatFunction)).toEqual([]);
  });
});
