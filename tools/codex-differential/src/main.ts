// Runs every case on both sides and writes the comparison: `report.json` (for the test) and, with
// `--markdown FILE`, the per-case table. Must run inside a network namespace with only loopback
// (`run-isolated.ts` starts it so); `--codex PATH` names the binary, `--only PREFIX` picks cases.
import { writeFileSync } from 'node:fs';
import { CASES } from './cases.ts';
import { runCase, type CaseResult } from './run-case.ts';
import { renderReport } from './report.ts';

const args = process.argv.slice(2);
const option = (name: string) => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};
const binary = option('--codex');
if (!binary) throw new Error('main.ts: --codex PATH is required');
const only = option('--only');
const concurrency = Number(option('--concurrency') ?? 3);
const version = option('--version') ?? 'unknown';
const cases = CASES.filter((testCase) => !only || only.split(',').some((prefix) => testCase.id.startsWith(prefix)));

const started = Date.now();
const results: CaseResult[] = new Array(cases.length);
let next = 0;
async function worker() {
  while (next < cases.length) {
    const index = next++;
    results[index] = await runCase(binary!, cases[index]!);
    const result = results[index]!;
    process.stderr.write(`${result.status.padEnd(10)} ${result.id} (${result.seconds.toFixed(1)} s)\n`);
  }
}
await Promise.all(Array.from({ length: Math.min(concurrency, cases.length) }, worker));
const wallSeconds = (Date.now() - started) / 1000;

const out = option('--out') ?? 'report.json';
writeFileSync(out, JSON.stringify({ version, wallSeconds, results }, null, 1));
const markdown = option('--markdown');
if (markdown) writeFileSync(markdown, renderReport({ version, wallSeconds, results }));
const failed = results.filter((result) => result.status === 'differs');
process.stderr.write(`${results.length} cases, ${failed.length} with unlisted differences, ${wallSeconds.toFixed(0)} s\n`);
process.exit(0);
