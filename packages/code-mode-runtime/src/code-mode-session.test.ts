import { afterAll, describe, expect, it } from 'vitest';
import { createCodeModeRuntime } from './code-mode-runtime';
import { createTestHost, fnDescriptor, isolation, rejection, setup, sleep, until } from '../test/helpers';
import { cellTexts } from '@switchyard/test-helpers';

/** A host-side gate a cell can await through `tools.gate({ name })`. */
function createGates() {
  const waiting = new Map<string, () => void>();
  return {
    tool: (request: { input: unknown }) =>
      new Promise<string>((resolve) => waiting.set((request.input as { name: string }).name, () => resolve('opened'))),
    /** Resolves once the cell has called `tools.gate({ name })` (so everything it sent before has arrived). */
    reached: (name: string) => until(() => waiting.has(name)),
    open: async (name: string) => {
      await until(() => waiting.has(name));
      waiting.get(name)!();
      waiting.delete(name);
    },
  };
}

const gates = createGates();
const env = setup({ gate: gates.tool, echo: (request) => request.input as never });
afterAll(() => env.runtime.shutdown());


describe('observation', () => {
  it('the yield timer hands over output since the previous observation, and each observe waits anew', async () => {
    const first = await env.run(`text('a'); await tools.gate({ name: 'yield-1' }); text('b'); await new Promise(() => {});`, { yieldTimeMs: 400 });
    expect(first).toMatchObject({ kind: 'yielded', items: [{ type: 'input_text', text: 'a' }] });
    await gates.open('yield-1');
    const second = await env.session.observe(first.cellId, { yieldTimeMs: 400 });
    expect(second).toMatchObject({ kind: 'yielded', cellId: first.cellId });
    expect(cellTexts(second)).toEqual(['b']);
    const third = await env.session.observe(first.cellId, { yieldTimeMs: 30 });
    expect(third).toMatchObject({ kind: 'yielded', items: [] });
    await env.session.terminate(first.cellId);
  });

  it('a completion before the deadline answers at once with all output, then the cell is closed', async () => {
    const observation = await env.run(`text('a'); text('b');`, { yieldTimeMs: 10_000 });
    expect(observation).toMatchObject({ kind: 'completed', items: [{ text: 'a' }, { text: 'b' }] });
    expect(observation.wallTimeMs).toBeLessThan(5_000);
    await until(() => env.closed.includes(observation.cellId));
    expect(await rejection(env.session.observe(observation.cellId, { yieldTimeMs: 10 }))).toEqual({
      code: 'CELL_NOT_FOUND',
      message: `exec cell ${observation.cellId} not found`,
    });
  });

  it('yield_control() with an observer yields at once; the completion is buffered for the next observation', async () => {
    const first = await env.run(`text('before'); yield_control(); text('after');`, { yieldTimeMs: 10_000 });
    expect(first).toMatchObject({ kind: 'yielded', items: [{ text: 'before' }] });
    expect(first.wallTimeMs).toBeLessThan(5_000);
    const second = await env.session.observe(first.cellId, { yieldTimeMs: 10_000 });
    expect(second).toMatchObject({ kind: 'completed', items: [{ text: 'after' }] });
    expect(second.wallTimeMs).toBeLessThan(1_000);
    expect(await rejection(env.session.observe(first.cellId, { yieldTimeMs: 10 }))).toMatchObject({ code: 'CELL_NOT_FOUND' });
  });

  it('yield_control() without an attached observer (after the first observation) is a no-op', async () => {
    const first = await env.run(
      `text('a'); await tools.gate({ name: 'noop' }); yield_control(); text('b'); await tools.gate({ name: 'noop-2' });`,
      { yieldTimeMs: 400 },
    );
    expect(cellTexts(first)).toEqual(['a']);
    await gates.open('noop');
    await gates.reached('noop-2');
    // The next observation waits for its own timer: the unattached yield was not remembered.
    const second = await env.session.observe(first.cellId, { yieldTimeMs: 300 });
    expect(second.kind).toBe('yielded');
    expect(cellTexts(second)).toEqual(['b']);
    expect(second.wallTimeMs).toBeGreaterThanOrEqual(250);
    await env.session.terminate(first.cellId);
  });

  it('refuses a second concurrent observer with the reference text; the first keeps waiting', async () => {
    const first = await env.run(`await new Promise(() => {});`, { yieldTimeMs: 10 });
    const waiting = env.session.observe(first.cellId, { yieldTimeMs: 200 });
    expect(await rejection(env.session.observe(first.cellId, { yieldTimeMs: 10 }))).toEqual({
      code: 'RESPOND_TO_MODEL',
      message: `exec cell ${first.cellId} already has an active observer`,
    });
    expect(await waiting).toMatchObject({ kind: 'yielded', cellId: first.cellId });
    await env.session.terminate(first.cellId);
  });

  it('a CPU-bound cell keeps running while observations yield (the host thread stays free)', async () => {
    let ticks = 0;
    const interval = setInterval(() => ticks++, 10);
    try {
      const first = await env.run(`text('spinning'); while (true) {}`, { yieldTimeMs: 300 });
      expect(first).toMatchObject({ kind: 'yielded', items: [{ text: 'spinning' }] });
      // A blocked host would have run no interval callbacks at all during the 300 ms.
      expect(ticks).toBeGreaterThanOrEqual(5);
      const again = await env.session.observe(first.cellId, { yieldTimeMs: 50 });
      expect(again).toMatchObject({ kind: 'yielded', items: [] });
      const started = performance.now();
      expect(await env.session.terminate(first.cellId)).toMatchObject({ kind: 'terminated' });
      expect(performance.now() - started).toBeLessThan(1_000);
    } finally {
      clearInterval(interval);
    }
  });

  it('runs several cells at once, each observed independently', async () => {
    const one = await env.run(`await tools.gate({ name: 'one' }); text('one done');`, { yieldTimeMs: 20 });
    const two = await env.run(`await tools.gate({ name: 'two' }); text('two done');`, { yieldTimeMs: 20 });
    expect(one.cellId).not.toBe(two.cellId);
    await gates.open('two');
    expect(await env.session.observe(two.cellId, { yieldTimeMs: 5_000 })).toMatchObject({ kind: 'completed', items: [{ text: 'two done' }] });
    await gates.open('one');
    expect(await env.session.observe(one.cellId, { yieldTimeMs: 5_000 })).toMatchObject({ kind: 'completed', items: [{ text: 'one done' }] });
  });

  it('unknown cells are "not found"', async () => {
    expect(await rejection(env.session.observe('nope', { yieldTimeMs: 10 }))).toEqual({ code: 'CELL_NOT_FOUND', message: 'exec cell nope not found' });
    expect(await rejection(env.session.terminate('nope'))).toEqual({ code: 'CELL_NOT_FOUND', message: 'exec cell nope not found' });
  });

  it('a cancelled observation loses nothing: the next observe gets the output and the completion (dropped observer)', async () => {
    const first = await env.run(`text('a'); yield_control(); await tools.gate({ name: 'dropped-1' }); text('b'); text('c');`, { yieldTimeMs: 10_000 });
    expect(cellTexts(first)).toEqual(['a']);
    const controller = new AbortController();
    const observing = env.session.observe(first.cellId, { yieldTimeMs: 10_000, signal: controller.signal });
    controller.abort();
    expect(await rejection(observing)).toEqual({ code: 'ABORTED', message: `observation of exec cell ${first.cellId} was cancelled` });
    // the cell emits and completes while nobody observes
    await gates.open('dropped-1');
    await sleep(50);
    const next = await env.session.observe(first.cellId, { yieldTimeMs: 10_000 });
    expect(next).toMatchObject({ kind: 'completed', cellId: first.cellId });
    expect(next).not.toHaveProperty('error');
    expect(cellTexts(next)).toEqual(['b', 'c']);
    expect(await rejection(env.session.observe(first.cellId, { yieldTimeMs: 0 }))).toMatchObject({ code: 'CELL_NOT_FOUND' });
  });

  it('a cancelled observation frees the observer slot; an already-aborted signal attaches nothing', async () => {
    const first = await env.run(`await tools.gate({ name: 'dropped-2' }); text('done');`, { yieldTimeMs: 10 });
    const controller = new AbortController();
    const observing = env.session.observe(first.cellId, { yieldTimeMs: 10_000, signal: controller.signal });
    controller.abort();
    await rejection(observing);
    expect(await rejection(env.session.observe(first.cellId, { yieldTimeMs: 10_000, signal: controller.signal }))).toMatchObject({ code: 'ABORTED' });
    const waiting = env.session.observe(first.cellId, { yieldTimeMs: 10_000 });
    await gates.open('dropped-2');
    expect(cellTexts(await waiting)).toEqual(['done']);
  });

  it('a cancelled first observation (createCell signal) leaves the cell running with its output kept', async () => {
    const controller = new AbortController();
    const closedBefore = env.closed.length;
    const creating = env.session.createCell({
      source: `text('early'); await tools.gate({ name: 'dropped-3' }); text('late');`,
      tools: [{ name: 'gate', description: 'gate', kind: 'function' }],
      yieldTimeMs: 10_000,
      signal: controller.signal,
    });
    await gates.reached('dropped-3');
    const cellId = env.calls[env.calls.length - 1].cellId;
    controller.abort();
    const error = await creating.then(() => undefined, (reason: unknown) => reason);
    expect(error).toMatchObject({ code: 'ABORTED', cellId });
    await gates.open('dropped-3');
    await sleep(50);
    expect(env.closed.length).toBe(closedBefore);
    const next = await env.session.observe(cellId, { yieldTimeMs: 10_000 });
    expect(next).toMatchObject({ kind: 'completed' });
    expect(cellTexts(next)).toEqual(['early', 'late']);
    const aborted = AbortSignal.abort();
    expect(await rejection(env.session.createCell({ source: `text(1)`, tools: [], yieldTimeMs: 10, signal: aborted }))).toMatchObject({ code: 'ABORTED' });
  });
});

