#!/usr/bin/env node
// Runs every example's `start` script (each main.ts asserts its own result and exits 0).
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const examples = readdirSync('examples')
  .filter((name) => existsSync(join('examples', name, 'package.json')))
  .sort();
let failed = 0;
for (const name of examples) {
  const pkg = JSON.parse(readFileSync(join('examples', name, 'package.json'), 'utf8'));
  const started = Date.now();
  const result = spawnSync('pnpm', ['--filter', pkg.name, 'run', '-s', 'start'], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 120_000 });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (result.status === 0) {
    console.log(`example ${name}: ok (${secs}s)`);
  } else {
    failed++;
    console.log(`example ${name}: FAILED (exit ${result.status}, ${secs}s)\n${result.stdout}\n${result.stderr}`);
  }
}
console.log(`examples: ${examples.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
