/**
 * Durable cells (issue 43): what the journal costs and what a replay takes. Nested calls through a
 * worker, dispatched through a registry, with the journal on (the default) and off
 * (`maxJournalBytes: 0`, the host keeps none; the prelude records either way), against the floor
 * measured in the same rounds (raw isolated-vm bridge + a JSON-line ping-pong with a child process +
 * one direct registry dispatch, `floor.ts`); 100 parallel no-ops against the raw bridge; the bytes a
 * journal holds per nested call (a no-op, and a call answering 1 KiB); and the time to resume a cell
 * whose journal holds 100 calls, on a warm worker, restored from its exported state.
 *
 * `BENCH_DURABLE_SMOKE=1` runs every figure with small counts (a check that the bench runs, not a
 * figure to record).
 */
import { createCodeModeRuntime, type CodeModeRuntimeOptions } from '@switchyard/code-mode-runtime';
import type { CellHost, CellToolDescriptor, CodeModeSession, CodeModeSessionState } from '@switchyard/protocol';
import { alternatingMedians, compare, median, type Bench, type BenchFigure } from '../harness';
import { rawBridgeRun } from '../raw-bridge';
import { directDispatch, registryHost, startPingPong } from '../floor';

const SMOKE = process.env.BENCH_DURABLE_SMOKE === '1';
const SEQUENTIAL = SMOKE ? 20 : 500;
const PARALLEL = 100;
const ROUNDS = SMOKE ? 2 : 9;
const RESUMES = SMOKE ? 2 : 9;
const JOURNALED = 100;

const tools: CellToolDescriptor[] = [
  { name: 'noop', description: 'does nothing', kind: 'function' },
  { name: 'kib', description: 'answers 1 KiB', kind: 'function' },
  { name: 'gate', description: 'never answers', kind: 'function' },
];

type Durable = CodeModeSession & Required<Pick<CodeModeSession, 'exportState' | 'restore'>>;

function open(options: CodeModeRuntimeOptions, host: CellHost) {
  const runtime = createCodeModeRuntime({ maxInFlightCalls: 1024, maxCells: 1000, ...options, workers: { shared: false } });
  const session = runtime.openSession(host) as Durable;
  return {
    runtime,
    session,
    async run(source: string) {
      const { observation } = await session.createCell({ source, tools, yieldTimeMs: 60_000 });
      if (observation.kind !== 'completed' || observation.error !== undefined) throw new Error(`bench cell failed: ${JSON.stringify(observation)}`);
    },
  };
}

/** A host answering `noop` with nothing, `kib` with 1 KiB of text, `gate` never (its call stays in flight). */
function plainHost(): CellHost {
  return {
    invokeTool: async (request) => (request.tool === 'kib' ? 'x'.repeat(1024) : request.tool === 'gate' ? new Promise(() => {}) : null),
    notify() {},
    cellClosed() {},
  };
}

const loop = (count: number, call: string) => `for (let i = 0; i < ${count}; i++) await ${call}; text('ok');`;

async function againstFloor(): Promise<BenchFigure[]> {
  const on = open({}, registryHost());
  const off = open({ maxJournalBytes: 0 }, registryHost());
  const pingPong = startPingPong();
  const dispatch = directDispatch();
  try {
    await on.run(`text('warm')`);
    await off.run(`text('warm')`);
    const [onEmpty, onFull, offEmpty, offFull, rawEmpty, rawFull, pipe, direct] = await alternatingMedians(
      [
        () => on.run(`text('ok')`),
        () => on.run(loop(SEQUENTIAL, 'tools.noop()')),
        () => off.run(`text('ok')`),
        () => off.run(loop(SEQUENTIAL, 'tools.noop()')),
        () => rawBridgeRun(`text('ok')`, async () => null, 'noop'),
        () => rawBridgeRun(loop(SEQUENTIAL, 'noop()'), async () => null, 'noop'),
        () => pingPong.trips(SEQUENTIAL),
        () => dispatch.calls(SEQUENTIAL),
      ],
      ROUNDS,
      2,
    );
    const micros = (ms: number) => (ms * 1000) / SEQUENTIAL;
    const [withJournal, without, raw, trip, call] = [micros(onFull - onEmpty), micros(offFull - offEmpty), micros(rawFull - rawEmpty), micros(pipe), micros(direct)];
    const floor = { name: `floor: raw bridge ${raw.toFixed(0)} + ping-pong ${trip.toFixed(0)} + dispatch ${call.toFixed(0)} µs`, value: raw + trip + call };
    const note = `${SEQUENTIAL} calls per cell, cell start subtracted, median of ${ROUNDS} alternating runs`;
    const parallel = `await Promise.all(Array.from({ length: ${PARALLEL} }, () => tools.noop())); text('ok');`;
    const [par, rawPar] = await alternatingMedians([() => on.run(parallel), () => rawBridgeRun(parallel.replaceAll('tools.noop()', 'noop()'), async () => null, 'noop')], ROUNDS + 6, 3);
    return [
      compare('nested no-op call, journal on (default), through a worker, registry-dispatched', withJournal, 'µs', floor, { note: `${note}; target ≤ 1.5× the floor` }),
      compare('nested no-op call, journal off (maxJournalBytes 0)', without, 'µs', floor, { note }),
      compare('the journal\'s own cost per nested call (on ÷ off)', withJournal, 'µs', { name: 'journal off, same run', value: without }, { note }),
      compare(`${PARALLEL} parallel nested no-op calls, journal on`, par, 'ms', { name: 'raw isolated-vm bridge, same technique', value: rawPar }, { note: `cell start included on both sides, median of ${ROUNDS + 6} alternating runs; target ≤ 2.5×` }),
    ];
  } finally {
    pingPong.close();
    await on.runtime.shutdown();
    await off.runtime.shutdown();
  }
}

