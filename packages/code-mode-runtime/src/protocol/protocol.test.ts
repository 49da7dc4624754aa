import { PassThrough } from 'node:stream';
import { SwitchyardError, isSwitchyardError, type JsonValue } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { connectRuntime, ReplyTimeoutError, RuntimeLostError, type RuntimeClient, type RuntimeEventMessage } from '../runtime-client';
import {
  BLOB_FIELDS,
  CellError,
  HOST_MESSAGES,
  PAIR_BLOB_FIELDS,
  ProtocolError,
  RUNTIME_MESSAGES,
  RUNTIME_PROTOCOL_VERSION,
  WIRE_ERROR_CODES,
  cellError,
  createStreamTransport,
  formatFrame,
  fromWireError,
  parseFrame,
  parseHostMessage,
  parseRuntimeMessage,
  toWireError,
  type EngineSessionOptions,
  type HostMessage,
  type RuntimeMessage,
  type RuntimeTransport,
} from './index';
import { serveRuntime } from '../runtime-server';

const ENGINE: EngineSessionOptions = {
  heapMb: 64,
  cpuTimeMs: 10_000,
  maxCells: 8,
  maxInFlightCalls: 64,
  maxInFlightArgumentChars: 1_000_000,
  maxOutputBytes: 1_000_000,
  maxOutputItems: 1_000,
  maxTimers: 100,
  storedValues: true,
};

/** Two stream transports joined back to back (host end, runtime end), each counting the frames it receives. */
function pipePair(maxFrameBytes = 1024 * 1024) {
  const toRuntime = new PassThrough();
  const toHost = new PassThrough();
  const received = { host: [] as string[], runtime: [] as string[] };
  const counted = (transport: RuntimeTransport, log: string[]): RuntimeTransport => ({
    ...transport,
    onFrame: (listener) => transport.onFrame((frame) => (log.push(frame), listener(frame))),
  });
  const host = counted(createStreamTransport({ readable: toHost, writable: toRuntime, maxFrameBytes }), received.host);
  const runtime = counted(createStreamTransport({ readable: toRuntime, writable: toHost, maxFrameBytes }), received.runtime);
  return { host, runtime, received, toRuntime, toHost };
}

/** A host connected to an in-process runtime server; nested calls are answered by `tools`. */
async function connected(tools: Record<string, (input: unknown) => JsonValue | Promise<JsonValue>> = {}) {
  const pair = pipePair();
  const served = serveRuntime({ transport: pair.runtime, maxFrameBytes: 1024 * 1024 });
  const events: RuntimeEventMessage[] = [];
  let lost: string | undefined;
  const client: RuntimeClient = await connectRuntime({
    transport: pair.host,
    maxFrameBytes: 1024 * 1024,
    onEvent(message) {
      events.push(message);
      if (message.t !== 'call') return;
      void Promise.resolve(tools[message.tool]?.(message.inputJson === undefined ? undefined : JSON.parse(message.inputJson)) ?? Promise.reject(`no tool ${message.tool}`)).then(
        (value) => client.post({ t: 'call-result', call: message.call, ok: true, value }),
        (error) => client.post({ t: 'call-result', call: message.call, ok: false, error: String(error) }),
      );
    },
    onLost: (cause) => (lost = cause),
  });
  return { client, events, served, pair, lost: () => lost };
}

const frameOf = (messages: unknown[]) => {
  const body = Buffer.from(JSON.stringify(messages));
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length);
  return Buffer.concat([header, body]);
};

