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
  failureMessages?: string[];
}

type SuiteResult = { failed: string[]; passed: string[]; reasons: Record<string, string> };

/** Runs the broken-executor fixture in a child vitest and returns suite → failed / passed check titles. */
let fixtureRun: Map<string, SuiteResult> | undefined;
/** The fixture is a child vitest run: give the test that starts it as long as the child may take. */
const FIXTURE_TIMEOUT_MS = 120_000;

function fixtureResults(): Map<string, SuiteResult> {
  fixtureRun ??= runFixtureOnce();
  return fixtureRun;
}

function runFixtureOnce(): Map<string, SuiteResult> {
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
    const suites = new Map<string, SuiteResult>();
    for (const assertion of json.testResults.flatMap((file) => file.assertionResults)) {
      const suite = assertion.ancestorTitles[0];
      const entry = suites.get(suite) ?? { failed: [], passed: [], reasons: {} };
      const check = assertion.title.split(':')[0];
      (assertion.status === 'passed' ? entry.passed : entry.failed).push(check);
      // The first line of the failure: what the plugin author reads.
      if (assertion.status !== 'passed') entry.reasons[check] = (assertion.failureMessages?.[0] ?? '').split('\n')[0];
      suites.set(suite, entry);
    }
    return suites;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

describe('testExecutor catches executors that break the contract', () => {
  it('fails exactly the check of the promise each broken executor breaks, and passes a well-behaved one', () => {
    const suites = fixtureResults();
    const failedOf = (prefix: string) => {
      const found = [...suites.entries()].find(([title]) => title.startsWith(`testExecutor: ${prefix}`));
      if (!found) throw new Error(`no suite ${prefix}; have ${[...suites.keys()].join(' | ')}`);
      return found[1].failed;
    };
    const reasonOf = (prefix: string, check: string) => [...suites.entries()].find(([title]) => title.startsWith(`testExecutor: ${prefix}`))![1].reasons[check];
    expect(failedOf('unstable-spec')).toEqual(['spec']);
    expect(failedOf('accepts-garbage')).toEqual(['handle']);
    // every call of its sample is answered `aborted` (INCOMPATIBLE_PAYLOAD), so each check that needs its answer fails too
    expect(failedOf('wrong-kinds')).toEqual(['payloadKinds', 'handle', 'signal (abort response)', 'hookPayload', 'supportsParallelToolCalls']);
    expect(reasonOf('wrong-kinds', 'signal (abort response)')).toMatch(/^AssertionError: the sample never reached the handler \(answer: .+\): give a sample the tool accepts/);
    expect(failedOf('shared-output')).toEqual(['supportsParallelToolCalls']);
    expect(failedOf('dispose-twice')).toEqual(['onTurnEnd / dispose']);
    expect(failedOf('bad-hook-response')).toEqual(['hookPayload']);
    expect(failedOf('well-behaved')).toEqual([]);
    expect(suites.get([...suites.keys()].find((title) => title.startsWith('testExecutor: well-behaved'))!)!.passed).toHaveLength(13);
  }, FIXTURE_TIMEOUT_MS);

  it('writes every skipped check and its reason into the suite name instead of registering it', () => {
    const suites = fixtureResults();
    const title = [...suites.keys()].find((name) => name.startsWith('testExecutor: shared-output'));
    expect(title).toBe(
      'testExecutor: shared-output — skipped: call-id (only the parallel check is exercised); abort (only the parallel check is exercised); hooks (only the parallel check is exercised); lifecycle (only the parallel check is exercised); invalid-input (only the parallel check is exercised); abort-response (only the parallel check is exercised); event-loop (only the parallel check is exercised); results (only the parallel check is exercised); schema (only the parallel check is exercised)',
    );
    expect(suites.get(title!)!.passed.length + suites.get(title!)!.failed.length).toBe(4);
  }, FIXTURE_TIMEOUT_MS);
});

describe('testExecutor catches the usual plugin bugs, each with a one-line reason', () => {
  const suiteOf = (name: string) => {
    const found = fixtureResults().get(`testExecutor: ${name}`);
    if (!found) throw new Error(`no suite ${name}; have ${[...fixtureResults().keys()].join(' | ')}`);
    return found;
  };

  it('an abort ignored by a fast handler (1 s, not a slow sample)', () => {
    const suite = suiteOf('seeded_abort_ignored');
    expect(suite.failed).toEqual(['signal (abort response)']);
    expect(suite.reasons['signal (abort response)']).toMatch(
      /^AssertionError: the handler ignores its abort signal: it ran on for \d+ ms after the signal aborted \(an uncancelled call takes \d+ ms\): pass `signal` to what it awaits/,
    );
  }, FIXTURE_TIMEOUT_MS);

  it('a handler blocking the event loop', () => {
    const suite = suiteOf('seeded_blocking');
    expect(suite.failed).toEqual(['handle (event loop)']);
    expect(suite.reasons['handle (event loop)']).toMatch(/^AssertionError: the handler blocks the event loop: one call held it for \d{4,} ms without yielding \(limit 500 ms\)/);
  }, FIXTURE_TIMEOUT_MS);

  it('a cycle that appears only beyond the sample, shrunk to the smallest input', () => {
    const suite = suiteOf('seeded_cycle');
    expect(suite.failed).toEqual(['results']);
    expect(suite.reasons.results).toMatch(
      /^AssertionError: input \{"depth":3\}: tool result is not JSON-serializable: result\.child\.child\.child\.parent refers back to result \(a cycle\): return a tree, e\.g\. replace the back reference with an id \(fast-check seed -?\d+, \d+ runs\)$/,
    );
  }, FIXTURE_TIMEOUT_MS);

  it('the three schema mismatches: an undeclared read, a schema wider than the handler, a wrong outputSchema', () => {
    const undeclared = suiteOf('seeded_undeclared_read');
    expect(undeclared.failed).toEqual(['parameters']);
    expect(undeclared.reasons.parameters).toBe(
      'AssertionError: the handler reads args.query, which the parameters schema does not declare (it declares sql): declare it or read the declared name',
    );
    const wide = suiteOf('seeded_wide_schema');
    expect(wide.failed).toEqual(['parameters']);
    expect(wide.reasons.parameters).toMatch(
      /^AssertionError: the parameters schema admits \{"name":"[^"]*"\}, which the handler does not handle \(TypeError: Cannot read properties of undefined \(reading 'map'\)\): narrow the schema/,
    );
    const output = suiteOf('seeded_output_schema');
    expect(output.failed).toEqual(['results']);
    expect(output.reasons.results).toBe(
      'AssertionError: the result of {"table":"users"} does not match outputSchema: result.rows is required (result {"count":5}): fix the schema or the result',
    );
  }, FIXTURE_TIMEOUT_MS);

  it('a correct plugin passes every check, and a suite built from a factory carries its tool name', () => {
    const suite = suiteOf('sql__query');
    expect(suite.failed).toEqual([]);
    expect(suite.passed).toHaveLength(13);
  }, FIXTURE_TIMEOUT_MS);

  it('generatedParameters bounds the generated inputs: a sleep whose schema admits any duration passes within the check timeout', () => {
    const suite = suiteOf('bounded_sleep');
    expect(suite.failed).toEqual([]);
    expect(suite.passed).toHaveLength(13);
  }, FIXTURE_TIMEOUT_MS);

  it('generatedParameters that is not a schema object is refused when the suite is registered', async () => {
    const { testExecutor } = await import('../src/testing/index');
    expect(() => testExecutor({ executor: {} as never, sample: {}, generatedParameters: 'short' as never })).toThrow(
      'testExecutor: generatedParameters must be a JSON Schema object (a narrower parameters schema to generate inputs from)',
    );
  });
});
