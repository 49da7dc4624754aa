import type { SwitchyardEvent } from '@switchyard/protocol';
import { expect, it } from 'vitest';
import { useCleanups } from '@switchyard/test-helpers';
import { report } from '../src/profile';
import { execItem, openHarness, texts, waitItem } from './helpers';

// The admission queue as a model and a host see it, through real sessions (code-mode-only) whose
// runtimes share one pool of one worker that holds one session (the same worker options: one pool
// per process). Session A holds the place with a running cell; B's exec waits in the queue and is
// refused at the wait bound; C's exec, while B waits, is refused at once (the queue holds one);
// then B waits again and gets the place when A's cell ends. A refusal is the exec's whole output.
const WORKERS = { max: 1, sessionsPerWorker: 1, prewarm: false, admissionMs: 1_500, maxQueued: 1, idleMs: 60_000 };
const POOL = "the pool's 1 place (workers.max 1 × workers.sessionsPerWorker 1) is held by 1 session";

const { defer } = useCleanups();

async function openQueued() {
  const harness = defer(await openHarness({ runtimeOptions: { workers: WORKERS } }), (opened) => opened.close());
  const events: SwitchyardEvent[] = [];
  for (const type of ['runtime-queued', 'runtime-admitted', 'runtime-refused'] as const) harness.session.on(type, (event) => events.push(event));
  let sequence = 0;
  /** The exec output item as the model reads it (a refusal is its text alone, not a script's status). */
  const execRaw = (code: string) => harness.step.dispatch(execItem(`raw-${++sequence}`, `// @exec: {"yield_time_ms": 30000}\n${code}`));
  return { ...harness, events, execRaw };
}

it('a session beyond the pool waits, hears its place, and the model sees a failure only at a bound', async () => {
  const a = await openQueued();
  const b = await openQueued();
  const c = await openQueued();
  const held = await a.exec(`text('a'); yield_control(); await new Promise(() => {});`);
  expect(held.status).toBe('running');

  const waiting = b.execRaw(`text('b')`);
  await expect.poll(() => b.events.length, { timeout: 10_000 }).toBeGreaterThan(0);
  expect(b.events[0]).toEqual({ type: 'runtime-queued', position: 1, waiting: 1, waitedMs: 0 });

  // the queue holds one session: C is refused at once
  const full = await c.execRaw(`text('c')`);
  const fullText = `no Code Mode worker is free and 1 session already waits for one: ${POOL}; the queue holds at most 1 session (workers.maxQueued)`;
  expect(full).toEqual({ type: 'custom_tool_call_output', call_id: 'raw-1', output: fullText });
  expect(c.events).toEqual([{ type: 'runtime-refused', reason: 'queue-full', message: fullText, waitedMs: 0 }]);

  // B is refused once it has waited admissionMs
  const refused = await waiting;
  const waitText = `no Code Mode worker became free within 1500 ms (workers.admissionMs): ${POOL}, and no other session waits`;
  expect(refused).toEqual({ type: 'custom_tool_call_output', call_id: 'raw-1', output: waitText });
  const last = b.events.at(-1)!;
  expect(last).toMatchObject({ type: 'runtime-refused', reason: 'wait-timeout', message: waitText });
  expect((last as { waitedMs: number }).waitedMs).toBeGreaterThanOrEqual(1_400);
  expect(b.events.slice(0, -1).every((event) => event.type === 'runtime-queued')).toBe(true);

  // B waits again; A's cell ends and gives the place back: B's cell runs on the same worker
  b.events.length = 0;
  const admitted = b.exec(`text('b again')`);
  await expect.poll(() => b.events.length, { timeout: 10_000 }).toBeGreaterThan(0);
  const ended = await a.step.dispatch(waitItem('stop-a', { cell_id: held.cellId, terminate: true }));
  expect(texts(ended)[0]).toMatch(/^Script terminated/);
  const ran = await admitted;
  expect(ran.status).toBe('completed');
  expect(ran.output).toEqual(['b again']);
  expect(b.events.map((event) => event.type)).toEqual(['runtime-queued', 'runtime-admitted']);
  report('admission queue', `refused at the length bound at once ("${fullText}"), at the wait bound after ${(last as { waitedMs: number }).waitedMs} ms; admitted when the holder's cell ended`);
}, 90_000);
