import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LAYERS, findLayerViolations } from '../src/layers';
import { fixtureTree } from './fixture-tree';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('the dependency layering', () => {
  it('holds in this repository: nothing imports upward, the tools and the contract keep their rules', () => {
    expect(findLayerViolations(repo)).toEqual([]);
  });

  it('places protocol lowest and kit right above it', () => {
    expect(LAYERS[0]).toEqual(['protocol']);
    expect(LAYERS[1]).toEqual(['kit']);
  });

  describe('on a repository that breaks it', () => {
    const { root, write } = fixtureTree('layers');
    const pkg = (folder: string, json: object, files: Record<string, string> = {}) => {
      write(`packages/${folder}/package.json`, JSON.stringify({ version: '0.0.0', ...json }));
      for (const [name, text] of Object.entries(files)) write(`packages/${folder}/${name}`, text);
    };
    pkg('protocol', { name: '@switchyard/protocol', dependencies: { zod: '4' } }, {
      'src/index.ts': `import { createHash } from 'node:crypto';\nexport const size = (text: string) => Buffer.byteLength(text);\n// process.cwd() in a comment is fine\n`,
    });
    pkg('kit', { name: '@switchyard/kit', dependencies: { '@switchyard/protocol': 'workspace:^' } }, {
      'src/index.ts': `export * from '@switchyard/protocol';\nimport { ToolRegistry } from '@switchyard/registry/internal';\n`,
      'src/index.test.ts': `import { createSession } from '@switchyard/session';\n`,
    });
    pkg('tool-clock', { name: '@switchyard/tool-clock', dependencies: { '@switchyard/registry': 'workspace:^' } });
    pkg('registry', { name: '@switchyard/registry', peerDependencies: { '@switchyard/hooks': 'workspace:^' } }, {
      'src/lazy.ts': `export const load = () => import('@switchyard/code-mode');\n`,
    });
    pkg('extra', { name: '@switchyard/extra' });
    pkg('private-tool', { name: '@switchyard/private-tool', private: true, dependencies: { '@switchyard/cli': 'workspace:^' } });

    it('names every upward import, with its file or package.json field', () => {
      expect(findLayerViolations(root)).toEqual([
        '@switchyard/extra is in no layer: place it in LAYERS (tools/check-packs/src/layers.ts) and the README\'s dependency graph',
        '@switchyard/kit (layer 1): packages/kit/src/index.ts imports @switchyard/registry (layer 2, a higher layer) — a package may depend on lower layers only',
        '@switchyard/protocol: packages/protocol/src/index.ts imports node:crypto — the contract is platform-neutral',
        '@switchyard/protocol: packages/protocol/src/index.ts uses Buffer — the contract is platform-neutral',
        '@switchyard/protocol: package.json dependencies lists zod — the contract has no dependencies',
        '@switchyard/registry (layer 2): package.json peerDependencies imports @switchyard/hooks (layer 2, its own layer) — a package may depend on lower layers only',
        '@switchyard/registry (layer 2): packages/registry/src/lazy.ts imports @switchyard/code-mode (layer 4, a higher layer) — a package may depend on lower layers only',
        '@switchyard/tool-clock: package.json dependencies imports @switchyard/registry — a built-in tool depends on protocol, kit and sandbox only',
      ]);
    });
  });
});
