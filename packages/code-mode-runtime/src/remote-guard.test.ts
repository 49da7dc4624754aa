import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CellJournalUpdate } from '@switchyard/protocol';
import { createRemoteRuntime } from './process-runtime';
import type { RuntimePlacement } from './remote-session';
import { connectRuntime } from './runtime-client';
import { DURABLE_CELLS_CAPABILITY, RUNTIME_PROTOCOL_VERSION, createConnection, createStreamTransport, parseHostMessage, type HostMessage, type RuntimeMessage } from './protocol';
import { argumentsHash } from './journal/hashing';
import { createTestHost, fnDescriptor, until } from '../test/helpers';

/**
 * A runtime double: it speaks the protocol, and the test decides what it sends. The agent host's
 * guard must hold whatever a runtime does (it is untrusted, and a replayed cell asks again).
 */
function fakeRuntime() {
  const received: HostMessage[] = [];
  let connection!: ReturnType<typeof createConnection<HostMessage, RuntimeMessage>>;
  const placement: RuntimePlacement = {
    async acquire(sink) {
      const toRuntime = new PassThrough();
      const toHost = new PassThrough();
      connection = createConnection<HostMessage, RuntimeMessage>({
        transport: createStreamTransport({ readable: toRuntime, writable: toHost }),
        parse: parseHostMessage,
        onMessage: (message) => {
          received.push(message);
          if (message.t === 'hello') connection.post({ t: 'hello', version: RUNTIME_PROTOCOL_VERSION, maxFrameBytes: 1 << 20, capabilities: [DURABLE_CELLS_CAPABILITY] });
          else if (message.t === 'open-session') connection.post({ t: 'reply', id: message.id, ok: true });
        },
        onClose: () => undefined,
      });
      const client = await connectRuntime({ transport: createStreamTransport({ readable: toHost, writable: toRuntime }), onEvent: (message) => sink.onEvent(message), onLost: (cause) => sink.onLost(cause) });
      return { client, key: 's1', hold: () => () => {}, release: () => {} };
    },
  };
  const results = (call: number) =>
    received.filter((message): message is Extract<HostMessage, { t: 'call-result' }> => message.t === 'call-result' && message.call === call) as Array<{ ok: boolean; json?: string; error?: string }>;
  return { placement, received, send: (message: RuntimeMessage) => connection.post(message), results };
}

describe('the agent host guards every nested call with the cell journal', () => {
  it('a call the journal has is answered from it, one still running is joined, one that differs fails the cell; each tool runs once', async () => {
    const runtime = fakeRuntime();
    let runs = 0;
    const releases: Array<() => void> = [];
    const updates: CellJournalUpdate[] = [];
    const recorder = createTestHost({
      count: () => ++runs,
      slow: () => new Promise((resolve) => releases.push(() => resolve('slow done'))),
    });
    const remote = createRemoteRuntime({ placement: runtime.placement });
    const session = remote.openSession({ ...recorder.host, journal: (update) => void updates.push(update) });
    const created = session.createCell({ cellId: 'c1', source: '…', tools: [fnDescriptor('count'), fnDescriptor('slow')], yieldTimeMs: 60_000 });
    await until(() => runtime.received.some((message) => message.t === 'create-cell'));
    const create = runtime.received.find((message): message is Extract<HostMessage, { t: 'create-cell' }> => message.t === 'create-cell')!;
    expect(create.seed).toMatch(/^[0-9a-f]{32}$/);
    const call = (number: number, id: string, tool: string, inputJson: string) => runtime.send({ t: 'call', call: number, session: 's1', cellId: 'c1', runtimeToolCallId: id, tool, inputJson });

    call(1, 'tool-1', 'count', '{"n":1}');
    await until(() => runtime.results(1).length === 1);
    // the same id again (a replay, or a rogue runtime): answered from the journal, the tool not run again
    call(2, 'tool-1', 'count', '{"n":1}');
    await until(() => runtime.results(2).length === 1);
    expect(runtime.results(2)[0]).toMatchObject({ ok: true, json: runtime.results(1)[0]!.json });
    expect(runs).toBe(1);

    // a call still running is joined: both askers get its one result
    call(3, 'tool-2', 'slow', '{}');
    await until(() => releases.length === 1);
    call(4, 'tool-2', 'slow', '{}');
    releases[0]!();
    await until(() => runtime.results(3).length === 1 && runtime.results(4).length === 1);
    expect([runtime.results(3)[0], runtime.results(4)[0]].map((result) => result!.json)).toEqual(['"slow done"', '"slow done"']);
    expect(releases).toHaveLength(1);

    // a call whose tool differs from its entry: refused with the divergence, and the cell fails with it
    call(5, 'tool-1', 'slow', '{"n":1}');
    await until(() => runtime.results(5).length === 1);
    const divergence = 'cannot resume cell c1: it called tools.slow where its journal has tools.count (tool-1)';
    expect(runtime.results(5)[0]).toMatchObject({ ok: false, error: divergence });
    runtime.send({ t: 'reply', id: create.id, ok: true, value: { kind: 'completed', cellId: 'c1', items: [], wallTimeMs: 1 } });
    expect((await created).observation).toMatchObject({ kind: 'completed', error: divergence });
    expect(runs).toBe(1);

    // what a store sees: the issued entry before the tool ran, each result once, hashes of the argument texts
    expect(updates.filter((update) => update.type === 'call-issued').map((update) => update.type === 'call-issued' && update.call)).toEqual([
      { id: 'tool-1', tool: 'count', hash: argumentsHash('{"n":1}') },
      { id: 'tool-2', tool: 'slow', hash: argumentsHash('{}') },
    ]);
    expect(updates.filter((update) => update.type === 'call-settled').map((update) => update.type === 'call-settled' && [update.id, update.result])).toEqual([
      ['tool-1', { ok: true, json: '1' }],
      ['tool-2', { ok: true, json: '"slow done"' }],
    ]);
    await remote.shutdown();
  });

  it('a store that cannot write a call ahead fails that call inside the cell; the tool never runs', async () => {
    const runtime = fakeRuntime();
    let runs = 0;
    const recorder = createTestHost({ count: () => ++runs });
    const remote = createRemoteRuntime({ placement: runtime.placement });
    const session = remote.openSession({
      ...recorder.host,
      journal: (update) => (update.type === 'call-issued' ? Promise.reject(new Error('disk full')) : undefined),
    });
    void session.createCell({ cellId: 'c1', source: '…', tools: [fnDescriptor('count')], yieldTimeMs: 60_000 });
    await until(() => runtime.received.some((message) => message.t === 'create-cell'));
    runtime.send({ t: 'call', call: 1, session: 's1', cellId: 'c1', runtimeToolCallId: 'tool-1', tool: 'count', inputJson: '{}' });
    await until(() => runtime.results(1).length === 1);
    expect(runtime.results(1)[0]).toMatchObject({ ok: false, error: 'tool `count` was not called: its journal entry could not be written (disk full)' });
    expect(runs).toBe(0);
    await remote.shutdown();
  });
});
