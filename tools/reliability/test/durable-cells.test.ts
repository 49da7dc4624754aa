import { defineFunctionTool } from '@switchyard/kit';
import { afterAll, describe, expect, it } from 'vitest';
import { report } from '../src/profile';
import { until } from '@switchyard/test-helpers';
import { openHarness, sleep, testTools, waitItem, workerChildren, type ExecOutcome, type Harness } from './helpers';

// Crash transparency through the whole stack (session → registry → broker → RemoteSession → a
// worker process): a worker that dies takes no cell with it. Its cells are replayed from their
// journals on another worker; the bystanders finish with their exact output, each nested call runs
// once; the cell that kills its worker is found by replaying the lost cells alone (quarantine) and
// fails, alone, with the cause.

const figures: string[] = [];
afterAll(() => report('durable cells', figures.join('; ')));

/** A nested tool that records who called it with which index, and answers after `delayMs` (call `i` also waits for `holds[i]`). */
function countingTool(log: string[], delayMs: number, holds: Array<Promise<void> | undefined> = []) {
  return defineFunctionTool({
    name: 'count',
    description: 'Records the call and returns its index.',
    parameters: { type: 'object', properties: { who: { type: 'string' }, i: { type: 'number' } }, required: ['who', 'i'] },
    supportsParallelToolCalls: true,
    handle: async ({ args }) => {
      log.push(`${args.who as string}:${args.i as number}`);
      await holds[args.i as number];
      await sleep(delayMs);
      return { i: args.i };
    },
  });
}

/** Sessions whose runtimes share one pool (same worker options): `max: 1`, shared placement. */
async function sessions(count: number, log: string[], delayMs: number, resumed: string[] = [], holds?: Array<Promise<void> | undefined>): Promise<Harness[]> {
  const harnesses: Harness[] = [];
  for (let i = 0; i < count; i++) {
    const harness = await openHarness({ tools: [...testTools(), countingTool(log, delayMs, holds)], runtimeOptions: { workers: { max: 1, perSession: false } } });
    harness.session.on('cell-resumed', (event) => void resumed.push(`${i}:${event.alone ? 'alone' : 'together'}`));
    harness.session.on('runtime-lost', (event) => void resumed.push(`${i}:lost ${event.cellIds.length}`));
    harnesses.push(harness);
  }
  return harnesses;
}

const callsBy = (log: string[], who: string) => log.filter((entry) => entry.startsWith(`${who}:`)).map((entry) => Number(entry.split(':')[1]));
const bystanderSource = (who: string) =>
  `const got = []; for (let i = 0; i < 8; i++) got.push((await tools.count({ who: '${who}', i })).i); text('${who} ' + got.join(','));`;

