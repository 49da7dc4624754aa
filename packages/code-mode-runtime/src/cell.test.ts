import { isSwitchyardError } from '@switchyard/protocol';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import type { CellToolRequest } from '@switchyard/protocol';
import { setup, sleep } from '../test/helpers';

// Sandbox, resource and limit behaviour of a cell (beyond the reference).
const received: CellToolRequest[] = [];
const env = setup({
  echo: (request) => {
    received.push(request);
    return request.input as never;
  },
  slow: (request) =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve('late'), 2_000);
      request.signal.addEventListener('abort', () => clearTimeout(timer));
    }),
});
afterAll(() => env.runtime.shutdown());

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('sandbox', () => {
  it('constructor chains reach only the isolate realm: no process, require or host objects', async () => {
    const texts = await env.texts(`
      text(globalThis.constructor.constructor('return typeof process')());
      text(text.constructor('return typeof require')());
      text((async () => {}).constructor('return typeof process')().constructor === Promise);
      const promise = tools.echo({});
      text(Object.getPrototypeOf(promise).constructor.constructor('return globalThis')() === globalThis);
      text(tools.echo.constructor.constructor('try { return process.env } catch (e) { return String(e) }')());
      await promise;
      const found = [];
      for (const name of Object.getOwnPropertyNames(globalThis)) {
        const value = globalThis[name];
        if (value && /Reference|Callback|ExternalCopy|Isolate|isolated/i.test(String(value.constructor && value.constructor.name))) found.push(name);
      }
      text(found.length);
    `);
    expect(texts).toEqual(['undefined', 'undefined', 'true', 'true', 'ReferenceError: process is not defined', '0']);
  });

  it('prototype pollution inside a cell reaches neither the host nor the next cell', async () => {
    const before = received.length;
    const texts = await env.texts(`
      for (const key of ['reference', 'promise', 'copy', 'result', 'arguments', 'timeout', 'externalCopy', 'ignored']) {
        for (const proto of [Object.prototype, Array.prototype, Function.prototype]) { try { proto[key] = true; } catch (_) {} }
      }
      Object.prototype.toJSON = undefined;
      const out = await tools.echo({ ok: 1 });
      text(typeof out + ':' + JSON.stringify(out));
    `);
    expect(texts).toEqual(['object:{"ok":1}']);
    const input = received[before].input as Record<string, unknown>;
    expect(Object.getPrototypeOf(input)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).reference).toBeUndefined();
    expect(await env.texts(`text(String(({}).reference) + String([].copy));`)).toEqual(['undefinedundefined']);
  });

  it('a cell that rewrites its own builtins still completes, commits its writes and keeps the image policy', async () => {
    const texts = await env.texts(`
      store('sabotage', { ok: true });
      Array.prototype.push = () => { throw 'no push'; };
      Array.prototype.toJSON = () => 'hijacked';
      Array.prototype.indexOf = () => 0;
      RegExp.prototype.test = () => false;
      String.prototype.toLowerCase = () => 'high';
      String.prototype.trim = () => 'x';
      try { image('https://example.com/a.png'); } catch (e) { text(e); }
      try { image('data:image/png;base64,AA', 'bogus'); } catch (e) { text(e); }
      try { notify(' '); } catch (e) { text(e); }
    `);
    expect(texts).toEqual([
      'Tool call failed: remote image URLs are not supported in tool outputs. Pass a base64 data URI instead',
      'image detail must be one of: auto, low, high, original',
      'notify expects non-empty text',
    ]);
    expect(await env.texts(`text(load('sabotage'));`)).toEqual(['{"ok":true}']);
  });

  it('getters, proxies, toJSON and Symbol.toPrimitive on tool arguments run in the isolate only; the host gets plain data', async () => {
    const before = received.length;
    const texts = await env.texts(`
      const withGetter = { get x() { text('getter ran in the cell'); return 1; } };
      const proxy = new Proxy({}, {
        ownKeys: () => ['a'],
        getOwnPropertyDescriptor: () => ({ value: 0, enumerable: true, configurable: true }),
        get: (_, key) => (key === 'toJSON' ? undefined : 2),
      });
      const primitive = { [Symbol.toPrimitive]() { throw 'host never sees this'; }, toJSON() { return { safe: true }; } };
      await tools.echo(withGetter); await tools.echo(proxy); await tools.echo(primitive);
    `);
    expect(texts).toEqual(['getter ran in the cell']);
    const inputs = received.slice(before).map((request) => request.input);
    expect(inputs).toEqual([{ x: 1 }, { a: 2 }, { safe: true }]);
    for (const input of inputs) {
      expect(Object.getPrototypeOf(input)).toBe(Object.prototype);
      for (const descriptor of Object.values(Object.getOwnPropertyDescriptors(input))) expect('value' in descriptor).toBe(true);
    }
  });
});

