import { describe, expect, it } from 'vitest';
import { documentedNames, entryPoints, packageEntries, oversizedRoots, readSurface, readmeProblems, renderSurfaceTable, replaceSurfaceTable, surfaceDiff, MAX_ROOT_VALUES, README_END, README_START } from './export-surface';
import { fixtureTree } from '../test/fixture-tree';

const { root, write: file } = fixtureTree('export-surface');

file('tsconfig.base.json', JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler', strict: true, noEmit: true, lib: ['ES2022'], types: [], customConditions: ['@switchyard/source'] } }));
file(
  'packages/demo/package.json',
  JSON.stringify({
    name: '@switchyard/demo',
    exports: { './package.json': './package.json', '.': { '@switchyard/source': './src/index.ts', import: './dist/index.js' }, './testing': { '@switchyard/source': './src/testing.ts' } },
  }),
);
file('packages/demo/src/thing.ts', 'export class Thing {}\nexport interface ThingOptions { a?: number }\nexport type Kind = "a" | "b";\nexport const LIMIT = 3;\nexport function make(): Thing { return new Thing(); }\n');
file('packages/demo/src/index.ts', "export { make, Thing } from './thing';\nexport type { ThingOptions } from './thing';\nexport { type Kind, LIMIT } from './thing';\n");
file('packages/demo/src/testing.ts', "export type { Thing as TestThing } from './thing';\nexport * from './helpers';\n");
file('packages/demo/src/helpers.ts', 'export function fake(): void {}\nexport enum Mode { On }\n');
file('packages/hidden/package.json', JSON.stringify({ name: '@switchyard/hidden', private: true, exports: { '.': './src/index.ts' } }));

describe('readSurface', () => {
  it('lists each entry point of the exports map, values and types apart (a class re-exported as a type is a type)', () => {
    const entries = entryPoints(root);
    expect(entries.map((entry) => entry.specifier)).toEqual(['@switchyard/demo', '@switchyard/demo/testing']);
    expect(readSurface(root, entries)).toEqual({
      '@switchyard/demo': { values: ['LIMIT', 'Thing', 'make'], types: ['Kind', 'ThingOptions'] },
      '@switchyard/demo/testing': { values: ['Mode', 'fake'], types: ['TestThing'] },
    });
  });
});

describe('packageEntries', () => {
  it("reads each entry's specifier, source, require condition and whether it is vitest-only", () => {
    const json = {
      name: '@switchyard/x',
      peerDependencies: { vitest: '>=3.2.0' },
      exports: {
        './package.json': './package.json',
        '.': { '@switchyard/source': './src/index.ts', import: './dist/index.js', require: './dist/index.cjs' },
        './testing': { '@switchyard/source': './src/testing.ts', import: './dist/testing.js' },
        './protocol': { '@switchyard/source': './src/protocol.ts', import: './dist/protocol.js' },
      },
    };
    expect(packageEntries('/p/x', json)).toEqual([
      { specifier: '@switchyard/x', dir: '/p/x', source: '/p/x/src/index.ts', require: true, vitestOnly: false },
      { specifier: '@switchyard/x/testing', dir: '/p/x', source: '/p/x/src/testing.ts', require: false, vitestOnly: true },
      { specifier: '@switchyard/x/protocol', dir: '/p/x', source: '/p/x/src/protocol.ts', require: false, vitestOnly: false },
    ]);
    // Without a vitest peer a `./testing` entry is an ordinary one (it loads under plain node).
    expect(packageEntries('/p/x', { ...json, peerDependencies: {} })[1]!.vitestOnly).toBe(false);
    expect(() => packageEntries('/p/x', { name: '@switchyard/x', exports: { './a': './dist/a.js' } })).toThrow('@switchyard/x: exports["./a"] has no "@switchyard/source" condition');
  });
});

describe('surfaceDiff', () => {
  it('names every added and removed export and entry point', () => {
    const before = { '@switchyard/a': { values: ['x', 'gone'], types: ['T'] }, '@switchyard/a/old': { values: ['y'], types: [] } };
    const after = { '@switchyard/a': { values: ['x', 'fresh'], types: [] }, '@switchyard/a/testing': { values: [], types: ['U'] } };
    expect(surfaceDiff(before, after)).toEqual([
      '+ @switchyard/a: value fresh',
      '- @switchyard/a: value gone',
      '- @switchyard/a: type T',
      '- @switchyard/a/old (entry point removed)',
      '- @switchyard/a/old: value y',
      '+ @switchyard/a/testing (new entry point)',
      '+ @switchyard/a/testing: type U',
    ]);
    expect(surfaceDiff(after, after)).toEqual([]);
  });
});

describe('the root entry cap', () => {
  const values = (count: number) => Array.from({ length: count }, (_, i) => `v${i}`);
  it('names each package whose root exports more than 25 values, with the count', () => {
    expect(MAX_ROOT_VALUES).toBe(25);
    const surface = {
      '@switchyard/a': { values: values(26), types: [] },
      '@switchyard/b': { values: values(25), types: values(40) },
      '@switchyard/b/internal': { values: values(60), types: [] },
      '@switchyard/b/testing': { values: values(30), types: [] },
      '@switchyard/protocol': { values: values(50), types: [] },
    };
    expect(oversizedRoots(surface)).toEqual([
      "@switchyard/a: the root entry exports 26 values, more than 25: keep there what a host or tool author uses, and move what only Switchyard's own packages import to `@switchyard/a/internal` (or a subpath for its own audience)",
    ]);
  });
  it('passes every root at the cap or under it (types do not count; protocol, the shared vocabulary, is exempt)', () => {
    expect(oversizedRoots({ '@switchyard/a': { values: values(25), types: values(100) }, '@switchyard/protocol': { values: values(200), types: [] } })).toEqual([]);
  });
});

describe('the root README table', () => {
  const surface = { '@switchyard/a': { values: ['make'], types: [] } };
  it('leaves internal entry points out', () => {
    const table = renderSurfaceTable({ ...surface, '@switchyard/a/internal': { values: ['hidden'], types: [] } });
    expect(table).toContain('| `@switchyard/a` | `make` | — |');
    expect(table).not.toContain('internal');
  });
  it('replaces what lies between the markers, and says when there are none', () => {
    const readme = `# x\n\n${README_START}\nold\n${README_END}\n\nafter\n`;
    const replaced = replaceSurfaceTable(readme, surface)!;
    expect(replaced).toBe(`# x\n\n${renderSurfaceTable(surface)}\n\nafter\n`);
    expect(replaced).toContain('| `@switchyard/a` | `make` | — |');
    expect(replaceSurfaceTable('# no markers\n', surface)).toBeUndefined();
  });
});

describe('package README API tables', () => {
  const readme = [
    '# @switchyard/a',
    '| `notApi` | a table outside the API section |',
    '## API',
    '| export | what |',
    '|---|---|',
    '| `make(options?)` | makes |',
    '| `new Thing()` | a class |',
    '| `Stale` | no longer exported |',
    '### `@switchyard/a/testing`',
    '| `fake()` | a double |',
    '## Decisions',
    '| `alsoNotApi` | |',
  ].join('\n');
  it('reads the first backticked name of each row, per entry point', () => {
    expect(documentedNames(readme, '@switchyard/a')).toEqual(
      new Map([
        ['@switchyard/a', new Set(['make', 'Thing', 'Stale'])],
        ['@switchyard/a/testing', new Set(['fake'])],
      ]),
    );
  });
  it('reports a name exported but undocumented, and one documented but not exported', () => {
    const surface = { '@switchyard/a': { values: ['make', 'Thing', 'VERSION'], types: [] }, '@switchyard/a/testing': { values: ['fake'], types: [] } };
    expect(readmeProblems(readme, '@switchyard/a', surface)).toEqual([
      '@switchyard/a: `VERSION` is exported but not in the README\'s API table',
      '@switchyard/a: `Stale` is in the README\'s API table but not exported',
    ]);
  });
  it('asks nothing of an internal entry point, and refuses one documented as API', () => {
    const surface = { '@switchyard/a': { values: ['make'], types: [] }, '@switchyard/a/internal': { values: ['hub'], types: ['Hub'] } };
    const api = ['## API', '| export | what |', '|---|---|', '| `make()` | makes |'];
    expect(readmeProblems(api.join('\n'), '@switchyard/a', surface)).toEqual([]);
    const documented = [...api, '### `@switchyard/a/internal`', '| `hub()` | a hub |'].join('\n');
    expect(readmeProblems(documented, '@switchyard/a', surface)).toEqual(['@switchyard/a/internal: an internal entry point is not under semver: leave it out of the API table']);
  });
});
