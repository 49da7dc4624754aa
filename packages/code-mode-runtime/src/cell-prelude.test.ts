import ivm from 'isolated-vm';
import { afterAll, describe, expect, it } from 'vitest';
import { fnDescriptor, freeformDescriptor, setup, sleep, until } from '../test/helpers';

// The JS global surface inside a cell.
const env = setup({
  echo: (request) => request.input as never,
  patch: (request) => request.input as never,
  fail_string: () => {
    throw 'disk on fire';
  },
  fail_error: async () => {
    throw new Error('quota exceeded');
  },
  slow: (request) =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve('late'), 5_000);
      request.signal.addEventListener('abort', () => clearTimeout(timer));
    }),
});
afterAll(() => env.runtime.shutdown());

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const IMAGE_SHAPE =
  'image expects a non-empty image URL string, an object with image_url and optional detail, or a raw MCP image block';

describe('tools and ALL_TOOLS', () => {
  it('calls a function tool with a JSON object, numbering calls tool-1, tool-2 per cell', async () => {
    const before = env.calls.length;
    const texts = await env.texts(`const a = await tools.echo({ city: 'Oslo', n: [1, null] }); const b = await tools.echo(); text(a); text(b);`);
    expect(texts).toEqual(['{"city":"Oslo","n":[1,null]}', '{}']);
    const calls = env.calls.slice(before);
    expect(calls.map((call) => [call.runtimeToolCallId, call.tool, call.input])).toEqual([
      ['tool-1', 'echo', { city: 'Oslo', n: [1, null] }],
      ['tool-2', 'echo', {}],
    ]);
    expect(calls[0].cellId).toMatch(/^[0-9a-hjkmnp-tv-z]{16}$/);
  });

  it('treats undefined, a function or a symbol argument as no input ({} for function tools)', async () => {
    const texts = await env.texts(`text(await tools.echo(undefined)); text(await tools.echo(() => 1)); text(await tools.echo(Symbol('s')));`);
    expect(texts).toEqual(['{}', '{}', '{}']);
  });

  it('rejects non-object input to a function tool with the reference text, without calling the host', async () => {
    const before = env.calls.length;
    const texts = await env.texts(
      `for (const input of [[1], 5, 'str', null, true]) { try { await tools.echo(input); text('resolved'); } catch (e) { text((e instanceof Error) + ': ' + e); } }`,
    );
    expect(texts).toEqual(Array(5).fill('true: tool `echo` expects a JSON object for arguments'));
    expect(env.calls.length).toBe(before);
  });

  it('passes a string to a freeform tool and rejects anything else with the reference text', async () => {
    const tools = [freeformDescriptor('patch'), fnDescriptor('echo')];
    const texts = await env.texts(
      `text(await tools.patch('*** Begin Patch')); for (const input of [undefined, { a: 1 }, 3]) { try { await tools.patch(input); } catch (e) { text(e); } }`,
      { tools },
    );
    expect(texts).toEqual(['*** Begin Patch', ...Array(3).fill('tool `patch` expects a string input')]);
    expect(env.calls.at(-1)).toMatchObject({ tool: 'patch', input: '*** Begin Patch' });
  });

  it('a failed call rejects with an Error: message and String(e) are the failure text (host string or Error)', async () => {
    const texts = await env.texts(
      `for (const call of [() => tools.fail_string(), () => tools.fail_error()]) {
         try { await call(); } catch (e) { text([e instanceof Error, typeof e, e.name, e.message, String(e), \`\${e}\`, e + '', e.stack].join('|')); }
       }`,
    );
    expect(texts).toEqual([
      'true|object|ToolCallError|disk on fire|disk on fire|disk on fire|disk on fire|disk on fire',
      'true|object|ToolCallError|quota exceeded|quota exceeded|quota exceeded|quota exceeded|quota exceeded',
    ]);
  });

  it('a failed call reads as its text in text(), JSON and store(), as the bare string it used to be', async () => {
    const texts = await env.texts(
      `try { await tools.fail_string(); } catch (e) {
         text(e); text({ error: e }); text(JSON.stringify([e])); store('e', e); text(typeof load('e') + ' ' + load('e'));
         text(Object.keys(e).length + ' ' + Object.prototype.toString.call(e) + ' ' + (e.constructor !== Error));
       }`,
    );
    expect(texts).toEqual(['disk on fire', '{"error":"disk on fire"}', '["disk on fire"]', 'string disk on fire', '0 [object Error] true']);
  });

  it('an uncaught failed call fails the cell with exactly the failure text, no stack', async () => {
    for (const [source, error] of [
      [`text('before'); await tools.fail_string();`, 'disk on fire'],
      [`await tools.fail_error();`, 'quota exceeded'],
      [`await tools.echo(5);`, 'tool `echo` expects a JSON object for arguments'],
      [`try { await tools.fail_string(); } catch (e) { throw e; }`, 'disk on fire'],
    ]) {
      const observation = await env.run(source);
      expect(observation).toMatchObject({ kind: 'completed', error });
    }
  });

  it('exposes ALL_TOOLS as {name, description, declaration}; a later duplicate name wins in tools, both stay listed', async () => {
    const declaration = 'declare const tools: { alpha(args: { id: string; }): Promise<{ ok: boolean; }>; };';
    const tools = [{ ...fnDescriptor('alpha', 'First tool.'), declaration }, fnDescriptor('echo', 'Echoes.'), freeformDescriptor('echo', 'Echoes text.')];
    const texts = await env.texts(`text(ALL_TOOLS); text(Object.keys(tools)); try { await tools.echo({}); } catch (e) { text(e); }`, { tools });
    expect(JSON.parse(texts[0])).toEqual([
      { name: 'alpha', description: 'First tool.', declaration },
      // without a declaration from the host: the untyped one
      { name: 'echo', description: 'Echoes.', declaration: 'declare const tools: { echo(args: unknown): Promise<unknown>; };' },
      { name: 'echo', description: 'Echoes text.', declaration: 'declare const tools: { echo(input: string): Promise<unknown>; };' },
    ]);
    expect(JSON.parse(texts[1])).toEqual(['alpha', 'echo']);
    expect(texts[2]).toBe('tool `echo` expects a string input');
  });

  it('runs nested calls concurrently (Promise.all of slow tools takes about one call)', async () => {
    const parallel = setup({ wait: () => sleep(250).then(() => 'ok') });
    try {
      const observation = await parallel.run(`const r = await Promise.all(Array.from({ length: 8 }, () => tools.wait())); text(r.length);`);
      expect(observation.items).toEqual([{ type: 'input_text', text: '8' }]);
      expect(observation.wallTimeMs).toBeLessThan(8 * 250 * 0.6);
    } finally {
      await parallel.runtime.shutdown();
    }
  });
});

