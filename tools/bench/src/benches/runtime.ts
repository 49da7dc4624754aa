/**
 * @switchyard/code-mode-runtime in its two isolations — worker processes (the default) and
 * in-process — beside raw isolated-vm using the same technique (async entries on isolated-vm's
 * thread pool: an ignored Callback out, Reference.apply back), all three in one run, sampled in
 * alternation. The in-process figures add the prelude (globals), the module wrapper, the
 * observation state machine, cell ids and limits; the process figures add the runtime protocol:
 * JSON frames over the worker's stdio pipes, both ways, for every call and observation.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { createCodeModeRuntime, type CodeModeRuntimeOptions } from '@switchyard/code-mode-runtime';
import type { CellHost, CellToolDescriptor } from '@switchyard/protocol';
import { alternatingMedians, compare, median, type Bench, type BenchFigure } from '../harness';
import { rawBridgeRun } from '../raw-bridge';
import { directDispatch, registryHost, startPingPong } from '../floor';
import { residentMb, workerChildren as workerPids } from '@switchyard/config/proc';
import { until } from '@switchyard/test-helpers/poll';

const rssKiB = (pid: number) => residentMb(pid) * 1024;

const require = createRequire(import.meta.url);
const SEQUENTIAL_CALLS = 500;
const PARALLEL_CALLS = 100;
const LIVE_CELLS = 50;
const RAW = 'raw isolated-vm bridge, same technique';

const noopTool: CellToolDescriptor[] = [{ name: 'noop', description: 'does nothing', kind: 'function' }];

/** The raw technique: one isolate per run, a module, `noop()` calls bridged by Callback + Reference.apply. */
const rawRun = (source: string) => rawBridgeRun(source, async () => null, 'noop');

/** A runtime and a session whose `run(source)` resolves once the cell completed (throws otherwise). */
function open(options: CodeModeRuntimeOptions, host: CellHost = { invokeTool: async () => null, notify() {}, cellClosed() {} }) {
  const runtime = createCodeModeRuntime({ maxInFlightCalls: 1024, maxCells: 1000, nodeSnapshotCheck: 'ignore', ...options });
  const session = runtime.openSession(host);
  return {
    runtime,
    session,
    async run(source: string) {
      const { observation } = await session.createCell({ source, tools: noopTool, yieldTimeMs: 10_000 });
      if (observation.kind !== 'completed' || observation.error !== undefined) throw new Error(`bench cell failed: ${JSON.stringify(observation)}`);
    },
  };
}

/** An idle worker's RSS, and the growth of a worker's RSS per live idle cell (KiB). */
async function workerMemory(): Promise<{ worker: number; perCell: number }> {
  const before = new Set(workerPids());
  const runtime = createCodeModeRuntime({ maxCells: 1000, workers: { shared: false, max: 1, prewarm: true } });
  try {
    await until(() => workerPids().some((pid) => !before.has(pid)), 'bench: a new worker', 60_000);
    const pid = workerPids().find((p) => !before.has(p))!;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const worker = rssKiB(pid);
    const session = runtime.openSession({ invokeTool: async () => null, notify() {}, cellClosed() {} });
    const live = () => session.createCell({ source: 'yield_control(); await new Promise(() => {});', tools: [], yieldTimeMs: 10_000 });
    await live();
    const start = rssKiB(pid);
    for (let i = 0; i < LIVE_CELLS; i++) await live();
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { worker, perCell: (rssKiB(pid) - start) / LIVE_CELLS };
  } finally {
    await runtime.shutdown();
  }
}

