import { availableParallelism } from 'node:os';
import { expect, it } from 'vitest';
import { report } from '../src/profile';
import { runHostProcess } from './host-process';
import { PLACEMENT_HOST_TIMEOUT_MS, type PlacementReport } from './placement-report';

// placement-load.test.ts with a 101st session that runs a one-line V8 fatal error while all 100 are
// mid-cell (each waits on its 6th nested call until the fatal cell has ended), on a worker it
// shares with other tenants' sessions (dense placement packs it beside them). The worker dies;
// every bystander's cell must still complete with its exact output, each nested call run once (the
// cell journal replays them elsewhere), and only the 101st fails, naming the crash.
// Needs the durable cells of issue 43 (journal and replay): without them the bystanders sharing
// the crashed worker fail with it.
const SESSIONS = 100;

it('100 concurrent sessions at default options and a 101st running a V8 fatal: none of the 100 fails', async () => {
  const { code, report: host, stderr } = await runHostProcess<PlacementReport>('placement-host.ts', [String(SESSIONS), 'fatal'], PLACEMENT_HOST_TIMEOUT_MS);
  expect(host, `host exited ${code}: ${stderr}`).toBeDefined();
  const [fatal] = host!.outcomes.slice(SESSIONS);
  expect(fatal).toMatchObject({ kind: 'completed', error: expect.stringMatching(/^exec runtime ended unexpectedly: /) });
  const failed = host!.outcomes.slice(0, SESSIONS).filter((outcome) => outcome.kind !== 'completed' || outcome.error !== undefined || outcome.texts?.join() !== '45');
  expect(failed).toEqual([]);
  expect(host!.runs.flat().filter((count) => count !== 1)).toEqual([]);
  // the documented bound, plus the workers lone replays may start beyond it (max(2, max/4))
  const bound = Math.min(4 * availableParallelism(), Math.ceil(SESSIONS / 16) + 1) + 2;
  // all 100 were live at once (held at their 6th call): packed 16 to a worker, the last one part full
  expect(host!.mostWorkers).toBeGreaterThanOrEqual(Math.ceil(SESSIONS / 16));
  expect(host!.mostWorkers).toBeLessThanOrEqual(bound);
  report('placement', `${SESSIONS} sessions beside a V8 fatal: all completed; the fatal: ${fatal!.error}; workers at once ${host!.mostWorkers}, distinct ${host!.distinctWorkers}`);
}, PLACEMENT_HOST_TIMEOUT_MS + 30_000);
