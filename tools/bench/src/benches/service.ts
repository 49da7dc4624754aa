/**
 * A service on one machine: many users, each a new session of their own tenant with default
 * options, whose cell makes sequential nested calls of a slow tool; then a second turn each.
 * Measured side by side in one run, on a warm host (one throwaway turn first):
 * - one new user alone (the reference): first-turn latency, event-loop delay, memory;
 * - N users at once: cells completed, first-turn p50 / p99 against the lone user, second turn too,
 *   the host's event-loop delay (`monitorEventLoopDelay`, p99 and max), peak memory of the host and
 *   every process it started (PSS, `/proc/PID/smaps_rollup`, sampled from a worker thread so the
 *   sampling never stalls the host's loop);
 * - M sessions of which N are active: every session ran one small turn first (its cells and stored
 *   value live in the runtime), then N of them run the same load beside the idle rest.
 * Targets (issue 45): every cell completes, p99 ≤ 3 × alone, event-loop p99 ≤ 100 ms.
 * Counts: `BENCH_SERVICE_USERS` (100), `BENCH_SERVICE_SESSIONS` (1000), `BENCH_SERVICE_ACTIVE`
 * (100), `BENCH_SERVICE_CALLS` (10 nested calls per cell), `BENCH_SERVICE_TOOL_MS` (100).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { ModelRequest, ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession, type Session } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { compare, median, type Bench, type BenchFigure } from '../harness';

const numberFrom = (name: string, fallback: number) => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const USERS = numberFrom('BENCH_SERVICE_USERS', 100);
const SESSIONS = numberFrom('BENCH_SERVICE_SESSIONS', 1000);
const ACTIVE = Math.min(numberFrom('BENCH_SERVICE_ACTIVE', 100), SESSIONS);
const CALLS = numberFrom('BENCH_SERVICE_CALLS', 10);
const TOOL_MS = numberFrom('BENCH_SERVICE_TOOL_MS', 100);

/** The tool every cell calls: answers after `TOOL_MS`, like a backend request. */
const slowTool = defineFunctionTool({
  name: 'lookup_order',
  description: 'Looks an order up (takes a moment).',
  parameters: { type: 'object', properties: { n: { type: 'number' } } },
  supportsParallelToolCalls: true,
  handle: async ({ args, signal }) => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, TOOL_MS);
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    return { order: args.n ?? 0, status: 'shipped' };
  },
});

const CELL = `let shipped = 0;\nfor (let n = 0; n < ${CALLS}; n++) if ((await tools.lookup_order({ n })).status === 'shipped') shipped++;\ntext('shipped ' + shipped);`;
const WARM_CELL = "store('seen', true);\ntext('ready');";

function textOf(item: ResponseItem | undefined): string {
  const output = (item as { output?: string | Array<{ text?: string }> } | undefined)?.output;
  if (output === undefined) return '';
  return typeof output === 'string' ? output : output.map((part) => part.text ?? '').join('\n');
}

/**
 * The user's agent: runs the cell, waits on it while it is still running (what a model does with
 * "Script running with cell ID …"), then answers.
 */
function agent(cell: string) {
  let calls = 0;
  return createScriptedModel((request: ModelRequest) => {
    const last = request.input[request.input.length - 1];
    const text = textOf(last);
    const running = /Script running with cell ID (\S+)/.exec(text);
    if (running) return [{ type: 'function_call', call_id: `wait-${++calls}`, name: 'wait', arguments: JSON.stringify({ cell_id: running[1] }) }];
    if (last?.type === 'custom_tool_call_output' || last?.type === 'function_call_output') return [{ type: 'message', role: 'assistant', content: 'Done.' }];
    return [{ type: 'custom_tool_call', call_id: `exec-${++calls}`, name: 'exec', input: cell }];
  });
}

interface TurnOutcome {
  ms: number;
  completed: boolean;
}

/** One turn of `session` running `cell`: its wall time and whether the cell completed with the expected text. */
async function turn(session: Session, cell: string, expect: string): Promise<TurnOutcome> {
  const started = performance.now();
  try {
    const result = await session.runTurn({ model: agent(cell), input: 'Check my orders.' });
    const outputs = result.items.filter((item) => item.type === 'custom_tool_call_output' || item.type === 'function_call_output').map(textOf);
    const completed = outputs.some((text) => text.startsWith('Script completed') && text.includes(expect));
    return { ms: performance.now() - started, completed };
  } catch {
    return { ms: performance.now() - started, completed: false };
  }
}

const newSession = (tenant: string) => createSession({ toolMode: 'code-mode-only', tools: [slowTool], tenant });

