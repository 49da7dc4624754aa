import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findFolderViolations } from '../src/folders';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('the folder layering (internal < packages < examples < tools)', () => {
  it('holds in this repository: no file under packages/ imports from tools/, config is consumed by name', () => {
    expect(findFolderViolations(repo)).toEqual([]);
  });

  describe('on a repository that breaks it', () => {
    const root = mkdtempSync(join(tmpdir(), 'switchyard-folders-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const up = '../../../'; // spelled apart, or this file's own text would hold the import it plants
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    write('internal/config/package.json', JSON.stringify({ name: '@switchyard/config', private: true }));
    write('internal/config/vitest.ts', `import { x } from '@switchyard/kit';\n`);
    write('packages/kit/package.json', JSON.stringify({ name: '@switchyard/kit' }));
    write('packages/kit/vitest.config.ts', `import { packageTest } from '@switchyard/config/vitest';\n`);
    write('packages/kit/tsup.config.ts', `import { packageBuild } from '../../internal/config/tsup.ts';\n`);
    write('packages/kit/src/a.test.ts', `import { until } from '../../../tools/config/until';\n// import { y } from '../../../tools/bench/src/y';\n`);
    write('packages/kit/test/b.mjs', `const z = await import('@switchyard/bench/run');\n`);
    write('packages/kit/dist/index.js', `import '../../../tools/bench/src/y.js';\n`);
    write('examples/story/package.json', JSON.stringify({ name: '@switchyard/example-story', private: true }));
    write('examples/story/main.ts', `import { createSession } from '@switchyard/kit';\nimport { load } from '@switchyard/bench';\n`);
    write('tools/bench/package.json', JSON.stringify({ name: '@switchyard/bench', private: true }));
    write('tools/bench/src/y.ts', `import '@switchyard/kit';\nimport '@switchyard/example-story';\nimport '../../../packages/kit/src/a.test.ts';\nimport { running } from '${up}internal/config/proc.ts';\n`);

    it('names every import that runs up a folder, or into internal/ by a relative path', () => {
      const upward = (file: string, specifier: string, folder: string, rule: string) => `${file} imports '${specifier}' from ${folder}/ — ${rule}`;
      const byPath = (file: string, specifier: string) => `${file} imports '${specifier}' by a relative path into internal/ — import the package by its name (a devDependency "workspace:*")`;
      const fromPackages = 'packages/ may import from internal/ only';
      expect(findFolderViolations(root)).toEqual([
        upward('internal/config/vitest.ts', '@switchyard/kit', 'packages', 'internal/ imports from no other folder'),
        upward('packages/kit/src/a.test.ts', '../../../tools/config/until', 'tools', fromPackages),
        upward('packages/kit/test/b.mjs', '@switchyard/bench/run', 'tools', fromPackages),
        byPath('packages/kit/tsup.config.ts', '../../internal/config/tsup.ts'),
        upward('examples/story/main.ts', '@switchyard/bench', 'tools', 'examples/ may import from internal/, packages/ only'),
        byPath('tools/bench/src/y.ts', '../../../internal/config/proc.ts'),
      ]);
    });
  });
});
