#!/usr/bin/env node
// The second pass of the test matrix: the whole suite (build, typecheck, vitest, examples, pack
// check) again on Node 24 with isolated-vm 6.
//
// Why a separate install tree: one node_modules cannot hold isolated-vm 5 (the last line that
// builds on Node 20) and isolated-vm 6 (Node 22+) under the same name, and a native module is
// built for one Node ABI. So the working tree's files (tracked and untracked-but-not-ignored, i.e.
// what a commit would hold) are copied into a cache folder outside the repository — outside, so
// Node's upward module lookup can never fall back to the Node 20 tree's node_modules — and installed
// there under Node 24 with one pnpm override, `isolated-vm` → 6.x. The committed lockfile is the
// starting point; after the install the script proves that the resolved packages differ from it
// only in isolated-vm (and its own dependency), so both passes test the same dependency versions.
//
// Usage: node scripts/test-node24.mjs [--ci-only] [-- command...]
//   --ci-only     do nothing unless CI is set (how `npm test` calls it)
//   -- command    run this instead of the whole suite, e.g. `-- pnpm vitest run packages/ai-sdk`
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, rmSync, lstatSync, symlinkSync, readlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE24_ISOLATED_VM, NODE24_VERSION, cacheDir, ensureNode24 } from './node24.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dashes = process.argv.indexOf('--');
const command = dashes >= 0 ? process.argv.slice(dashes + 1) : [];

if (process.argv.includes('--ci-only') && !process.env.CI) {
  console.log('node 24 pass: skipped (CI is not set); run it on demand with `npm run test:node24`');
  process.exit(0);
}

const started = Date.now();
const nodeRoot = ensureNode24();
const tree = join(cacheDir(), 'node24-tree', `${basename(root)}-${createHash('sha256').update(root).digest('hex').slice(0, 8)}`);

// One pass per checkout at a time: a second one would delete the tree under the first.
const lock = `${tree}.lock`;
mkdirSync(dirname(lock), { recursive: true });
try {
  writeFileSync(lock, String(process.pid), { flag: 'wx' });
} catch {
  const holder = Number(readFileSync(lock, 'utf8'));
  let alive = false;
  try {
    process.kill(holder, 0);
    alive = true;
  } catch {
    // stale lock from a pass that died
  }
  if (alive) fail(`another Node 24 pass of this checkout is running (pid ${holder}); wait for it or remove ${lock}`);
  writeFileSync(lock, String(process.pid));
}
process.on('exit', () => rmSync(lock, { force: true }));

// 1. A fresh copy of the working tree's files (a clean build every time; pnpm's store makes the
//    reinstall cheap).
const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter(Boolean);
rmSync(tree, { recursive: true, force: true });
let copied = 0;
for (const file of files) {
  const from = join(root, file);
  let stat;
  try {
    stat = lstatSync(from);
  } catch {
    continue; // tracked but deleted in the working tree
  }
  const to = join(tree, file);
  mkdirSync(dirname(to), { recursive: true });
  if (stat.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
  else copyFileSync(from, to);
  copied++;
}

// 2. The one difference from the Node 20 install.
const workspaceYaml = join(tree, 'pnpm-workspace.yaml');
if (/^overrides:/m.test(readFileSync(workspaceYaml, 'utf8'))) {
  fail('pnpm-workspace.yaml already has an `overrides:` block; merge the isolated-vm override into it in scripts/test-node24.mjs');
}
appendFileSync(workspaceYaml, `\n# added by scripts/test-node24.mjs for the Node 24 pass only\noverrides:\n  isolated-vm: ${NODE24_ISOLATED_VM}\n`);

const env = {
  ...process.env,
  PATH: `${join(nodeRoot, 'bin')}:${process.env.PATH}`,
  // Native builds (if any package has no prebuild for Node 24) compile against Node 24's headers,
  // not the machine's default `nodedir`.
  npm_config_nodedir: nodeRoot,
};
const step = (label, command, args) => {
  console.log(`node 24 pass: ${label}`);
  const result = spawnSync(command, args, { cwd: tree, env, stdio: 'inherit' });
  if (result.status !== 0) fail(`${label} failed (exit ${result.status ?? result.signal})`);
};

const nodeVersion = execFileSync(join(nodeRoot, 'bin', 'node'), ['--version'], { encoding: 'utf8' }).trim();
console.log(`node 24 pass: Node ${nodeVersion}, isolated-vm ${NODE24_ISOLATED_VM}, ${copied} files copied to ${tree}`);
step('pnpm install (isolated-vm override)', 'pnpm', ['install', '--reporter=silent', '--no-frozen-lockfile', '--prefer-offline']);

// 3. Same dependency versions as the committed lockfile, except isolated-vm.
const drift = lockfileDrift(readFileSync(join(root, 'pnpm-lock.yaml'), 'utf8'), readFileSync(join(tree, 'pnpm-lock.yaml'), 'utf8'));
if (drift.length) fail(`the Node 24 install resolved other packages than the committed lockfile:\n  ${drift.join('\n  ')}`);

// 4. The tree really runs isolated-vm 6 (check-packs then proves it satisfies the peer range).
const ivm = JSON.parse(readFileSync(join(tree, 'packages/code-mode-runtime/node_modules/isolated-vm/package.json'), 'utf8')).version;
if (ivm !== NODE24_ISOLATED_VM) fail(`packages/code-mode-runtime resolves isolated-vm ${ivm}, expected ${NODE24_ISOLATED_VM}`);

if (command.length) step(command.join(' '), command[0], command.slice(1));
else step('build, typecheck, vitest, examples, check-packs', 'pnpm', ['run', 'test:suite']);
console.log(`node 24 pass: ok (${((Date.now() - started) / 60000).toFixed(1)} min)`);

function fail(message) {
  console.error(`node 24 pass: ${message}`);
  process.exit(1);
}

/**
 * Resolved packages (name@version, peer suffixes aside) the Node 24 install added to the committed
 * lockfile, other than isolated-vm 6, its one dependency, and packages that cannot install on this
 * platform (pnpm may list a Windows-only optional dependency the committed lockfile omits). Removals
 * are fine: isolated-vm 5's build-time dependencies (prebuild-install and friends) drop out.
 */
function lockfileDrift(before, after) {
  const exempt = /^(isolated-vm|node-gyp-build)@/;
  const parse = (text) => {
    const keys = new Set();
    const foreign = new Set();
    let section = '';
    let current = '';
    for (const line of text.split('\n')) {
      if (/^\S/.test(line)) section = line.replace(/:.*/, '');
      const entry = /^ {2}'?([^\s'][^']*?)'?:/.exec(line);
      if (entry && (section === 'packages' || section === 'snapshots')) {
        current = entry[1].replace(/\(isolated-vm@[^)]*\)/g, '');
        if (!exempt.test(current)) keys.add(current);
      }
      const os = /^ {4}os: \[(.*)\]/.exec(line);
      if (os && section === 'packages' && !os[1].split(',').map((v) => v.trim()).includes(process.platform)) foreign.add(current);
    }
    return { keys, foreign };
  };
  const a = parse(before);
  const b = parse(after);
  return [...b.keys].filter((k) => !a.keys.has(k) && !b.foreign.has(k)).map((k) => `+ ${k}`);
}
