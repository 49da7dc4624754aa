/**
 * What a Code Mode session costs in memory on shared worker processes (dense placement, the
 * default of `createCodeModeRuntime`), measured as PSS (/proc/PID/smaps_rollup: each page shared
 * between processes — the Node binary, isolated-vm's library — counted once, split among them),
 * beside one worker per session (`perSession: true`) in the same run. Each session holds one
 * yielded cell (an isolate, its context, the prelude and the cell module), as a session waiting
 * on a tool does. Also: a started worker before any session, the PSS per session at 4 / 8 / 16 /
 * 32 sessions on one worker (what the default `sessionsPerWorker` was chosen by), and sessions per
 * GB of workers against issue 43's target (≥ 200).
 *
 * BENCH_PLACEMENT_SESSIONS (default 64) sessions at the default placement; BENCH_PLACEMENT_ALONE
 * (default 8) sessions with a worker each; BENCH_PLACEMENT_SWEEP (default "4,8,16,32").
 */
import { createCodeModeRuntime, DEFAULT_SESSIONS_PER_WORKER, type ProcessWorkerOptions } from '@switchyard/code-mode-runtime';
import { compare, median, type Bench, type BenchFigure } from '../harness';
import { memoryRollup, workerChildren } from '@switchyard/config/proc';

const SESSIONS = Number(process.env.BENCH_PLACEMENT_SESSIONS ?? 64);
const ALONE = Number(process.env.BENCH_PLACEMENT_ALONE ?? 8);
const SWEEP = (process.env.BENCH_PLACEMENT_SWEEP ?? '4,8,16,32').split(',').map(Number);
const IDLE_CELL = 'text(1); yield_control(); await new Promise(() => {});';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Sample {
  workers: number;
  pssMb: number;
  rssMb: number;
  ussMb: number;
}

/** `sessions` sessions each holding a yielded cell on a pool of its own; the workers' memory summed, then the pool ended. */
async function sample(sessions: number, workers: ProcessWorkerOptions): Promise<Sample> {
  const before = new Set(workerChildren());
  const runtime = createCodeModeRuntime({ workers: { shared: false, prewarm: false, ...workers } });
  try {
    for (let i = 0; i < sessions; i++) {
      const session = runtime.openSession({ invokeTool: async () => null, notify() {}, cellClosed() {} });
      const { observation } = await session.createCell({ source: IDLE_CELL, tools: [], yieldTimeMs: 60_000 });
      if (observation.kind !== 'yielded') throw new Error(`bench cell did not yield: ${JSON.stringify(observation)}`);
    }
    if (sessions === 0) {
      // the prewarmed spare alone
      const deadline = Date.now() + 60_000;
      while (!workerChildren().some((pid) => !before.has(pid))) {
        if (Date.now() > deadline) throw new Error('bench: no worker started');
        await sleep(20);
      }
    }
    // let the workers finish what a start and a first cell leave behind (compiled code, GC)
    await sleep(1_500);
    const rollups = workerChildren()
      .filter((pid) => !before.has(pid))
      .map((pid) => memoryRollup(pid)!)
      .filter(Boolean);
    const sum = (key: keyof (typeof rollups)[number]) => rollups.reduce((total, rollup) => total + rollup[key], 0);
    return { workers: rollups.length, pssMb: sum('pssMb'), rssMb: sum('rssMb'), ussMb: sum('ussMb') };
  } finally {
    await runtime.shutdown();
  }
}

const bench: Bench = {
  name: 'placement (memory per session)',
  async run(): Promise<BenchFigure[]> {
    const figures: BenchFigure[] = [];
    const spares = [await sample(0, { prewarm: true }), await sample(0, { prewarm: true }), await sample(0, { prewarm: true })];
    const workerPss = median(spares.map((spare) => spare.pssMb));
    figures.push({ name: 'PSS of a started worker before any session', value: workerPss, unit: 'MB', note: `RSS ${median(spares.map((spare) => spare.rssMb)).toFixed(1)} MB; median of 3 fresh workers` });

    const dense = await sample(SESSIONS, { prewarm: true });
    const alone = await sample(ALONE, { perSession: true, max: ALONE });
    const densePer = dense.pssMb / SESSIONS;
    const alonePer = alone.pssMb / ALONE;
    figures.push(
      compare(`PSS per session, ${SESSIONS} sessions on shared workers (default placement)`, densePer, 'MB', { name: `one worker per session (perSession: true), ${ALONE} sessions`, value: alonePer }, {
        note: `${dense.workers} worker(s) of up to ${DEFAULT_SESSIONS_PER_WORKER} sessions and the prewarmed spare, ${dense.pssMb.toFixed(0)} MB PSS in all (RSS ${(dense.rssMb / SESSIONS).toFixed(1)} MB, USS ${(dense.ussMb / SESSIONS).toFixed(1)} MB per session); each session one yielded cell`,
      }),
    );
    figures.push(
      compare(`sessions per GB of workers (PSS), shared placement`, 1024 / densePer, 'sessions', { name: 'target of issue 43', value: 200 }, { higherIsBetter: true, note: `1024 MB / ${densePer.toFixed(2)} MB` }),
    );

    for (const perWorker of SWEEP) {
      const full = await sample(perWorker, { max: 1, sessionsPerWorker: perWorker });
      figures.push({
        name: `PSS per session, one worker holding ${perWorker} sessions`,
        value: full.pssMb / perWorker,
        unit: 'MB',
        note: `worker ${full.pssMb.toFixed(1)} MB PSS; beyond the empty worker: ${((full.pssMb - workerPss) / perWorker).toFixed(2)} MB per session`,
      });
    }
    return figures;
  },
};

export default bench;
