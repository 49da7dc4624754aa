import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { report } from '../src/profile';
import { openHarness, outcome, waitItem, type Harness } from './helpers';

// Every attempt runs as a real `exec` through session → router → registry → broker → runtime.
// `report(x)` inside a cell prints ESCAPED when x looks like the host realm (process, require,
// Buffer, or the canary this test process sets), directly or through its constructor chain.
const PRELUDE = `
const __looksHost = (g) => { try { return !!g && (typeof g.process === 'object' || typeof g.require === 'function' || typeof g.Buffer === 'function' || g.__switchyardCanary === 'host'); } catch { return false; } };
const report = (g) => {
  if (__looksHost(g)) text('ESCAPED');
  try { if (g && typeof g.constructor === 'function' && __looksHost(g.constructor.constructor('return globalThis')())) text('ESCAPED'); } catch {}
};
`;

const scratch = mkdtempSync(join(tmpdir(), 'reliability-escape-'));
const MARKER = join(scratch, 'escaped');

const ATTEMPTS: Array<{ name: string; code: string }> = [
  { name: 'globalThis constructor chain', code: `report(globalThis.constructor.constructor('return this')());` },
  { name: 'Function("return this")', code: `report(Function('return this')()); report(new Function('return globalThis')());` },
  { name: 'text() constructor chain to process', code: `report(text.constructor('return typeof process === "undefined" ? null : process')());` },
  { name: 'tools function constructor chain', code: `report(tools.echo.constructor.constructor('return this')()); report(Object.getPrototypeOf(tools));` },
  { name: 'pending nested-call promise constructor chain', code: `const p = tools.echo({}); report(Object.getPrototypeOf(p).constructor.constructor('return this')()); report(await p);` },
  { name: 'tool result constructor chain', code: `const r = await tools.echo({ a: { b: [1] } }); report(r.constructor.constructor('return this')()); report(r.a.b.constructor.constructor('return this')());` },
  { name: 'rejected tool error constructor chain', code: `try { await tools.fail({}); } catch (e) { report(e); report(e && e.constructor && e.constructor.constructor('return this')()); }` },
  {
    name: 'Error.prepareStackTrace frames (getThis/getFunction)',
    code: `Error.prepareStackTrace = (_, frames) => { for (const f of frames) { try { report(f.getThis()); report(f.getFunction && f.getFunction()); } catch {} } return 'x'; };
           new Error('probe').stack; try { await tools.fail({}); } catch (e) { e.stack; } try { null.x; } catch (e) { e.stack; }`,
  },
  { name: 'Error.captureStackTrace on a host-made error', code: `try { await tools.fail({}); } catch (e) { const o = {}; Error.captureStackTrace(o); report(o); text(typeof e); }` },
  { name: 'arguments.callee.caller walk', code: `function up() { try { let f = up; for (let i = 0; i < 20 && f; i++) { f = f.caller; report(f); } } catch (e) {} } up(); text.call(null, 'walked');` },
  {
    name: 'prototype pollution of bridge option names',
    code: `for (const key of ['reference', 'promise', 'copy', 'result', 'arguments', 'timeout', 'externalCopy', 'ignored', 'transferList', 'then', 'polluted']) {
             for (const proto of [Object.prototype, Array.prototype, Function.prototype, Promise.prototype]) { try { Object.defineProperty(proto, key, { get() { report(this); return undefined; }, configurable: true }); } catch {} }
           }
           await tools.echo({ x: 1 }); store('k', { v: 1 }); text('polluted');`,
  },
  { name: 'Object.prototype.then hijacks tool promises', code: `Object.prototype.then = function (resolve) { report(this); resolve && resolve(1); }; const r = await tools.echo({ y: 2 }); delete Object.prototype.then; text(JSON.stringify(r));` },
  { name: 'Promise.prototype.then replaced', code: `const then = Promise.prototype.then; Promise.prototype.then = function (a, b) { report(this); return then.call(this, a, b); }; await tools.echo({}); Promise.prototype.then = then;` },
  { name: 'JSON.stringify replaced to smuggle __proto__', code: `const s = JSON.stringify; JSON.stringify = () => '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'; try { await tools.echo({}); } catch (e) {} JSON.stringify = s;` },
  { name: 'JSON.parse replaced to see results raw', code: `const p = JSON.parse; JSON.parse = function (t, r) { report(t); const v = p(t, r); report(v); return v; }; await tools.echo({ z: 1 }); JSON.parse = p;` },
  {
    name: 'proxy as tool arguments with throwing traps',
    code: `try { await tools.echo(new Proxy({}, { ownKeys() { throw new Error('trap'); }, get() { throw new Error('trap'); } })); } catch (e) { text('refused: ' + String(e).slice(0, 40)); }`,
  },
  { name: 'getter on tool arguments calling back into tools', code: `const args = { get a() { report(this); tools.echo({ inner: 1 }); return 1; } }; const r = await tools.echo(args); text(JSON.stringify(r));` },
  { name: 'Symbol.toPrimitive and toJSON on arguments', code: `const r = await tools.echo({ n: { [Symbol.toPrimitive]() { report(this); return 1; }, toJSON() { return 'j'; } } }); text(JSON.stringify(r));` },
  { name: 'proxy over the tools object prototype', code: `let inside = false; Object.setPrototypeOf(tools, new Proxy({}, { get(t, k, r) { if (!inside) { inside = true; report(r); inside = false; } return undefined; } }));
           try { await tools.nope(); } catch (e) { text('no tool'); } text(JSON.stringify(await tools.echo({ still: 'works' })));` },
  { name: 'proxy as the global prototype', code: `Object.setPrototypeOf(globalThis, new Proxy(Object.getPrototypeOf(globalThis), { get(t, k, r) { if (k === 'process') report(r); return Reflect.get(t, k, r); }, has() { return false; } })); await tools.echo({}); text('global proxy');` },
  {
    name: 'scan globals for isolated-vm references',
    code: `for (const name of Reflect.ownKeys(globalThis)) { let v; try { v = globalThis[name]; } catch { continue; }
             if (v && (typeof v.applySync === 'function' || typeof v.deref === 'function' || typeof v.derefInto === 'function' || typeof v.copySync === 'function')) text('ESCAPED'); report(v); }`,
  },
  {
    name: 'WebAssembly module and memory growth',
    code: `if (typeof WebAssembly === 'object') { const m = new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])); report(new WebAssembly.Instance(m, {}));
             try { const mem = new WebAssembly.Memory({ initial: 1, maximum: 65536 }); mem.grow(65000); text('grew'); } catch (e) { text('wasm memory refused'); } } else text('no WebAssembly');`,
  },
  {
    name: 'SharedArrayBuffer / Atomics into a tool call',
    code: `if (typeof SharedArrayBuffer === 'function') { const sab = new SharedArrayBuffer(16); const view = new Int32Array(sab); Atomics.store(view, 0, 7);
             Atomics.wait(view, 0, 7, 20); const r = await tools.echo({ sab, view }); report(r); text(JSON.stringify(r)); } else text('no SharedArrayBuffer');`,
  },
  { name: 'dynamic import() of a host module', code: `for (const m of ['fs', 'node:child_process', 'data:text/javascript,export default globalThis']) { try { report(await import(m)); } catch (e) { text('import refused'); } }` },
  { name: 'import.meta', code: `report(import.meta); text(typeof import.meta);` },
  { name: 'require / module / process globals', code: `for (const name of ['require', 'module', 'process', 'Buffer', '__dirname', 'global']) { try { report(eval(name)); } catch (e) {} } text('globals probed');` },
  { name: 'eval of a huge source', code: `try { const r = eval('[' + '1,'.repeat(3_000_000) + ']'); text(r.length); } catch (e) { text('huge eval refused: ' + e.name); }` },
  { name: 'eval of a deeply nested source', code: `try { eval('('.repeat(200_000) + '1' + ')'.repeat(200_000)); text('parsed'); } catch (e) { text('nested eval refused: ' + e.name); }` },
  {
    name: 'async generator over nested calls, returned early',
    code: `async function* gen() { for (let i = 0; ; i++) { const r = await tools.echo({ i }); report(r); yield r.i; } }
           const seen = []; for await (const i of gen()) { seen.push(i); if (i === 4) break; } text(seen.join(','));`,
  },
  {
    name: 'typed arrays and ArrayBuffer as tool arguments',
    code: `const r = await tools.echo({ u8: new Uint8Array([1, 2, 3]), f64: new Float64Array(2), buf: new ArrayBuffer(8), dv: new DataView(new ArrayBuffer(4)) }); report(r); text(JSON.stringify(r));`,
  },
  { name: 'store/load with __proto__ and constructor keys', code: `store('__proto__', { polluted: true }); store('constructor', { prototype: { polluted: true } }); report(load('__proto__')); text(JSON.stringify(load('__proto__')));` },
  { name: 'store a proxy with throwing traps', code: `try { store('p', new Proxy({}, { ownKeys() { throw new Error('trap'); } })); } catch (e) { text('store refused'); }` },
  { name: 'uncaught throw of a hostile object', code: `throw { toString() { report(this); throw new Error('no'); }, get message() { throw new Error('no'); }, get stack() { throw new Error('no'); } };` },
  { name: 'uncaught throw of a proxy', code: `throw new Proxy({}, { get() { throw new Error('trap'); }, getPrototypeOf() { throw new Error('trap'); } });` },
  { name: 'uncaught throw of a Symbol', code: `throw Symbol('sym');` },
  { name: 'setTimeout with a string body', code: `try { setTimeout('require("fs").writeFileSync(${JSON.stringify(MARKER)}, "x")', 0); } catch (e) { text('string timer refused'); } await new Promise((r) => setTimeout(r, 20));` },
  { name: 'notify and text with side-effecting toString', code: `const o = { toString() { report(this); return 'side'; } }; text(o); notify(o); text('done');` },
  { name: 'image() with javascript: and file: URLs', code: `for (const u of ['javascript:alert(1)', 'file:///etc/passwd']) { try { image(u); } catch (e) { text('image refused'); } }` },
  { name: 'exit() from inside a tool-argument getter', code: `await tools.echo({ get x() { exit(); return 1; } }); text('after exit');` },
  { name: 'write a file with fs through any reachable require', code: `for (const f of [() => require, () => process.mainModule.require, () => module.require]) { try { f()('fs').writeFileSync(${JSON.stringify(MARKER)}, 'x'); text('ESCAPED'); } catch {} } text('fs unreachable');` },
  {
    name: 'a failed call\'s Error with its prototype rewritten, rethrown',
    code: `try { await tools.fail({}); } catch (e) { const p = Object.getPrototypeOf(e); report(p.constructor); p.toString = () => { throw new Error('no'); }; p.toJSON = function () { report(this); return {}; };
           Object.defineProperty(e, 'stack', { get() { report(this); throw new Error('no'); } }); throw e; }`,
  },
  {
    name: 'console with hostile arguments and a hostile Error[Symbol.hasInstance]',
    code: `Object.defineProperty(Error, Symbol.hasInstance, { value(v) { report(v); throw new Error('trap'); } });
           try { console.log(new Proxy({}, { get() { throw new Error('trap'); }, getPrototypeOf() { throw new Error('trap'); } })); } catch (e) { text('proxy refused'); }
           console.log({ toJSON() { report(this); return 'json'; } }, { toString() { report(this); return 'str'; } }); console.error(...Array(1000).fill('x')); text('console survived');`,
  },
  { name: 'mutate the host canary', code: `globalThis.__switchyardCanary = 'pwned'; try { Function('return this')().__switchyardCanary = 'pwned'; } catch {} text('canary touched');` },
];

