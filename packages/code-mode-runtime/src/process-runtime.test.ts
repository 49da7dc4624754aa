import { spawn } from 'node:child_process';
import { readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CellRuntimeEvent, CodeModeRuntime, CodeModeSession } from '@switchyard/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { createCodeModeRuntime, type CodeModeRuntimeOptions } from './code-mode-runtime';
import { createRemoteRuntime, createWorkerPool } from './process-runtime';
import { createTestHost, rejection, sleep, until } from '../test/helpers';
import { processInfo, running, workerChildren } from '../test/proc';

// The worker processes of `isolation: 'process'`, checked in /proc. Every runtime here has its own
// pool (`shared: false`) and the tests of this file run one after another, so the workers a test
// starts are the children of this process that were not there before it.
const runtimes: Array<{ shutdown(): Promise<void> }> = [];
afterAll(() => Promise.all(runtimes.map((runtime) => runtime.shutdown())));

function startRuntime(options: CodeModeRuntimeOptions = {}) {
  const before = new Set(workerChildren());
  const runtime = createCodeModeRuntime({ ...options, workers: { shared: false, ...options.workers } });
  runtimes.push(runtime);
  const events: CellRuntimeEvent[] = [];
  const recorder = createTestHost({ echo: (request) => request.input as never });
  const session: CodeModeSession = runtime.openSession({ ...recorder.host, runtimeEvent: (event) => events.push(event) });
  const mine = () => workerChildren().filter((pid) => !before.has(pid));
  const cell = (source: string, yieldTimeMs = 10_000) => session.createCell({ source, tools: [{ name: 'echo', description: 'echo', kind: 'function' }], yieldTimeMs });
  return { runtime, session, events, mine, cell, ...recorder };
}