describe('resources: each fails its own cell only, the host stays healthy', () => {
  it('terminates while (true) {}', async () => {
    const spinning = await env.run(`while (true) {}`, { yieldTimeMs: 20 });
    expect(await env.session.terminate(spinning.cellId)).toMatchObject({ kind: 'terminated' });
    expect(await env.texts(`text('healthy');`)).toEqual(['healthy']);
  });

  it('a memory bomb fails its cell with a heap-limit error, keeping its earlier output', async () => {
    const small = setup({}, { heapMb: 16 });
    try {
      const observation = await small.run(`text('before the bomb'); const hoard = []; while (true) hoard.push(new Array(100000).fill(Math.random()));`);
      expect(observation).toMatchObject({
        kind: 'completed',
        items: [{ type: 'input_text', text: 'before the bomb' }],
        error: 'exec runtime ended unexpectedly: the cell exceeded its heap limit of 16 MB',
      });
      expect(await small.texts(`text('next cell fine');`)).toEqual(['next cell fine']);
    } finally {
      await small.runtime.shutdown();
    }
  });

  it('a memory bomb inside a later entry (after a nested call resolved, in a timer callback) fails its cell with the heap-limit error too', async () => {
    const small = setup({ echo: () => 'ok' }, { heapMb: 16 });
    const bomb = `const hoard = []; while (true) hoard.push(new Array(100000).fill(Math.random()));`;
    try {
      for (const source of [
        `text(await tools.echo({})); ${bomb}`,
        `await new Promise((resolve) => setTimeout(() => { text('timer'); ${bomb} }, 10));`,
      ]) {
        const observation = await small.run(source);
        expect(observation).toMatchObject({ kind: 'completed', error: 'exec runtime ended unexpectedly: the cell exceeded its heap limit of 16 MB' });
        expect(observation.items.length).toBe(1);
      }
      expect(await small.texts(`text('next cell fine');`)).toEqual(['next cell fine']);
    } finally {
      await small.runtime.shutdown();
    }
  });

  it('runs 10,000 timers', async () => {
    const texts = await env.texts(`
      let fired = 0;
      await new Promise((resolve) => { for (let i = 0; i < 10000; i++) setTimeout(() => { if (++fired === 10000) resolve(); }, i % 5); });
      text(fired);
    `);
    expect(texts).toEqual(['10000']);
  });

  it('clamps timer delays above 2^31 - 1 ms instead of firing them at once', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const texts = await env.texts(`
        let fired = false;
        setTimeout(() => { fired = true; }, 2 ** 40);
        setTimeout(() => { fired = true; }, 2 ** 31);
        await new Promise((resolve) => setTimeout(resolve, 50));
        text(fired);
      `);
      expect(texts).toEqual(['false']);
      await sleep(10);
      expect(warnings).not.toContain('TimeoutOverflowWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('pending timers per cell: setTimeout over maxTimers throws inside the cell; cleared and fired ones free slots', async () => {
    const limited = setup({}, { maxTimers: 3 });
    try {
      const texts = await limited.texts(`
        const ids = [setTimeout(() => {}, 1e6), setTimeout(() => {}, 1e6), setTimeout(() => {}, 1e6)];
        try { setTimeout(() => {}, 0); } catch (e) { text(e); }
        clearTimeout(ids[0]);
        await new Promise((resolve) => setTimeout(resolve, 1));
        await new Promise((resolve) => setTimeout(resolve, 1));
        text('ok');
      `);
      expect(texts).toEqual(['exec timer limit exceeded: this cell already has 3 pending timers (limit)', 'ok']);
    } finally {
      await limited.runtime.shutdown();
    }
  });

  it('deep recursion fails with a RangeError (or is caught by the script)', async () => {
    const uncaught = await env.run(`function down(n) { return down(n + 1) + 1; } down(0);`);
    expect(uncaught.kind === 'completed' && uncaught.error).toMatch(/^RangeError: Maximum call stack size exceeded/);
    expect(await env.texts(`function down(n) { return down(n + 1) + 1; } try { down(0); } catch (e) { text(e.name); }`)).toEqual(['RangeError']);
  });

  it('a 50 MB text() hits the default output limit with a clear error; with higher output and heap limits it arrives whole', async () => {
    const refused = await env.run(`text('small'); text('x'.repeat(50_000_000));`);
    expect(refused).toMatchObject({
      kind: 'completed',
      items: [{ text: 'small' }],
      error: 'exec output limit exceeded: a cell may produce at most 16777216 bytes of output',
    });
    // 50,000,000 characters is over the value size limit of a 128 MB cell (16 MiB); a 512 MB cell passes 64 MiB.
    const roomy = setup({}, { maxOutputBytes: 64 * 1024 * 1024, heapMb: 512 });
    try {
      const observation = await roomy.run(`text('x'.repeat(50_000_000));`);
      expect(observation.kind).toBe('completed');
      const item = observation.items[0];
      expect(item.type === 'input_text' && item.text.length).toBe(50_000_000);
    } finally {
      await roomy.runtime.shutdown();
    }
  }, 90_000);

  it('holds 100,000 pending promises and still completes', async () => {
    const texts = await env.texts(`
      const pending = [];
      for (let i = 0; i < 100000; i++) pending.push(new Promise(() => {}));
      Promise.all(pending).then(() => text('never'));
      text(pending.length);
    `);
    expect(texts).toEqual(['100000']);
  });

  it('200 create/terminate cycles of a spinning cell grow memory by less than a stated bound', async () => {
    const cycle = async () => {
      const { cellId } = await env.session.createCell({ source: `while (true) {}`, tools: [], yieldTimeMs: 2 });
      await env.session.terminate(cellId);
    };
    for (let i = 0; i < 20; i++) await cycle();
    gc();
    const before = process.memoryUsage();
    for (let i = 0; i < 200; i++) await cycle();
    await sleep(50);
    gc();
    const after = process.memoryUsage();
    // Bounds: host JS heap +8 MB (no leaked cells), RSS +64 MB (malloc arenas; see README).
    expect(after.heapUsed - before.heapUsed).toBeLessThan(8 * 1024 * 1024);
    expect(after.rss - before.rss).toBeLessThan(64 * 1024 * 1024);
    expect(await env.texts(`text('alive');`)).toEqual(['alive']);
  }, 90_000); // 4–6 s on a quiet machine; 200 isolates take longer when the cores are busy
});