describe('termination', () => {
  it('returns the unobserved output, closes the cell and discards its stored writes', async () => {
    const first = await env.run(`store('t1', 'kept?'); text('seen'); yield_control(); text('unseen'); await new Promise(() => {});`);
    expect(cellTexts(first)).toEqual(['seen']);
    await sleep(20);
    const terminated = await env.session.terminate(first.cellId);
    expect(terminated).toMatchObject({ kind: 'terminated', cellId: first.cellId, items: [{ text: 'unseen' }] });
    expect(env.closed).toContain(first.cellId);
    expect(await rejection(env.session.observe(first.cellId, { yieldTimeMs: 10 }))).toMatchObject({ code: 'CELL_NOT_FOUND' });
    expect(await env.texts(`text(String(load('t1')));`)).toEqual(['undefined']);
  });

  it('stops a busy loop; the session stays healthy', async () => {
    const first = await env.run(`while (true) {}`, { yieldTimeMs: 20 });
    expect(first).toMatchObject({ kind: 'yielded', items: [] });
    expect(await env.session.observe(first.cellId, { yieldTimeMs: 0, terminate: true })).toMatchObject({ kind: 'terminated', items: [] });
    expect(await env.texts(`text('still fine');`)).toEqual(['still fine']);
  });

  it('an already-committed completion wins over termination', async () => {
    const first = await env.run(`yield_control(); store('finished', true); text('done');`);
    expect(first).toMatchObject({ kind: 'yielded', items: [] });
    // The commit happens at completion, before anyone observes: a later cell already sees it.
    for (let seen = ''; seen !== 'true'; ) seen = (await env.texts(`text(String(load('finished')));`))[0];
    const outcome = await env.session.terminate(first.cellId);
    expect(outcome).toMatchObject({ kind: 'completed', items: [{ text: 'done' }] });
    expect('error' in outcome).toBe(false);
  });

  it('refuses a second terminate while the first is in progress', async () => {
    const first = await env.run(`await tools.gate({ name: 'never' });`, { yieldTimeMs: 10 });
    const terminating = env.session.terminate(first.cellId);
    expect(await rejection(env.session.terminate(first.cellId))).toEqual({
      code: 'RESPOND_TO_MODEL',
      message: `exec cell ${first.cellId} is already terminating`,
    });
    expect(await terminating).toMatchObject({ kind: 'terminated' });
  });

  it('aborts the nested calls in flight and answers an attached observer with terminated', async () => {
    const before = env.calls.length;
    const first = await env.run(`await tools.gate({ name: 'aborted' });`, { yieldTimeMs: 10 });
    await until(() => env.calls.length > before);
    const waiting = env.session.observe(first.cellId, { yieldTimeMs: 10_000 });
    await env.session.terminate(first.cellId);
    expect(await waiting).toMatchObject({ kind: 'terminated', cellId: first.cellId });
    expect(env.calls[before].signal.aborted).toBe(true);
  });
});

