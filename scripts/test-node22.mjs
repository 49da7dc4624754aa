#!/usr/bin/env node
// The matrix's Node 22 line (the oldest supported one), as cheap as it can honestly be. The suite
// itself ran on the project's Node (24); what differs on Node 22 is the native engine — isolated-vm
// loads its Node 22 binary (ABI 127) from the same install, since 6.x ships prebuilt binaries for
// Node 22 and 24 — and the Node API the runtime, its worker processes and the hosts use. So on the
// official Node 22 build, in this same tree (no second install):
//   1. the Code Mode tests: code-mode-runtime (worker processes and in process), code-mode and
//      code-mode-nats (cells over NATS);
//   2. every example (each main.ts asserts its own result);
//   3. the pack check's host shapes: each shape's one `npm install` line in an app outside the
//      monorepo and a turn of that shape (on the machine's own Node too, when it is older than 22:
//      the direct and MCP shapes and every package that still declares it).
// Not repeated: build (tsup's output does not depend on the Node that runs it), typecheck, the
// other packages' unit tests (plain JavaScript over Node APIs that 22 and 24 share; the session's
// turn loop with cells runs on 22 in the examples and the Code Mode host shape), the per-package
// pack checks.
//
// Usage: node scripts/test-node22.mjs [--ci-only]   (`npm test` calls it with --ci-only)
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_RELEASES, OLDEST_SUPPORTED_MAJOR, ensureOfficialNode, withNodeFirst } from './official-node.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
if (process.argv.includes('--ci-only') && !process.env.CI) {
  console.log('node 22 pass: skipped (CI is not set); run it on demand with `npm run test:node22`');
  process.exit(0);
}

const started = Date.now();
const env = withNodeFirst(ensureOfficialNode(22));
// Run directly on an old Node (`npm run test:node22` on a Node 20 machine): that Node is the machine's.
if (Number(process.versions.node.split('.')[0]) < OLDEST_SUPPORTED_MAJOR) env.SWITCHYARD_MACHINE_NODE = process.execPath;
const found = spawnSync('node', ['--version'], { env, encoding: 'utf8' }).stdout.trim();
if (found !== `v${NODE_RELEASES[22]}`) fail(`expected node v${NODE_RELEASES[22]} first on PATH, found ${found}`);
console.log(`node 22 pass: Node ${found}, the same install as the Node 24 suite`);

const steps = [
  ['Code Mode tests', 'pnpm', ['vitest', 'run', 'packages/code-mode-runtime', 'packages/code-mode/', 'packages/code-mode-nats']],
  ['examples', 'node', [join(root, 'scripts/run-examples.mjs')]],
  ['host shapes (adopter installs)', 'pnpm', ['--filter', '@switchyard/check-packs', 'run', 'check', '--hosts']],
];
for (const [label, command, args] of steps) {
  const stepStarted = Date.now();
  console.log(`node 22 pass: ${label}`);
  const result = spawnSync(command, args, { cwd: root, env, stdio: 'inherit' });
  if (result.status !== 0) fail(`${label} failed (exit ${result.status ?? result.signal})`);
  console.log(`node 22 pass: ${label} ok (${((Date.now() - stepStarted) / 1000).toFixed(0)} s)`);
}
console.log(`node 22 pass: ok (${((Date.now() - started) / 60000).toFixed(1)} min)`);

function fail(message) {
  console.error(`node 22 pass: ${message}`);
  process.exit(1);
}