describe('value size limit: a value crossing the bridge is at most heapMb / 8 MiB characters', () => {
  // 16 MB cells: the limit is 2,097,152 characters. Over it, the value is refused inside the cell
  // before it is flattened or copied; the cell, the session and the host go on.
  const HEAP_MB = 16;
  const LIMIT = 2_097_152;
  const tooLarge = (what: string, length: number) =>
    `exec value size limit exceeded: ${what} is ${length} characters, over the limit of ${LIMIT} characters per value for a cell with a heap limit of ${HEAP_MB} MB`;
  const small = setup(
    {
      measure: (request) => ({ length: (request.input as { s: string }).s.length }),
      big: (request) => ({ s: 'z'.repeat((request.input as { n: number }).n) }),
      fail_big: (request) => {
        throw 'e'.repeat((request.input as { n: number }).n);
      },
    },
    { heapMb: HEAP_MB, maxOutputBytes: 256 * 1024 * 1024 },
  );
  afterAll(() => small.runtime.shutdown());

  it('nested-call arguments: just under the limit arrive whole; over it the call rejects in the cell and never reaches the host', async () => {
    const before = small.calls.length;
    // {"s":"…"} adds 8 characters of JSON.
    expect(await small.texts(`text((await tools.measure({ s: 'x'.repeat(${LIMIT - 8}) })).length);`)).toEqual([String(LIMIT - 8)]);
    const texts = await small.texts(`try { await tools.measure({ s: 'x'.repeat(${LIMIT - 7}) }); } catch (e) { text(e); } text('went on');`);
    expect(texts).toEqual([tooLarge('the JSON of the arguments of tool `measure`', LIMIT + 1), 'went on']);
    expect(small.calls.length).toBe(before + 1);
  });

  it('the reported crash: a 12,000,000-character argument from a 32 MB cell fails the cell clearly (it used to abort the host)', async () => {
    const env32 = setup({ measure: (request) => ({ length: (request.input as { s: string }).s.length }) }, { heapMb: 32 });
    try {
      const observation = await env32.run(`text('before'); await tools.measure({ s: 'x'.repeat(12_000_000) });`);
      expect(observation).toMatchObject({
        kind: 'completed',
        items: [{ text: 'before' }],
        error:
          'exec value size limit exceeded: the JSON of the arguments of tool `measure` is 12000008 characters, over the limit of 4194304 characters per value for a cell with a heap limit of 32 MB',
      });
      expect(env32.calls).toHaveLength(0);
      expect(await env32.texts(`text('next cell fine');`)).toEqual(['next cell fine']);
    } finally {
      await env32.runtime.shutdown();
    }
  });

  it('text, notify and image items over the limit throw inside the cell; at the limit they arrive whole', async () => {
    const texts = await small.texts(`
      text('x'.repeat(${LIMIT}));
      for (const attempt of [
        () => text('x'.repeat(${LIMIT + 1})),
        () => text({ s: 'x'.repeat(${LIMIT}) }),
        () => notify('x'.repeat(${LIMIT + 1})),
        () => image('data:image/png;base64,' + 'A'.repeat(${LIMIT})),
        () => image({ type: 'image', data: 'A'.repeat(${LIMIT + 1}) }),
        () => image('data:image/png;base64,AA', 'h'.repeat(${LIMIT + 1})),
      ]) { try { attempt(); text('accepted'); } catch (e) { text(e); } }`);
    expect(texts.map((text) => (text.length > 1000 ? text.length : text))).toEqual([
      LIMIT,
      tooLarge('a text() item', LIMIT + 1),
      tooLarge('a text() item', LIMIT + 8),
      tooLarge('a notify() message', LIMIT + 1),
      tooLarge('an image URL', LIMIT + 22),
      tooLarge('image data', LIMIT + 1),
      'image detail must be one of: auto, low, high, original',
    ]);
    expect(small.notifications).toHaveLength(0);
  });

  it('stored values: each value and key is limited; writes whose total is over the limit all commit', async () => {
    const third = Math.floor(LIMIT * 0.6);
    const texts = await small.texts(`
      for (const attempt of [() => store('big', 'x'.repeat(${LIMIT})), () => store('k'.repeat(${LIMIT + 1}), 1)]) { try { attempt(); } catch (e) { text(e); } }
      text(String(load('k'.repeat(${LIMIT + 1}))));
      for (const key of ['a', 'b', 'c']) store(key, key.repeat(${third}));`);
    expect(texts).toEqual([tooLarge('the JSON of a store() value', LIMIT + 2), tooLarge('a store() key', LIMIT + 1), 'undefined']);
    expect(await small.texts(`text([load('a'), load('b'), load('c'), load('big')].map((v) => v === undefined ? 'none' : v[0] + v.length).join());`)).toEqual([
      `a${third},b${third},c${third},none`,
    ]);
  });

  it('tool results over the limit reject the call in the cell; a huge tool error text is shortened', async () => {
    const texts = await small.texts(`
      text((await tools.big({ n: ${LIMIT - 8} })).s.length);
      try { await tools.big({ n: ${LIMIT} }); } catch (e) { text(e); }
      try { await tools.fail_big({ n: ${LIMIT + 1} }); } catch (e) { text(e.message.length < 2000); text(e.message.slice(0, 3) + e.message.slice(1000)); }`);
    expect(texts).toEqual([
      String(LIMIT - 8),
      tooLarge('the JSON of the result of tool `big`', LIMIT + 8),
      'true',
      `eee… (${tooLarge("the tool's error text", LIMIT + 1)})`,
    ]);
  });

  it('an error over the limit is replaced by a size error; sizes from 1M to 60M characters never take the host down', async () => {
    expect(await small.run(`throw 'x'.repeat(${LIMIT + 1});`)).toMatchObject({ error: tooLarge('the error the cell failed with', LIMIT + 1) });
    for (const chars of [1e6, 3e6, 6e6, 12e6, 24e6, 60e6]) {
      const observation = await small.run(`text('start'); await tools.measure({ s: 'x'.repeat(${chars}) }); text('sent');`);
      expect(observation.kind).toBe('completed');
      if (chars < LIMIT) expect(observation.items.map((item) => item.type === 'input_text' && item.text)).toEqual(['start', 'sent']);
      else expect(observation.kind === 'completed' && observation.error).toMatch(/^exec (value size limit exceeded|runtime ended unexpectedly: the cell exceeded its heap limit of 16 MB)/);
    }
    expect(await small.texts(`text('host and session fine');`)).toEqual(['host and session fine']);
  });
});

