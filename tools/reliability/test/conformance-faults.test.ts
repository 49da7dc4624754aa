import { createRemoteRuntime } from '@switchyard/code-mode-runtime/protocol';
import type { CellObservation, CellRuntimeEvent, CodeModeRuntime } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLink, faultOnce, memoryPlacement, type Direction, type FaultPlan } from './conformance/memory-transport';
import { conformanceHost } from './conformance/runtime-conformance';
import { cellTexts } from '@switchyard/test-helpers';

// Faults of a bus injected into the runtime protocol's link (the in-memory link of the
// conformance suite). Each fault hits one frame of one session's link; the session beside it (its
// own link) and the next session must not notice. The runtime protocol assumes an ordered link
// that loses nothing (a stream; the NATS transport numbers its messages and ends the connection
// on a gap or a replay), so what is checked here is containment and clear texts. A link that ends
// on a violation is a lost runtime: its cell is replayed from its journal on a new link (the
// fault struck once) and completes, the violation named in the host's `runtime-lost` event, and
// no tool runs twice.

const TOOLS = [
  { name: 'echo', description: 'Returns its input.', kind: 'function' as const },
  { name: 'slow', description: 'Answers after input.ms.', kind: 'function' as const },
];
const frameOfType = (direction: Direction, type: string) => (frame: string, sent: Direction) => sent === direction && frame.includes(`"t":"${type}"`);

let runtime: CodeModeRuntime | undefined;
afterEach(async () => {
  await runtime?.shutdown();
  runtime = undefined;
});

/** A runtime over fault-injecting links; `bystander` is a session already holding a yielded cell on its own link. */
async function faulty(plan: FaultPlan, options: { replyGraceMs?: number } = {}) {
  let armed = false;
  const memory = memoryPlacement((frame, direction, index) => (armed ? plan(frame, direction, index) : undefined), options);
  runtime = createRemoteRuntime({ placement: memory.placement, onShutdown: memory.close });
  const recorded = conformanceHost();
  let calls = 0;
  const lost: string[] = [];
  const host = {
    ...recorded.host,
    invokeTool: (request: Parameters<typeof recorded.host.invokeTool>[0]) => (calls++, recorded.host.invokeTool(request)),
    runtimeEvent: (event: CellRuntimeEvent) => void (event.type === 'runtime-lost' && lost.push(event.cause)),
  };
  const bystander = runtime.openSession(conformanceHost().host);
  const waiting = await bystander.createCell({ source: `text('bystander'); yield_control(); await new Promise((resolve) => setTimeout(resolve, 300)); text('done');`, tools: TOOLS, yieldTimeMs: 30_000 });
  expect(waiting.observation).toMatchObject({ kind: 'yielded', items: [{ text: 'bystander' }] });
  armed = true;
  const session = runtime.openSession(host);
  const run = async (source: string, yieldTimeMs = 30_000) => (await session.createCell({ source, tools: TOOLS, yieldTimeMs })).observation;
  /** The bystander finishes its cell and a new session runs: the fault stayed on its link. */
  const othersUnharmed = async () => {
    expect(await bystander.observe(waiting.cellId, { yieldTimeMs: 30_000 })).toMatchObject({ kind: 'completed', items: [{ text: 'done' }] });
    const next = runtime!.openSession(conformanceHost().host);
    expect(cellTexts((await next.createCell({ source: `text('next')`, tools: TOOLS, yieldTimeMs: 30_000 })).observation)).toEqual(['next']);
  };
  return { run, session, calls: () => calls, lost, othersUnharmed, links: memory.links };
}

