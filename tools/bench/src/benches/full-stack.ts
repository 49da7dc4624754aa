/**
 * Code Mode through the whole stack (session → router → registry → broker → runtime in its default
 * worker process, no hooks) beside raw isolated-vm using the same bridge technique, measured in
 * the same run. What the ratio
 * prices: the prelude and globals, cell ids and limits, the broker's ready gate, the registry's
 * lookup + ajv validation + events, and the wire formatting of the exec output.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { alternatingMedians, compare, median, type Bench, type BenchFigure } from '../harness';
import { rawBridgeRun, rawEval } from '../raw-bridge';
import { openBenchStack } from '../switchyard-stack';
import { sleep } from '@switchyard/test-helpers/poll';

const require = createRequire(import.meta.url);
const SEQUENTIAL_CALLS = 500;
const PARALLEL_CALLS = 100;
const SLEEP_MS = 20;
const LIVE_CELLS = 50;
const DIRECT_CALLS = 2_000;


/**
 * RSS growth per live idle cell in a fresh process (freed malloc arenas would flatter a reused one).
 * Cells live in the session's worker processes: the host's RSS plus its workers' is counted (the
 * prewarmed spare is started before the count, so it is on both sides).
 */
function rssPerLiveCellKiB(kind: 'full-stack' | 'raw'): number {
  const sessionUrl = pathToFileURL(require.resolve('@switchyard/session')).href;
  const ivmPath = require.resolve('isolated-vm');
  const script = `
    import { createRequire } from 'node:module';
    import { readFileSync, readdirSync } from 'node:fs';
    const rssKiB = (pid) => { try { return Number(/^VmRSS:\\s+(\\d+) kB/m.exec(readFileSync('/proc/' + pid + '/status', 'utf8'))?.[1] ?? 0); } catch { return 0; } };
    const treeRss = () => {
      let total = rssKiB(process.pid);
      for (const entry of readdirSync('/proc')) {
        if (!/^\\d+$/.test(entry)) continue;
        try {
          const stat = readFileSync('/proc/' + entry + '/stat', 'utf8');
          const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          if (ppid === process.pid) total += rssKiB(entry);
        } catch {}
      }
      return total * 1024;
    };
    const ivm = createRequire(import.meta.url)(${JSON.stringify(ivmPath)});
    const keep = [];
    let create;
    if (${JSON.stringify(kind)} === 'full-stack') {
      const { createSession } = await import(${JSON.stringify(sessionUrl)});
      const session = createSession({ toolMode: 'code-mode-only', tools: [], codeMode: { runtimeOptions: { maxCells: 1000 } } });
      const step = await session.beginTurn().step();
      let n = 0;
      create = async () => {
        const out = await step.dispatch({ type: 'custom_tool_call', call_id: 'm' + ++n, name: 'exec', input: 'yield_control();\\nawait new Promise(() => {});' });
        if (!JSON.stringify(out).includes('Script running')) throw new Error('cell did not stay alive: ' + JSON.stringify(out));
      };
    } else {
      create = async () => {
        const isolate = new ivm.Isolate({ memoryLimit: 128 });
        const context = await isolate.createContext();
        const module = await isolate.compileModule('await new Promise(() => {});');
        await module.instantiate(context, () => { throw new Error('no imports'); });
        void module.evaluate().catch(() => {});
        keep.push(isolate, context, module);
      };
    }
    await create();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    global.gc(); global.gc();
    const before = treeRss();
    for (let i = 0; i < ${LIVE_CELLS}; i++) await create();
    await new Promise((resolve) => setTimeout(resolve, 200));
    global.gc(); global.gc();
    process.stdout.write(String((treeRss() - before) / 1024 / ${LIVE_CELLS}));
    process.exit(0);`;
  const out = execFileSync(process.execPath, ['--no-node-snapshot', '--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  return Number(out);
}

const bench: Bench = {
  name: 'full stack (Code Mode)',
  async run(): Promise<BenchFigure[]> {
    const stack = await openBenchStack();
    const figures: BenchFigure[] = [];
    try {
      const loop = (call: string) => `for (let i = 0; i < ${SEQUENTIAL_CALLS}; i++) await ${call};\ntext('ok');`;
      // Per call: (cell with N calls − the same cell with none) / N, so cell start is not counted.
      const [empty, full, rawEmpty, rawFull] = await alternatingMedians(
        [() => stack.exec(`text('ok');`), () => stack.exec(loop('tools.noop()')), () => rawBridgeRun(`text('ok');`), () => rawBridgeRun(loop('tool()'))],
        9,
        2,
      );
      const perCall = ((full - empty) * 1000) / SEQUENTIAL_CALLS;
      const rawPerCall = ((rawFull - rawEmpty) * 1000) / SEQUENTIAL_CALLS;
      figures.push(
        compare('nested no-op call round trip (sequential)', perCall, 'µs', { name: 'raw isolated-vm bridge, same technique', value: rawPerCall }, {
          note: `${SEQUENTIAL_CALLS} calls per cell, cell start subtracted, median of 9 alternating runs`,
        }),
      );

      const parallel = (call: string) => `await Promise.all(Array.from({ length: ${PARALLEL_CALLS} }, () => ${call}));\ntext('ok');`;
      const [parallelMs, rawParallelMs] = await alternatingMedians([() => stack.exec(parallel('tools.noop()')), () => rawBridgeRun(parallel('tool()'))], 11, 2);
      figures.push(
        compare(`${PARALLEL_CALLS} parallel nested no-op calls`, parallelMs, 'ms', { name: 'raw isolated-vm bridge, same technique', value: rawParallelMs }, {
          note: 'cell start included on both sides, median of 11 alternating runs',
        }),
      );

      const naps = (call: string) => `await Promise.all(Array.from({ length: ${PARALLEL_CALLS} }, () => ${call}));\ntext('ok');`;
      const [napMs, rawNapMs] = await alternatingMedians(
        [() => stack.exec(naps(`tools.nap({ ms: ${SLEEP_MS} })`)), () => rawBridgeRun(naps(`tool({ ms: ${SLEEP_MS} })`), async (input) => sleep((input as { ms: number }).ms))],
        7,
        1,
      );
      figures.push(
        compare(`${PARALLEL_CALLS} parallel nested calls sleeping ${SLEEP_MS} ms`, napMs, 'ms', { name: 'raw isolated-vm bridge, same technique', value: rawNapMs }, {
          note: `= ${(napMs / SLEEP_MS).toFixed(2)}× one ${SLEEP_MS} ms sleep (serial would be ${PARALLEL_CALLS}×), median of 7 alternating runs`,
        }),
      );

      const [start, rawStart] = await alternatingMedians([() => stack.exec(`text('hi')`), () => rawEval(`'hi'`)], 31, 5);
      figures.push(
        compare("start-to-result of exec running text('hi')", start, 'ms', { name: 'raw isolate + context + eval', value: rawStart }, {
          note: 'wire item in → wire output item out, median of 31 alternating runs',
        }),
      );
    } finally {
      await stack.close();
    }

    // Direct dispatch through the host facade: a function_call wire item → function_call_output.
    const { createSession } = await import('@switchyard/session');
    const { noopTool } = await import('../switchyard-stack');
    const session = createSession({ toolMode: 'direct', tools: [noopTool] });
    const turn = session.beginTurn();
    const step = await turn.step();
    const bare = async (args: unknown) => (args ? null : null);
    const [bareMs, directMs] = await alternatingMedians(
      [
        async () => {
          for (let i = 0; i < DIRECT_CALLS; i++) await bare(JSON.parse('{}'));
        },
        async () => {
          for (let i = 0; i < DIRECT_CALLS; i++) await step.dispatch({ type: 'function_call', call_id: `d${i}`, name: 'noop', arguments: '{}' });
        },
      ],
      7,
      2,
    );
    await turn.end();
    await session.shutdown();
    const perSecond = (ms: number) => DIRECT_CALLS / (ms / 1000);
    figures.push(
      compare('direct dispatch, wire item → wire output (no hooks)', perSecond(directMs), 'ops/s', { name: 'bare async call + JSON.parse', value: perSecond(bareMs) }, {
        higherIsBetter: true,
        note: `${DIRECT_CALLS} sequential calls through step.dispatch, median of 7 alternating runs`,
      }),
    );

    const memory = median([rssPerLiveCellKiB('full-stack'), rssPerLiveCellKiB('full-stack'), rssPerLiveCellKiB('full-stack')]);
    const rawMemory = median([rssPerLiveCellKiB('raw'), rssPerLiveCellKiB('raw'), rssPerLiveCellKiB('raw')]);
    figures.push(
      compare('resident memory per live idle cell', memory / 1024, 'MB', { name: 'raw isolate + context + pending module', value: rawMemory / 1024 }, {
        note: `${LIVE_CELLS} live cells via exec, fresh process each (host + its worker processes), median of 3`,
      }),
    );
    return figures;
  },
};

export default bench;
