#!/usr/bin/env node
// Prepares a fresh machine that has only Node 20 and npm: pnpm, bubblewrap and nats-server (for
// the exec sandbox and NATS runtime tests, when we are root on Debian), then the workspace
// install; with CI set (or --node24) also Node 24 for the matrix's second pass. Idempotent and
// quiet when everything is already there.
import { execSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ensureNode24 } from './node24.mjs';

const PNPM = '10.34.9';
const run = (cmd) => execSync(cmd, { stdio: 'inherit' });
const quiet = (cmd) => spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });

const pnpmVersion = quiet('pnpm --version').stdout?.trim();
if (pnpmVersion !== PNPM) {
  console.log(`setup: installing pnpm@${PNPM} with npm (found ${pnpmVersion || 'none'})`);
  run(`npm i -g pnpm@${PNPM}`);
}

// Debian packages the tests use: bubblewrap (the exec sandbox), nats-server (Code Mode cells on
// runtime hosts behind NATS). One apt-get run for whichever is missing.
const debian = [
  { command: 'bwrap', pkg: 'bubblewrap', missing: 'sandboxed exec refuses to run' },
  { command: 'nats-server', pkg: 'nats-server', missing: 'the NATS runtime tests report it' },
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

const frozen = process.env.CI && existsSync('pnpm-lock.yaml') ? ' --frozen-lockfile' : '';
run(`pnpm install --reporter=silent${frozen}`);

if (process.env.CI || process.argv.includes('--node24')) ensureNode24({ log: console.log });