describe('limits', () => {
  it('CPU time: a spinning cell is stopped; an idle waiting cell is not', async () => {
    const limited = setup({ wait: () => sleep(300).then(() => 'waited') }, { cpuTimeMs: 100 });
    try {
      const spinning = await limited.run(`text('spin'); while (true) {}`);
      expect(spinning).toMatchObject({ kind: 'completed', items: [{ text: 'spin' }], error: 'exec cell exceeded its CPU time limit of 100 ms' });
      expect(spinning.wallTimeMs).toBeLessThan(5_000);
      expect(await limited.texts(`text(await tools.wait());`)).toEqual(['waited']);
    } finally {
      await limited.runtime.shutdown();
    }
  });

  it('wall time: a never-settling cell fails after the limit', async () => {
    // generous: the limit counts from creation, and the cell must reach text() before it on a loaded machine
    const limited = setup({}, { wallTimeMs: 2_000 });
    try {
      const observation = await limited.run(`text('waiting'); await new Promise(() => {});`);
      expect(observation).toMatchObject({ kind: 'completed', items: [{ text: 'waiting' }], error: 'exec cell exceeded its wall time limit of 2000 ms' });
      expect(observation.wallTimeMs).toBeGreaterThanOrEqual(1_500);
    } finally {
      await limited.runtime.shutdown();
    }
  });

  it('cells per session: one more is refused with LIMIT_EXCEEDED until one finishes', async () => {
    const limited = setup({}, { maxCells: 2 });
    try {
      const first = await limited.run(`await new Promise(() => {});`, { yieldTimeMs: 5 });
      await limited.run(`await new Promise(() => {});`, { yieldTimeMs: 5 });
      const refused = await limited.session.createCell({ source: `text(1)`, tools: [], yieldTimeMs: 5 }).catch((error: unknown) => error);
      expect(isSwitchyardError(refused) && [refused.code, refused.message]).toEqual([
        'LIMIT_EXCEEDED',
        'exec cell limit reached: this session already runs 2 cells (limit 2); wait for one to finish or terminate one',
      ]);
      await limited.session.terminate(first.cellId);
      expect(await limited.texts(`text('room again');`)).toEqual(['room again']);
    } finally {
      await limited.runtime.shutdown();
    }
  });

  it('cells per session: completed cells whose results are not yet observed count until observed', async () => {
    const limited = setup({}, { maxCells: 2 });
    try {
      const first = await limited.run(`await new Promise((resolve) => setTimeout(resolve, 20)); text('kept');`, { yieldTimeMs: 0 });
      const second = await limited.run(`await new Promise((resolve) => setTimeout(resolve, 20));`, { yieldTimeMs: 0 });
      expect([first.kind, second.kind]).toEqual(['yielded', 'yielded']);
      await sleep(100); // both completed, neither observed
      const refused = await limited.session.createCell({ source: `text(1)`, tools: [], yieldTimeMs: 5 }).catch((error: unknown) => error);
      expect(isSwitchyardError(refused) && [refused.code, refused.message]).toEqual([
        'LIMIT_EXCEEDED',
        'exec cell limit reached: this session already runs 2 cells (limit 2); wait for one to finish or terminate one',
      ]);
      // (a long yield: on a loaded machine the cell may complete only now)
      const observed = await limited.session.observe(first.cellId, { yieldTimeMs: 10_000 });
      expect(observed).toMatchObject({ kind: 'completed', items: [{ text: 'kept' }] });
      expect(await limited.texts(`text('room again');`)).toEqual(['room again']);
    } finally {
      await limited.runtime.shutdown();
    }
  });

  it('nested calls in flight per cell: the call over the limit rejects inside the cell', async () => {
    const limited = setup({ slow: () => sleep(100).then(() => 'ok') }, { maxInFlightCalls: 3 });
    try {
      const texts = await limited.texts(`text(await Promise.all([1, 2, 3, 4].map(() => tools.slow().catch((e) => e))));`);
      expect(JSON.parse(texts[0])).toEqual(['ok', 'ok', 'ok', 'tool `slow` was not called: this cell already has 3 nested tool calls in flight (limit)']);
    } finally {
      await limited.runtime.shutdown();
    }
  });
});