/** RSS growth per live idle cell in a fresh process (freed malloc arenas would flatter a reused one): in-process runtime or raw. */
function inProcessPerCellKiB(kind: 'runtime' | 'raw'): number {
  const runtimePath = require.resolve('@switchyard/code-mode-runtime');
  const ivmPath = require.resolve('isolated-vm');
  const script = `
    const ivm = require(${JSON.stringify(ivmPath)});
    const { createCodeModeRuntime } = require(${JSON.stringify(runtimePath)});
    (async () => {
      const keep = [];
      let create;
      if (${JSON.stringify(kind)} === 'runtime') {
        const runtime = createCodeModeRuntime({ isolation: 'in-process', maxCells: 1000 });
        const session = runtime.openSession({ invokeTool: async () => null, notify() {}, cellClosed() {} });
        create = async () => { await session.createCell({ source: 'yield_control(); await new Promise(() => {});', tools: [], yieldTimeMs: 10000 }); };
      } else {
        create = async () => {
          const isolate = new ivm.Isolate({ memoryLimit: 128 });
          const context = await isolate.createContext();
          const module = await isolate.compileModule('await new Promise(() => {});');
          await module.instantiate(context, () => { throw new Error('x'); });
          void module.evaluate().catch(() => {});
          keep.push(isolate, context, module);
        };
      }
      await create();
      global.gc(); global.gc();
      const before = process.memoryUsage().rss;
      for (let i = 0; i < ${LIVE_CELLS}; i++) await create();
      await new Promise((resolve) => setTimeout(resolve, 300));
      global.gc(); global.gc();
      process.stdout.write(String((process.memoryUsage().rss - before) / 1024 / ${LIVE_CELLS}));
      process.exit(0);
    })();`;
  return Number(execFileSync(process.execPath, ['--no-node-snapshot', '--expose-gc', '-e', script], { encoding: 'utf8' }));
}

/**
 * The sequential nested call through a worker, dispatched through a registry, against its physical
 * floor measured in the same rounds (sampled in alternation, like the rest): the raw bridge call +
 * one JSON-line ping-pong to a child process + one direct registry dispatch.
 */
async function againstFloor(dispatched: ReturnType<typeof open>): Promise<BenchFigure[]> {
  const pingPong = startPingPong();
  const dispatch = directDispatch();
  try {
    const [empty, full, rawEmpty, rawFull, pipe, direct] = await alternatingMedians(
      [
        () => dispatched.run(`text('ok')`),
        () => dispatched.run(`for (let i = 0; i < ${SEQUENTIAL_CALLS}; i++) await tools.noop(); text('ok');`),
        () => rawRun(`text('ok')`),
        () => rawRun(`for (let i = 0; i < ${SEQUENTIAL_CALLS}; i++) await noop(); text('ok');`),
        () => pingPong.trips(SEQUENTIAL_CALLS),
        () => dispatch.calls(SEQUENTIAL_CALLS),
      ],
      9,
      2,
    );
    const micros = (ms: number) => (ms * 1000) / SEQUENTIAL_CALLS;
    const [nested, raw, trip, call] = [micros(full - empty), micros(rawFull - rawEmpty), micros(pipe), micros(direct)];
    const floor = raw + trip + call;
    return [
      { name: 'floor part: one JSON-line ping-pong with a child process', value: trip, unit: 'µs', note: `${SEQUENTIAL_CALLS} sequential round trips, median of 9 alternating runs` },
      { name: 'floor part: one direct registry dispatch (no-op tool, no hooks)', value: call, unit: 'µs', note: `${SEQUENTIAL_CALLS} sequential calls, median of 9 alternating runs` },
      compare('nested no-op call through a worker, registry-dispatched (sequential)', nested, 'µs', { name: `physical floor: raw bridge ${raw.toFixed(0)} + ping-pong ${trip.toFixed(0)} + dispatch ${call.toFixed(0)} µs`, value: floor }, {
        note: `${SEQUENTIAL_CALLS} calls per cell, cell start subtracted, median of 9 alternating runs; target ≤ 1.5× the floor`,
      }),
    ];
  } finally {
    pingPong.close();
  }
}