describe('text, image, notify', () => {
  it('text() converts values like the reference and returns undefined', async () => {
    const texts = await env.texts(
      `text('a'); text(); text(null); text(true); text(1.5); text(10n); text({ json: true }); text([1, 'x']); text(Symbol('s')); text(function f() { return 1 }); text(String(text('z')));`,
    );
    expect(texts).toEqual(['a', 'undefined', 'null', 'true', '1.5', '10', '{"json":true}', '[1,"x"]', 'Symbol(s)', 'function f() { return 1 }', 'z', 'undefined']);
  });

  it('text() of a circular value fails the cell with the stringify error', async () => {
    const observation = await env.run(`text('before'); const a = []; a.push(a); text(a);`);
    expect(observation.kind).toBe('completed');
    expect(observation.items).toEqual([{ type: 'input_text', text: 'before' }]);
    expect(observation.kind === 'completed' && observation.error).toContain('Converting circular structure to JSON');
  });

  it('image() accepts URLs, image_url objects and MCP image blocks with the detail rules', async () => {
    const observation = await env.run(`
      image('${PNG}');
      image('${PNG}', 'LOW');
      image({ image_url: '${PNG}', detail: 'auto' });
      image({ image_url: '${PNG}', detail: 'auto' }, 'original');
      image({ image_url: '${PNG}', detail: null }, null);
      image({ type: 'image', data: 'AAAA', mimeType: 'image/jpeg' });
      image({ type: 'image', data: 'BBBB', mime_type: 'image/gif', _meta: { 'codex/imageDetail': 'low' } });
      image({ type: 'image', data: 'CCCC', _meta: { 'codex/imageDetail': 'bogus' } });
      image({ type: 'image', data: 'DATA:image/png;base64,DDDD' });
      text(String(image('${PNG}')));
    `);
    expect('error' in observation).toBe(false);
    expect(observation.items).toEqual([
      { type: 'input_image', image_url: PNG, detail: 'high' },
      { type: 'input_image', image_url: PNG, detail: 'low' },
      { type: 'input_image', image_url: PNG, detail: 'auto' },
      { type: 'input_image', image_url: PNG, detail: 'original' },
      { type: 'input_image', image_url: PNG, detail: 'high' },
      { type: 'input_image', image_url: 'data:image/jpeg;base64,AAAA', detail: 'high' },
      { type: 'input_image', image_url: 'data:image/gif;base64,BBBB', detail: 'low' },
      { type: 'input_image', image_url: 'data:application/octet-stream;base64,CCCC', detail: 'high' },
      { type: 'input_image', image_url: 'DATA:image/png;base64,DDDD', detail: 'high' },
      { type: 'input_image', image_url: PNG, detail: 'high' },
      { type: 'input_text', text: 'undefined' },
    ]);
  });

  it('image() rejects bad shapes and details with the exact texts, thrown as strings', async () => {
    const texts = await env.texts(`
      const attempts = [
        () => image([]), () => image(5), () => image(''), () => image({ content: [] }), () => image({ type: 'image', data: '' }),
        () => image({ type: 'text', text: 'x' }), () => image('${PNG}', 5), () => image({ image_url: '${PNG}', detail: 7 }),
        () => image('${PNG}', 'huge'), () => image('https://example.com/a.png'), () => image({ image_url: 'http://example.com/a.png' }),
      ];
      for (const attempt of attempts) { try { attempt(); text('accepted'); } catch (e) { text(typeof e + ': ' + e); } }
    `);
    const remote = 'string: Tool call failed: remote image URLs are not supported in tool outputs. Pass a base64 data URI instead';
    expect(texts).toEqual([
      ...Array(5).fill(`string: ${IMAGE_SHAPE}`),
      'string: image only accepts MCP image blocks, got "text"',
      'string: image detail must be a string when provided',
      'string: image detail must be a string when provided',
      'string: image detail must be one of: auto, low, high, original',
      remote,
      remote,
    ]);
  });

  it('an uncaught remote image URL fails the cell with exactly the reference text', async () => {
    const observation = await env.run(`image('https://example.com/image.jpg', 'high');`);
    expect(observation).toMatchObject({
      kind: 'completed',
      error: 'Tool call failed: remote image URLs are not supported in tool outputs. Pass a base64 data URI instead',
    });
  });

  it('notify() sends text to the host (not to the output), converts like text() and refuses blank text', async () => {
    const before = env.notifications.length;
    const observation = await env.run(`notify('boo'); notify({ a: 1 }); text(String(notify(7))); try { notify('  \\n '); } catch (e) { text(e); }`);
    expect(observation.items.map((item) => item.type === 'input_text' && item.text)).toEqual(['undefined', 'notify expects non-empty text']);
    expect(env.notifications.slice(before)).toEqual([
      { cellId: observation.cellId, text: 'boo' },
      { cellId: observation.cellId, text: '{"a":1}' },
      { cellId: observation.cellId, text: '7' },
    ]);
  });
});