describe('durable cells: a worker that dies takes no cell with it', { timeout: 240_000 }, () => {
  it('7 sessions share one worker; a one-line V8 fatal in the 7th: every bystander completes exactly, each call ran once, only the 7th fails', async () => {
    const log: string[] = [];
    const resumed: string[] = [];
    // Every bystander's third call is still running when the fatal strikes (building it takes seconds),
    // and its fourth when the fatal's replay strikes again: each answers only after that loss, so
    // the bystanders lose two workers too and finish alone (quarantine).
    const crashes: Array<() => void> = [];
    const holds = [undefined, undefined, new Promise<void>((resolve) => crashes.push(resolve)), new Promise<void>((resolve) => crashes.push(resolve))];
    const all = await sessions(7, log, 100, resumed, holds);
    all[6]!.session.on('runtime-lost', () => setTimeout(() => crashes.shift()?.(), 200));
    const started = Date.now();
    try {
      const bystanders = all.slice(0, 6).map((harness, index) => harness.exec(bystanderSource(`b${index}`), { yieldTimeMs: 180_000 }));
      // every bystander is mid-cell (two calls made) when the 7th session's cell kills the worker
      await until(() => all.slice(0, 6).every((_, index) => callsBy(log, `b${index}`).length >= 3), 'every bystander at its third call', 120_000);
      const culprit = await all[6]!.exec(`text("x".repeat(2**28).split("").length)`, { yieldTimeMs: 180_000 });
      const ends: ExecOutcome[] = await Promise.all(bystanders);
      for (let index = 0; index < 6; index++) {
        expect(ends[index], `bystander ${index}: ${ends[index]!.error} (${resumed.join(" ")})`).toMatchObject({ status: 'completed', output: [`b${index} 0,1,2,3,4,5,6,7`] });
        expect(callsBy(log, `b${index}`)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      }
      expect(culprit.status).toBe('failed');
      expect(culprit.error).toMatch(/^exec runtime ended unexpectedly: the runtime worker (crashed with SIG\w+|exited with code \d+|was killed by SIG\w+)/);
      expect(culprit.output).toEqual([]);
      // the culprit was replayed with the others, then alone, where it ended its runtime once more
      expect(resumed.filter((entry) => entry.startsWith('6:'))).toEqual(['6:lost 1', '6:together', '6:lost 1', '6:alone', '6:lost 1']);
      // every bystander lost two workers to it, was replayed with the others, then alone (its calls joined, never run again)
      for (let index = 0; index < 6; index++) {
        expect(resumed.filter((entry) => entry.startsWith(`${index}:`)), resumed.join(' ')).toEqual([`${index}:lost 1`, `${index}:together`, `${index}:lost 1`, `${index}:alone`]);
      }
      figures.push(
        `7 sessions on 1 worker, V8 fatal in one: 6/6 bystanders exact, ${log.length} nested calls for 48 (each once), ${resumed.filter((entry) => !entry.includes('lost')).length} replays (${resumed.filter((entry) => entry.endsWith('alone')).length} alone), culprit failed "${culprit.error!.slice(0, 90)}…" in ${Date.now() - started} ms`,
      );
    } finally {
      await Promise.all(all.map((harness) => harness.close()));
    }
  });

  it('the worker SIGKILLed from outside while 4 sessions are mid-cell: all 4 complete, each call ran once, Math.random() and Date.now() as before the kill', async () => {
    const log: string[] = [];
    const resumed: string[] = [];
    const before = new Set(workerChildren());
    const all = await sessions(4, log, 200, resumed);
    try {
      const source = (who: string) =>
        `const r = Math.random(), t = Date.now(); text('${who} before ' + r + ' ' + t); yield_control();
         const got = []; for (let i = 0; i < 8; i++) got.push((await tools.count({ who: '${who}', i })).i);
         text('${who} after ' + r + ' ' + t + ' ' + got.join(','));`;
      // each exec returns at its yield_control(): the model has seen the values before the kill
      const firsts = await Promise.all(all.map((harness, index) => harness.exec(source(`s${index}`), { yieldTimeMs: 60_000 })));
      for (const first of firsts) expect(first.status).toBe('running');
      const waits = all.map((harness, index) => harness.step.dispatch(waitItem(`wait-${index}`, { cell_id: firsts[index]!.cellId, yield_time_ms: 180_000 })));
      await until(() => all.every((_, index) => callsBy(log, `s${index}`).length >= 2), 'every session at its second call', 120_000);
      const workers = workerChildren().filter((pid) => !before.has(pid));
      expect(workers.length).toBeGreaterThanOrEqual(1);
      for (const pid of workers) process.kill(pid, 'SIGKILL');
      const ends = (await Promise.all(waits)).map((item) => (item as { output: Array<{ text?: string }> }).output.map((part) => part.text ?? ''));
      for (let index = 0; index < 4; index++) {
        const [value, time] = /before (\S+) (\S+)$/.exec(firsts[index]!.output[0]!)!.slice(1);
        expect(ends[index]![0]).toMatch(/^Script completed/);
        expect(ends[index]!.slice(-1)).toEqual([`s${index} after ${value} ${time} 0,1,2,3,4,5,6,7`]);
        expect(callsBy(log, `s${index}`)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      }
      expect(resumed.sort()).toEqual(['0:lost 1', '0:together', '1:lost 1', '1:together', '2:lost 1', '2:together', '3:lost 1', '3:together']);
      figures.push(`SIGKILL of the shared worker mid-cell: 4/4 cells completed with the values they printed before it, ${log.length} nested calls for 32`);
    } finally {
      await Promise.all(all.map((harness) => harness.close()));
    }
  });
});
