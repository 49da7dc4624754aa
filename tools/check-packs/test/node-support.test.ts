import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { HOST_SHAPES, installArgs, isolatedVmSpec, packages, root } from '../src/packs';
import { NODE_RELEASES, OLDEST_SUPPORTED_MAJOR } from '../../../scripts/official-node.mjs';

const readJson = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8'));
const lockfile = readFileSync(join(root, 'pnpm-lock.yaml'), 'utf8');

describe('Node 24 is the project\'s Node', () => {
  it('the lockfile resolves isolated-vm 6 (prebuilt for Node 22 and 24) and nothing older', () => {
    const resolved = [...new Set([...lockfile.matchAll(/^ {2}isolated-vm@(\d[^:]*):$/gm)].map((match) => match[1]))];
    expect(resolved).toEqual(['6.2.0']);
  });

  it('.nvmrc, engines and devEngines say so, and the scripts fetch those lines', () => {
    expect(readFileSync(join(root, '.nvmrc'), 'utf8').trim()).toBe('24');
    const pkg = readJson('package.json');
    expect(pkg.engines.node).toBe(`>=${OLDEST_SUPPORTED_MAJOR}`);
    expect(pkg.devEngines.runtime).toMatchObject({ name: 'node', version: `>=${OLDEST_SUPPORTED_MAJOR}` });
    expect(semver.major(NODE_RELEASES[24])).toBe(24);
    expect(semver.major(NODE_RELEASES[22])).toBe(22);
  });

  it('every package that needs isolated-vm declares Node 22+ and accepts isolated-vm 6 and 7, not 5', () => {
    const needsIsolates = packages.filter((pkg) => pkg.ivmRange || pkg.requiredDeps.includes('@switchyard/code-mode-runtime'));
    expect(needsIsolates.map((pkg) => pkg.name).sort()).toEqual(['@switchyard/cli', '@switchyard/code-mode-nats', '@switchyard/code-mode-runtime']);
    for (const pkg of needsIsolates) {
      expect(semver.minVersion(pkg.nodeRange!)!.major, pkg.name).toBe(22);
      if (!pkg.ivmRange) continue;
      expect(semver.satisfies('6.2.0', pkg.ivmRange) && semver.satisfies('7.0.1', pkg.ivmRange), pkg.name).toBe(true);
      expect(semver.satisfies('5.0.4', pkg.ivmRange), pkg.name).toBe(false);
    }
  });
});

describe('the adopter lines', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');

  it('the README names each host shape\'s packages in one npm line, as check-packs installs them', () => {
    for (const shape of HOST_SHAPES) {
      expect(readme).toContain(`\`npm install ${[...shape.packages, ...(shape.isolatedVm ? ['isolated-vm'] : [])].join(' ')}`);
    }
  });

  it('a tarball line lists every Switchyard package its shape needs; Code Mode adds isolated-vm 6 on Node 22, the latest on 24', () => {
    const tarballOf = new Map(packages.map((pkg) => [pkg.name, `/p/${pkg.name.slice('@switchyard/'.length)}.tgz`]));
    const direct = installArgs(HOST_SHAPES.find((shape) => shape.name === 'direct')!, tarballOf, 22);
    expect(direct).toEqual(['code-mode', 'kit', 'planner', 'protocol', 'registry', 'session', 'tool-clock'].map((name) => `/p/${name}.tgz`));
    const codeMode = HOST_SHAPES.find((shape) => shape.name === 'code-mode')!;
    expect(installArgs(codeMode, tarballOf, 22).at(-1)).toBe('isolated-vm@6');
    expect(installArgs(codeMode, tarballOf, 24).at(-1)).toBe('isolated-vm');
    expect(isolatedVmSpec(26)).toBe('isolated-vm');
  });
});
