#!/usr/bin/env node
// Prepares a fresh machine that has only Node (20, 22 or 24) and npm: pnpm, bubblewrap,
// nats-server and chromium (for the exec sandbox, the NATS runtime tests and the web-chat example's
// browser test, when we are root on Debian), the Node the project runs on (the machine's own when
// it is 22+, else the official Node 24 build fetched from the npm registry), then the workspace
// install under that Node. Idempotent and quiet when
// everything is already there.
//
// Usage: node scripts/setup.mjs [script]
//   script   then `pnpm run <script>` with the project's Node first on PATH, and exit with its code.
//            This is how `npm test` / `npm run demo` run on a Node 20 machine: npm itself runs on
//            the machine's Node, so the script re-runs the real work under Node 22+ — pnpm, vitest's
//            forks, the examples and the pack check all start `node` from PATH.
import { execSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { projectNodeBin, withNodeFirst, OLDEST_SUPPORTED_MAJOR } from './official-node.mjs';

const PNPM = '10.34.9';
const run = (cmd) => execSync(cmd, { stdio: 'inherit' });
const quiet = (cmd) => spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });

const pnpmVersion = quiet('pnpm --version').stdout?.trim();
if (pnpmVersion !== PNPM) {
  console.log(`setup: installing pnpm@${PNPM} with npm (found ${pnpmVersion || 'none'})`);
  run(`npm i -g pnpm@${PNPM}`);
}

// Debian packages the tests use: bubblewrap (the exec sandbox), nats-server (Code Mode cells on
// runtime hosts behind NATS), chromium (the web-chat example's browser test), iproute2 (`ip`: the
// Codex differential suite's loopback-only network namespace). One apt-get run for whichever is missing.
const debian = [
  { command: 'bwrap', pkg: 'bubblewrap', missing: 'sandboxed exec refuses to run' },
  { command: 'nats-server', pkg: 'nats-server', missing: 'the NATS runtime tests report it' },
  { command: 'chromium', pkg: 'chromium', missing: 'the web-chat example skips its browser test (and fails in CI)' },
  { command: 'ip', pkg: 'iproute2', missing: 'the Codex differential suite fails in CI' },
].filter(({ command }) => quiet(`command -v ${command}`).status !== 0);
if (debian.length > 0) {
  const names = debian.map(({ pkg }) => pkg).join(' ');
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && quiet('command -v apt-get').status === 0) {
    console.log(`setup: installing ${names} (apt-get)`);
    const update = quiet('apt-get update -qq');
    const install = quiet(`DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${names}`);
    if (update.status !== 0 || install.status !== 0) {
      console.log(`setup: ${names} could not be installed; ${debian.map(({ missing }) => missing).join('; ')}`);
    }
  } else {
    console.log(`setup: ${names} not found and not installable here; ${debian.map(({ missing }) => missing).join('; ')}`);
  }
}

const nodeBin = projectNodeBin({ log: console.log });
const env = withNodeFirst(nodeBin);
// The machine's own Node when it is older than the project's: the CI matrix proves on it the
// packages that still declare it (a direct host without Code Mode).
if (Number(process.versions.node.split('.')[0]) < OLDEST_SUPPORTED_MAJOR) env.SWITCHYARD_MACHINE_NODE = process.execPath;

// Installed under the project's Node: isolated-vm's install step picks the prebuilt binary for it.
const frozen = process.env.CI && existsSync('pnpm-lock.yaml') ? ' --frozen-lockfile' : '';
execSync(`pnpm install --reporter=silent${frozen}`, { stdio: 'inherit', env });

const script = process.argv[2];
if (script) {
  const result = spawnSync('pnpm', ['run', script], { stdio: 'inherit', env });
  process.exit(result.status ?? 1);
}
