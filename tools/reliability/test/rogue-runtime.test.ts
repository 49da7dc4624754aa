import { createRemoteRuntime, connectRuntime, createTransportEnding, parseFrame, type RuntimeEventMessage, type RuntimePlacement, type RuntimeTransport } from '@switchyard/code-mode-runtime/protocol';
import type { CellHost, CellRuntimeEvent, CodeModeSession } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';

// A rogue runtime: a test double that speaks the runtime protocol (frames of JSON message arrays)
// and floods the agent host with nested calls, notify texts, commit parts and results it never
// reads. The agent host must hold every documented limit itself, whatever the runtime sends, and
// fail only the offending cell. Every flood is bounded (at most ~30 MB of frames in all).

const LIMITS = {
  heapMb: 16,
  maxInFlightCalls: 64,
  maxOutputBytes: 1024 * 1024,
  maxStoredBytes: 4 * 1024 * 1024,
  maxInFlightResultBytes: 4 * 1024 * 1024,
};
const KB64 = 'n'.repeat(64 * 1024);

type Message = Record<string, unknown> & { t: string };

/** Two ends of an in-memory link; the runtime end reads only when `reading` (its backlog is what the host has sent and it has not taken). */
function link() {
  const hostEnding = createTransportEnding('rogue-host');
  const rogueEnding = createTransportEnding('rogue-runtime');
  let toHost: (frame: string) => void = () => {};
  let toRogue: (frame: string) => void = () => {};
  const unread: string[] = [];
  let reading = true;
  const deliver = () => {
    while (reading && unread.length > 0) toRogue(unread.shift()!);
  };
  const host: RuntimeTransport = {
    send: (frame) => {
      if (hostEnding.closed) return;
      unread.push(frame);
      queueMicrotask(deliver);
    },
    onFrame: (listener) => (toHost = listener),
    onClose: hostEnding.onClose,
    close: () => {
      hostEnding.finish(undefined);
      rogueEnding.finish(undefined);
    },
    queuedBytes: () => unread.reduce((sum, frame) => sum + Buffer.byteLength(frame), 0),
  };
  const rogue = {
    send: (messages: Message[]) => setImmediate(() => !hostEnding.closed && toHost(JSON.stringify(messages))),
    onFrame: (listener: (frame: string) => void) => (toRogue = listener),
    pause: () => (reading = false),
    resume: () => {
      reading = true;
      deliver();
    },
  };
  return { host, rogue };
}

/** The rogue: answers the handshake and sessions, and runs each cell's `source` as a flood command. */
function rogueRuntime() {
  const { host, rogue } = link();
  const results: Message[] = [];
  const snapshots: Array<Array<[string, string]>> = [];
  let staged: Array<[string, string]> = [];
  let call = 0;
  const observation = (cellId: string) => ({ kind: 'completed', cellId, items: [{ type: 'input_text', text: 'rogue' }], wallTimeMs: 1 });
  const flood = (message: Message) => {
    const { id, session, cellId, source } = message as unknown as { id: number; session: string; cellId: string; source: string };
    const of = (t: string, extra: Record<string, unknown>) => ({ t, session, cellId, ...extra });
    const calls = (tool: string, count: number) => Array.from({ length: count }, () => of('call', { call: ++call, runtimeToolCallId: `tool-${call}`, tool, input: {} }));
    const reply = () => setTimeout(() => rogue.send([{ t: 'reply', id, ok: true, value: observation(cellId) }]), 300);
    snapshots.push([...staged, ...((message.stored as Array<[string, string]>) ?? [])]);
    staged = [];
    if (source === 'calls') rogue.send(calls('hang', 1000));
    if (source === 'results') {
      // The rogue stops reading: every result the host sends stays on its way.
      rogue.pause();
      rogue.send(calls('big', 40));
      setTimeout(() => rogue.resume(), 1_000);
    }
    if (source === 'notify') for (let frame = 0; frame < 8; frame++) rogue.send(Array.from({ length: 50 }, () => of('notify', { text: KB64 })));
    if (source === 'commit-flood') for (let frame = 0; frame < 8; frame++) rogue.send(Array.from({ length: 50 }, (_, i) => of('commit', { writes: [[`f${frame}-${i}`, JSON.stringify(KB64)]], more: true })));
    const commit = /^commit (\w+) (\d+)$/.exec(source);
    if (commit) rogue.send([of('commit', { writes: [[commit[1], JSON.stringify('c'.repeat(Number(commit[2]) * 1024 * 1024))]], more: false })]);
    reply();
  };
  rogue.onFrame((frame) => {
    for (const message of parseFrame(frame) as Message[]) {
      if (message.t === 'hello') rogue.send([{ t: 'hello', version: message.version, maxFrameBytes: 64 * 1024 * 1024, capabilities: [] }]);
      else if (message.t === 'open-session' || message.t === 'close-session') rogue.send([{ t: 'reply', id: message.id, ok: true }]);
      else if (message.t === 'stored') staged.push(...(message.values as Array<[string, string]>));
      else if (message.t === 'create-cell') flood(message);
      else if (message.t === 'call-result') results.push(message);
    }
  });
  const placement: RuntimePlacement = {
    async acquire(sink) {
      const client = await connectRuntime({ transport: host, onEvent: (message: RuntimeEventMessage) => sink.onEvent(message), onLost: (cause) => sink.onLost(cause) });
      return { client, key: 'rogue-session', hold: () => () => {}, release: () => {} };
    },
  };
  return { placement, results, snapshots };
}

