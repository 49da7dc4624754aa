// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against
// @switchyard/mcp's client: for each client scenario, the suite's own CLI starts its scenario
// server and runs our client (a relay script hands the scenario, and the revision to speak, to
// this process, which runs mcpTools in-process); every check the suite records must pass and the
// client must exit 0. Runs: every client scenario of the requirement sets of 2026-07-28 and
// 2025-11-25, read from the suite's own requirements files, each at its revision (its own wire:
// stateless with per-request `_meta`, or the initialize handshake), a few at a time (the suite's
// `--requirements` starts them all at once, which a loaded two-core machine answers with refused
// connections); then the scenarios outside both sets this client also passes (2025-03-26).
// Every failing check must be in fixtures/client-baseline.yml (with its reason, repeated in the
// @switchyard/mcp README "Conformance"), and every entry there must still fail.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { runScenarioClient, type ScenarioRun } from './conformance-client';
import { CONFORMANCE_CLI, baselineEntries, requiredScenarios, savedChecks, verdict, type Check } from './conformance-kit';

const RELAY = fileURLToPath(new URL('./fixtures/conformance-relay.mjs', import.meta.url));
const BASELINE = fileURLToPath(new URL('./fixtures/client-baseline.yml', import.meta.url));

/** Client scenarios outside both requirement sets that this client runs too, each at its own revision. */
const EXTRA_SCENARIOS = [
  { scenario: 'auth/2025-03-26-oauth-metadata-backcompat', specVersion: '2025-03-26' },
  { scenario: 'auth/2025-03-26-oauth-endpoint-fallback', specVersion: '2025-03-26' },
];

/** Scenarios run at once: each starts the suite's CLI, its servers and a client. */
const PARALLEL = 3;
let running = 0;
const queue: Array<() => void> = [];

/** Runs `work` once fewer than {@link PARALLEL} others run (a finished run hands its slot on). */
async function inSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running < PARALLEL) running++;
  else await new Promise<void>((resolve) => queue.push(resolve));
  try {
    return await work();
  } finally {
    const next = queue.shift();
    if (next) next();
    else running--;
  }
}

let relayServer: Server;
let port: number;
let output: string;

beforeAll(async () => {
  output = mkdtempSync(join(tmpdir(), 'switchyard-mcp-conformance-'));
  relayServer = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      runScenarioClient(JSON.parse(body) as ScenarioRun).then(
        (result) => response.end(JSON.stringify(result)),
        (error: unknown) => response.end(JSON.stringify({ code: 2, log: `client threw: ${error instanceof Error ? error.stack : String(error)}\n` })),
      );
    });
  });
  await new Promise<void>((resolve) => relayServer.listen(0, '127.0.0.1', resolve));
  port = (relayServer.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((resolve) => relayServer?.close(resolve));
  if (!process.env.KEEP_CONFORMANCE) rmSync(output, { recursive: true, force: true });
});

/** Runs the suite's client CLI once; its exit code, output and saved checks. */
function runConformanceClient(selection: string[]): Promise<{ code: number | null; text: string; checks: Map<string, Check[]> }> {
  const dir = mkdtempSync(join(output, 'run-'));
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(RELAY)} ${port}`;
  const args = [CONFORMANCE_CLI, 'client', '--command', command, ...selection, '--expected-failures', BASELINE, '--timeout', '180000', '-o', dir];
  const child = spawn(process.execPath, args, { cwd: output, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, text, checks: savedChecks(dir) })));
}

/** One scenario at one revision: only the baseline fails, and the suite's CLI exits 0. */
function scenarioTest(scenario: string, selection: string[]) {
  return async ({ expect }: { expect: ExpectStatic }) => {
    const run = await inSlot(() => runConformanceClient(['--scenario', scenario, ...selection]));
    expect([...run.checks.keys()], run.text).toEqual([scenario]);
    expect(verdict(scenario, run.checks.get(scenario) ?? [], baselineEntries(BASELINE)), run.text).toEqual({ unexpected: [], stale: [], ran: true });
    expect(run.code, run.text).toBe(0);
  };
}

for (const revision of ['2026-07-28', '2025-11-25']) {
  describe.concurrent(`MCP conformance suite, client requirements of ${revision} against mcpTools`, () => {
    for (const scenario of requiredScenarios(revision, 'client')) it(scenario, scenarioTest(scenario, ['--spec-version', revision, '--force']), 600_000);
  });
}

describe.concurrent('MCP conformance suite, client scenarios outside the requirement sets', () => {
  for (const { scenario, specVersion } of EXTRA_SCENARIOS) it(scenario, scenarioTest(scenario, ['--spec-version', specVersion]), 600_000);
});
