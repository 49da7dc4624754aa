import { availableParallelism } from 'node:os';
import { expect, it } from 'vitest';
import { report } from '../src/profile';
import { runHostProcess } from './host-process';
import { PLACEMENT_HOST_TIMEOUT_MS, type PlacementReport } from './placement-report';

// 100 concurrent sessions, each its own tenant, on `createCodeModeRuntime()` at its defaults (dense
// placement: 16 sessions per worker), each running a cell with 10 sequential nested calls of a
// 100 ms tool, in a child host process. None may fail admission, every call runs once, and the
// worker processes stay within the documented bound: the sessions packed 16 to a worker plus the
// prewarmed spare, within 4 per CPU — counted in /proc, both at once and over the whole run (a
// worker ended to start another would show as one more distinct pid).
const SESSIONS = 100;

it('100 concurrent sessions at default options: none fails admission, every nested call runs once, workers within the bound', async () => {
  const { code, report: host, stderr, loadPerCpu } = await runHostProcess<PlacementReport>('placement-host.ts', [String(SESSIONS)], PLACEMENT_HOST_TIMEOUT_MS);
  expect(host, `host exited ${code}: ${stderr}`).toBeDefined();
  const failed = host!.outcomes.filter((outcome) => outcome.kind !== 'completed' || outcome.error !== undefined || outcome.texts?.join() !== '45');
  expect(failed).toEqual([]);
  expect(host!.outcomes).toHaveLength(SESSIONS);
  expect(host!.runs.flat().filter((count) => count !== 1)).toEqual([]);
  expect(host!.runs.flat()).toHaveLength(SESSIONS * 10);
  expect(host!.events.filter((event) => event.type === 'runtime-refused')).toEqual([]);
  const bound = Math.min(4 * availableParallelism(), Math.ceil(SESSIONS / 16) + 1);
  expect(host!.mostWorkers).toBeLessThanOrEqual(bound);
  expect(host!.distinctWorkers).toBeLessThanOrEqual(bound);
  report(
    'placement',
    `${SESSIONS} sessions, all completed; workers at once ${host!.mostWorkers}, distinct ${host!.distinctWorkers} (bound ${bound}); first-turn p50 ${Math.round(host!.latencyMs.p50)} ms, p99 ${Math.round(host!.latencyMs.p99)} ms; host event-loop delay p99 ${host!.eventLoopDelayMs.p99.toFixed(1)} ms, max ${host!.eventLoopDelayMs.max.toFixed(1)} ms; load per CPU up to ${loadPerCpu.toFixed(1)}`,
  );
}, PLACEMENT_HOST_TIMEOUT_MS + 30_000);