function recordingHost() {
  const log = { started: 0, inFlight: 0, maxInFlight: 0, notifyBytes: 0, events: [] as CellRuntimeEvent[] };
  const host: CellHost = {
    invokeTool: ({ tool, signal }) => {
      log.started++;
      if (tool === 'big') return Promise.resolve('b'.repeat(1024 * 1024));
      log.inFlight++;
      log.maxInFlight = Math.max(log.maxInFlight, log.inFlight);
      return new Promise((_, reject) => signal.addEventListener('abort', () => (log.inFlight--, reject('aborted'))));
    },
    notify: ({ text }) => {
      log.notifyBytes += Buffer.byteLength(text);
    },
    cellClosed: () => {},
    runtimeEvent: (event) => log.events.push(event),
  };
  return { host, log };
}

const shutdowns: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(shutdowns.splice(0).map((shutdown) => shutdown()));
});

function openRogue() {
  const rogue = rogueRuntime();
  const runtime = createRemoteRuntime({ placement: rogue.placement, ...LIMITS });
  shutdowns.push(() => runtime.shutdown());
  const recorder = recordingHost();
  const session: CodeModeSession = runtime.openSession(recorder.host);
  const cell = (source: string) => session.createCell({ source, tools: [], yieldTimeMs: 10_000 });
  return { ...rogue, ...recorder, session, cell };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

describe('a rogue runtime cannot pass the agent host’s limits', { timeout: 30_000 }, () => {
  it('1,000 calls in one frame: at most maxInFlightCalls reach the host; the rest fail inside the cell with the limit named', async () => {
    const env = openRogue();
    await env.cell('calls');
    await settle();
    expect(env.log.started).toBe(64);
    expect(env.log.maxInFlight).toBe(64);
    const refused = env.results.filter((result) => result.ok === false);
    expect(refused).toHaveLength(936);
    expect(refused[0]!.error).toBe('exec nested call limit exceeded: the cell has 64 nested calls in flight, the limit is 64 (maxInFlightCalls)');
  });

  it('400 × 64 KB of notify: the host takes at most maxOutputBytes; the cell fails naming the limit', async () => {
    const env = openRogue();
    const { observation } = await env.cell('notify');
    expect(env.log.notifyBytes).toBeLessThanOrEqual(LIMITS.maxOutputBytes);
    expect(env.log.notifyBytes).toBeGreaterThan(LIMITS.maxOutputBytes - KB64.length);
    const message = `exec notify limit exceeded: the cell's notify texts passed ${LIMITS.maxOutputBytes} bytes (maxOutputBytes)`;
    expect(observation).toMatchObject({ kind: 'completed', error: message, items: [{ text: 'rogue' }] });
    expect(env.log.events).toEqual([{ type: 'cell-limit-exceeded', cellId: observation.cellId, message }]);
  });

  it('400 staged commit parts that never end: staging stops at maxStoredBytes, the cell fails, nothing is stored', async () => {
    const env = openRogue();
    const { observation } = await env.cell('commit-flood');
    expect(observation.kind === 'completed' && observation.error).toBe(
      `exec stored values budget exceeded: the cell's writes in flight passed ${LIMITS.maxStoredBytes} bytes (maxStoredBytes); none of its writes were stored, earlier values are unchanged`,
    );
    await env.cell('read');
    expect(env.snapshots.at(-1)).toEqual([]);
  });

  it('the stored-values budget is checked at commit: the commit over it fails its cell; earlier values stay, and overwriting them fits', async () => {
    const env = openRogue();
    expect((await env.cell('commit first 3')).observation).toMatchObject({ kind: 'completed', items: [{ text: 'rogue' }] });
    expect((await env.cell('commit first 3')).observation).not.toHaveProperty('error');
    const over = (await env.cell('commit second 2')).observation;
    expect(over.kind === 'completed' && over.error).toMatch(
      /^exec stored values budget exceeded: this cell's writes would make the session's stored values 5242\d{3} bytes, over the budget of 4194304 bytes \(maxStoredBytes\); none of its writes were stored/,
    );
    await env.cell('read');
    const snapshot = env.snapshots.at(-1)!;
    expect(snapshot.map(([key]) => key)).toEqual(['first']);
    const bytes = snapshot.reduce((sum, [key, json]) => sum + Buffer.byteLength(key) + Buffer.byteLength(json), 0);
    expect(bytes).toBeLessThanOrEqual(LIMITS.maxStoredBytes);
    expect((await env.cell('commit first 1')).observation).not.toHaveProperty('error');
    expect((await env.cell('commit second 2')).observation).not.toHaveProperty('error');
  });

  it('40 results of 1 MB to a runtime that reads nothing: at most maxInFlightResultBytes are on their way; the rest fail in the cell', async () => {
    const env = openRogue();
    await env.cell('results');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(env.log.started).toBe(40);
    const sent = env.results.filter((result) => result.ok === true);
    const refused = env.results.filter((result) => result.ok === false);
    expect(sent.length + refused.length).toBe(40);
    expect(sent.length * 1024 * 1024).toBeLessThanOrEqual(LIMITS.maxInFlightResultBytes);
    expect(sent.length).toBeGreaterThan(0);
    expect(String(refused[0]!.error)).toMatch(/^tool result could not be sent to the cell: \d+ bytes would put \d+ bytes of results in flight to the runtime, over the limit of 4194304 bytes \(maxInFlightResultBytes\)$/);
  });
});