describe('stored values', () => {
  it('store/load: read-your-writes, fresh copies, JSON round trip and key coercion', async () => {
    const texts = await env.texts(`
      store(1, { title: 'Notebook', items: [1, true, null] });
      const copy = load('1'); copy.items.push('mutated');
      text(load(1));
      store('k', { d: new Date(0), u: undefined, f() {}, m: new Map([[1, 2]]), n: NaN, i: -Infinity });
      text(load('k'));
      text(String(load('missing')));
      text(String(store('x', 1)));
    `);
    expect(texts).toEqual([
      '{"title":"Notebook","items":[1,true,null]}',
      '{"d":"1970-01-01T00:00:00.000Z","m":{},"n":null,"i":null}',
      'undefined',
      'undefined',
    ]);
    expect(await env.texts(`text(load('1'));`)).toEqual(['{"title":"Notebook","items":[1,true,null]}']);
  });

  it('store refuses unserializable values and symbol keys with the reference texts', async () => {
    const texts = await env.texts(`
      const circular = {}; circular.self = circular;
      const attempts = [() => store(Symbol('k'), 1), () => load(Symbol('k')), () => store('u', undefined), () => store('fn', () => 1), () => store('big', 10n), () => store('c', circular)];
      for (const attempt of attempts) { try { attempt(); text('stored'); } catch (e) { text(typeof e + ': ' + e); } }
    `);
    expect(texts.slice(0, 4)).toEqual([
      'string: store key must be a string',
      'string: load key must be a string',
      'string: Unable to store "u". Only plain serializable objects can be stored.',
      'string: Unable to store "fn". Only plain serializable objects can be stored.',
    ]);
    expect(texts[4]).toMatch(/^string: TypeError: .*BigInt/);
    expect(texts[5]).toMatch(/^string: TypeError: Converting circular structure to JSON/);
  });

  it('a cell sees a snapshot taken at its start, not later commits', async () => {
    const early = await env.run(`await tools.gate({ name: 'snapshot' }); text(String(load('snap')));`, { yieldTimeMs: 10 });
    expect(await env.texts(`store('snap', 'late'); text('stored');`)).toEqual(['stored']);
    await gates.open('snapshot');
    expect(await env.session.observe(early.cellId, { yieldTimeMs: 5_000 })).toMatchObject({ kind: 'completed', items: [{ text: 'undefined' }] });
    expect(await env.texts(`text(load('snap'));`)).toEqual(['late']);
  });

  it('merges writes when a cell fails too, last writer wins per key', async () => {
    expect(await env.texts(`store('a', 1); store('b', 1);`)).toEqual([]);
    const failed = await env.run(`store('b', 2); throw new Error('after store');`);
    expect(failed).toMatchObject({ kind: 'completed' });
    expect(await env.texts(`text([load('a'), load('b')]);`)).toEqual(['[1,2]']);
  });

  it("a cell whose own writes pass maxStoredBytes fails with the budget even when it caught the throw; none of its writes are stored", async () => {
    const small = setup({}, { maxStoredBytes: 64 });
    try {
      expect(await small.texts(`store('k', 'early'); text('stored');`)).toEqual(['stored']);
      // 'k' + '"changed"' is 10 bytes; 'big' + 102 bytes of JSON passes 64
      const over = await small.run(`store('k', 'changed'); try { store('big', 'x'.repeat(100)); } catch (e) { text('caught ' + typeof e); } text(String(load('big')));`);
      expect(over).toMatchObject({
        kind: 'completed',
        error: "exec stored values budget exceeded: this cell's writes passed 64 bytes (maxStoredBytes); none of its writes were stored, earlier values are unchanged",
        items: [{ type: 'input_text', text: 'caught string' }, { type: 'input_text', text: 'undefined' }],
      });
      expect(await small.texts(`text(load('k')); text(String(load('big')));`)).toEqual(['early', 'undefined']);
      // within the budget, the same session stores as before
      expect(await small.texts(`store('k', 'later'); text(load('k'));`)).toEqual(['later']);
      expect(await small.texts(`text(load('k'));`)).toEqual(['later']);
    } finally {
      await small.runtime.shutdown();
    }
  });

  it('keeps sessions apart', async () => {
    await env.texts(`store('private', 'mine');`);
    const other = env.runtime.openSession(createTestHost().host);
    const { observation } = await other.createCell({ source: `text(String(load('private')));`, tools: [], yieldTimeMs: 5_000 });
    expect(observation.items).toEqual([{ type: 'input_text', text: 'undefined' }]);
    await other.shutdown();
  });

  it('can be disabled: store and load are then absent', async () => {
    const runtime = createCodeModeRuntime({ isolation, storedValues: false });
    const session = runtime.openSession(createTestHost().host);
    const { observation } = await session.createCell({ source: `text(typeof store + ' ' + typeof load);`, tools: [], yieldTimeMs: 5_000 });
    expect(observation.items).toEqual([{ type: 'input_text', text: 'undefined undefined' }]);
    await runtime.shutdown();
  });
});

