/**
 * A runtime host's own maxima against a hostile agent host that speaks the sealed protocol: caps
 * are applied to the parsed `open-session` the engine acts on (an escaped spelling changes
 * nothing), every limit is capped, `maxSessions` holds, and partly received frames are bounded in
 * total (10 connections each sending 60 MB of a chunked frame that never ends). The runtime host
 * runs in its own process; its RSS is read from /proc.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
// The hostile client speaks the real protocol: the package's own sealing and placement texts.
import { deriveKeys, ephemeral, loadIdentity, open, seal, signed } from '../../../packages/code-mode-nats/src/seal.ts';
import { replyText, requestText } from '../../../packages/code-mode-nats/src/subjects.ts';
import type { NatsServer } from '@switchyard/config/nats-server';
import { startHostOverNats, stopHostOverNats } from './nats-runtime-host';
import { until } from '@switchyard/test-helpers';

let server: NatsServer;
let host: ChildProcess;
let hostId = '';
let raw: NatsConnection;
const me = loadIdentity(undefined, undefined, 'test');

beforeAll(async () => {
  const limits = { maxSessions: 1, cpuTimeMs: 1_000, heapMb: 32, maxOutputItems: 5 };
  ({ server, host, hostId, raw } = await startHostOverNats({ name: 'capped', limits }));
}, 60_000);
afterAll(() => stopHostOverNats({ server, host, raw }));

/** A sealed connection of agent `x` to the host: `send` seals a frame, `messages` are the host's messages, parsed. */
async function connection(conn: string) {
  const own = ephemeral();
  const base = { v: 3 as const, conn, heartbeatMs: 1000, key: me.publicKey, eph: own.public };
  const request = { ...base, sig: signed(me, requestText('x', base)) };
  const reply = JSON.parse((await raw.request('switchyard.place.x', JSON.stringify(request), { timeout: 10_000 })).string());
  expect(reply).toMatchObject({ ok: true, conn });
  const keys = deriveKeys(own, reply.eph, `${requestText('x', request)}\n${replyText('x', request.eph, reply)}`)!;
  const messages: Array<Record<string, unknown>> = [];
  const closes: string[] = [];
  raw.subscribe(`switchyard.agent.x.c.${hostId}.${conn}`, {
    callback: (_error, msg) => {
      const opened = open(keys.toAgent, msg.data)!;
      const text = new TextDecoder().decode(opened.body);
      if (opened.kind === 0x58) closes.push(text);
      else messages.push(...(JSON.parse(text) as Array<Record<string, unknown>>));
    },
  });
  await raw.flush();
  let seq = 0;
  const send = (text: string | Uint8Array, kind = 0x46) => {
    const body = typeof text === 'string' ? new TextEncoder().encode(text) : text;
    // a full chunk (1 MB) is not padded: a class above it would pass the server's max_payload
    raw.publish(`switchyard.rt.${hostId}.x.${conn}`, seal(keys.toRuntime, kind, ++seq, body, Math.min(body.length, 1_000_000)));
  };
  send(JSON.stringify([{ t: 'hello', version: 2, maxFrameBytes: 64 * 1024 * 1024 }]));
  return { send, messages, closes };
}

const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${host.pid}/status`, 'utf8'))![1]) * 1024;

describe('runtime host caps on parsed messages', () => {
  it('"open\\u002dsession" asking for 100 s of CPU, 4 GB and unlimited output gets the host maxima; a second session is refused at maxSessions 1', async () => {
    const peer = await connection('caps1');
    const asked = { heapMb: 4096, cpuTimeMs: 100_000, maxCells: 1_000, maxInFlightCalls: 1e9, maxInFlightArgumentChars: 1e12, maxOutputBytes: 1e12, maxOutputItems: 1e9, maxTimers: 1e9, storedValues: true };
    // The escaped spelling: JSON.parse reads it as "open-session"; a substring filter would not.
    const escaped = (id: number, session: string) => JSON.stringify([{ t: 'open-session', id, session, options: asked }]).replace('open-session', 'open\\u002dsession');
    peer.send(escaped(1, 's1'));
    peer.send(escaped(2, 's2'));
    await until(() => peer.messages.filter((m) => m.t === 'reply').length >= 2, 'two replies', 60_000);
    const replies = peer.messages.filter((m) => m.t === 'reply');
    expect(replies[0]).toMatchObject({ id: 1, ok: true });
    expect(replies[1]).toMatchObject({ id: 2, ok: false, error: { message: expect.stringContaining('runtime host is full (1 of 1 sessions)') } });

    // Output items: 20 asked for, the host's 5 given.
    const cell = (id: number, cellId: string, source: string) =>
      JSON.stringify([{ t: 'create-cell', id, session: 's1', cellId, source, tools: [], yieldTimeMs: 120_000, stored: [] }]);
    peer.send(cell(3, 'c1', `for (let i = 0; i < 20; i++) text('item ' + i)`));
    await until(() => peer.messages.some((m) => m.t === 'reply' && m.id === 3), 'the output cell', 60_000);
    const items = JSON.stringify(peer.messages.find((m) => m.t === 'reply' && m.id === 3));
    expect(items).toContain('item 4');
    expect(items).not.toContain('item 5');

    // CPU: a busy loop stops at the host's 1 s, not the 100 s asked (orders of magnitude: well under 60 s).
    const started = Date.now();
    peer.send(cell(4, 'c2', `while (true) {}`));
    await until(() => peer.messages.some((m) => m.t === 'reply' && m.id === 4), 'the CPU cell', 60_000);
    expect(JSON.stringify(peer.messages.find((m) => m.t === 'reply' && m.id === 4))).toMatch(/CPU/i);
    expect(Date.now() - started).toBeLessThan(60_000);
    // Closing the session frees the room (the next test places again).
    peer.send(JSON.stringify([{ t: 'close-session', id: 5, session: 's1' }]));
    await until(() => peer.messages.some((m) => m.t === 'reply' && m.id === 5), 'the close', 60_000);
  }, 120_000);

  it('10 connections each sending 60 MB of a chunked frame that never ends: partly received frames stay within the host total, RSS bounded', async () => {
    const before = rss();
    const peers = await Promise.all(Array.from({ length: 10 }, (_, i) => connection(`big${i}`)));
    await until(() => peers.every((peer) => peer.messages.some((m) => m.t === 'hello')), 'hellos', 60_000);
    const chunk = new Uint8Array(1_000_000).fill(0x61);
    let peak = before;
    for (let mb = 0; mb < 60; mb++) {
      for (const peer of peers) if (peer.closes.length === 0) peer.send(chunk, 0x43);
      await raw.flush();
      if (mb % 5 === 4) peak = Math.max(peak, rss());
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    peak = Math.max(peak, rss());
    // 600 MB sent; the host holds at most its 128 MiB total (64 MiB per frame): the connections past it were ended.
    const ended = peers.filter((peer) => peer.closes.some((text) => /partly received frames would hold more than this host's 134217728 bytes|over the limit of 67108864 bytes/.test(text)));
    expect(ended.length).toBeGreaterThanOrEqual(8);
    expect(peak - before).toBeLessThan(450 * 1024 * 1024);
    expect(host.exitCode).toBeNull();
  }, 240_000);
});
