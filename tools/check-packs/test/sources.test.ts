import { describe, expect, it } from 'vitest';
import { shippedSources } from '../src/sources';
import { fixtureTree } from './fixture-tree';

describe('shippedSources (the files every source check of a package reads)', () => {
  const { root, write } = fixtureTree('sources');
  for (const path of [
    'kit/src/index.ts',
    'kit/src/deep/more.mts',
    'kit/src/deep/plain.js',
    'kit/src/prelude.generated.ts',
    'kit/src/index.test.ts',
    'kit/src/shape.fixture.ts',
    'kit/src/test-support.ts',
    'kit/src/types.d.ts',
    'kit/src/build-prelude.ts',
    'kit/src/protocol/protocol-docs.ts',
    'kit/src/docs.ts',
    'kit/src/fixtures/host.ts',
    'kit/src/__fixtures__/host.ts',
    'kit/src/dist/index.js',
    'kit/src/node_modules/dep/index.js',
    'kit/src/perl/launcher.pl',
    'kit/test/outside.ts',
  ]) {
    write(path, 'export {};\n');
  }

  it('reads src/ only, in name order: tests, fixtures, test-support helpers, declarations, build and docs scripts, dist and node_modules aside', () => {
    expect(shippedSources(`${root}/kit`).map((path) => path.slice(root.length + 1))).toEqual([
      'kit/src/deep/more.mts',
      'kit/src/deep/plain.js',
      'kit/src/docs.ts',
      'kit/src/index.ts',
      'kit/src/prelude.generated.ts',
    ]);
  });

  it('is empty for a package without src/', () => {
    write('bare/package.json', '{}');
    expect(shippedSources(`${root}/bare`)).toEqual([]);
  });
});