describe('console', () => {
  it('console.log / info / warn / error / debug append text items in order with text()', async () => {
    const texts = await env.texts(
      `console.log('log'); text('text'); console.info('info'); console.warn('warn'); console.error('error'); console.debug('debug');
       text(Object.hasOwn(globalThis, 'console') + ' ' + Object.keys(console).join() + ' ' + String(console.log('x')));`,
    );
    expect(texts).toEqual(['log', 'text', 'info', 'warn', 'error', 'debug', 'x', 'true log,info,warn,error,debug undefined']);
  });

  it('formats each argument as text() does, Errors as String(e), joined by spaces; no format specifiers', async () => {
    const texts = await env.texts(
      `console.log('a', 1, { x: [1] }, [2, 'y'], null, undefined, true, 10n);
       console.log();
       console.log('%s and %d', 1);
       console.log(new TypeError('bad'), 'then');
       try { await tools.fail_string(); } catch (e) { console.error('caught:', e); }`,
    );
    expect(texts).toEqual(['a 1 {"x":[1]} [2,"y"] null undefined true 10', '', '%s and %d 1', 'TypeError: bad then', 'caught: disk on fire']);
  });

  it('a console call that cannot format its arguments throws as text() does (uncaught, the cell fails)', async () => {
    const observation = await env.run(`console.log('before'); const a = {}; a.self = a; console.log('x', a);`);
    expect(observation.items).toEqual([{ type: 'input_text', text: 'before' }]);
    expect(observation).toMatchObject({ kind: 'completed', error: expect.stringContaining('Converting circular structure to JSON') });
  });

  it('console output counts against the output limits like text()', async () => {
    const limited = setup({}, { maxOutputItems: 3, maxOutputBytes: 10 });
    try {
      expect(await limited.texts(`console.log('a'); text('b'); console.warn('c'); try { console.log('d'); } catch (e) { text(typeof e + ': ' + e); }`)).toEqual([
        'a',
        'b',
        'c',
        '[error exec output limit exceeded: a cell may produce at most 3 output items (text, image and notify calls)]',
      ]);
      expect(await limited.texts(`console.log('12345', '678'); console.log('abc');`)).toEqual([
        '12345 678',
        '[error exec output limit exceeded: a cell may produce at most 10 bytes of output]',
      ]);
    } finally {
      await limited.runtime.shutdown();
    }
  });
});

