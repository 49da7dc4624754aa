import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { byProfile, report } from '../src/profile';
import { openHarness, outcome, testTools, waitItem, workerChildren, workerRssMb, type Harness } from './helpers';

// Each bomb runs as a real `exec` through the full stack; each must end bounded, with a clear
// error where it fails, and leave the session able to run the next cell.
const HEAP_MB = 32;
const CPU_MS = 1_500;
const OUTPUT_BYTES = 1024 * 1024;
const PROMISES = byProfile(100_000, 250_000);
const TIMERS = byProfile(10_000, 50_000);
// The long profile sends the largest argument a 32 MB cell passes: its JSON ({"s":"…"}, 8 more
// characters) is exactly the value size limit, heapMb / 8 MiB = 4,194,304 characters.
const ARGUMENT_CHARS = byProfile(4_000_000, 4_194_296);

const measured: number[] = [];
let harness: Harness;
beforeAll(async () => {
  harness = await openHarness({
    tools: testTools({ aborted: [], measured }),
    runtimeOptions: { heapMb: HEAP_MB, cpuTimeMs: CPU_MS, maxOutputBytes: OUTPUT_BYTES, maxInFlightCalls: 256 },
  });
});
afterAll(() => harness.close());

const held: string[] = [];
async function healthy(): Promise<void> {
  const next = await harness.exec(`text('still healthy');`);
  expect(next.output).toEqual(['still healthy']);
}