describe('shutdown and bad input', () => {
  it('stops a busy loop within 1 s, answers observers, then refuses new cells with the reference text', async () => {
    const local = setup();
    const busy = await local.run(`text('x'); while (true) {}`, { yieldTimeMs: 30 });
    const other = await local.run(`while (true) {}`, { yieldTimeMs: 30 });
    const waiting = local.session.observe(other.cellId, { yieldTimeMs: 10_000 });
    const started = performance.now();
    await local.session.shutdown();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await waiting).toMatchObject({ kind: 'terminated', cellId: other.cellId });
    expect(local.closed).toEqual(expect.arrayContaining([busy.cellId, other.cellId]));
    expect(await rejection(local.session.createCell({ source: `text(1)`, tools: [], yieldTimeMs: 10 }))).toEqual({
      code: 'SHUTTING_DOWN',
      message: 'code mode session is shutting down',
    });
    await local.runtime.shutdown();
    expect(() => local.runtime.openSession(local.host)).toThrow('code mode runtime is shutting down');
  });

  it('rejects malformed createCell options with INVALID_INPUT and keeps working', async () => {
    const bad = [
      { source: 42, tools: [], yieldTimeMs: 10 },
      { source: '', tools: 'x', yieldTimeMs: 10 },
      { source: '', tools: [], yieldTimeMs: -1 },
      { source: '', tools: [{ name: 'x', description: 'd', kind: 'weird' }], yieldTimeMs: 10 },
      { source: '', tools: [{ name: 'x', description: 'd', kind: 'function', declaration: 7 }], yieldTimeMs: 10 },
    ];
    for (const options of bad) expect(await rejection(env.session.createCell(options as never))).toMatchObject({ code: 'INVALID_INPUT' });
    expect(await env.texts(`text('ok');`)).toEqual(['ok']);
  });

  it('takes a host-chosen cell id: nested calls name it before createCell resolves; a malformed or used id is refused', async () => {
    const local = setup({ echo: (request) => request.cellId });
    const created = local.session.createCell({ cellId: 'host-chosen_1', source: `text(await tools.echo({})); await new Promise(() => {});`, tools: [fnDescriptor('echo')], yieldTimeMs: 10_000 });
    await until(() => local.calls.length === 1);
    expect(local.calls[0].cellId).toBe('host-chosen_1');
    expect(await rejection(local.session.createCell({ cellId: 'host-chosen_1', source: `1`, tools: [], yieldTimeMs: 10 }))).toEqual({
      code: 'INVALID_INPUT',
      message: 'createCell: cell id host-chosen_1 is already used by a cell of this session',
    });
    for (const cellId of ['', 'has space', 'x'.repeat(65), 'line\nbreak', 7]) {
      expect(await rejection(local.session.createCell({ cellId, source: `1`, tools: [], yieldTimeMs: 10 } as never))).toEqual({
        code: 'INVALID_INPUT',
        message: 'createCell expects `cellId` to be 1-64 characters of [0-9A-Za-z_-]',
      });
    }
    const terminated = await local.session.terminate('host-chosen_1');
    expect(terminated).toMatchObject({ kind: 'terminated', cellId: 'host-chosen_1' });
    expect((await created).observation).toMatchObject({ kind: 'terminated', cellId: 'host-chosen_1' });
    await local.runtime.shutdown();
  });

  it('survives a broken host: throwing notify/cellClosed, a synchronously throwing invokeTool', async () => {
    const runtime = createCodeModeRuntime({ isolation });
    const session = runtime.openSession({
      invokeTool: () => {
        throw new Error('host exploded');
      },
      notify: () => {
        throw new Error('notify exploded');
      },
      cellClosed: () => {
        throw new Error('closed exploded');
      },
    });
    const { observation } = await session.createCell({
      source: `notify('hi'); try { await tools.t({}); } catch (e) { text(e); }`,
      tools: [{ name: 't', description: '', kind: 'function' }],
      yieldTimeMs: 5_000,
    });
    expect(observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'host exploded' }] });
    await runtime.shutdown();
  });

  it('a tool result that is not JSON rejects the call inside the cell', async () => {
    const local = setup({
      cyclic: () => {
        const value: Record<string, unknown> = {};
        value.self = value;
        return value as never;
      },
    });
    const texts = await local.texts(`try { await tools.cyclic(); } catch (e) { text(e); }`);
    expect(texts[0]).toMatch(/^tool result is not JSON-serializable: Converting circular structure/);
    await local.runtime.shutdown();
  });
});
