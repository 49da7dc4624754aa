import { PassThrough } from 'node:stream';
import { isSwitchyardError, type JsonValue } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { connectRuntime, RuntimeLostError, type RuntimeClient, type RuntimeEventMessage } from '../runtime-client';
import {
  RUNTIME_PROTOCOL_VERSION,
  createStreamTransport,
  formatFrame,
  parseFrame,
  parseHostMessage,
  parseRuntimeMessage,
  type EngineSessionOptions,
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
    expect(kinds).toEqual(['notify', 'call', 'commit', 'cell-closed']);
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

describe('validation of messages', () => {
  it('accepts every well-formed message and refuses malformed ones with a reason', () => {
    expect(parseRuntimeMessage({ t: 'call', call: 1, session: 's', cellId: 'c', runtimeToolCallId: 'tool-1', tool: 'x', input: { a: 1 } })).toMatchObject({ t: 'call' });
    expect(parseHostMessage({ t: 'call-result', call: 1, ok: false, error: 'nope' })).toMatchObject({ t: 'call-result' });
    const refusals: Array<[unknown, string]> = [
      [{ t: 'reply', id: -1, ok: true }, 'reply.id is not a non-negative integer'],
      [{ t: 'reply', id: 1, ok: true, value: { kind: 'exploded', cellId: 'c', items: [], wallTimeMs: 0 } }, 'reply.value.kind is not yielded, completed or terminated'],
      [{ t: 'reply', id: 1, ok: true, value: { kind: 'completed', cellId: 'c', items: [{ type: 'input_audio' }], wallTimeMs: 0 } }, 'an output item is neither input_text nor input_image'],
      [{ t: 'commit', session: 's', cellId: 'c', writes: [['k', 1]], more: false }, 'commit.writes holds an entry that is not [string, string]'],
      [{ t: 'cell-event', session: 's', event: { type: 'runtime-lost' } }, 'cell-event.event.type is not cell-limit-exceeded'],
      [{ t: 'teleport' }, 'unknown message type "teleport"'],
      ['hello', 'a message is not an object'],
    ];
    for (const [value, reason] of refusals) expect(() => parseRuntimeMessage(value)).toThrow(reason);
    expect(() => parseHostMessage({ t: 'create-cell', id: 1, session: 's', cellId: 'c', source: '', tools: [{ name: 'x', description: '', kind: 'magic' }], yieldTimeMs: 0, stored: [] })).toThrow(
      'create-cell.tools[].kind is not function or freeform',
    );
    expect(() => parseHostMessage({ t: 'create-cell', id: 1, session: 's', cellId: 'c', source: '', tools: [{ name: 'x', description: '', kind: 'function', declaration: 7 }], yieldTimeMs: 0, stored: [] })).toThrow(
      'create-cell.tools[].declaration is not a string',
    );
    const declaration = 'declare const tools: { x(args: { id: string; }): Promise<unknown>; };';
    const created = parseHostMessage({ t: 'create-cell', id: 1, session: 's', cellId: 'c', source: '', tools: [{ name: 'x', description: '', kind: 'function', declaration }], yieldTimeMs: 0, stored: [] });
    expect(created).toMatchObject({ tools: [{ name: 'x', declaration }] });
    expect(() => parseHostMessage({ t: 'open-session', id: 1, session: 's', options: { ...ENGINE, heapMb: 'big' } })).toThrow('open-session.options.heapMb is not a non-negative integer');
  });
});
