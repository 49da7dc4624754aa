import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { CellMessage, PreludeConfig, PreludeLimits } from './bridge';
import { bundlePreludeClosure, generatedModule, GENERATED_FILE } from './build-prelude';
import { createSend, FLOW_CHARS, FLOW_MESSAGES } from './channel';
import { IMAGE_SHAPE, resolveImage } from './image';
import { createStore } from './store';
import { createTools } from './tools';
import { coerceKey, consoleText, normalizeDetail, timerDelay, toText, tooLargeText, utf8Length } from './values';
import { PRELUDE_CLOSURE } from './prelude-bundle.generated';
import { toolError } from './tool-error';

const LIMITS: PreludeLimits = {
  maxInFlightCalls: 2,
  maxInFlightArgumentChars: 100,
  maxOutputBytes: 1000,
  maxOutputItems: 10,
  maxTimers: 3,
  maxValueChars: 64,
  heapMb: 32,
};

describe('the generated bundle', () => {
  it('is the bundle of the current sources (run `build:prelude` after editing src/prelude)', async () => {
    expect(readFileSync(GENERATED_FILE, 'utf8')).toBe(generatedModule(await bundlePreludeClosure()));
  });

  it('starts strict and carries no bundler helper that would run after user code', () => {
    expect(PRELUDE_CLOSURE.startsWith("'use strict';\n")).toBe(true);
    expect(PRELUDE_CLOSURE).not.toMatch(/__(defProp|export|toESM|toCommonJS|publicField|name)\b/);
    expect(PRELUDE_CLOSURE).not.toMatch(/\bimport\b|\brequire\(/);
  });
});

describe('values', () => {
  it('utf8Length counts as UTF-8 encoding would, lone surrogates as U+FFFD', () => {
    for (const text of ['', 'abc', 'æøå', '€', '😀x', 'a\ud800b', '\udc00', 'x'.repeat(1000) + '日本']) {
      expect(utf8Length(text)).toBe(Buffer.byteLength(text, 'utf8'));
    }
  });

  it('toText formats values as text() does', () => {
    const circular: unknown[] = [];
    circular.push(circular);
    expect([undefined, null, true, 1.5, 10n, 'a', { a: 1 }, [1, 'x'], Symbol('s')].map(toText)).toEqual([
      'undefined', 'null', 'true', '1.5', '10', 'a', '{"a":1}', '[1,"x"]', 'Symbol(s)',
    ]);
    expect(toText(toolError('disk on fire'))).toBe('disk on fire');
    expect(() => toText(circular)).toThrow(/circular structure/);
  });

  it('consoleText joins with spaces, writes Errors as String(e) and checks the line as it grows', () => {
    const seen: number[] = [];
    expect(consoleText(['a', 1, { b: 2 }, new TypeError('bad'), toolError('t')], (line) => seen.push(line.length))).toBe('a 1 {"b":2} TypeError: bad t');
    expect(seen).toEqual([1, 3, 11, 26, 28]);
    expect(consoleText([], () => {})).toBe('');
    expect(() => consoleText(['x'.repeat(10), 'y'], (line) => { if (line.length > 10) throw 'too long'; })).toThrow('too long');
  });

  it('image details, timer delays, store keys and the size error text', () => {
    expect(['LOW', 'Auto', 'original'].map(normalizeDetail)).toEqual(['low', 'auto', 'original']);
    expect(() => normalizeDetail('huge')).toThrow('image detail must be one of: auto, low, high, original');
    expect(() => normalizeDetail('a'.repeat(17))).toThrow('image detail must be one of');
    expect([undefined, -5, NaN, Infinity, 12.9, '40', 2 ** 40, Symbol('x')].map(timerDelay)).toEqual([0, 0, 0, 0, 12, 40, 2147483647, 0]);
    expect([coerceKey(7, 'store'), coerceKey({ toString: () => 'k' }, 'load')]).toEqual(['7', 'k']);
    expect(() => coerceKey(Symbol('s'), 'load')).toThrow('load key must be a string');
    expect(tooLargeText('a text() item', 70, 64, 32)).toBe(
      'exec value size limit exceeded: a text() item is 70 characters, over the limit of 64 characters per value for a cell with a heap limit of 32 MB',
    );
  });
});

describe('resolveImage', () => {
  const check = (text: string, what: string) => {
    if (text.length > 64) throw `too large: ${what}`;
  };
  const PNG = 'data:image/png;base64,iVBORw0KGgo=';

  it('accepts a URL, an image_url object and an MCP block, the second argument overriding the detail', () => {
    expect(resolveImage(PNG, undefined, check)).toEqual({ url: PNG, detail: undefined });
    expect(resolveImage({ image_url: PNG, detail: 'LOW' }, 'high', check)).toEqual({ url: PNG, detail: 'high' });
    expect(resolveImage({ type: 'image', data: 'AAAA', mimeType: 'image/jpeg', _meta: { 'codex/imageDetail': 'low' } }, null, check)).toEqual({
      url: 'data:image/jpeg;base64,AAAA',
      detail: 'low',
    });
  });

  it('throws the reference texts as strings, and checks sizes before anything else reads the URL', () => {
    const thrown = (first: unknown, detail?: unknown) => {
      try {
        resolveImage(first, detail, check);
      } catch (error) {
        return error;
      }
      return 'accepted';
    };
    expect([thrown(''), thrown([]), thrown(5), thrown({ content: [] })]).toEqual(Array(4).fill(IMAGE_SHAPE));
    expect(thrown({ type: 'text' })).toBe('image only accepts MCP image blocks, got "text"');
    expect(thrown(PNG, 5)).toBe('image detail must be a string when provided');
    expect(thrown('https://example.com/a.png')).toBe('Tool call failed: remote image URLs are not supported in tool outputs. Pass a base64 data URI instead');
    expect(thrown('file:///etc/passwd')).toBe('image expects a base64 data: URL');
    expect(thrown('data:' + 'x'.repeat(100))).toBe('too large: an image URL');
  });
});

describe('the channel (backpressure)', () => {
  it(`waits for the runtime after ${FLOW_MESSAGES} messages or ${FLOW_CHARS} characters`, () => {
    const posted: unknown[][] = [];
    let flows = 0;
    const send = createSend(((...message: unknown[]) => posted.push(message)) as never, () => flows++);
    for (let i = 0; i < FLOW_MESSAGES - 1; i++) send('yield');
    expect(flows).toBe(0);
    send('text', 'x');
    expect(flows).toBe(1);
    send('write', 'k', 'v'.repeat(FLOW_CHARS - 1));
    expect(flows).toBe(2);
    expect(posted.length).toBe(FLOW_MESSAGES + 1);
    expect(posted[FLOW_MESSAGES - 1]).toEqual(['text', 'x', undefined, undefined, undefined]);
  });
});

describe('tools and store', () => {
  it('batches the calls of one run into one calls message and settles them by id', async () => {
    const sent: unknown[][] = [];
    const state = { finished: false };
    const send = ((...message: unknown[]) => sent.push(message)) as never;
    const tools = createTools([{ name: 'echo', description: '', kind: 'function', declaration: '' }], LIMITS, state, send);
    const echo = (tools.toolFunctions as Record<string, (args?: unknown) => Promise<unknown>>).echo;
    const first = echo({ a: 1 });
    const second = echo();
    const third = echo({ b: 2 });
    await expect(third).rejects.toMatchObject({ name: 'ToolCallError', message: 'tool `echo` was not called: this cell already has 2 nested tool calls in flight (limit)' });
    expect(sent).toEqual([['calls', ['tool-1', 'echo', '{"a":1}', 'tool-2', 'echo', '{}']]]);
    tools.settleCall('tool-1', true, '{"ok":true}');
    tools.settleCall('tool-2', false, 'disk on fire');
    await expect(first).resolves.toEqual({ ok: true });
    await expect(second).rejects.toMatchObject({ message: 'disk on fire' });
    await expect(echo([1])).rejects.toMatchObject({ message: 'tool `echo` expects a JSON object for arguments' });
    expect(tools.allTools).toEqual([{ name: 'echo', description: '', declaration: '' }]);
  });

  it('store keeps writes apart from the snapshot and refuses values over the size limit', () => {
    const { store, load, writes } = createStore([['old', '{"v":1}']], LIMITS);
    expect(load('old')).toEqual({ v: 1 });
    store('new', [1, 2]);
    expect(load('new')).toEqual([1, 2]);
    expect({ ...writes }).toEqual({ new: '[1,2]' });
    expect(() => store('big', 'x'.repeat(100))).toThrow('the JSON of a store() value is 102 characters');
    expect(() => store('f', () => 1)).toThrow('Unable to store "f". Only plain serializable objects can be stored.');
    expect(load('k'.repeat(100))).toBeUndefined();
  });
});

/** Evaluates the bundled closure as isolated-vm does, in a fresh node:vm context, with recording callbacks. */
function evaluateBundle(config: PreludeConfig, stored: Array<[string, string]> = [], journal: string[] = []) {
  const messages: CellMessage[] = [];
  const context = vm.createContext({});
  const closure = vm.runInContext(`(function ($0, $1, $2, $3) {\n${PRELUDE_CLOSURE}\n})`, context) as (...args: unknown[]) => (...message: unknown[]) => void;
  const post = (...message: unknown[]) => {
    // The fifth argument is the journal entries the message carries.
    const entries = message.splice(4, 1)[0];
    if (typeof entries === 'string') journal.push(entries);
    while (message.length > 1 && message.at(-1) === undefined) message.pop();
    messages.push(message as unknown as CellMessage);
  };
  const control = closure(post, JSON.stringify(config), stored, () => {});
  const run = (source: string) => vm.runInContext(source, context);
  return { messages, control, run };
}

describe('the bundled closure', () => {
  const config: PreludeConfig = { tools: [{ name: 'echo', description: 'Echoes.', kind: 'function', declaration: 'declare const tools: {};' }], storeEnabled: true, limits: LIMITS, seed: '0123456789abcdef0123456789abcdef' };

  it('installs the globals and reports completion with the writes', () => {
    const cell = evaluateBundle(config, [['k', '"v"']]);
    cell.run(`const settle = globalThis.__switchyard_take(); text(load('k')); console.log('a', 1); notify('n'); store('s', 2); settle(false);`);
    expect(cell.messages).toEqual([['text', 'v'], ['text', 'a 1'], ['notify', 'n'], ['write', 's', '2'], ['done', 0, '', 1]]);
    expect(cell.run(`typeof globalThis.__switchyard_take + ' ' + Object.keys(globalThis).join(',')`)).toBe(
      'undefined tools,ALL_TOOLS,text,image,generatedImage,notify,yield_control,exit,setTimeout,clearTimeout,store,load',
    );
  });

  it('keeps working after the cell replaces the built-ins it could reach', async () => {
    const cell = evaluateBundle(config);
    cell.run(`
      globalThis.settle = globalThis.__switchyard_take();
      Array.prototype[Symbol.iterator] = () => { throw 'iterator'; };
      Object.defineProperty(Array.prototype, 0, { set() { throw 'setter'; } });
      Promise.prototype.then = () => { throw 'then'; };
      JSON.stringify = () => { throw 'stringify'; };
      JSON.parse = () => { throw 'parse'; };
      String.prototype.trim = () => '';
      Object.create = () => { throw 'create'; };
      text({ a: 1 }); notify(' x '); tools.echo({ q: 1 }); store('s', [1]);
    `);
    await new Promise((resolve) => setImmediate(resolve));
    cell.run(`settle(true, 'boom')`);
    expect(cell.messages).toEqual([['text', '{"a":1}'], ['notify', ' x '], ['calls', ['tool-1', 'echo', '{"q":1}']], ['write', 's', '[1]'], ['done', 1, 'boom', 1]]);
  });

  it('the exit sentinel settles as success; control messages after completion are ignored', () => {
    const cell = evaluateBundle(config);
    cell.run(`globalThis.settle = globalThis.__switchyard_take(); setTimeout(() => { throw new Error('late'); }, 5);`);
    expect(cell.messages).toEqual([['set-timer', 1, 5]]);
    cell.control('timers', '[1]');
    expect(cell.messages.at(-1)?.[0]).toBe('done');
    // the stack is over this cell's 64-character value limit: replaced by the size error
    const [kind, failed, error, writes] = cell.messages.at(-1) as readonly [string, number, string, number];
    expect([kind, failed, writes]).toEqual(['done', 1, 0]);
    expect(error).toMatch(/^exec value size limit exceeded: the error the cell failed with is \d+ characters, over the limit of 64 characters per value/);
    const exiting = evaluateBundle(config);
    exiting.run(`const s = globalThis.__switchyard_take(); try { exit(); } catch (e) { s(true, e); }`);
    expect(exiting.messages).toEqual([['done', 0, '', 0]]);
    exiting.control('timers', '[1]');
    expect(exiting.messages.length).toBe(1);
  });
});

describe('the journal (what the prelude records, in delivery order)', () => {
  const SEED = '00112233445566778899aabbccddeeff';
  const config: PreludeConfig = { tools: [{ name: 'echo', description: 'Echoes.', kind: 'function', declaration: '' }], storeEnabled: true, limits: { ...LIMITS, maxOutputItems: 100, maxValueChars: 1000, maxOutputBytes: 10_000 }, seed: SEED };
  /** The closure in a fresh context, the journal entries each message carried, and the texts it wrote. */
  const cell = (extra: Partial<PreludeConfig> = {}) => {
    const journal: string[] = [];
    const evaluated = evaluateBundle({ ...config, ...extra }, [], journal);
    evaluated.run(`globalThis.settle = globalThis.__switchyard_take();`);
    const texts = () => evaluated.messages.filter((message) => message[0] === 'text').map((message) => message[1] as string);
    return { ...evaluated, journal, texts };
  };

  it('records each delivered result and timer batch, carried by the next message out, never on its own', async () => {
    const c = cell();
    c.run(`tools.echo({}).then(() => { setTimeout(() => text('fired'), 1); return tools.echo({ n: 2 }); }).then(() => text('two'));`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(c.journal).toEqual([]);
    c.control('resolve', 'tool-1', 1, '{}', 0);
    await new Promise((resolve) => setImmediate(resolve));
    // set-timer carried the entry of the result that caused it; the calls message carried nothing new
    expect(c.messages.slice(1)).toEqual([['set-timer', 1, 1], ['calls', ['tool-2', 'echo', '{"n":2}']]]);
    expect(c.journal).toEqual(['r1']);
    c.control('timers', '[1]', 0);
    c.control('resolve', 'tool-2', 1, undefined, 0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(c.texts()).toEqual(['fired', 'two']);
    expect(c.journal).toEqual(['r1', 't1', 'r2']);
  });

  it('records every read of the clock — Date.now(), new Date(), Date(), a date-less Intl format — equal reads in a row counted', () => {
    const c = cell();
    c.run(`
      const a = Date.now(), b = Date.now(), d = new Date().getTime();
      const s = Date(), f = new Intl.DateTimeFormat('en', { timeZone: 'UTC', year: 'numeric' }).format(), p = new Intl.DateTimeFormat('en').formatToParts().length;
      text([typeof a, b >= a, d >= b, typeof s, f.length, p > 0].join(' '));
    `);
    expect(c.texts()).toEqual(['number true true string 4 true']);
    const entries = c.journal.join(',').split(',');
    // six reads: runs of equal values, each `d<ms>` or `d<ms>*<count>`, adding up to six
    expect(entries.every((entry) => /^d\d{13}(\*\d+)?$/.test(entry))).toBe(true);
    expect(entries.reduce((sum, entry) => sum + Number(entry.split('*')[1] ?? 1), 0)).toBe(6);
  });

  it('keeps dates with arguments, Date.parse / UTC, subclasses and instanceof as they were', () => {
    const c = cell();
    c.run(`
      class Stamp extends Date { label() { return 'y' + this.getUTCFullYear(); } }
      text([new Date(Date.UTC(2020, 1, 3)).toISOString(), new Date('2021-01-01T00:00:00Z').getTime() === Date.parse('2021-01-01T00:00:00Z'),
        new Stamp(0).label(), new Stamp() instanceof Date, new Date() instanceof Date, Date.length, Date.name, new Date().constructor === Date].join(' '));
    `);
    expect(c.texts()).toEqual(['2020-02-03T00:00:00.000Z true y1970 true true 7 Date true']);
    // new Stamp(), new Date() twice: three reads
    expect(c.journal.join(',').split(',').reduce((sum, entry) => sum + Number(entry.split('*')[1] ?? 1), 0)).toBe(3);
  });

  it('answers the recorded clock reads again in a replay, records none of them, then goes live no earlier than the last', () => {
    const c = cell({ replayTimes: [1000, 2, 5000, 1] });
    c.run(`text([Date.now(), Date.now(), new Date().getTime(), Date.now() >= 5000, Date.now() > 1e12].join(' '));`);
    expect(c.texts()).toEqual(['1000 1000 5000 true true']);
    const entries = c.journal.join(',').split(',');
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((entry) => /^d\d{13}/.test(entry))).toBe(true);
    // a journal whose last read lies in the future: the live clock never goes back past it
    const future = Date.now() + 3_600_000;
    const ahead = cell({ replayTimes: [future, 1] });
    ahead.run(`text(String(Date.now())); text(String(Date.now()));`);
    expect(ahead.texts()).toEqual([String(future), String(future)]);
  });

  it('replayed deliveries are not recorded again; a sync is answered with synced', async () => {
    const c = cell();
    c.run(`tools.echo({}).then(() => text('a'));`);
    await new Promise((resolve) => setImmediate(resolve));
    c.control('resolve', 'tool-1', 1, '{}', 1);
    await new Promise((resolve) => setImmediate(resolve));
    c.control('sync', 7);
    expect(c.messages.slice(1)).toEqual([['text', 'a'], ['synced', 7]]);
    expect(c.journal).toEqual([]);
  });

  it('Math.random comes from the journaled seed: the same seed gives the same numbers, another seed others', () => {
    const numbers = (seed: string) => {
      const c = cell({ seed });
      c.run(`text(JSON.stringify(Array.from({ length: 5 }, () => Math.random())));`);
      return JSON.parse(c.texts()[0]!) as number[];
    };
    const first = numbers(SEED);
    expect(numbers(SEED)).toEqual(first);
    expect(numbers('ffeeddccbbaa99887766554433221100')).not.toEqual(first);
    expect(first.every((n) => n >= 0 && n < 1)).toBe(true);
    expect(new Set(first).size).toBe(5);
  });

  it('pins what the collector decides: WeakRef holds its target, FinalizationRegistry never calls back', () => {
    const c = cell();
    c.run(`
      const target = { a: 1 }; const ref = new WeakRef(target);
      const registry = new FinalizationRegistry(() => text('collected'));
      const token = {};
      registry.register({}, 'held', token);
      let refused = ''; try { new WeakRef(1); } catch (e) { refused = e.constructor.name + ': ' + e.message; }
      text([ref.deref() === target, String(ref), registry.unregister(token), registry.unregister(token), refused].join(' '));
    `);
    expect(c.texts()).toEqual(['true [object WeakRef] true false TypeError: WeakRef: invalid target']);
  });
});
