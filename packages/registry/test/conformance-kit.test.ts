import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const vitestBin = resolve(here, '../../../node_modules/vitest/vitest.mjs');

interface Assertion {
  ancestorTitles: string[];
  title: string;
  status: string;
}

/** Runs the broken-executor fixture in a child vitest and returns suite → failed / passed check titles. */
let fixtureRun: Map<string, { failed: string[]; passed: string[] }> | undefined;
/** The fixture is a child vitest run: give the test that starts it as long as the child may take. */
const FIXTURE_TIMEOUT_MS = 120_000;

function runFixture(): Map<string, { failed: string[]; passed: string[] }> {
  fixtureRun ??= runFixtureOnce();
  return fixtureRun;
}

function runFixtureOnce(): Map<string, { failed: string[]; passed: string[] }> {
  const out = mkdtempSync(join(tmpdir(), 'conformance-'));
  try {
    const report = join(out, 'report.json');
    const child = spawnSync(process.execPath, [vitestBin, 'run', '--config', join(here, 'conformance-fixture/vitest.config.ts'), '--reporter=json', `--outputFile=${report}`], {
      cwd: join(here, 'conformance-fixture'),
      encoding: 'utf8',
      timeout: FIXTURE_TIMEOUT_MS,
      env: { ...process.env, NODE_OPTIONS: '--no-node-snapshot' },
    });
    expect(child.status, child.stderr).toBe(1);
    const json = JSON.parse(readFileSync(report, 'utf8')) as { testResults: Array<{ assertionResults: Assertion[] }> };
    const suites = new Map<string, { failed: string[]; passed: string[] }>();
    for (const assertion of json.testResults.flatMap((file) => file.assertionResults)) {
      const suite = assertion.ancestorTitles[0];
      const entry = suites.get(suite) ?? { failed: [], passed: [] };
      (assertion.status === 'passed' ? entry.passed : entry.failed).push(assertion.title.split(':')[0]);
      suites.set(suite, entry);
    }
    return suites;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

describe('testExecutor catches executors that break the contract', () => {
  it('fails exactly the check of the promise each broken executor breaks, and passes a well-behaved one', () => {
    const suites = runFixture();
    const failedOf = (prefix: string) => {
      const found = [...suites.entries()].find(([title]) => title.startsWith(`testExecutor: ${prefix}`));
      if (!found) throw new Error(`no suite ${prefix}; have ${[...suites.keys()].join(' | ')}`);
      return found[1].failed;
    };
    expect(failedOf('unstable-spec')).toEqual(['spec']);
    expect(failedOf('accepts-garbage')).toEqual(['handle']);
    // every call of its sample is answered `aborted` (INCOMPATIBLE_PAYLOAD), so each check that needs its answer fails too
    expect(failedOf('wrong-kinds')).toEqual(['payloadKinds', 'handle', 'hookPayload', 'supportsParallelToolCalls']);
    expect(failedOf('shared-output')).toEqual(['supportsParallelToolCalls']);
    expect(failedOf('dispose-twice')).toEqual(['onTurnEnd / dispose']);
    expect(failedOf('bad-hook-response')).toEqual(['hookPayload']);
    expect(failedOf('well-behaved')).toEqual([]);
    expect(suites.get([...suites.keys()].find((title) => title.startsWith('testExecutor: well-behaved'))!)!.passed).toHaveLength(9);
  }, FIXTURE_TIMEOUT_MS);

  it('writes every skipped check and its reason into the suite name instead of registering it', () => {
    const suites = runFixture();
    const title = [...suites.keys()].find((name) => name.startsWith('testExecutor: shared-output'));
    expect(title).toBe(
      'testExecutor: shared-output — skipped: call-id (only the parallel check is exercised); abort (only the parallel check is exercised); hooks (only the parallel check is exercised); lifecycle (only the parallel check is exercised); invalid-input (only the parallel check is exercised)',
    );
    expect(suites.get(title!)!.passed.length + suites.get(title!)!.failed.length).toBe(4);
  }, FIXTURE_TIMEOUT_MS);
});