const CHECKED_PROTOTYPES: Array<[string, object]> = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['Promise.prototype', Promise.prototype],
];

let harness: Harness;
beforeAll(async () => {
  (globalThis as Record<string, unknown>).__switchyardCanary = 'host';
  harness = await openHarness({ runtimeOptions: { heapMb: 64 } });
});
afterAll(async () => {
  await harness.close();
  delete (globalThis as Record<string, unknown>).__switchyardCanary;
  rmSync(scratch, { recursive: true, force: true });
});

describe('sandbox-escape corpus through the full stack', () => {
  it('the detector fires on the host realm (so a silent corpus means no escape, not a blind probe)', () => {
    const seen: string[] = [];
    new Function('text', `${PRELUDE}\nreport(globalThis);`)((value: string) => seen.push(value));
    expect(seen).toContain('ESCAPED');
  });

  it(`${ATTEMPTS.length} attempts: zero escapes, host realm untouched, host alive`, async () => {
    expect(ATTEMPTS.length).toBeGreaterThanOrEqual(30);
    const keysBefore = CHECKED_PROTOTYPES.map(([, proto]) => Reflect.ownKeys(proto).length);
    const stringify = JSON.stringify;
    const parse = JSON.parse;
    const then = Promise.prototype.then;
    const escapes: string[] = [];
    const outcomes: Record<string, number> = {};
    for (const attempt of ATTEMPTS) {
      let result = await harness.exec(PRELUDE + attempt.code, { yieldTimeMs: 5_000 });
      if (result.status === 'running') result = outcome(await harness.step.dispatch(waitItem(`t-${attempt.name}`, { cell_id: result.cellId, terminate: true })));
      outcomes[result.status] = (outcomes[result.status] ?? 0) + 1;
      if (process.env.RELIABILITY_VERBOSE) console.log(attempt.name, result.status, result.output, result.error);
      if (result.output.some((text) => text.includes('ESCAPED'))) escapes.push(attempt.name);
      // Failures must say why, never an empty or host-internal error.
      if (result.status === 'failed') expect(result.error, attempt.name).toMatch(/\S/);
      expect((globalThis as Record<string, unknown>).__switchyardCanary, attempt.name).toBe('host');
      expect(({} as Record<string, unknown>).polluted, attempt.name).toBeUndefined();
      expect(
        CHECKED_PROTOTYPES.map(([, proto]) => Reflect.ownKeys(proto).length),
        attempt.name,
      ).toEqual(keysBefore);
      expect(JSON.stringify === stringify && JSON.parse === parse && Promise.prototype.then === then, attempt.name).toBe(true);
      expect(existsSync(MARKER), attempt.name).toBe(false);
    }
    const healthy = await harness.exec(`text(1 + 1); text(typeof process); text(load('__proto__') === undefined ? 'no proto key' : 'proto stored as a plain key');`);
    report('sandbox escapes', `${ATTEMPTS.length} attempts, ${escapes.length} escapes (${Object.entries(outcomes).map(([k, v]) => `${v} ${k}`).join(', ')}); host canary, prototypes and JSON intact; next cell: ${healthy.output.join(' / ')}`);
    expect(escapes).toEqual([]);
    expect(healthy.status).toBe('completed');
    expect(healthy.output.slice(0, 2)).toEqual(['2', 'undefined']);
  });
});
