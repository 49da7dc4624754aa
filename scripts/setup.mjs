#!/usr/bin/env node
// Prepares a fresh machine that has only Node 20 and npm: pnpm, bubblewrap (for the exec
// sandbox tests, when we are root on Debian), then the workspace install; with CI set (or
// --node24) also Node 24 for the matrix's second pass. Idempotent and quiet when everything is
// already there.
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

if (quiet('command -v bwrap').status !== 0) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && quiet('command -v apt-get').status === 0) {
    console.log('setup: installing bubblewrap (apt-get)');
    const update = quiet('apt-get update -qq');
    const install = quiet('DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap');
    if (update.status !== 0 || install.status !== 0) {
      console.log('setup: bubblewrap could not be installed; sandboxed exec tests will report it');
    }
  } else {
    console.log('setup: bwrap not found and not installable here; sandboxed exec refuses to run');
  }
}

const frozen = process.env.CI && existsSync('pnpm-lock.yaml') ? ' --frozen-lockfile' : '';
run(`pnpm install --reporter=silent${frozen}`);

if (process.env.CI || process.argv.includes('--node24')) ensureNode24({ log: console.log });