describe('resource bombs through the full stack: bounded, with a clear error', () => {
  it('infinite loop: stopped by the CPU limit; without one, yielded and terminated by wait', async () => {
    const started = Date.now();
    const spun = await harness.exec(`text('spinning'); while (true) {}`);
    expect(spun.status).toBe('failed');
    expect(spun.output).toEqual(['spinning']);
    expect(spun.error).toBe(`exec cell exceeded its CPU time limit of ${CPU_MS} ms`);
    const unlimited = await openHarness();
    try {
      const running = await unlimited.exec(`while (true) {}`, { yieldTimeMs: 100 });
      expect(running.status).toBe('running');
      const stopped = outcome(await unlimited.step.dispatch(waitItem('stop', { cell_id: running.cellId, terminate: true })));
      expect(stopped.status).toBe('terminated');
    } finally {
      await unlimited.close();
    }
    held.push(`infinite loop → "${spun.error}" after ${Date.now() - started} ms; unlimited cell terminated by wait`);
    await healthy();
  });

  it('memory: the heap limit fails the cell and keeps its earlier output', async () => {
    const bomb = await harness.exec(`text('before'); const hoard = []; while (true) hoard.push(new Array(100000).fill(Math.random()));`);
    expect(bomb.status).toBe('failed');
    expect(bomb.output).toEqual(['before']);
    expect(bomb.error).toBe(`exec runtime ended unexpectedly: the cell exceeded its heap limit of ${HEAP_MB} MB`);
    held.push(`memory bomb → "${bomb.error}"`);
    await healthy();
  });

  it('output flood: the output limit throws inside the cell; the wire output stays within the token budget', async () => {
    const flood = await harness.exec(`for (;;) text('x'.repeat(100000));`);
    // The budget truncates the middle of the output; the script error at its end survives.
    expect(flood.status).toBe('failed');
    const message = `exec output limit exceeded: a cell may produce at most ${OUTPUT_BYTES} bytes of output`;
    expect(flood.output.at(-1)).toMatch(/^Warning: truncated output \(original token count: \d+\)\n/);
    expect(flood.output.at(-1)!.endsWith(`Script error:\n${message}`)).toBe(true);
    const wireBytes = JSON.stringify(flood.item).length;
    expect(wireBytes).toBeLessThan(200_000);
    held.push(`output flood → "${message}", wire item truncated to ${wireBytes} bytes`);
    await healthy();
  });

  it(`${PROMISES.toLocaleString('en')} pending promises and ${TIMERS.toLocaleString('en')} timers complete`, async () => {
    const promises = await harness.exec(`const p = []; for (let i = 0; i < ${PROMISES}; i++) p.push(new Promise(() => {})); Promise.all(p).then(() => text('never')); text(p.length);`);
    expect(promises.status).toBe('completed');
    expect(promises.output).toEqual([String(PROMISES)]);
    const timers = await harness.exec(`let fired = 0; await new Promise((resolve) => { for (let i = 0; i < ${TIMERS}; i++) setTimeout(() => { if (++fired === ${TIMERS}) resolve(); }, i % 7); }); text(fired);`);
    expect(timers.output).toEqual([String(TIMERS)]);
    held.push(`${PROMISES} pending promises → completed; ${TIMERS} timers → all fired`);
    await healthy();
  });

  it('deep recursion fails with a RangeError', async () => {
    const deep = await harness.exec(`function down(n) { return down(n + 1) + 1; } down(0);`);
    expect(deep.status).toBe('failed');
    expect(deep.error).toMatch(/^RangeError: Maximum call stack size exceeded/);
    held.push(`deep recursion → "${deep.error!.split('\n')[0]}"`);
    await healthy();
  });

  it('huge tool arguments: a large one arrives whole; one beyond the heap fails the cell clearly', async () => {
    const large = await harness.exec(`const r = await tools.measure({ s: 'x'.repeat(${ARGUMENT_CHARS}) }); text(r.length);`);
    expect(large.status).toBe('completed');
    expect(large.output).toEqual([String(ARGUMENT_CHARS)]);
    expect(measured.at(-1)).toBe(ARGUMENT_CHARS);
    const before = measured.length;
    // Near its heap limit V8 collects again and again before it gives up; on a loaded machine that
    // can pass the shared harness's CPU limit first. Here only the heap (and a wall time bound) stops the cell.
    const heapOnly = await openHarness({ tools: testTools({ aborted: [], measured }), runtimeOptions: { heapMb: HEAP_MB, cpuTimeMs: false, wallTimeMs: 60_000 } });
    let beyond: Awaited<ReturnType<Harness['exec']>>;
    try {
      beyond = await heapOnly.exec(`await tools.measure({ s: 'y'.repeat(40_000_000) });`);
    } finally {
      await heapOnly.close();
    }
    expect(beyond.status).toBe('failed');
    expect(beyond.error).toMatch(/heap limit of 32 MB|Invalid string length/);
    expect(measured.length).toBe(before);
    held.push(`tool argument of ${ARGUMENT_CHARS} chars → delivered whole; 40,000,000 chars → "${beyond.error}"`);
    await healthy();
  });

  it('a flood of parallel nested calls: the ones over the in-flight limit reject inside the cell', async () => {
    const flood = await harness.exec(`
      const settled = await Promise.allSettled(Array.from({ length: 2000 }, (_, i) => tools.echo({ i })));
      const rejected = settled.filter((s) => s.status === 'rejected');
      text(settled.length - rejected.length); text(rejected.length); text(rejected.length ? String(rejected[0].reason) : '');`);
    expect(flood.status).toBe('completed');
    const [fulfilled, rejected, reason] = flood.output;
    expect(Number(fulfilled) + Number(rejected)).toBe(2000);
    expect(Number(fulfilled)).toBeGreaterThanOrEqual(256);
    if (Number(rejected) > 0) expect(reason).toMatch(/\S/);
    held.push(`2000 parallel nested calls → ${fulfilled} answered, ${rejected} refused${reason ? ` ("${reason}")` : ''}`);
    await healthy();
  });

  it('bridge floods stay bounded and the CPU and wall limits fire during them', async () => {
    // timers set and cleared in a loop: two messages per turn, never an output item
    const peak = { rssMb: 0 };
    const watch = setInterval(() => {
      for (const pid of workerChildren()) peak.rssMb = Math.max(peak.rssMb, workerRssMb(pid));
    }, 50);
    try {
      const timers = await harness.exec(`for(;;){const t=setTimeout(()=>{},1e9);clearTimeout(t)}`);
      expect(timers.status).toBe('failed');
      expect(timers.error).toBe(`exec cell exceeded its CPU time limit of ${CPU_MS} ms`);
    } finally {
      clearInterval(watch);
    }
    // backpressure: the flood never queued more than a window of messages in the worker
    expect(peak.rssMb).toBeLessThan(512);
    const limited = await openHarness({ runtimeOptions: { wallTimeMs: 2_000, cpuTimeMs: false } });
    try {
      const yields = await limited.exec(`text('flooding'); for(;;) yield_control()`);
      let observed = yields;
      for (let round = 0; observed.status === 'running' && round < 10_000; round++) {
        observed = outcome(await limited.step.dispatch(waitItem(`flood-${round}`, { cell_id: yields.cellId, yield_time_ms: 1_000 })));
      }
      expect(observed.status).toBe('failed');
      expect(observed.error).toBe('exec cell exceeded its wall time limit of 2000 ms');
    } finally {
      await limited.close();
    }
    held.push(`timer flood → "exec cell exceeded its CPU time limit of ${CPU_MS} ms", worker peak RSS ${Math.round(peak.rssMb)} MB; yield_control() flood → "exec cell exceeded its wall time limit of 2000 ms"`);
    await healthy();
  });

  it('a never-settling cell is ended by the wall-time limit', async () => {
    const limited = await openHarness({ runtimeOptions: { wallTimeMs: 400 } });
    try {
      const stuck = await limited.exec(`text('waiting'); await new Promise(() => {});`);
      expect(stuck.status).toBe('failed');
      expect(stuck.error).toBe('exec cell exceeded its wall time limit of 400 ms');
      held.push(`never-settling cell → "${stuck.error}"`);
    } finally {
      await limited.close();
    }
  });

  it('large values near the heap limit (1M to 60M characters; arguments, text, stored values, results) fail the cell clearly, never the host', () => {
    // Each heap size runs in a child process, so a regression (V8's fatal "CALL_AND_RETRY_LAST /
    // is_heap_oom", which used to abort the host for a 12,000,000-character argument from a 32 MB
    // cell) fails this test instead of killing the suite.
    const fixture = fileURLToPath(new URL('./fixtures/argument-near-heap-limit.ts', import.meta.url));
    const run = (heapMb: number, runs: string[]) => {
      const child = spawnSync(process.execPath, ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', fixture, String(heapMb), ...runs], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        encoding: 'utf8',
        timeout: 150_000,
      });
      expect(child.stderr).not.toMatch(/is_heap_oom|Last few GCs|Fatal/);
      expect([child.status, child.signal]).toEqual([0, null]);
      expect(child.stdout.trimEnd().split('\n').at(-1)).toBe('host alive');
      const lines = child.stdout.trim().split('\n').slice(0, -1).map((line) => JSON.parse(line) as { run: string; status: string; error?: string; last?: string });
      return new Map(lines.map((line) => [line.run, line]));
    };
    const limit = (heapMb: number) => (heapMb * 1024 * 1024) / 8;
    const tooLarge = (heapMb: number, what: string, length: number) =>
      `exec value size limit exceeded: ${what} is ${length} characters, over the limit of ${limit(heapMb)} characters per value for a cell with a heap limit of ${heapMb} MB`;
    const clearFailure = (heapMb: number) => new RegExp(`^(exec value size limit exceeded: .* heap limit of ${heapMb} MB|exec runtime ended unexpectedly: the cell exceeded its heap limit of ${heapMb} MB)$`);

    // 32 MB: the reported case (12M) and sizes around it.
    const at32 = run(32, ['argument:1000000', 'argument:4000000', 'argument:8000000', 'argument:12000000', 'argument:16000000', 'argument:40000000', 'argument:60000000']);
    for (const chars of [1_000_000, 4_000_000]) expect(at32.get(`argument:${chars}`)).toMatchObject({ status: 'completed', last: String(chars) });
    for (const chars of [8_000_000, 12_000_000, 16_000_000]) {
      expect(at32.get(`argument:${chars}`)).toMatchObject({ status: 'failed', error: tooLarge(32, 'the JSON of the arguments of tool `measure`', chars + 8) });
    }
    for (const chars of [40_000_000, 60_000_000]) {
      const result = at32.get(`argument:${chars}`)!;
      expect(result.status).toBe('failed');
      expect(result.error).toMatch(clearFailure(32));
    }

    // 16 MB: text() items, stored values and tool results, under and over the limit.
    const at16 = run(16, ['text:1000000', 'text:12000000', 'store:1000000', 'store:3000000', 'store:12000000', 'result:1000000', 'result:12000000']);
    // (the broker's token budget truncates this output's middle; its end survives)
    expect(at16.get('text:1000000')).toMatchObject({ status: 'completed', last: expect.stringMatching(/sent$/) });
    expect(at16.get('text:12000000')).toMatchObject({ status: 'failed', error: tooLarge(16, 'a text() item', 12_000_000) });
    expect(at16.get('store:1000000:load')).toMatchObject({ status: 'completed', last: '1000000' });
    expect(at16.get('store:3000000')).toMatchObject({ status: 'failed', error: tooLarge(16, 'the JSON of a store() value', 3_000_002) });
    expect(at16.get('store:12000000')!.error).toMatch(clearFailure(16));
    // A failed cell commits no writes: the 1M value stored earlier is what the next cell loads.
    expect(at16.get('store:12000000:load')).toMatchObject({ status: 'completed', last: '1000000' });
    expect(at16.get('result:1000000')).toMatchObject({ status: 'completed', last: '1000000' });
    expect(at16.get('result:12000000')).toMatchObject({ status: 'failed', error: tooLarge(16, 'the JSON of the result of tool `big`', 12_000_008) });

    // 64 MB: the limit scales with the heap.
    const at64 = run(64, ['argument:8000000', 'argument:12000000', 'argument:24000000']);
    expect(at64.get('argument:8000000')).toMatchObject({ status: 'completed', last: '8000000' });
    expect(at64.get('argument:12000000')).toMatchObject({ status: 'failed', error: tooLarge(64, 'the JSON of the arguments of tool `measure`', 12_000_008) });
    expect(at64.get('argument:24000000')!.error).toMatch(clearFailure(64));

    held.push(
      `values near the heap limit → host alive for every size; 12,000,000-character argument from a 32 MB cell → "${at32.get('argument:12000000')!.error}"`,
    );
  }, 300_000);

  afterAll(() => report('resource bombs', `${held.length} bombs, all bounded:\n  - ${held.join('\n  - ')}`));
});
