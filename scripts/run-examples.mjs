#!/usr/bin/env node
// Runs every example's `start` script (each main.ts asserts its own result and exits 0). An
// example whose engines.node excludes this Node is skipped, and said so: the other matrix pass runs it.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { unmetNodeRange } from './engines.mjs';

const examples = readdirSync('examples')
  .filter((name) => existsSync(join('examples', name, 'package.json')))
  .sort();
let failed = 0;
let skipped = 0;
for (const name of examples) {
  const range = unmetNodeRange(join('examples', name));
  if (range) {
    skipped++;
    console.log(`example ${name}: skipped — needs Node ${range}, this is ${process.version}`);
    continue;
  }
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
console.log(`examples: ${examples.length - failed - skipped} passed, ${failed} failed${skipped ? `, ${skipped} skipped on this Node` : ''}`);
process.exit(failed ? 1 : 0);