describe('exit, timers, errors', () => {
  it('exit() ends the script successfully, keeping output, before or after an await', async () => {
    expect(await env.run(`text('a'); exit(); text('b');`)).toMatchObject({ kind: 'completed', items: [{ text: 'a' }] });
    const later = await env.run(`text('a'); await tools.echo({}); exit(); text('b');`);
    expect(later).toMatchObject({ kind: 'completed', items: [{ text: 'a' }] });
    expect('error' in later).toBe(false);
  });

  it('a caught exit() is swallowed and the script continues', async () => {
    expect(await env.texts(`try { exit(); } catch (e) { text('caught'); } text('after');`)).toEqual(['caught', 'after']);
  });

  it('exit() inside a timer callback completes the cell successfully (deliberate fix, see README)', async () => {
    const observation = await env.run(`text('a'); setTimeout(() => exit(), 0); await new Promise(() => {});`);
    expect(observation).toMatchObject({ kind: 'completed', items: [{ text: 'a' }] });
    expect('error' in observation).toBe(false);
  });

  it('setTimeout numbers timers per cell, coerces delays, ignores extra arguments and calls with this undefined', async () => {
    const texts = await env.texts(`
      const ids = [setTimeout(() => {}), setTimeout(() => {}, 'abc'), setTimeout(() => {}, Symbol('x'))];
      text(ids.join(','));
      await new Promise((resolve) => setTimeout(function (...args) { text(args.length + ':' + (this === undefined)); resolve(); }, -5, 1, 2));
      await new Promise((resolve) => setTimeout(resolve, 20.9));
      try { setTimeout('text(1)'); } catch (e) { text(e); }
    `);
    expect(texts).toEqual(['1,2,3', '0:true', 'setTimeout expects a function callback']);
  });

  it('timers do not keep the cell alive: pending timers are discarded at completion', async () => {
    const before = env.calls.length;
    const observation = await env.run(`setTimeout(() => tools.echo({ late: true }), 30); text('done');`);
    expect(observation).toMatchObject({ kind: 'completed', items: [{ text: 'done' }] });
    await sleep(120);
    expect(env.calls.length).toBe(before);
  });

  it('an exception thrown in a timer callback fails the whole cell with its text', async () => {
    const observation = await env.run(`setTimeout(() => { throw new Error('tick'); }, 5); await new Promise(() => {});`);
    expect(observation.kind).toBe('completed');
    expect(observation.kind === 'completed' && observation.error).toMatch(/^Error: tick\n {4}at .*exec_main\.mjs:1:/);
  });

  it('clearTimeout cancels, coerces ids, ignores junk and throws only when conversion throws', async () => {
    const texts = await env.texts(`
      const first = setTimeout(() => text('first fired'), 10);
      const second = setTimeout(() => text('second fired'), 10);
      clearTimeout(String(first));
      for (const junk of [undefined, null, 'abc', -1, Infinity, 999, 1.5e9]) clearTimeout(junk);
      clearTimeout();
      try { clearTimeout(Symbol('id')); } catch (e) { text(e); }
      await new Promise((resolve) => setTimeout(resolve, 40));
    `);
    expect(texts).toEqual(['clearTimeout expects a numeric timeout id', 'second fired']);
  });

  it('reports a thrown Error by its stack and a thrown string as is', async () => {
    const error = await env.run(`text('x');\nthrow new Error('boom');`);
    expect(error.kind === 'completed' && error.error).toMatch(/^Error: boom\n {4}at exec_main\.mjs:2:7/);
    expect(await env.run(`throw 'x';`)).toMatchObject({ kind: 'completed', error: 'x' });
    expect(await env.run(`await null; throw { toString() { return 'custom' } };`)).toMatchObject({ error: 'custom' });
  });

  it('helper errors are plain strings: uncaught, the error text is exactly that string', async () => {
    expect(await env.run(`setTimeout(42);`)).toMatchObject({ kind: 'completed', error: 'setTimeout expects a function callback' });
  });

  it('fails on syntax errors with V8 message and position', async () => {
    const observation = await env.run(`let x = ;`);
    expect(observation).toMatchObject({ kind: 'completed', error: "SyntaxError: Unexpected token ';'" });
  });

  it('ignores unhandled rejections of other promises', async () => {
    const observation = await env.run(`Promise.reject(new Error('ignored')); (async () => { await null; throw 'also ignored'; })(); await null; text('ok');`);
    expect(observation).toMatchObject({ kind: 'completed', items: [{ text: 'ok' }] });
    expect('error' in observation).toBe(false);
  });

  it('cancels unawaited nested calls when the module settles', async () => {
    const before = env.calls.length;
    const observation = await env.run(`tools.slow({}); text('done');`);
    expect(observation).toMatchObject({ kind: 'completed', items: [{ text: 'done' }] });
    await until(() => env.calls.length > before);
    const call = env.calls[before];
    await until(() => call.signal.aborted);
    expect(call.tool).toBe('slow');
  });
});