describe('framing over a byte stream', () => {
  it('reassembles frames split into single bytes and frames glued together', async () => {
    const stream = new PassThrough();
    const transport = createStreamTransport({ readable: stream, writable: new PassThrough() });
    const frames: string[] = [];
    transport.onFrame((frame) => frames.push(frame));
    const bytes = Buffer.concat([frameOf([{ n: 1 }]), frameOf([{ text: 'é'.repeat(3000) }]), frameOf([])]);
    for (let i = 0; i < 40; i++) stream.write(bytes.subarray(i, i + 1));
    stream.write(bytes.subarray(40));
    await new Promise((resolve) => setImmediate(resolve));
    expect(frames.map((frame) => JSON.parse(frame))).toEqual([[{ n: 1 }], [{ text: 'é'.repeat(3000) }], []]);
  });

  it('an empty frame or a frame that is not a JSON array ends the connection as a protocol violation, never a crash', async () => {
    for (const [bytes, cause] of [
      [Buffer.alloc(4), 'protocol violation: a frame that is not JSON'],
      [frameOf({ t: 'hello' } as never), 'protocol violation: a frame that is not an array of messages'],
      [frameOf([{ t: 'teleport' }]), 'protocol violation: unknown message type "teleport"'],
    ] as const) {
      const pair = pipePair();
      let lost: string | undefined;
      const connecting = connectRuntime({ transport: pair.host, onEvent: () => {}, onLost: (reason) => (lost = reason) });
      pair.toHost.write(frameOf([{ t: 'hello', version: RUNTIME_PROTOCOL_VERSION, maxFrameBytes: 65_536, capabilities: [] }]));
      const client = await connecting;
      const pending = client.request({ t: 'ping' });
      pair.toHost.write(bytes);
      await expect(pending).rejects.toThrow(`exec runtime ended unexpectedly: ${cause}`);
      expect(lost).toBe(cause);
    }
  });

  it('a frame announced over the limit closes the transport with a protocol error, without buffering it', async () => {
    const stream = new PassThrough();
    const transport = createStreamTransport({ readable: stream, writable: new PassThrough(), maxFrameBytes: 65_536 });
    const closed = new Promise<string | undefined>((resolve) => transport.onClose(resolve));
    const header = Buffer.alloc(4);
    header.writeUInt32BE(2 ** 31);
    stream.write(header);
    expect(await closed).toBe(`protocol violation: a frame of ${2 ** 31} bytes is over the limit of 65536 bytes`);
  });

  it('a close listener that throws is reported as a warning; the stream callback and the listeners after it are unharmed, and none hears twice', async () => {
    const stream = new PassThrough();
    const transport = createStreamTransport({ readable: stream, writable: new PassThrough() });
    const marker = `close listener broke ${process.pid}-${Date.now()}`;
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const heard: Array<string | undefined> = [];
      transport.onClose(() => {
        throw new Error(marker);
      });
      transport.onClose((reason) => heard.push(reason));
      stream.destroy(new Error('pipe broke'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      transport.close();
      stream.emit('end');
      await new Promise((resolve) => setImmediate(resolve));
      expect(heard).toEqual(['pipe broke']);
      expect(warnings.filter((warning) => warning.message.includes(marker)).map((warning) => [warning.name, warning.message])).toEqual([
        ['SwitchyardWarning', `a runtime-transport listener for "close" threw: ${marker}`],
      ]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('blobs', () => {
  it('call arguments, call results and notify texts travel after the header as they are, and read back unchanged', () => {
    const args = '{"q":"a \\"quoted\\" line\\nand é ✓ 😀"}';
    const messages = [
      { t: 'call', call: 1, session: 's', cellId: 'c', runtimeToolCallId: 'tool-1', tool: 'f', inputJson: args },
      { t: 'cell-closed', session: 's', cellId: 'c' },
      { t: 'notify', session: 's', cellId: 'c', text: 'lone \ud800 surrogate' },
      { t: 'call-result', call: 1, ok: true, json: '[1,2]' },
    ];
    const frame = formatFrame(messages);
    const header = JSON.stringify([
      { ...messages[0], inputJson: args.length },
      messages[1],
      { ...messages[2], text: 'lone \ud800 surrogate'.length },
      { ...messages[3], json: 5 },
    ]);
    expect(frame).toBe(`#${header.length}\n${header}${args}lone \ud800 surrogate[1,2]`);
    expect(parseFrame(frame)).toEqual(messages);
    // Through UTF-8 (a stream or a bus), a lone surrogate becomes U+FFFD: one code unit as well, so every length still holds.
    expect(parseFrame(Buffer.from(frame, 'utf8').toString('utf8'))[2]).toEqual({ ...messages[2], text: 'lone \ufffd surrogate' });
    expect(formatFrame([{ t: 'cell-closed', session: 's', cellId: 'c' }])).toBe('[{"t":"cell-closed","session":"s","cellId":"c"}]');
  });

  it('the JSON texts of stored pairs (commit, stored, create-cell) travel as blobs too, keys in the header', () => {
    const big = JSON.stringify('x"y'.repeat(1000));
    const messages = [
      { t: 'commit', session: 's', cellId: 'c', writes: [['a', big], ['b', '1']], more: false },
      { t: 'stored', session: 's', cellId: 'c', values: [['k', '{"v":"planted"}']] },
    ];
    const frame = formatFrame(messages);
    const header = JSON.stringify([
      { ...messages[0], writes: [['a', big.length], ['b', 1]] },
      { ...messages[1], values: [['k', 15]] },
    ]);
    expect(frame).toBe(`#${header.length}\n${header}${big}1{"v":"planted"}`);
    expect(parseFrame(frame)).toEqual(messages);
    // inline pairs (a sender that puts the texts in the header) still read as they are
    expect(parseFrame(JSON.stringify(messages))).toEqual(messages);
  });

  it('a malformed blob frame is a protocol violation naming what is wrong', () => {
    const header = '[{"t":"call-result","call":1,"ok":true,"json":5}]';
    expect(() => parseFrame(`#${header.length}\n${header}[1,2`)).toThrow('a blob that passes the end of its frame');
    expect(() => parseFrame(`#${header.length}\n${header}[1,2]extra`)).toThrow('a frame with text after its blobs');
    expect(() => parseFrame(`#${header.length + 50}\n${header}`)).toThrow('a frame whose blob header is malformed');
    expect(() => parseFrame(`#x\n${header}`)).toThrow('a frame whose blob header is malformed');
    expect(() => parseFrame('#2\n{}')).toThrow('a frame that is not an array of messages');
    const negative = '[{"t":"notify","session":"s","cellId":"c","text":-1}]';
    expect(() => parseFrame(`#${negative.length}\n${negative}`)).toThrow('a blob that passes the end of its frame');
  });
});

describe('handshake', () => {
  it('a runtime refuses a host of another protocol version with a fatal message, then closes', async () => {
    const pair = pipePair();
    serveRuntime({ transport: pair.runtime });
    const frames: unknown[] = [];
    pair.host.onFrame((frame) => frames.push(...parseFrame(frame)));
    const closed = new Promise((resolve) => pair.host.onClose(resolve));
    pair.host.send(JSON.stringify([{ t: 'hello', version: RUNTIME_PROTOCOL_VERSION + 1, maxFrameBytes: 65_536 }]));
    await closed;
    expect(frames).toEqual([
      { t: 'fatal', message: `the host speaks runtime protocol version ${RUNTIME_PROTOCOL_VERSION + 1}; this runtime speaks version ${RUNTIME_PROTOCOL_VERSION}` },
    ]);
  });

  it('a host refuses a runtime of another version; the runtime tells its version, capabilities and limits', async () => {
    const pair = pipePair();
    pair.runtime.onFrame(() => pair.runtime.send(JSON.stringify([{ t: 'hello', version: 99, maxFrameBytes: 65_536, capabilities: [] }])));
    await expect(connectRuntime({ transport: pair.host, onEvent: () => {} })).rejects.toThrow(
      `exec runtime failed to start: the runtime speaks runtime protocol version 99; this host speaks version ${RUNTIME_PROTOCOL_VERSION}`,
    );
    const { client } = await connected();
    expect(client.hello).toMatchObject({ t: 'hello', version: RUNTIME_PROTOCOL_VERSION, maxFrameBytes: 1024 * 1024, pid: process.pid });
    expect(client.hello.capabilities).toEqual(expect.arrayContaining(['typescript', 'stored-values', 'cancel', 'heap-limit', 'cpu-limit']));
    client.close();
  });
});

describe('requests, calls and events', () => {
  it('runs a cell: nested calls, notify, commit of stored writes, cell-closed; every request answered once', async () => {
    const { client, events } = await connected({ add: (input) => (input as { n: number }).n + 1 });
    await client.request({ t: 'open-session', session: 's', options: ENGINE });
    const observation = await client.request({
      t: 'create-cell',
      session: 's',
      cellId: 'c1',
      source: `notify('hello'); store('k', { v: load('seed') }); text(await tools.add({ n: 41 }));`,
      tools: [{ name: 'add', description: 'adds one', kind: 'function' }],
      yieldTimeMs: 10_000,
      stored: [['seed', '"planted"']],
    });
    expect(observation).toMatchObject({ kind: 'completed', cellId: 'c1', items: [{ type: 'input_text', text: '42' }] });
    await new Promise((resolve) => setImmediate(resolve));
    const kinds = events.map((event) => event.t);
    // the journal entry of the delivered result reaches the host before the commit it could have caused
    expect(kinds).toEqual(['notify', 'call', 'journal', 'commit', 'cell-closed']);
    expect(events.find((event) => event.t === 'journal')).toEqual({ t: 'journal', session: 's', cellId: 'c1', entries: 'r1' });
    expect(events.find((event) => event.t === 'commit')).toEqual({ t: 'commit', session: 's', cellId: 'c1', writes: [['k', '{"v":"planted"}']], more: false });
    await expect(client.request({ t: 'observe', session: 's', cellId: 'c1', yieldTimeMs: 0 })).rejects.toMatchObject({ code: 'CELL_NOT_FOUND', message: 'exec cell c1 not found' });
    expect(client.pending).toBe(0);
    client.close();
  });

  it('nested calls a cell starts in the same tick travel in one frame, and so do their results', async () => {
    const { client, pair } = await connected({ echo: (input) => input as JsonValue });
    await client.request({ t: 'open-session', session: 's', options: ENGINE });
    const hostFramesBefore = pair.received.host.length;
    const observation = await client.request({
      t: 'create-cell',
      session: 's',
      cellId: 'batch',
      source: `const r = await Promise.all(Array.from({ length: 20 }, (_, i) => tools.echo({ i }))); text(r.map((x) => x.i).join(','));`,
      tools: [{ name: 'echo', description: 'echo', kind: 'function' }],
      yieldTimeMs: 10_000,
      stored: [],
    });
    expect(observation?.items).toEqual([{ type: 'input_text', text: Array.from({ length: 20 }, (_, i) => i).join(',') }]);
    const callFrames = pair.received.host.slice(hostFramesBefore).filter((frame) => frame.includes('"t":"call"'));
    expect(callFrames).toHaveLength(1);
    expect((parseFrame(callFrames[0]) as Array<{ t: string }>).filter((message) => message.t === 'call')).toHaveLength(20);
    const resultFrames = pair.received.runtime.filter((frame) => frame.includes('"t":"call-result"'));
    expect(resultFrames).toHaveLength(1);
    client.close();
  });

  it('a cancelled observation is answered once, with ABORTED, and the cell keeps its output', async () => {
    const { client } = await connected();
    await client.request({ t: 'open-session', session: 's', options: ENGINE });
    const first = await client.request({ t: 'create-cell', session: 's', cellId: 'c', source: `text('a'); yield_control(); await new Promise((r) => setTimeout(r, 300)); text('b');`, tools: [], yieldTimeMs: 10_000, stored: [] });
    expect(first?.kind).toBe('yielded');
    const controller = new AbortController();
    const observing = client.request({ t: 'observe', session: 's', cellId: 'c', yieldTimeMs: 10_000 }, controller.signal);
    controller.abort();
    await expect(observing).rejects.toMatchObject({ code: 'ABORTED' });
    expect(await client.request({ t: 'observe', session: 's', cellId: 'c', yieldTimeMs: 10_000 })).toMatchObject({ kind: 'completed', items: [{ text: 'b' }] });
    expect(client.pending).toBe(0);
    client.close();
  });

  it('a request not answered within its timeout is cancelled and rejects with ReplyTimeoutError; its late reply is dropped, the connection stays up', async () => {
    const { client, lost } = await connected();
    await client.request({ t: 'open-session', session: 's', options: ENGINE });
    const waiting = client.request({ t: 'create-cell', session: 's', cellId: 'slow', source: `await new Promise((r) => setTimeout(r, 5000));`, tools: [], yieldTimeMs: 10_000, stored: [] }, undefined, 100);
    const error = await waiting.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplyTimeoutError);
    expect((error as Error).message).toBe('exec runtime did not answer create-cell within 100 ms');
    expect(client.pending).toBe(0);
    // the cancel made the runtime answer (ABORTED, the cell named): that late reply was dropped, not a violation
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await client.request({ t: 'ping' })).toBeUndefined();
    expect(await client.request({ t: 'terminate', session: 's', cellId: 'slow' })).toMatchObject({ kind: 'terminated' });
    expect(lost()).toBeUndefined();
    client.close();
  });

  it('a request bigger than the runtime accepts fails alone with LIMIT_EXCEEDED; the connection stays up', async () => {
    const { client } = await connected();
    await client.request({ t: 'open-session', session: 's', options: ENGINE });
    const error = await client.request({ t: 'create-cell', session: 's', cellId: 'big', source: 'x'.repeat(2 * 1024 * 1024), tools: [], yieldTimeMs: 0, stored: [] }).catch((e) => e);
    expect(isSwitchyardError(error) && error.code).toBe('LIMIT_EXCEEDED');
    expect(error.message).toMatch(/^exec request could not be sent: a create-cell message of \d+ bytes is over the peer's frame limit of 1048576 bytes$/);
    expect(await client.request({ t: 'create-cell', session: 's', cellId: 'small', source: `text(1)`, tools: [], yieldTimeMs: 10_000, stored: [] })).toMatchObject({ kind: 'completed' });
    client.close();
  });
});

describe('a runtime that breaks the protocol, or goes away', () => {
  it('a reply to a request that is not pending ends the connection; every pending request rejects once with the cause', async () => {
    const pair = pipePair();
    let answered = false;
    pair.runtime.onFrame((frame) => {
      const messages = parseFrame(frame) as Array<{ t: string; id?: number }>;
      if (messages.some((message) => message.t === 'hello')) {
        pair.runtime.send(JSON.stringify([{ t: 'hello', version: RUNTIME_PROTOCOL_VERSION, maxFrameBytes: 65_536, capabilities: [] }]));
      } else if (!answered) {
        answered = true;
        pair.runtime.send(JSON.stringify([{ t: 'reply', id: 999, ok: true }]));
      }
    });
    let lost: string | undefined;
    const client = await connectRuntime({ transport: pair.host, onEvent: () => {}, onLost: (cause) => (lost = cause) });
    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => client.request({ t: 'ping' }).then(() => n)));
    const cause = 'protocol violation: a reply to request 999, which is not pending';
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const outcome of outcomes) {
      const reason = (outcome as PromiseRejectedResult).reason;
      expect(reason).toBeInstanceOf(RuntimeLostError);
      expect(reason.message).toBe(`exec runtime ended unexpectedly: ${cause}`);
    }
    expect(lost).toBe(cause);
    expect(client.ended).toBe(true);
  });

  it('a closed transport rejects pending requests with RuntimeLostError; later requests reject at once', async () => {
    const { client, pair } = await connected();
    await client.request({ t: 'open-session', session: 's', options: ENGINE });
    const waiting = client.request({ t: 'create-cell', session: 's', cellId: 'spin', source: `while (true) {}`, tools: [], yieldTimeMs: 60_000, stored: [] });
    pair.toHost.end();
    await expect(waiting).rejects.toBeInstanceOf(RuntimeLostError);
    await expect(client.request({ t: 'ping' })).rejects.toBeInstanceOf(RuntimeLostError);
  });

  it('the runtime shuts its cells down when the host goes away', async () => {
    const { client, served, pair } = await connected();
    await client.request({ t: 'open-session', session: 's', options: ENGINE });
    void client.request({ t: 'create-cell', session: 's', cellId: 'spin', source: `while (true) {}`, tools: [], yieldTimeMs: 60_000, stored: [] }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    pair.toRuntime.end();
    expect(await served.closed).toBeUndefined();
  });
});

/** One message of every kind and variant, in both directions (the types make a missing kind a compile error). */
const HOST_SAMPLES: { [T in HostMessage['t']]: Array<Extract<HostMessage, { t: T }>> } = {
  hello: [{ t: 'hello', version: 1, maxFrameBytes: 65_536 }],
  'open-session': [{ t: 'open-session', id: 1, session: 's', options: ENGINE }, { t: 'open-session', id: 2, session: 's', options: { ...ENGINE, maxStoredKeys: 9, wallTimeMs: 5 } }],
  'close-session': [{ t: 'close-session', id: 3, session: 's' }],
  stored: [{ t: 'stored', session: 's', cellId: 'c', values: [['k', '"v"']] }],
  'create-cell': [
    { t: 'create-cell', id: 4, session: 's', cellId: 'c', source: 'text(1)', tools: [], yieldTimeMs: 0, stored: [] },
    {
      t: 'create-cell', id: 5, session: 's', cellId: 'c', source: 'x', yieldTimeMs: 10, typescript: true, stored: [['a', '1']], key: 'k1',
      tools: [{ name: 'x', description: 'd', kind: 'freeform', declaration: 'declare const tools: {};' }],
    },
    { t: 'create-cell', id: 11, session: 's', cellId: 'c', source: 'x', tools: [{ name: 'x', description: 'd', kind: 'function', idempotent: true }], yieldTimeMs: 0, stored: [], seed: '00112233445566778899aabbccddeeff' },
  ],
  'resume-cell': [
    {
      t: 'resume-cell', id: 12, session: 's', cellId: 'c', source: 'await tools.x()', tools: [], stored: [['k', '1']], seed: '00112233445566778899aabbccddeeff',
      entries: 'd1700000000000*2,r1', calls: [{ id: 'tool-1', tool: 'x', hash: '44136fa355b3678a' }], results: [['tool-1', '+{}']],
      observed: { items: 1, itemsHash: 'ab', notifies: 0, notifiesHash: '' }, committed: false, yieldTimeMs: 5,
    },
    { t: 'resume-cell', id: 13, session: 's', cellId: 'c', source: 'x', tools: [], typescript: false, stored: [], seed: '0', entries: '', calls: [], results: [], observed: { items: 0, itemsHash: '', notifies: 0, notifiesHash: '' }, committed: true },
  ],
  observe: [{ t: 'observe', id: 6, session: 's', cellId: 'c', yieldTimeMs: 5 }, { t: 'observe', id: 7, session: 's', cellId: 'c', yieldTimeMs: 5, key: 'k' }],
  terminate: [{ t: 'terminate', id: 8, session: 's', cellId: 'c' }],
  cancel: [{ t: 'cancel', id: 9 }],
  'call-result': [
    { t: 'call-result', call: 1, ok: true, value: { a: [1, null, 'x'] } },
    { t: 'call-result', call: 2, ok: true },
    { t: 'call-result', call: 3, ok: false, error: 'nope' },
    { t: 'call-result', call: 4, ok: true, json: '{"a":[1,null,"x"]}' },
  ],
  ping: [{ t: 'ping', id: 10 }],
};
const RUNTIME_SAMPLES: { [T in RuntimeMessage['t']]: Array<Extract<RuntimeMessage, { t: T }>> } = {
  hello: [{ t: 'hello', version: 1, maxFrameBytes: 65_536, capabilities: ['typescript'] }, { t: 'hello', version: 1, maxFrameBytes: 1, capabilities: [], pid: 7, engine: 'isolated-vm' }],
  reply: [
    { t: 'reply', id: 1, ok: true },
    { t: 'reply', id: 2, ok: true, value: { kind: 'yielded', cellId: 'c', items: [{ type: 'input_text', text: 'a' }], wallTimeMs: 1.5 } },
    { t: 'reply', id: 3, ok: true, value: { kind: 'completed', cellId: 'c', items: [{ type: 'input_image', image_url: 'data:,', detail: 'low' }], error: 'boom', wallTimeMs: 0 } },
    { t: 'reply', id: 4, ok: true, value: { kind: 'terminated', cellId: 'c', items: [], wallTimeMs: 0 } },
    { t: 'reply', id: 5, ok: false, error: { code: 'CELL_NOT_FOUND', message: 'exec cell c not found' } },
    { t: 'reply', id: 6, ok: false, error: { code: 'ABORTED', message: 'exec cell creation was cancelled', cellId: 'c' } },
  ],
  call: [
    { t: 'call', call: 1, session: 's', cellId: 'c', runtimeToolCallId: 'tool-1', tool: 'x', input: { a: 1 } },
    { t: 'call', call: 2, session: 's', cellId: 'c', runtimeToolCallId: 'tool-2', tool: 'x' },
    { t: 'call', call: 3, session: 's', cellId: 'c', runtimeToolCallId: 'tool-3', tool: 'x', inputJson: '{"a":1}' },
  ],
  'call-abort': [{ t: 'call-abort', call: 1, session: 's' }],
  notify: [{ t: 'notify', session: 's', cellId: 'c', text: 'hi' }],
  commit: [{ t: 'commit', session: 's', cellId: 'c', writes: [['k', '{}']], more: true }],
  'cell-closed': [{ t: 'cell-closed', session: 's', cellId: 'c' }],
  'cell-event': [{ t: 'cell-event', session: 's', event: { type: 'cell-limit-exceeded', cellId: 'c', message: 'over' } }],
  journal: [{ t: 'journal', session: 's', cellId: 'c', entries: 'r1,t2.3,d1700000000000' }],
  fatal: [{ t: 'fatal', message: 'bye' }],
};

describe('validation of messages (the message table)', () => {
  it('the blob fields derive from the table: arguments, results, notify texts, stored values (their order is the wire order)', () => {
    expect(BLOB_FIELDS).toEqual({ 'resume-cell': ['entries'], 'call-result': ['json'], call: ['inputJson'], notify: ['text'], journal: ['entries'] });
    expect(PAIR_BLOB_FIELDS).toEqual({ stored: ['values'], 'create-cell': ['stored'], 'resume-cell': ['stored', 'results'], commit: ['writes'] });
  });

  it('every message kind of both directions, in every variant, round-trips through JSON and validation', () => {
    expect(Object.keys(HOST_SAMPLES).sort()).toEqual(Object.keys(HOST_MESSAGES).sort());
    expect(Object.keys(RUNTIME_SAMPLES).sort()).toEqual(Object.keys(RUNTIME_MESSAGES).sort());
    for (const message of Object.values(HOST_SAMPLES).flat()) expect(parseHostMessage(JSON.parse(JSON.stringify(message)))).toEqual(message);
    for (const message of Object.values(RUNTIME_SAMPLES).flat()) expect(parseRuntimeMessage(JSON.parse(JSON.stringify(message)))).toEqual(message);
  });

  it('each field kind refuses a wrong value, naming the field and the kind', () => {
    const observation = { t: 'reply', id: 2, ok: true, value: { kind: 'yielded', cellId: 'c', items: [{ type: 'input_text', text: 'a' }], wallTimeMs: 1.5 } };
    const create = HOST_SAMPLES['create-cell'][1];
    const runtime: Array<[unknown, string]> = [
      [{ t: 'reply', id: -1, ok: true }, 'reply.id is not a non-negative integer'],
      [{ t: 'reply', id: 1.5, ok: true }, 'reply.id is not a non-negative integer'],
      [{ t: 'reply', id: '1', ok: true }, 'reply.id is not a non-negative integer'],
      [{ t: 'call', call: 'x' }, 'call.call is not a non-negative integer'],
      [{ ...RUNTIME_SAMPLES.call[0], tool: 7 }, 'call.tool is not a string'],
      [{ ...RUNTIME_SAMPLES.commit[0], more: 'no' }, 'commit.more is not a boolean'],
      [{ ...RUNTIME_SAMPLES.commit[0], writes: [['k', 1]] }, 'commit.writes holds an entry that is not [string, string]'],
      [{ ...RUNTIME_SAMPLES.commit[0], writes: {} }, 'commit.writes is not an array'],
      [{ ...RUNTIME_SAMPLES.hello[0], capabilities: 'all' }, 'hello.capabilities is not an array'],
      [{ ...RUNTIME_SAMPLES.hello[0], capabilities: ['a', 1] }, 'hello.capabilities[1] is not a string'],
      [{ ...RUNTIME_SAMPLES.hello[0], pid: null }, 'hello.pid is not a non-negative integer'],
      [{ t: 'reply', id: 1 }, 'reply.ok is not a boolean'],
      [{ t: 'reply', id: 1, ok: false }, 'reply.error is not an object'],
      [{ ...observation, value: { ...observation.value, kind: 'exploded' } }, 'reply.value.kind is not yielded, completed or terminated'],
      [{ ...observation, value: { ...observation.value, wallTimeMs: 'soon' } }, 'reply.value.wallTimeMs is not a number'],
      [{ ...observation, value: { ...observation.value, items: [{ type: 'input_text', text: 'a' }, { type: 'input_audio' }] } }, 'reply.value.items[1].type is not input_text or input_image'],
      [{ ...observation, value: { ...observation.value, items: [{ type: 'input_image', image_url: 'x', detail: 'huge' }] } }, 'reply.value.items[0].detail is not auto, low, high or original'],
      [{ t: 'cell-event', session: 's', event: { type: 'runtime-lost' } }, 'cell-event.event.type is not cell-limit-exceeded'],
      [{ t: 'cell-event', session: 's', event: [] }, 'cell-event.event is not an object'],
      [{ t: 'teleport' }, 'unknown message type "teleport"'],
      [{ t: '__proto__' }, 'unknown message type "__proto__"'],
      [{ version: 1 }, 'unknown message type "undefined"'],
      [{ t: 'create-cell', id: 1 }, 'unknown message type "create-cell"'],
      ['hello', 'a message is not an object'],
      [null, 'a message is not an object'],
    ];
    for (const [value, reason] of runtime) expect(() => parseRuntimeMessage(value), reason).toThrow(new ProtocolError(reason));
    const host: Array<[unknown, string]> = [
      [{ ...create, tools: [{ name: 'x', description: '', kind: 'magic' }] }, 'create-cell.tools[0].kind is not function or freeform'],
      [{ ...create, tools: [create.tools[0], { name: 'x', description: '', kind: 'function', declaration: 7 }] }, 'create-cell.tools[1].declaration is not a string'],
      [{ ...create, typescript: null }, 'create-cell.typescript is not a boolean'],
      [{ ...create, key: 1 }, 'create-cell.key is not a string'],
      [{ ...HOST_SAMPLES['open-session'][0], options: 'big' }, 'open-session.options is not an object'],
      [{ ...HOST_SAMPLES['open-session'][0], options: { ...ENGINE, heapMb: 'big' } }, 'open-session.options.heapMb is not a non-negative integer'],
      [{ ...HOST_SAMPLES['open-session'][0], options: { ...ENGINE, maxStoredBytes: -1 } }, 'open-session.options.maxStoredBytes is not a non-negative integer'],
      [{ t: 'call-result', call: 1, ok: false }, 'call-result.error is not a string'],
      [{ t: 'call-result', call: 1, ok: 'yes' }, 'call-result.ok is not a boolean'],
      [{ t: 'reply', id: 1, ok: true }, 'unknown message type "reply"'],
    ];
    for (const [value, reason] of host) expect(() => parseHostMessage(value), reason).toThrow(new ProtocolError(reason));
  });

  it('a JSON field takes any JSON value; fields the table does not name are kept and not read', () => {
    for (const input of [null, 0, 'x', [1, [2]], { deep: { er: [true] } }]) expect(parseRuntimeMessage({ ...RUNTIME_SAMPLES.call[1], input })).toMatchObject({ input });
    const tool = { name: 'x', description: '', kind: 'function', inputSchema: { type: 'object' } };
    expect(parseHostMessage({ ...HOST_SAMPLES['create-cell'][0], tools: [tool] })).toMatchObject({ tools: [tool] });
  });

  it('an error code outside WIRE_ERROR_CODES is a protocol violation: the connection ends naming the field', async () => {
    expect(() => parseRuntimeMessage({ t: 'reply', id: 1, ok: false, error: { code: 'OOPS', message: 'm' } })).toThrow(
      `reply.error.code is not one of 21 known values (${WIRE_ERROR_CODES.join(', ')})`,
    );
    const pair = pipePair();
    pair.runtime.onFrame((frame) => {
      for (const message of JSON.parse(frame) as Array<{ t: string; id?: number }>) {
        if (message.t === 'hello') pair.runtime.send(JSON.stringify([{ t: 'hello', version: RUNTIME_PROTOCOL_VERSION, maxFrameBytes: 65_536, capabilities: [] }]));
        else pair.runtime.send(JSON.stringify([{ t: 'reply', id: message.id, ok: false, error: { code: 'OOPS', message: 'm' } }]));
      }
    });
    const client = await connectRuntime({ transport: pair.host, onEvent: () => {} });
    await expect(client.request({ t: 'ping' })).rejects.toThrow(/^exec runtime ended unexpectedly: protocol violation: reply\.error\.code is not one of 21 known values \(RESPOND_TO_MODEL, /);
  });

  it('a wire error turns back into the SwitchyardError it was, with the cell it names as a typed field', async () => {
    const { client } = await connected();
    await client.request({ t: 'open-session', session: 's', options: ENGINE });
    const missing = await client.request({ t: 'observe', session: 's', cellId: 'nope', yieldTimeMs: 0 }).catch((error: unknown) => error);
    expect(isSwitchyardError(missing) && [missing.code, missing.message, missing instanceof CellError]).toEqual(['CELL_NOT_FOUND', 'exec cell nope not found', false]);
    const controller = new AbortController();
    const creating = client.request({ t: 'create-cell', session: 's', cellId: 'c9', source: `await new Promise((r) => setTimeout(r, 300)); text('late');`, tools: [], yieldTimeMs: 10_000, stored: [] }, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    const cancelled = await creating.catch((error: unknown) => error);
    expect(cancelled).toBeInstanceOf(CellError);
    expect(cancelled).toMatchObject({ code: 'ABORTED', cellId: 'c9' });
    expect(toWireError(cellError(new SwitchyardError('ABORTED', 'm'), 'c1'))).toEqual({ code: 'ABORTED', message: 'm', cellId: 'c1' });
    expect(toWireError(new Error('plain'))).toEqual({ code: 'INTERNAL', message: 'plain' });
    expect(fromWireError({ code: 'LIMIT_EXCEEDED', message: 'm', cellId: 'c' })).toMatchObject({ code: 'LIMIT_EXCEEDED', message: 'm', cellId: 'c', name: 'CellError' });
    client.close();
  });
});
