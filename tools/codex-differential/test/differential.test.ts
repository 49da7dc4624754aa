// The differential suite in CI: every case through the real Codex binary (the version the READMEs
// follow) and through Switchyard, every model-visible difference either absent or on the reviewed
// allowlist. Needs root for the loopback-only network namespace: in CI a machine without it fails
// here, loudly; outside CI the suite is skipped with the reason printed.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALLOWLIST } from '../src/allowlist.ts';
import { CASES } from '../src/cases.ts';
import { CODEX_VERSIONS, ensureCodex } from '../src/codex-binary.ts';
import { isolationProblem, runIsolated } from '../src/isolated.ts';
import { renderReport } from '../src/report.ts';

const problem = isolationProblem();
const inCi = Boolean(process.env.CI);
if (problem && !inCi) console.log(`codex-differential: skipped outside CI — ${problem}`);

describe.skipIf(problem !== undefined && !inCi)(`Codex ${CODEX_VERSIONS.reference} and Switchyard, side by side`, () => {
  it('can isolate the Codex binary (a loopback-only network namespace)', () => {
    expect(problem).toBeUndefined();
  });

  it('answers every case alike, or differs only as the allowlist says', async () => {
    const version = CODEX_VERSIONS.reference;
    const report = await runIsolated({ codex: ensureCodex(version), version, concurrency: 4, progress: () => undefined });
    // this run's report, for a failure's details (REPORT.md is the committed one, from `run report`)
    const out = join(tmpdir(), `codex-differential-${version}.md`);
    writeFileSync(out, renderReport(report));
    console.log(`codex-differential: ${report.results.length} cases in ${report.wallSeconds.toFixed(0)} s; report: ${out}`);
    expect(report.results.map((result) => result.id)).toEqual(CASES.map((testCase) => testCase.id));
    const unlisted = report.results.flatMap((result) =>
      result.differences.filter((difference) => !difference.allowed).map((difference) => `${result.id} — ${difference.key}\nCodex: ${difference.codex}\nSwitchyard: ${difference.switchyard}`),
    );
    expect(unlisted).toEqual([]);
    // every entry of the allowlist is still needed
    const used = new Set(report.results.flatMap((result) => result.differences.map((difference) => difference.allowed)));
    expect(ALLOWLIST.filter((entry) => !entry.intermittent && !used.has(entry.id)).map((entry) => entry.id)).toEqual([]);
    expect(ALLOWLIST.length).toBeLessThanOrEqual(8);
  });
});
