// `pnpm --filter @switchyard/codex-differential run report [--version 0.169.0] [--only PREFIX]`:
// fetches the pinned Codex into the cache, runs every case in a loopback-only network namespace and
// writes REPORT.md (REPORT-<version>.md for another version than the reference).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CODEX_VERSIONS, ensureCodex } from './codex-binary.ts';
import { isolationProblem, runIsolated } from './isolated.ts';

const args = process.argv.slice(2);
const option = (name: string) => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};
const version = option('--version') ?? CODEX_VERSIONS.reference;
const problem = isolationProblem();
if (problem) {
  console.error(`codex-differential: ${problem}`);
  process.exit(2);
}
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const markdown = join(root, version === CODEX_VERSIONS.reference ? 'REPORT.md' : `REPORT-${version}.md`);
const report = await runIsolated({ codex: ensureCodex(version), version, only: option('--only'), concurrency: Number(option('--concurrency') ?? 4), markdown });
const unlisted = report.results.filter((result) => result.status === 'differs');
console.log(`codex-differential: ${report.results.length} cases against Codex ${version} in ${report.wallSeconds.toFixed(0)} s; ${unlisted.length} with unlisted differences; report: ${markdown}`);
process.exit(unlisted.length === 0 ? 0 : 1);
