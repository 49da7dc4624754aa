import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fixtureTree } from '../test/fixture-tree';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const knip = join(root, 'node_modules/.bin/knip');
const { root: project, write: file } = fixtureTree('knip-config');

describe('the unused-export check (knip with the repository settings)', () => {
  it('fails on a file nothing imports and on an export nothing uses, not on an export used in its own file', () => {
    const settings = JSON.parse(readFileSync(join(root, 'knip.json'), 'utf8'));
    delete settings.workspaces;
    file('knip.json', JSON.stringify(settings));
    file('package.json', JSON.stringify({ name: 'fixture', version: '0.0.0', type: 'module', private: true, exports: { '.': './src/index.ts' } }));
    file('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler', strict: true } }));
    file('src/index.ts', "export { used } from './used';\n");
    file('src/used.ts', 'export function used(): number { return helper() + 1; }\nexport function helper(): number { return 1; }\nexport const forgotten = 2;\n');
    file('src/dead.ts', 'export const nobody = 3;\n');
    execFileSync('git', ['init', '-q'], { cwd: project });
    const run = spawnSync(knip, ['--no-progress', '--no-config-hints'], { cwd: project, encoding: 'utf8', timeout: 120_000 });
    const report = run.stdout + run.stderr;
    expect(run.status, report).toBe(1);
    expect(report).toMatch(/Unused files \(1\)\s+src\/dead\.ts/);
    expect(report).toMatch(/Unused exports \(1\)\s+forgotten/);
    expect(report).not.toContain('helper');
  });
});