/** Samples the PSS of this process and every descendant every 200 ms from a worker thread; `stop()` answers the peak. */
function memorySampler(): { stop(): Promise<{ peakMb: number; processes: number }> } {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { readdirSync, readFileSync } = require('node:fs');
    let peak = 0, processes = 0, running = true;
    const read = (path) => { try { return readFileSync(path, 'utf8'); } catch { return undefined; } };
    function sample() {
      const parents = new Map();
      for (const entry of readdirSync('/proc')) {
        if (!/^\\d+$/.test(entry)) continue;
        const stat = read('/proc/' + entry + '/stat');
        if (stat) parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      }
      const tree = new Set([workerData.pid]);
      for (let grew = true; grew; ) {
        grew = false;
        for (const [pid, ppid] of parents) if (!tree.has(pid) && tree.has(ppid)) { tree.add(pid); grew = true; }
      }
      let kb = 0;
      for (const pid of tree) kb += Number(/^Pss:\\s+(\\d+) kB/m.exec(read('/proc/' + pid + '/smaps_rollup') ?? '')?.[1] ?? 0);
      if (kb / 1024 > peak) { peak = kb / 1024; processes = tree.size; }
    }
    parentPort.on('message', () => { running = false; sample(); parentPort.postMessage({ peakMb: peak, processes }); });
    (function loop() { if (!running) return; sample(); setTimeout(loop, 200); })();
  `;
  const worker = new Worker(source, { eval: true, workerData: { pid: process.pid } });
  return {
    stop: () =>
      new Promise((resolve) => {
        worker.once('message', (peak: { peakMb: number; processes: number }) => {
          void worker.terminate();
          resolve(peak);
        });
        worker.postMessage('stop');
      }),
  };
}

interface Phase {
  first: TurnOutcome[];
  second: TurnOutcome[];
  loopP99Ms: number;
  loopMaxMs: number;
  peakMb: number;
  processes: number;
}

/** `sessions` each run a first turn, all at once, then a second one; the loop and memory are watched throughout. */
async function load(sessions: Session[]): Promise<Phase> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const memory = memorySampler();
  loop.enable();
  const both = await Promise.all(
    sessions.map(async (session) => {
      const first = await turn(session, CELL, `shipped ${CALLS}`);
      const second = await turn(session, CELL, `shipped ${CALLS}`);
      return { first, second };
    }),
  );
  loop.disable();
  const peak = await memory.stop();
  return {
    first: both.map((entry) => entry.first),
    second: both.map((entry) => entry.second),
    loopP99Ms: loop.percentile(99) / 1e6,
    loopMaxMs: loop.max / 1e6,
    ...{ peakMb: peak.peakMb, processes: peak.processes },
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** The figures of one loaded phase against the lone user. */
function phaseFigures(label: string, phase: Phase, alone: Phase): BenchFigure[] {
  const aloneMs = alone.first[0].ms;
  const firstMs = phase.first.map((entry) => entry.ms);
  const secondMs = phase.second.map((entry) => entry.ms);
  const done = (entries: TurnOutcome[]) => entries.filter((entry) => entry.completed).length;
  const reference = { name: 'one user alone, same run', value: aloneMs };
  return [
    { name: `${label}: cells completed, first turn`, value: done(phase.first), unit: `of ${phase.first.length}`, note: `target: all` },
    { name: `${label}: cells completed, second turn`, value: done(phase.second), unit: `of ${phase.second.length}` },
    compare(`${label}: first turn p50`, median(firstMs), 'ms', reference, { note: `${CALLS} sequential calls of a ${TOOL_MS} ms tool per cell; failed turns included` }),
    compare(`${label}: first turn p99`, percentile(firstMs, 99), 'ms', reference, { note: 'target ≤ 3×' }),
    compare(`${label}: second turn p99`, percentile(secondMs, 99), 'ms', { name: 'the lone user\'s second turn', value: alone.second[0].ms }),
    compare(`${label}: host event-loop delay p99`, phase.loopP99Ms, 'ms', { name: 'one user alone', value: alone.loopP99Ms }, { note: `max ${phase.loopMaxMs.toFixed(0)} ms; target ≤ 100 ms` }),
    compare(`${label}: peak PSS, host + every process it started`, phase.peakMb, 'MB', { name: 'one user alone', value: alone.peakMb }, { note: `${phase.processes} processes at the peak` }),
  ];
}

const bench: Bench = {
  name: 'service',
  async run(): Promise<BenchFigure[]> {
    // A warm host first (the runtime loaded, its pool up with a spare worker), as a running service
    // is when a user arrives; then the reference: one new user alone.
    const warmUp = newSession('warm-up');
    await turn(warmUp, WARM_CELL, 'ready');
    await warmUp.shutdown();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const lone = newSession('alone');
    const alone = await load([lone]);
    await lone.shutdown();

    const users = Array.from({ length: USERS }, (_, index) => newSession(`user-${index}`));
    const concurrent = await load(users);
    await Promise.all(users.map((session) => session.shutdown()));

    // M sessions, each with a small cell behind it, then N of them busy beside the idle rest.
    const all = Array.from({ length: SESSIONS }, (_, index) => newSession(`tenant-${index}`));
    const warmStarted = performance.now();
    const warmed: TurnOutcome[] = [];
    for (let start = 0; start < all.length; start += 50) {
      warmed.push(...(await Promise.all(all.slice(start, start + 50).map((session) => turn(session, WARM_CELL, 'ready')))));
    }
    const warmSeconds = (performance.now() - warmStarted) / 1000;
    const mixed = await load(all.slice(0, ACTIVE));
    await Promise.all(all.map((session) => session.shutdown()));

    return [
      { name: 'one user alone: first turn', value: alone.first[0].ms, unit: 'ms', note: `${alone.first[0].completed ? 'completed' : 'FAILED'}; second turn ${alone.second[0].ms.toFixed(0)} ms` },
      ...phaseFigures(`${USERS} users at once`, concurrent, alone),
      { name: `${SESSIONS} sessions: a first small turn each (50 at a time)`, value: warmSeconds, unit: 's', note: `${warmed.filter((entry) => entry.completed).length} of ${SESSIONS} cells completed` },
      ...phaseFigures(`${SESSIONS} sessions, ${ACTIVE} active`, mixed, alone),
    ];
  },
};

export default bench;