describe('the in-memory link itself', () => {
  it('keeps the order of frames in each direction whatever their random delays', async () => {
    // Frames sent over several milliseconds with delays of 0-15 ms each: a timer per frame let a
    // later frame with a shorter delay overtake an earlier one (Node counts timers from the event
    // loop's cached clock); the link's suites rely on a stream's order.
    const link = createMemoryLink(() => ({ kind: 'delay', ms: Math.floor(Math.random() * 16) }));
    const received: number[] = [];
    link.runtime.onFrame((frame) => received.push(Number(frame)));
    for (let i = 0; i < 2_000; i++) {
      link.host.send(String(i));
      const until = performance.now() + 0.05;
      while (performance.now() < until);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(received).toEqual(Array.from({ length: 2_000 }, (_, i) => i));
    link.close();
  });
});

describe('runtime protocol faults on one link', () => {
  it('a frame to the host that is not JSON ends that link, naming the violation; the cell is replayed on a new link and completes', async () => {
    const link = await faulty(faultOnce(frameOfType('to-host', 'call'), { kind: 'corrupt', frame: '[{"t":"call",' }));
    expect(await link.run(`text(await tools.echo({ a: 1 }));`)).toMatchObject({ kind: 'completed', items: [{ text: '{"a":1}' }] });
    expect(link.lost).toEqual(['protocol violation: a frame that is not JSON']);
    // the corrupted call never reached the host: the replay made it, once
    expect(link.calls()).toBe(1);
    await link.othersUnharmed();
  });

  it('a frame that parses but breaks the message table is refused after parsing, by field', async () => {
    const link = await faulty(faultOnce(frameOfType('to-host', 'call'), { kind: 'corrupt', frame: '[{"t":"call","call":"x"}]' }));
    expect(await link.run(`text(await tools.echo({ a: 1 }));`)).toMatchObject({ kind: 'completed', items: [{ text: '{"a":1}' }] });
    expect(link.lost).toEqual(['protocol violation: call.call is not a non-negative integer']);
    expect(link.calls()).toBe(1);
    await link.othersUnharmed();
  });

  it('a corrupt frame to the runtime ends that link: its cell is created on the next one, nothing else notices', async () => {
    const link = await faulty(faultOnce(frameOfType('to-runtime', 'create-cell'), { kind: 'corrupt', frame: '[{"t":"create-cell"}]' }));
    expect(await link.run(`text('once');`)).toMatchObject({ kind: 'completed', items: [{ text: 'once' }] });
    // the runtime ends the link on the violation (its fatal may or may not arrive before the close)
    expect(link.lost).toHaveLength(1);
    expect(link.lost[0]).toMatch(/^(the runtime gave up: protocol violation: |the connection to the runtime closed$)/);
    await link.othersUnharmed();
  });

  it('a duplicated frame is a protocol violation, never a second effect', async () => {
    // a second call-result for one call (to the runtime), a second reply to one request (the runtime
    // answering a duplicated create-cell), a call repeated while the first is still in flight
    const cases: Array<[FaultPlan, string, string[], RegExp]> = [
      [faultOnce(frameOfType('to-runtime', 'call-result'), { kind: 'duplicate' }), `text(await tools.echo({ a: 1 }));`, ['{"a":1}'], /^the runtime gave up: protocol violation: a result for call 1, which is not pending$/],
      [faultOnce(frameOfType('to-runtime', 'create-cell'), { kind: 'duplicate' }), `text('once');`, ['once'], /^protocol violation: a reply to request \d+, which is not pending$/],
      [faultOnce(frameOfType('to-host', 'call'), { kind: 'duplicate' }), `text(await tools.slow({ ms: 2000 }));`, ['slow done'], /^protocol violation: call 1 is already in flight$/],
    ];
    for (const [plan, source, output, violation] of cases) {
      const link = await faulty(plan);
      const observation = await link.run(source);
      expect(observation).toMatchObject({ kind: 'completed' });
      expect(cellTexts(observation)).toEqual(output);
      expect(link.lost).toHaveLength(1);
      expect(link.lost[0]).toMatch(violation);
      expect(link.calls()).toBeLessThanOrEqual(1);
      await link.othersUnharmed();
      await runtime!.shutdown();
    }
  });

  it('a call frame replayed after its call ended is a protocol violation: the tool never runs twice, the cell goes on from its journal', async () => {
    const link = await faulty(faultOnce(frameOfType('to-host', 'call'), { kind: 'replay', afterMs: 300 }));
    const observation = await link.run(`text(await tools.echo({ a: 1 })); await new Promise((resolve) => setTimeout(resolve, 3000)); text('after');`);
    expect(observation).toMatchObject({ kind: 'completed' });
    expect(link.lost).toEqual(['protocol violation: call 1 repeats an earlier call']);
    // the output handed out before the loss is not handed out again: this observation took it all
    expect(cellTexts(observation)).toEqual(['{"a":1}', 'after']);
    expect(link.calls()).toBe(1);
    await link.othersUnharmed();
  });

  it('a dropped frame stalls only its cell: the yield time answers, terminate ends the cell, the tool never runs', async () => {
    const link = await faulty(faultOnce(frameOfType('to-host', 'call'), { kind: 'drop' }));
    const { cellId, observation } = await link.session.createCell({ source: `text('before'); text(await tools.echo({ a: 1 }));`, tools: TOOLS, yieldTimeMs: 1_000 });
    expect(observation).toMatchObject({ kind: 'yielded' });
    const ended = await link.session.terminate(cellId);
    expect(ended).toMatchObject({ kind: 'terminated' });
    expect([...cellTexts(observation), ...cellTexts(ended)]).toEqual(['before']);
    expect(link.calls()).toBe(0);
    await link.othersUnharmed();
  });

  it('a dropped keyed request is answered at the latest when its link ends (here: the runtime shuts down)', async () => {
    // The session's second create-cell, sent while its first cell holds the session open (the
    // first travels with the session's open-session). Keyed: its answer is its caller's retry's.
    let creates = 0;
    const link = await faulty((frame, direction) => (frameOfType('to-runtime', 'create-cell')(frame, direction) && ++creates === 2 ? { kind: 'drop' } : undefined));
    expect(cellTexts(await link.run(`text('first'); yield_control(); await new Promise(() => {});`))).toEqual(['first']);
    const lost = link.session.createCell({ source: `text('lost')`, tools: TOOLS, yieldTimeMs: 500, idempotencyKey: 'k-lost' });
    await link.othersUnharmed();
    await runtime!.shutdown();
    const { observation } = await lost;
    expect(observation).toMatchObject({ kind: 'completed', items: [] });
    expect(observation.kind === 'completed' && observation.error).toMatch(/^exec runtime ended unexpectedly: /);
  });

  it('an unkeyed create-cell whose request or reply is dropped fails within its yield time and the link grace: the cell terminated, the session goes on', async () => {
    const grace = 400;
    const yieldTimeMs = 300;
    const expected = `exec runtime did not answer within ${yieldTimeMs + grace} ms (the yield time and ${grace} ms for the link): the reply to the cell's creation was lost, and the cell was terminated`;
    // The request dropped (the session's second create-cell: the first travels with open-session),
    // then the reply dropped (the runtime ran the cell: its first observation never arrives).
    let creates = 0;
    const requestDropped = (frame: string, direction: Direction) => frameOfType('to-runtime', 'create-cell')(frame, direction) && ++creates === 2;
    const replyDropped = (frame: string, direction: Direction) => frameOfType('to-host', 'reply')(frame, direction) && frame.includes('"text":"unseen"');
    for (const [drop, source] of [
      [requestDropped, `text('never ran')`],
      [replyDropped, `text('unseen'); yield_control(); await new Promise(() => {});`],
    ] as const) {
      const link = await faulty((frame, direction) => (drop(frame, direction) ? { kind: 'drop' } : undefined), { replyGraceMs: grace });
      expect(cellTexts(await link.run(`text('first'); yield_control(); await new Promise(() => {});`))).toEqual(['first']);
      const startedAt = performance.now();
      const { cellId, observation } = await link.session.createCell({ source, tools: TOOLS, yieldTimeMs });
      const waited = performance.now() - startedAt;
      expect(observation).toMatchObject({ kind: 'completed', cellId, items: [], error: expected });
      expect(waited).toBeGreaterThanOrEqual(yieldTimeMs + grace - 5);
      expect(waited).toBeLessThan(yieldTimeMs + 2 * grace + 10_000);
      // The cell is gone on both sides: the host forgot it, the runtime was told to terminate it.
      await expect(link.session.observe(cellId, { yieldTimeMs: 0 })).rejects.toMatchObject({ code: 'CELL_NOT_FOUND' });
      const sent = link.links.at(-1)!.frames.filter((record) => record.direction === 'to-runtime').map((record) => record.frame);
      expect(sent.some((frame) => frame.includes('"t":"terminate"') && frame.includes(`"cellId":"${cellId}"`))).toBe(true);
      expect(cellTexts(await link.run(`text('after')`))).toEqual(['after']);
      await link.othersUnharmed();
      await runtime!.shutdown();
    }
  });

  it('a delayed frame holds back the ones after it: results arrive whole and in order', async () => {
    const link = await faulty(faultOnce(frameOfType('to-host', 'call'), { kind: 'delay', ms: 400 }));
    const observation = await link.run(`const r = await Promise.all([1, 2, 3].map((i) => tools.echo({ i }))); text(r.map((x) => x.i).join(','));`);
    expect(observation).toMatchObject({ kind: 'completed', items: [{ text: '1,2,3' }] });
    expect('error' in observation).toBe(false);
    await link.othersUnharmed();
  });
});