describe('the environment', () => {
  it('runs as an async module: top-level await, module scope, this undefined', async () => {
    expect(await env.texts(`const v = await Promise.resolve(5); text(v); text(typeof this); var g = 1; text(typeof globalThis.g);`)).toEqual([
      '5',
      'undefined',
      'undefined',
    ]);
  });

  it('has no WebAssembly, SharedArrayBuffer, Atomics, require, process, fetch and friends', async () => {
    const names = ['WebAssembly', 'SharedArrayBuffer', 'Atomics', 'require', 'process', 'fetch', 'setInterval', 'queueMicrotask', 'structuredClone', 'module', 'Buffer'];
    const texts = await env.texts(`text(${JSON.stringify(names)}.map((n) => n + '=' + typeof globalThis[n]).join(' '));`);
    expect(texts).toEqual([names.map((name) => `${name}=undefined`).join(' ')]);
  });

  it('adds exactly the documented helpers to the standard global scope', async () => {
    const texts = await env.texts(`text(Object.getOwnPropertyNames(globalThis));`);
    // The standard scope: a bare isolated-vm context (which also has console, SharedArrayBuffer, Atomics, WebAssembly).
    const isolate = new ivm.Isolate({ memoryLimit: 8 });
    const standard = new Set(JSON.parse(isolate.createContextSync().evalSync('JSON.stringify(Object.getOwnPropertyNames(globalThis))') as string) as string[]);
    isolate.dispose();
    for (const removed of ['console', 'SharedArrayBuffer', 'Atomics', 'WebAssembly']) expect(standard.has(removed)).toBe(true);
    const added = (JSON.parse(texts[0]) as string[]).filter((name) => !standard.has(name)).sort();
    expect(added).toEqual(['ALL_TOOLS', 'clearTimeout', 'exit', 'generatedImage', 'image', 'load', 'notify', 'setTimeout', 'store', 'text', 'tools', 'yield_control'].sort());
    // console is the cell's own (it writes to the output), in place of the standard one
    expect(standard.has('console') && !added.includes('console')).toBe(true);
  });

  it('refuses every static import with "Unsupported import in exec: X"', async () => {
    expect(await env.run(`import fs from 'node:fs';\ntext('never');`)).toMatchObject({ kind: 'completed', items: [], error: 'Unsupported import in exec: node:fs' });
    expect(await env.run(`export { x } from './helpers.js';`)).toMatchObject({ error: 'Unsupported import in exec: ./helpers.js' });
  });

  it('rejects dynamic import() (the cell sees a rejected promise)', async () => {
    const texts = await env.texts(`try { await import('node:fs'); text('imported'); } catch (e) { text('rejected: ' + e); }`);
    expect(texts[0]).toMatch(/^rejected: /);
  });
});
