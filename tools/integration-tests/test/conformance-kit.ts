// What the conformance tests of both sides (mcp-conformance.test.ts: client scenarios against
// mcpTools; mcp-serve-conformance.test.ts: server scenarios against mcp serve) read from the
// official suite and hold its results to: the scenarios a requirement set runs, the checks the
// suite saved, and a baseline of expected failures, each with its reason, that cannot go stale.
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
export const CONFORMANCE = join(require.resolve('@modelcontextprotocol/conformance/package.json'), '..');
export const CONFORMANCE_CLI = join(CONFORMANCE, 'dist', 'index.js');

export interface Check {
  id: string;
  status: string;
  errorMessage?: string;
  details?: unknown;
}

/** The entries of a baseline file (`scenario` or `scenario:check`). */
export function baselineEntries(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('  - '))
    .map((line) => line.slice(4).trim());
}

/** The scenarios a requirement set runs for one leg: the required ones and the unscored ones of that leg. */
export function requiredScenarios(revision: string, leg: 'client' | 'server'): string[] {
  const lines = readFileSync(join(CONFORMANCE, 'requirements', `${revision}.yaml`), 'utf8').split('\n');
  const scenarios: string[] = [];
  let section = '';
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    if (/^\w/.test(line)) section = line.replace(':', '').trim();
    else if (section === leg && line.startsWith('  - ')) scenarios.push(line.slice(4).trim());
    else if (section === 'not_scored' && line.startsWith('  - scenario: ') && lines[index + 1]?.trim() === `leg: ${leg}`) scenarios.push(line.slice('  - scenario: '.length).trim());
  }
  return scenarios;
}

/**
 * `checks.json` files under `dir`, keyed by scenario (`auth/metadata-var1`): the suite saves each
 * run in `<leg>-<scenario>-<timestamp>/` (`client-` / `server-` only from the 0.2 releases on).
 */
export function savedChecks(dir: string): Map<string, Check[]> {
  const checks = new Map<string, Check[]>();
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === 'checks.json') {
        const scenario = at.slice(dir.length + 1).replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '').replace(/^(client|server)-/, '');
        checks.set(scenario, JSON.parse(readFileSync(path, 'utf8')) as Check[]);
      }
    }
  };
  walk(dir);
  return checks;
}

/**
 * The per-scenario verdict: failures outside the baseline (warnings count, as the suite counts
 * them), baseline entries that no longer fail, and whether anything passed (a scenario that saved
 * no success was not run).
 */
export function verdict(scenario: string, checks: readonly Check[], baseline: readonly string[]) {
  const failing = checks.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING').map((check) => `${scenario}:${check.id}`);
  const wholeScenario = baseline.includes(scenario);
  const unexpected = wholeScenario ? [] : failing.filter((entry) => !baseline.includes(entry));
  const listed = baseline.filter((entry) => entry.startsWith(`${scenario}:`));
  const stale = [...listed.filter((entry) => !failing.includes(entry)), ...(wholeScenario && failing.length === 0 ? [scenario] : [])];
  const details = checks
    .filter((check) => unexpected.includes(`${scenario}:${check.id}`))
    .map((check) => `${check.id}: ${check.errorMessage ?? JSON.stringify(check.details)}`);
  return { unexpected: details, stale, ran: wholeScenario || checks.some((check) => check.status === 'SUCCESS') };
}
