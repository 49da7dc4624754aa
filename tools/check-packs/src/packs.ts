/**
 * The published packages of the workspace, their tarballs, and the one-line `npm install` of each
 * host shape an app outside the monorepo runs (shared by the pack check and `npm run pack`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageEntries, type EntryPoint } from './export-surface.ts';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export interface Pkg {
  name: string;
  /** `version` of its package.json (its root entry's `VERSION`). */
  version: string;
  dir: string;
  internalDeps: string[];
  /** Switchyard packages in `dependencies` alone (what npm installs without optional peers). */
  requiredDeps: string[];
  /** The declared isolated-vm peer range, if any. */
  ivmRange?: string;
  /** `engines.node`, if any. */
  nodeRange?: string;
  /** Third-party peers other than isolated-vm, as `name@range` (installed with the package, as npm would). */
  externalPeers: string[];
  /** Its entry points (`.` and each `exports` subpath, in the map's order), as the surface snapshot reads them. */
  entries: EntryPoint[];
}

/** Every package under packages/ that is published (not private). */
export const packages: Pkg[] = readdirSync(join(root, 'packages'))
  .map((folder) => join(root, 'packages', folder))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, json: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
  .filter(({ json }) => !json.private)
  .map(({ dir, json }) => {
    const deps = { ...json.dependencies, ...json.peerDependencies };
    return {
      name: json.name as string,
      version: json.version as string,
      dir,
      internalDeps: Object.keys(deps).filter((d) => d.startsWith('@switchyard/')),
      requiredDeps: Object.keys(json.dependencies ?? {}).filter((d) => d.startsWith('@switchyard/')),
      ivmRange: json.peerDependencies?.['isolated-vm'] as string | undefined,
      externalPeers: Object.entries((json.peerDependencies ?? {}) as Record<string, string>)
        .filter(([name]) => name !== 'isolated-vm' && !name.startsWith('@switchyard/'))
        .map(([name, range]) => `${name}@${range}`),
      nodeRange: json.engines?.node as string | undefined,
      entries: packageEntries(dir, json),
    };
  });

/** `name` and every Switchyard package it reaches through `edges` (all internal dependencies and peers by default). */
export function closure(name: string, seen = new Set<string>(), edges: (pkg: Pkg) => string[] = (pkg) => pkg.internalDeps): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  const pkg = packages.find((p) => p.name === name);
  for (const dep of pkg ? edges(pkg) : []) closure(dep, seen, edges);
  return seen;
}

/** Packs every published package (built `dist/` required) into `dest`; package name → tarball path. */
export function packAll(dest: string): Map<string, string> {
  const tarballOf = new Map<string, string>();
  for (const pkg of packages) {
    const out = execFileSync('pnpm', ['pack', '--pack-destination', dest], { cwd: pkg.dir, encoding: 'utf8' });
    const file = out.trim().split('\n').pop()!.trim();
    tarballOf.set(pkg.name, file.startsWith('/') ? file : join(dest, file));
  }
  return tarballOf;
}

/**
 * The app shapes a host author starts from, each with the packages its one install line names.
 * `isolatedVm`: the shape runs Code Mode cells, so the line adds the isolated-vm peer.
 */
export interface HostShape {
  name: 'direct' | 'code-mode' | 'mcp' | 'cli';
  what: string;
  packages: string[];
  isolatedVm: boolean;
}

/** The shapes, in the root README's order; each line there names the same `packages`. */
export const HOST_SHAPES: HostShape[] = [
  { name: 'direct', what: 'direct tools (the model calls your tools one by one), Node 20+', packages: ['@switchyard/session', '@switchyard/kit', '@switchyard/tool-clock'], isolatedVm: false },
  { name: 'code-mode', what: 'Code Mode (the model writes JavaScript that calls your tools), Node 22+', packages: ['@switchyard/session', '@switchyard/kit', '@switchyard/code-mode-runtime'], isolatedVm: true },
  { name: 'mcp', what: 'tools from MCP servers, Node 20+', packages: ['@switchyard/session', '@switchyard/mcp'], isolatedVm: false },
  { name: 'cli', what: 'the `switchyard` command, Node 22+', packages: ['@switchyard/cli'], isolatedVm: true },
];

/**
 * The isolated-vm a Code Mode app installs on Node `major`: the registry's latest (7.x, prebuilt for
 * Node 24 and 26) on Node 24+, `isolated-vm@6` (prebuilt for Node 22 and 24) on Node 22 — npm does
 * not pick a version by `engines`, and 7.x has no Node 22 binary, so it would compile and fail.
 */
export function isolatedVmSpec(major: number): string {
  return major >= 24 ? 'isolated-vm' : 'isolated-vm@6';
}

/** The npm install arguments of a shape: its tarballs and those of every Switchyard package they need. */
export function installArgs(shape: HostShape, tarballOf: Map<string, string>, major: number): string[] {
  const members = new Set<string>();
  for (const name of shape.packages) closure(name, members, (pkg) => pkg.requiredDeps);
  const tarballs = [...members].sort().map((name) => tarballOf.get(name)!);
  return [...tarballs, ...(shape.isolatedVm ? [isolatedVmSpec(major)] : [])];
}
