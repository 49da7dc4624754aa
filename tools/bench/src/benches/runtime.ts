/**
 * @switchyard/code-mode-runtime against raw isolated-vm using the same technique (async entries
 * on isolated-vm's thread pool: an ignored Callback out, Reference.apply back), in the same run.
 * The runtime's figures add the prelude (globals), the module wrapper, the observation state
 * machine, cell ids and limits.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { createCodeModeRuntime, type CellToolDescriptor } from '@switchyard/code-mode-runtime';
import { compare, timeMedian, type Bench, type BenchFigure } from '../harness';
import { rawBridgeRun } from '../raw-bridge';

const require = createRequire(import.meta.url);
const SEQUENTIAL_CALLS = 500;
const PARALLEL_CALLS = 100;
const LIVE_CELLS = 100;

const noopTool: CellToolDescriptor[] = [{ name: 'noop', description: 'does nothing', kind: 'function' }];

/** The raw technique: one isolate per run, a module, `noop()` calls bridged by Callback + Reference.apply. */
const rawRun = (source: string) => rawBridgeRun(source, async () => null, 'noop');

/** RSS per live idle cell, measured in a fresh process so freed malloc arenas do not flatter either side. */
function rssPerLiveCellKiB(kind: 'runtime' | 'raw'): number {
  const runtimePath = require.resolve('@switchyard/code-mode-runtime');
  const ivmPath = require.resolve('isolated-vm');
  const script = `
    const ivm = require(${JSON.stringify(ivmPath)});
    const { createCodeModeRuntime } = require(${JSON.stringify(runtimePath)});
    (async () => {
      const keep = [];
      const warm = async () => {
        if (${JSON.stringify(kind)} === 'runtime') {
          const runtime = createCodeModeRuntime({ maxCells: 1000 });
          const session = runtime.openSession({ invokeTool: async () => null, notify() {}, cellClosed() {} });
          keep.push(runtime);
          return async () => { await session.createCell({ source: 'yield_control(); await new Promise(() => {});', tools: [], yieldTimeMs: 10000 }); };
        }
        return async () => {
          const isolate = new ivm.Isolate({ memoryLimit: 128 });
          const context = await isolate.createContext();
          const module = await isolate.compileModule('await new Promise(() => {});');
          await module.instantiate(context, () => { throw new Error('x'); });
          void module.evaluate().catch(() => {});
          keep.push(isolate, context, module);
        };
      };
      const create = await warm();
      await create();
      global.gc(); global.gc();
      const before = process.memoryUsage().rss;
      for (let i = 0; i < ${LIVE_CELLS}; i++) await create();
      await new Promise((resolve) => setTimeout(resolve, 100));
      global.gc(); global.gc();
      process.stdout.write(String((process.memoryUsage().rss - before) / 1024 / ${LIVE_CELLS}));
      process.exit(0);
    })();`;
  const out = execFileSync(process.execPath, ['--no-node-snapshot', '--expose-gc', '-e', script], { encoding: 'utf8' });
  return Number(out);
}

const bench: Bench = {
  name: 'code-mode-runtime',
  async run(): Promise<BenchFigure[]> {
    const runtime = createCodeModeRuntime({ maxInFlightCalls: 1024 });
    const session = runtime.openSession({ invokeTool: async () => null, notify() {}, cellClosed() {} });
    const cell = async (source: string) => {
      const { observation } = await session.createCell({ source, tools: noopTool, yieldTimeMs: 10_000 });
      if (observation.kind !== 'completed' || observation.error !== undefined) throw new Error(`bench cell failed: ${JSON.stringify(observation)}`);
    };
    const figures: BenchFigure[] = [];

    const start = await timeMedian(() => cell(`text('hi')`), 30, 5);
    const rawStart = await timeMedian(() => rawRun(`text('hi')`), 30, 5);
    figures.push(compare("start-to-result, cell running text('hi')", start, 'ms', { name: 'raw isolated-vm, same technique', value: rawStart }));

    const loop = `for (let i = 0; i < ${SEQUENTIAL_CALLS}; i++) await ${'$'}{CALL}; text('ok');`;
    const sequential = (await timeMedian(() => cell(loop.replace('${CALL}', 'tools.noop()')), 7, 2)) * (1000 / SEQUENTIAL_CALLS);
    const rawSequential = (await timeMedian(() => rawRun(loop.replace('${CALL}', 'noop()')), 7, 2)) * (1000 / SEQUENTIAL_CALLS);
    figures.push(
      compare('no-op nested call round trip (sequential)', sequential, 'µs', { name: 'raw isolated-vm, same technique', value: rawSequential }, {
        note: `${SEQUENTIAL_CALLS} calls per cell, cell start included`,
      }),
    );

    const parallel = `await Promise.all(Array.from({ length: ${PARALLEL_CALLS} }, () => ${'$'}{CALL})); text('ok');`;
    const parallelTime = await timeMedian(() => cell(parallel.replace('${CALL}', 'tools.noop()')), 15, 3);
    const rawParallel = await timeMedian(() => rawRun(parallel.replace('${CALL}', 'noop()')), 15, 3);
    figures.push(
      compare(`${PARALLEL_CALLS} parallel no-op calls`, parallelTime, 'ms', { name: 'raw isolated-vm, same technique', value: rawParallel }, {
        note: 'cell start included on both sides',
      }),
    );
    await runtime.shutdown();

    const memory = rssPerLiveCellKiB('runtime');
    const rawMemory = rssPerLiveCellKiB('raw');
    figures.push(
      compare('resident memory per live idle cell', memory, 'KiB', { name: 'raw isolate + context + pending module', value: rawMemory }, {
        note: `${LIVE_CELLS} live cells, fresh process each`,
      }),
    );
    return figures;
  },
};

export default bench;
