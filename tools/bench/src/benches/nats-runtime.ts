/**
 * @switchyard/code-mode-nats: cells on a runtime host in its own process, reached over a real
 * nats-server on loopback, beside the process runtime (a worker over stdio pipes) and the
 * in-process runtime, sampled in alternation in one run. Then one runtime host holding 1,000 idle
 * cells: its resident memory per cell, and how many such cells a host of a given size holds.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createCodeModeRuntime } from '@switchyard/code-mode-runtime';
import type { CellToolDescriptor, CodeModeSession } from '@switchyard/protocol';
import { createNatsRuntime } from '@switchyard/code-mode-nats';
import { alternatingMedians, compare, type Bench, type BenchFigure } from '../harness';
import { residentMb } from '@switchyard/config/proc';
import { startNatsServer } from '@switchyard/config/nats-server';

const require = createRequire(import.meta.url);
const SEQUENTIAL_CALLS = 300;
const IDLE_CELLS = 1_000;
const CELLS_PER_SESSION = 25;
const noopTool: CellToolDescriptor[] = [{ name: 'noop', description: 'does nothing', kind: 'function' }];
const host = { invokeTool: async () => null, notify() {}, cellClosed() {} };

async function run(session: CodeModeSession, source: string): Promise<void> {
  const { observation } = await session.createCell({ source, tools: noopTool, yieldTimeMs: 60_000 });
  if (observation.kind !== 'completed' || observation.error !== undefined) throw new Error(`bench cell failed: ${JSON.stringify(observation)}`);
}

/**
 * A runtime host process from the built package; resolves with its pid once it serves. Its cells run
 * in its own process (`isolation: 'in-process'`), so the figures stay comparable with earlier runs
 * and the host's RSS holds every idle cell (with worker isolation, the default, cells are spread
 * over worker processes of at most `workers.max` sessions at once).
 */
function startRuntimeHost(url: string): Promise<{ pid: number; stop(): void }> {
  const entry = require.resolve('@switchyard/code-mode-nats');
  const script = `require(${JSON.stringify(entry)}).serveRuntimeOverNats({ servers: ${JSON.stringify(url)}, name: 'bench', isolation: 'in-process', limits: { maxSessions: 2000, maxConnections: 2000 }, sealing: false })
    .then(() => process.stdout.write('ready\\n'), (e) => { console.error(e.message); process.exit(1); });`;
  const child = spawn(process.execPath, ['--no-node-snapshot', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve({ pid: child.pid!, stop: () => child.kill('SIGKILL') }));
    child.once('exit', (code) => reject(new Error(`bench runtime host exited with ${code}`)));
  });
}