/** A cell of `count` calls of `tool`, left waiting on `gate` (so it is open), and its exported state. */
async function journaled(count: number, tool: string): Promise<{ state: CodeModeSessionState; shutdown(): Promise<void> }> {
  const first = open({}, plainHost());
  await first.session.createCell({ source: `for (let i = 0; i < ${count}; i++) await tools.${tool}({ i }); text('calls made'); await tools.gate({}); text('after');`, tools, yieldTimeMs: 0 });
  for (;;) {
    const state = first.session.exportState();
    if (state.cells[0]?.calls.length === count + 1) return { state, shutdown: () => first.runtime.shutdown() };
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function journalBytes(): Promise<BenchFigure[]> {
  const figures: BenchFigure[] = [];
  for (const [tool, what] of [['noop', 'a no-op call'], ['kib', 'a call answering 1 KiB']] as const) {
    const empty = await journaled(0, tool);
    const full = await journaled(JOURNALED, tool);
    const bytes = (state: CodeModeSessionState) => Buffer.byteLength(JSON.stringify(state.cells[0]), 'utf8');
    const entries = (state: CodeModeSessionState) => state.cells[0]!.entries.length;
    figures.push({
      name: `journal bytes per nested call: ${what}`,
      value: (bytes(full.state) - bytes(empty.state)) / JOURNALED,
      unit: 'B',
      note: `exported JSON of a cell with ${JOURNALED} calls minus one with none; of which the runtime's entries ${((entries(full.state) - entries(empty.state)) / JOURNALED).toFixed(1)} B`,
    });
    await empty.shutdown();
    await full.shutdown();
  }
  return figures;
}

async function resumeTime(): Promise<BenchFigure[]> {
  const { state, shutdown } = await journaled(JOURNALED, 'noop');
  await shutdown();
  const second = open({}, plainHost());
  const fresh = open({}, plainHost());
  const cellId = state.cells[0]!.cellId;
  try {
    await second.run(`text('warm')`);
    await fresh.run(`text('warm')`);
    const resumes: number[] = [];
    const starts: number[] = [];
    for (let round = 0; round < RESUMES; round++) {
      // a fresh session each round (a restore comes before any cell); the pool's worker stays warm
      const session = second.runtime.openSession(plainHost()) as Durable;
      let started = performance.now();
      await session.restore(state);
      // the restarted host interrupts the call in flight (gate): the replayed cell then completes
      const end = await session.observe(cellId, { yieldTimeMs: 60_000 });
      resumes.push(performance.now() - started);
      if (end.kind !== 'completed') throw new Error(`resumed cell did not complete: ${JSON.stringify(end)}`);
      await session.shutdown();
      started = performance.now();
      await fresh.run(loop(JOURNALED, 'tools.noop()'));
      starts.push(performance.now() - started);
    }
    return [
      compare(`resume a cell with ${JOURNALED} journaled calls (restore → completion, warm worker)`, median(resumes), 'ms', { name: `the same ${JOURNALED} calls run live`, value: median(starts) }, { note: `median of ${RESUMES}` }),
    ];
  } finally {
    await second.runtime.shutdown();
    await fresh.runtime.shutdown();
  }
}

const bench: Bench = {
  name: 'durable cells',
  async run(): Promise<BenchFigure[]> {
    return [...(await againstFloor()), ...(await journalBytes()), ...(await resumeTime())];
  },
};

export default bench;