// Every test here waits for worker processes to start (up to 60 s on a saturated machine, as when
// the symlink-race corpus runs beside this file), so the runner's cut is above those waits.
describe('worker processes', { timeout: 90_000 }, () => {
  it('cells run in a child process started with --no-node-snapshot, an empty environment, and a prewarmed spare beside it', async () => {
    const env = startRuntime();
    // prewarmed: a worker is there before any cell
    await until(() => env.mine().length === 1, '1 worker of this runtime', 60_000);
    // The cell stays live (a finished cell gives its worker back, which is then the idle spare
    // itself, and a late top-up timer on a loaded machine would start nothing).
    const { observation } = await env.cell(`text(typeof process); text(typeof require); yield_control(); await new Promise(() => {});`);
    expect(observation).toMatchObject({ kind: 'yielded' });
    expect(observation.items).toEqual([
      { type: 'input_text', text: 'undefined' },
      { type: 'input_text', text: 'undefined' },
    ]);
    // the worker that runs the cell is busy; a new spare was started beside it
    await until(() => env.mine().length === 2, '2 workers of this runtime', 60_000);
    for (const pid of env.mine()) {
      const info = processInfo(pid)!;
      expect(info.ppid).toBe(process.pid);
      expect(info.cmdline).toContain('--no-node-snapshot');
      expect(info.cmdline.some((part) => part.startsWith('--max-old-space-size='))).toBe(true);
      expect(readFileSync(`/proc/${pid}/environ`, 'utf8')).toBe('');
      // the host's own Node binary (the Node 24 pass runs its own tree)
      expect(readlinkSync(`/proc/${pid}/exe`)).toBe(realpathSync(process.execPath));
    }
    // the worker that ran the cell loaded this tree's isolated-vm build, the line that fits this
    // Node (5 on Node 20, 6 on Node 22+)
    const ivm = createRequire(import.meta.url).resolve('isolated-vm/package.json');
    const { version } = JSON.parse(readFileSync(ivm, 'utf8')) as { version: string };
    expect(Number(version.split('.')[0])).toBe(Number(process.versions.node.split('.')[0]) >= 22 ? 6 : 5);
    // its native module (built in `out/` or prebuilt, depending on the line) mapped from that package
    const folder = `${realpathSync(dirname(ivm))}/`;
    const mapsIvm = (pid: number) => readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n').some((line) => line.includes(folder) && line.endsWith('.node'));
    expect(env.mine().filter(mapsIvm).length).toBeGreaterThanOrEqual(1);
    await env.runtime.shutdown();
  });

  it('a worker killed mid-cell: its cell is resumed on a fresh worker from its journal and completes; committed values survive', async () => {
    const env = startRuntime({ workers: { prewarm: false } });
    const stored = await env.cell(`store('kept', { n: 42 }); text('stored');`);
    expect(stored.observation).toMatchObject({ kind: 'completed', items: [{ text: 'stored' }] });
    const waitingCell = await env.cell(`text('before ' + JSON.stringify(load('kept'))); yield_control(); await new Promise((resolve) => setTimeout(resolve, 300)); text('after'); store('later', 1);`);
    expect(waitingCell.observation).toMatchObject({ kind: 'yielded', items: [{ text: 'before {"n":42}' }] });
    const [worker] = env.mine();
    const waiting = env.session.observe(waitingCell.cellId, { yieldTimeMs: 60_000 });
    process.kill(worker, 'SIGKILL');
    // the output already observed is not emitted again; the rest comes from the replay
    expect(await waiting).toMatchObject({ kind: 'completed', cellId: waitingCell.cellId, items: [{ type: 'input_text', text: 'after' }] });
    expect((await waiting as { error?: string }).error).toBeUndefined();
    const cause = 'the runtime worker was killed by SIGKILL';
    expect(env.events).toEqual([
      { type: 'runtime-lost', cause, cellIds: [waitingCell.cellId] },
      { type: 'cell-resumed', cellId: waitingCell.cellId, cause, attempt: 1, alone: false },
    ]);
    expect(env.closed.filter((id) => id === waitingCell.cellId)).toHaveLength(1);
    const next = await env.cell(`text(JSON.stringify([load('kept'), load('later')]));`);
    expect(next.observation).toMatchObject({ kind: 'completed', items: [{ text: '[{"n":42},1]' }] });
    expect(env.mine()).not.toContain(worker);
    await env.runtime.shutdown();
  });

  it('without journals (maxJournalBytes 0) a worker killed mid-cell fails only its cells, once, naming the signal', async () => {
    const env = startRuntime({ maxJournalBytes: 0, workers: { prewarm: false } });
    const spinning = await env.cell(`text('spinning'); yield_control(); while (true) {}`);
    expect(spinning.observation).toMatchObject({ kind: 'yielded', items: [{ text: 'spinning' }] });
    const [worker] = env.mine();
    const waiting = env.session.observe(spinning.cellId, { yieldTimeMs: 60_000 });
    process.kill(worker, 'SIGKILL');
    const cause = 'the runtime worker was killed by SIGKILL';
    expect(await waiting).toMatchObject({ kind: 'completed', cellId: spinning.cellId, items: [], error: `exec runtime ended unexpectedly: ${cause}` });
    expect(env.events).toEqual([{ type: 'runtime-lost', cause, cellIds: [spinning.cellId] }]);
    expect(env.closed.filter((id) => id === spinning.cellId)).toHaveLength(1);
    // the dead cell is gone (its source is never re-run)
    expect(await rejection(env.session.observe(spinning.cellId, { yieldTimeMs: 0 }))).toEqual({ code: 'CELL_NOT_FOUND', message: `exec cell ${spinning.cellId} not found` });
    expect((await env.cell(`text('alive');`)).observation).toMatchObject({ kind: 'completed', items: [{ text: 'alive' }] });
    await env.runtime.shutdown();
  });

  it('a worker over its memory cap is killed from the host; the cell that keeps doing it fails, after its replays, naming the limit', async () => {
    // a heap far above the cap, so the host's cap fires before V8's own heap limit
    const env = startRuntime({ heapMb: 2048, workers: { memoryMb: 256, prewarm: false } });
    const { observation } = await env.cell(`text('before'); const hoard = []; for (;;) hoard.push(new Array(1_000_000).fill(Math.random()));`, 60_000);
    expect(observation.kind).toBe('completed');
    const error = (observation as { error?: string }).error!;
    expect(error).toMatch(/^exec runtime ended unexpectedly: the runtime worker exceeded its memory limit of 256 MB \(resident \d+ MB\)$/);
    // replayed with the others, then alone, where it ended its runtime again: the culprit
    expect(env.events.map((event) => event.type + ('alone' in event ? ` alone=${event.alone}` : ''))).toEqual([
      'runtime-lost', 'cell-resumed alone=false', 'runtime-lost', 'cell-resumed alone=true', 'runtime-lost',
    ]);
    expect((await env.cell(`text('alive');`)).observation).toMatchObject({ kind: 'completed', items: [{ text: 'alive' }] });
    await env.runtime.shutdown();
  });

  it('a worker that stops answering its heartbeat is killed (SIGSTOP), naming the silence; its cell goes on elsewhere', async () => {
    const env = startRuntime({ workers: { prewarm: false, heartbeatTimeoutMs: 1_000 } });
    const waitingCell = await env.cell(`yield_control(); await new Promise((resolve) => setTimeout(resolve, 3_000)); text('after');`);
    const [worker] = env.mine();
    const waiting = env.session.observe(waitingCell.cellId, { yieldTimeMs: 60_000 });
    process.kill(worker, 'SIGSTOP');
    expect(await waiting).toMatchObject({ kind: 'completed', items: [{ text: 'after' }] });
    const cause = 'the runtime worker stopped answering (no reply to a heartbeat for 1000 ms)';
    expect(env.events).toEqual([
      { type: 'runtime-lost', cause, cellIds: [waitingCell.cellId] },
      { type: 'cell-resumed', cellId: waitingCell.cellId, cause, attempt: 1, alone: false },
    ]);
    await until(() => !running(worker), 'the worker to end', 10_000);
    await env.runtime.shutdown();
  });

  it('a cell over maxJournalBytes is not resumed when its worker dies: its failure says why', async () => {
    const env = startRuntime({ maxJournalBytes: 2_048, workers: { prewarm: false } });
    const big = await env.cell(`const r = await tools.echo({ s: 'x'.repeat(4_000) }); text(r.s.length); yield_control(); await new Promise(() => {});`);
    expect(big.observation).toMatchObject({ kind: 'yielded', items: [{ text: '4000' }] });
    const [worker] = env.mine();
    const waiting = env.session.observe(big.cellId, { yieldTimeMs: 60_000 });
    process.kill(worker, 'SIGKILL');
    expect(await waiting).toMatchObject({
      kind: 'completed',
      error: 'exec runtime ended unexpectedly: the runtime worker was killed by SIGKILL; the cell could not be resumed: its journal passed 2048 bytes (maxJournalBytes)',
    });
    await env.runtime.shutdown();
  });

  it('the cell whose lone replay ends its runtime fails, and its tenant is isolated from then on (placement.isolateTenant)', async () => {
    const pool = createWorkerPool({ prewarm: false });
    const isolated: string[] = [];
    const runtime = createRemoteRuntime({ placement: { acquire: (sink, options) => pool.acquire(sink, options), isolateTenant: (tenant) => void isolated.push(tenant) }, onShutdown: () => pool.shutdown() });
    runtimes.push(runtime);
    const events: CellRuntimeEvent[] = [];
    const session = runtime.openSession({ ...createTestHost().host, runtimeEvent: (event) => events.push(event) }, { tenant: 'acme' });
    const { observation } = await session.createCell({ source: `text("x".repeat(2**28).split("").length)`, tools: [], yieldTimeMs: 120_000 });
    expect(observation).toMatchObject({ kind: 'completed', items: [] });
    expect((observation as { error?: string }).error).toMatch(/^exec runtime ended unexpectedly: the runtime worker crashed with SIG\w+ \(Fatal JavaScript invalid size error/);
    expect(events.map((event) => event.type)).toEqual(['runtime-lost', 'cell-resumed', 'runtime-lost', 'cell-resumed', 'runtime-lost']);
    expect(isolated).toEqual(['tenant acme']);
    await runtime.shutdown();
  }, 180_000);

  it('shutdown() leaves no worker process behind', async () => {
    const env = startRuntime();
    await env.cell(`text(1)`);
    void env.cell(`while (true) {}`, 60_000).catch(() => undefined);
    await until(() => env.mine().length === 2, '2 workers of this runtime', 60_000);
    const workers = env.mine();
    await env.runtime.shutdown();
    for (const pid of workers) expect(running(pid)).toBe(false);
  });

  it('a spare killed a moment ago (its exit not yet seen by the host) is not handed to the next cell', async () => {
    const fresh = startRuntime();
    await until(() => fresh.mine().length === 1, '1 worker of this runtime', 60_000);
    // the spare said hello: wait until it is idle and ready, then kill it
    await sleep(500);
    const [spare] = fresh.mine();
    process.kill(spare, 'SIGKILL');
    // no turn of the event loop until the kernel has made it a zombie: the pool cannot have seen the exit
    const deadline = Date.now() + 5_000;
    while (processInfo(spare)?.state !== 'Z' && Date.now() < deadline) {
      // spin
    }
    expect(processInfo(spare)?.state).toBe('Z');
    const { observation } = await fresh.cell(`text('on a live worker')`);
    expect(observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'on a live worker' }] });
    expect((observation as { error?: string }).error).toBeUndefined();
    expect(fresh.events).toEqual([]);
    await fresh.runtime.shutdown();
  });

  it('idle workers are reaped; the prewarmed spare stays until shutdown', async () => {
    const env = startRuntime({ workers: { idleMs: 300, max: 3 } });
    const cells = await Promise.all([env.cell(`await new Promise((r) => setTimeout(r, 300)); text(1)`), env.cell(`await new Promise((r) => setTimeout(r, 300)); text(2)`)]);
    expect(cells.map((created) => created.observation.kind)).toEqual(['completed', 'completed']);
    // the session's worker and the spare: once both are idle, one of them is reaped
    await until(() => env.mine().length === 1, '1 worker of this runtime', 30_000);
    await sleep(600);
    expect(env.mine()).toHaveLength(1);
    await env.runtime.shutdown();
    expect(env.mine()).toHaveLength(0);
  });

  it('perSession: beyond workers.max a session of another tenant waits admissionMs, then fails naming the pool; never co-located', async () => {
    const runtime = createCodeModeRuntime({ workers: { shared: false, max: 1, prewarm: false, admissionMs: 300, perSession: true } });
    runtimes.push(runtime);
    const first = runtime.openSession(createTestHost().host);
    const events: CellRuntimeEvent[] = [];
    const second = runtime.openSession({ ...createTestHost().host, runtimeEvent: (event) => events.push(event) });
    const held = await first.createCell({ source: `yield_control(); await new Promise(() => {});`, tools: [], yieldTimeMs: 10_000 });
    const before = Date.now();
    const message =
      "no Code Mode worker became free within 300 ms (workers.admissionMs): the pool's 1 worker (workers.max 1, one tenant per worker: workers.perSession) is held by 1 session of 1 tenant, and no other session waits";
    expect(await rejection(second.createCell({ source: `text(1)`, tools: [], yieldTimeMs: 10_000 }))).toEqual({ code: 'RESPOND_TO_MODEL', message });
    expect(Date.now() - before).toBeGreaterThanOrEqual(250);
    expect(events).toEqual([
      { type: 'runtime-queued', position: 1, waiting: 1, waitedMs: 0 },
      { type: 'runtime-refused', reason: 'wait-timeout', message, waitedMs: expect.any(Number) },
    ]);
    // A waiting session is admitted as soon as the holder lets go (its worker ends, a fresh one starts).
    const waiting = second.createCell({ source: `text(1)`, tools: [], yieldTimeMs: 10_000 });
    await sleep(50);
    await first.terminate(held.cellId);
    await first.shutdown();
    expect((await waiting).observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: '1' }] });
    expect(events.at(-1)).toMatchObject({ type: 'runtime-admitted' });
    await runtime.shutdown();
  });

  it('by default sessions of different tenants share a worker; with perSession, tenants get their own processes and a tenant its own sessions together', async () => {
    const before = new Set(workerChildren());
    const workerPids = () => workerChildren().filter((pid) => !before.has(pid));
    const live = async (session: ReturnType<CodeModeRuntime['openSession']>) => {
      const created = await session.createCell({ source: `yield_control(); await new Promise(() => {});`, tools: [], yieldTimeMs: 10_000 });
      expect(created.observation.kind).toBe('yielded');
    };
    const dense = createCodeModeRuntime({ workers: { shared: false, max: 3, prewarm: false } });
    runtimes.push(dense);
    for (const tenant of ['acme', undefined, undefined, 'globex']) await live(dense.openSession(createTestHost().host, tenant === undefined ? undefined : { tenant }));
    expect(workerPids()).toHaveLength(1);
    await dense.shutdown();
    await until(() => workerPids().length === 0, 'no workers left', 10_000);

    const runtime = createCodeModeRuntime({ workers: { shared: false, max: 3, prewarm: false, perSession: true } });
    runtimes.push(runtime);
    const a1 = runtime.openSession(createTestHost().host, { tenant: 'acme' });
    const a2 = runtime.openSession(createTestHost().host, { tenant: 'acme' });
    const b = runtime.openSession(createTestHost().host);
    const c = runtime.openSession(createTestHost().host);
    for (const session of [a1, a2, b]) await live(session);
    // acme's two sessions on one worker, b on another: 2 of 3 workers; c gets the third.
    expect(workerPids()).toHaveLength(2);
    await live(c);
    expect(workerPids()).toHaveLength(3);
    await runtime.shutdown();
  });

  it('rejects bad worker options with a CONFIG error naming the option', () => {
    for (const [workers, name] of [
      [{ max: 0 }, 'workers.max'],
      [{ sessionsPerWorker: 0 }, 'workers.sessionsPerWorker'],
      [{ maxQueued: -1 }, 'workers.maxQueued'],
      [{ memoryMb: 10 }, 'workers.memoryMb'],
      [{ prewarm: 'yes' }, 'workers.prewarm'],
      [{ maxFrameBytes: 10 }, 'workers.maxFrameBytes'],
    ] as const) {
      expect(() => createCodeModeRuntime({ workers: workers as never })).toThrow(name);
    }
    expect(() => createCodeModeRuntime({ isolation: 'thread' as never })).toThrow('createCodeModeRuntime: option `isolation` must be one of "process", "in-process"; got "thread"');
  });
});