const bench: Bench = {
  name: 'code-mode-nats',
  async run(): Promise<BenchFigure[]> {
    const server = await startNatsServer();
    const runtimeHost = await startRuntimeHost(server.url);
    const nats = createNatsRuntime({ servers: server.url, maxInFlightCalls: 1024, maxCells: 1000 });
    // The same runtime host serves both: this agent host's frames travel in clear.
    const clear = createNatsRuntime({ servers: server.url, maxInFlightCalls: 1024, maxCells: 1000, sealing: false });
    const processRuntime = createCodeModeRuntime({ maxInFlightCalls: 1024, workers: { shared: false } });
    const inProcess = createCodeModeRuntime({ isolation: 'in-process', maxInFlightCalls: 1024, nodeSnapshotCheck: 'ignore' });
    const figures: BenchFigure[] = [];
    try {
      const [natsSession, processSession, inSession, clearSession] = [nats, processRuntime, inProcess, clear].map((runtime) => runtime.openSession(host));
      await run(natsSession, `text('warm')`);
      await run(clearSession, `text('warm')`);
      await run(processSession, `text('warm')`);
      const three = (name: string, unit: string, [natsValue, processValue, inValue]: number[], note: string) => {
        figures.push(compare(`${name} — NATS (loopback)`, natsValue, unit, { name: 'process runtime (stdio pipes)', value: processValue }, { note }));
        figures.push(compare(`${name} — NATS (loopback)`, natsValue, unit, { name: 'in-process runtime', value: inValue }, { note }));
      };
      const starts = await alternatingMedians(
        [() => run(natsSession, `text('hi')`), () => run(processSession, `text('hi')`), () => run(inSession, `text('hi')`)],
        31,
        5,
      );
      three("exec start to result, cell running text('hi')", 'ms', starts, 'warm host / worker, median of 31 alternating runs');

      const loop = `for (let i = 0; i < ${SEQUENTIAL_CALLS}; i++) await tools.noop(); text('ok');`;
      const times = await alternatingMedians(
        [natsSession, processSession, inSession].flatMap((session) => [() => run(session, `text('ok')`), () => run(session, loop)]),
        9,
        2,
      );
      const perCall = (empty: number, full: number) => ((full - empty) * 1000) / SEQUENTIAL_CALLS;
      const sealedVsClear = await alternatingMedians(
        [natsSession, clearSession].flatMap((session) => [() => run(session, `text('ok')`), () => run(session, loop)]),
        9,
        2,
      );
      figures.push(
        compare('nested no-op call round trip — NATS sealed', perCall(sealedVsClear[0], sealedVsClear[1]), 'µs', { name: 'NATS unsealed', value: perCall(sealedVsClear[2], sealedVsClear[3]) }, {
          note: `ChaCha20-Poly1305 per message, per-placement keys; ${SEQUENTIAL_CALLS} calls per cell, median of 9 alternating runs`,
        }),
        compare("exec start to result, cell running text('ok') — NATS sealed", sealedVsClear[0], 'ms', { name: 'NATS unsealed', value: sealedVsClear[2] }, { note: "cell text('ok') on a warm session" }),
      );
      three('nested no-op call round trip (sequential)', 'µs', [perCall(times[0], times[1]), perCall(times[2], times[3]), perCall(times[4], times[5])], `${SEQUENTIAL_CALLS} calls per cell, cell start subtracted, median of 9 alternating runs`);

      // 1,000 idle cells on the one runtime host (40 sessions × 25 cells).
      const sessions = Array.from({ length: IDLE_CELLS / CELLS_PER_SESSION }, () => nats.openSession(host));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const before = residentMb(runtimeHost.pid);
      const started = performance.now();
      await Promise.all(
        sessions.map(async (session) => {
          for (let i = 0; i < CELLS_PER_SESSION; i++) {
            const { observation } = await session.createCell({ source: 'yield_control(); await new Promise(() => {});', tools: [], yieldTimeMs: 60_000 });
            if (observation.kind !== 'yielded') throw new Error(`bench idle cell did not yield: ${JSON.stringify(observation)}`);
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 500));
      const after = residentMb(runtimeHost.pid);
      const perCellKiB = ((after - before) * 1024) / IDLE_CELLS;
      figures.push({ name: `resident memory per idle cell on a runtime host (${IDLE_CELLS} cells)`, value: perCellKiB, unit: 'KiB', note: `host RSS ${before.toFixed(0)} MB → ${after.toFixed(0)} MB; ${IDLE_CELLS / CELLS_PER_SESSION} sessions × ${CELLS_PER_SESSION} cells` });
      figures.push({ name: 'idle cells per runtime host with 16 GiB for cells', value: (16 * 1024 * 1024) / perCellKiB, unit: 'cells', note: 'derived: 16 GiB ÷ the figure above (busy cells use up to their heap limit)' });
      figures.push({ name: `placing and starting ${IDLE_CELLS} cells on one runtime host`, value: IDLE_CELLS / seconds, unit: 'cells/s', note: `${IDLE_CELLS / CELLS_PER_SESSION} sessions in parallel, cells of a session one after another` });
      await Promise.all(sessions.map((session) => session.shutdown()));
    } finally {
      await Promise.all([nats.shutdown(), clear.shutdown(), processRuntime.shutdown(), inProcess.shutdown()]);
      runtimeHost.stop();
      await server.stop();
    }
    return figures;
  },
};

export default bench;
