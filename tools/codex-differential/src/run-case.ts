import type { DiffCase, SideRun } from './case.ts';
import { allowedBy } from './allowlist.ts';
import { codexOnlyTools, observe, type Observation } from './compare.ts';
import { runCodex } from './run-codex.ts';
import { runSwitchyard } from './run-switchyard.ts';

/** A difference on one observation, and the allowlist entry that accepts it (if any). */
export interface Difference extends Observation {
  allowed?: string;
}

export interface CaseResult {
  id: string;
  what: string;
  /** `same`: every observation equal; `allowed`: only listed differences; `differs`: an unlisted one. */
  status: 'same' | 'allowed' | 'differs';
  observations: number;
  differences: Difference[];
  codexOnlyTools: string[];
  outcomes: { codex: string; switchyard: string };
  seconds: number;
  logs?: { codex: string; switchyard: string };
}

export async function runCase(binary: string, testCase: DiffCase): Promise<CaseResult> {
  const started = Date.now();
  let codex: SideRun;
  let switchyard: SideRun;
  try {
    [codex, switchyard] = await Promise.all([runCodex(binary, testCase), runSwitchyard(testCase)]);
  } catch (error) {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return {
      id: testCase.id, what: testCase.what, status: 'differs', observations: 0,
      differences: [{ key: 'harness', codex: undefined, switchyard: text }], codexOnlyTools: [],
      outcomes: { codex: '?', switchyard: '?' }, seconds: (Date.now() - started) / 1000,
    };
  }
  if (process.env.CODEX_DIFF_DUMP) {
    const { writeFileSync, mkdirSync } = await import('node:fs');
    mkdirSync(process.env.CODEX_DIFF_DUMP, { recursive: true });
    writeFileSync(`${process.env.CODEX_DIFF_DUMP}/${testCase.id.replace(/\//g, '__')}.json`, JSON.stringify({ codex, switchyard }, null, 1));
  }
  const observations = observe(testCase, codex, switchyard);
  const differences: Difference[] = observations
    .filter((observation) => observation.codex !== observation.switchyard)
    .map((observation) => ({ ...observation, allowed: allowedBy(testCase, observation)?.id }));
  const status = differences.length === 0 ? 'same' : differences.every((difference) => difference.allowed) ? 'allowed' : 'differs';
  return {
    id: testCase.id,
    what: testCase.what,
    status,
    observations: observations.length,
    differences,
    codexOnlyTools: testCase.compareTools ? codexOnlyTools(codex, switchyard) : [],
    outcomes: { codex: codex.outcome, switchyard: switchyard.outcome },
    seconds: (Date.now() - started) / 1000,
    ...(status === 'differs' ? { logs: { codex: codex.log.slice(-4000), switchyard: switchyard.log.slice(-4000) } } : {}),
  };
}