const bench: Bench = {
  name: 'code-mode-runtime',
  async run(): Promise<BenchFigure[]> {
    const processSide = open({ workers: { shared: false } });
    const inProcess = open({ isolation: 'in-process' });
    // Nested calls dispatched through a registry, as Code Mode's broker does (the floor has one dispatch too).
    const dispatched = open({ workers: { shared: false } }, registryHost());
    const figures: BenchFigure[] = [];
    try {
      // A warm worker: the session's worker and its prewarmed spare are started before anything is timed.
      await processSide.run(`text('warm')`);
      await dispatched.run(`text('warm')`);
      const both = (name: string, unit: string, [processValue, inProcessValue, rawValue]: number[], note: string) => {
        figures.push(compare(`${name} — process`, processValue, unit, { name: RAW, value: rawValue }, { note }));
        figures.push(compare(`${name} — in-process`, inProcessValue, unit, { name: RAW, value: rawValue }, { note }));
      };

      const [start, inStart, rawStart] = await alternatingMedians(
        [() => processSide.run(`text('hi')`), () => inProcess.run(`text('hi')`), () => rawRun(`text('hi')`)],
        31,
        5,
      );
      both("exec start to result, cell running text('hi')", 'ms', [start, inStart, rawStart], 'warm worker; median of 31 alternating runs');

      // Per call: (cell with N calls − the same cell with none) / N, so cell start is not counted.
      const loop = (call: string) => `for (let i = 0; i < ${SEQUENTIAL_CALLS}; i++) await ${call}; text('ok');`;
      const [empty, full, inEmpty, inFull, rawEmpty, rawFull] = await alternatingMedians(
        [
          () => processSide.run(`text('ok')`),
          () => processSide.run(loop('tools.noop()')),
          () => inProcess.run(`text('ok')`),
          () => inProcess.run(loop('tools.noop()')),
          () => rawRun(`text('ok')`),
          () => rawRun(loop('noop()')),
        ],
        9,
        2,
      );
      const perCall = (a: number, b: number) => ((b - a) * 1000) / SEQUENTIAL_CALLS;
      both('nested no-op call round trip (sequential)', 'µs', [perCall(empty, full), perCall(inEmpty, inFull), perCall(rawEmpty, rawFull)], `${SEQUENTIAL_CALLS} calls per cell, cell start subtracted, median of 9 alternating runs`);
      figures.push(...(await againstFloor(dispatched)));

      const parallel = (call: string) => `await Promise.all(Array.from({ length: ${PARALLEL_CALLS} }, () => ${call})); text('ok');`;
      const parallelTimes = await alternatingMedians(
        [() => processSide.run(parallel('tools.noop()')), () => inProcess.run(parallel('tools.noop()')), () => rawRun(parallel('noop()'))],
        15,
        3,
      );
      both(`${PARALLEL_CALLS} parallel nested no-op calls`, 'ms', parallelTimes, 'cell start included on both sides, median of 15 alternating runs');
    } finally {
      await processSide.runtime.shutdown();
      await inProcess.runtime.shutdown();
      await dispatched.runtime.shutdown();
    }

    const samples = [await workerMemory(), await workerMemory(), await workerMemory()];
    const workerKiB = median(samples.map((sample) => sample.worker));
    const perCellKiB = median(samples.map((sample) => sample.perCell));
    const inProcessCell = median([inProcessPerCellKiB('runtime'), inProcessPerCellKiB('runtime'), inProcessPerCellKiB('runtime')]);
    const rawCell = median([inProcessPerCellKiB('raw'), inProcessPerCellKiB('raw'), inProcessPerCellKiB('raw')]);
    const rawRef = { name: 'raw isolate + context + pending module', value: rawCell };
    figures.push({ name: 'resident memory of an idle worker process', value: workerKiB / 1024, unit: 'MB', note: 'a prewarmed worker before its first cell, median of 3 fresh workers' });
    figures.push(compare('resident memory per live idle cell — process', perCellKiB, 'KiB', rawRef, { note: `${LIVE_CELLS} live cells, growth of the worker's RSS, median of 3` }));
    figures.push(compare('resident memory per live idle cell — in-process', inProcessCell, 'KiB', rawRef, { note: `${LIVE_CELLS} live cells, fresh process each, median of 3` }));
    return figures;
  },
};

export default bench;