describe('workers die with their host', () => {
  const fixture = fileURLToPath(new URL('../test/fixtures/host.ts', import.meta.url));
  const packageRoot = fileURLToPath(new URL('..', import.meta.url));

  /** Starts the fixture host; resolves with its first line (its pid and its workers') and the child. */
  function host(mode: 'wait' | 'exit', deathSignal: 'death-signal' | 'no-death-signal') {
    const child = spawn(process.execPath, ['--conditions=@switchyard/source', '--import', 'tsx', fixture, mode, deathSignal], {
      cwd: packageRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (data) => (stderr += data));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const first = new Promise<{ pid: number; workers: number[]; observation: string }>((resolve, reject) => {
      let stdout = '';
      child.stdout.on('data', (data) => {
        stdout += data;
        if (stdout.includes('\n')) resolve(JSON.parse(stdout.split('\n')[0]));
      });
      child.once('exit', () => reject(new Error(`host exited early: ${stderr}`)));
    });
    return { child, first, exited };
  }

  for (const deathSignal of ['death-signal', 'no-death-signal'] as const) {
    const how = deathSignal === 'death-signal' ? 'PR_SET_PDEATHSIG through setpriv, even with the workers stopped' : 'stdin EOF and the parent-pid watch only';
    it(`after the host is SIGKILLed, its workers end (${how})`, async () => {
      const { child, first } = host('wait', deathSignal);
      const started = await first;
      try {
        expect(started.observation).toBe('yielded');
        expect(started.workers).toHaveLength(2);
        for (const pid of started.workers) expect(processInfo(pid)?.ppid).toBe(started.pid);
        // A stopped worker cannot read its stdin's EOF nor watch its parent: only the kernel's
        // parent-death signal can end it. (Without a death signal, the workers are left running.)
        if (deathSignal === 'death-signal') for (const pid of started.workers) process.kill(pid, 'SIGSTOP');
        child.kill('SIGKILL');
        // one worker spins in a cell: it must end anyway
        await until(() => started.workers.every((pid) => !running(pid)), 'the workers to end', 15_000);
      } finally {
        for (const pid of started.workers) if (running(pid)) process.kill(pid, 'SIGKILL');
      }
    }, 90_000);
  }

  it('a host that ends without calling shutdown() is not kept alive by its workers, and leaves none behind', async () => {
    const { first, exited } = host('exit', 'death-signal');
    const started = await first;
    expect(started.observation).toBe('completed');
    expect(await exited).toBe(0);
    await until(() => started.workers.every((pid) => !running(pid)), 'the workers to end', 15_000);
  }, 90_000);
});

describe('the cause of a worker\'s death, as the model reads it', () => {
  it('names the signal or the exit code, with what V8 or Node printed last', async () => {
    const { describeExit } = await import('./worker-process');
    const invalidSize = '\n\n#\n# Fatal error in , line 0\n# Fatal JavaScript invalid size error 524289390 (see crbug.com/1201626)\n#\n#\n#\n#FailureMessage Object: 0x7f1\n----- Native stack trace -----\n\n 1: 0xd32b41  [node]\n';
    expect(describeExit({ code: null, signal: 'SIGTRAP' }, invalidSize)).toBe('the runtime worker crashed with SIGTRAP (Fatal JavaScript invalid size error 524289390 (see crbug.com/1201626))');
    const heapOom = '<--- JS stacktrace --->\n\nCALL_AND_RETRY_LAST\nis_heap_oom = 1\n\n<--- Heap statistics --->\nheap_size_limit = 137363456\nmalloced_memory = 49248\ndoes_zap_garbage = 0\n';
    expect(describeExit({ code: null, signal: 'SIGABRT' }, heapOom)).toBe('the runtime worker crashed with SIGABRT (V8 ran out of heap memory at a heap limit of 131 MB)');
    expect(describeExit({ code: null, signal: 'SIGKILL' }, '')).toBe('the runtime worker was killed by SIGKILL');
    expect(describeExit({ code: 1, signal: null }, "node:internal/modules\nError: Cannot find module 'isolated-vm'\n    at Module._resolveFilename\n")).toBe(
      "the runtime worker exited with code 1 (Error: Cannot find module 'isolated-vm')",
    );
  });
});
