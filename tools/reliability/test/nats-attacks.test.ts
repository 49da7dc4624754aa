/**
 * The NATS boundary of Code Mode (`@switchyard/code-mode-nats`): a runtime host in its own process
 * and an agent host here, on a real nats-server, attacked from both sides by a raw NATS client:
 * hostile placement requests, malformed envelopes, sequence gaps and duplicates, oversized
 * reassembly, frames for connections nobody placed, junk frames and fake placement replies aimed
 * at the agent host. Each must end only the connection it targets (with a clear cause, sent back
 * as a close) or be dropped; afterwards the runtime host is alive and serves a well-behaved agent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createNatsRuntime } from '@switchyard/code-mode-nats';
import { startNatsServer, type NatsServer } from '../../config/nats-server.ts';
import { report } from '../src/profile';

let server: NatsServer;
let host: ChildProcess;
let hostId = '';
let raw: NatsConnection;
const tried: string[] = [];

beforeAll(async () => {
  server = await startNatsServer();
  const script = `import('@switchyard/code-mode-nats').then(({ serveRuntimeOverNats }) => serveRuntimeOverNats({ servers: ${JSON.stringify(server.url)}, name: 'target', limits: { maxFrameBytes: 65536, maxConnections: 8 } }))
    .then((h) => process.stdout.write(h.id + '\\n'), (e) => { console.error(e.message); process.exit(1); });`;
  host = spawn(process.execPath, ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', '--input-type=module', '-e', script], {
    // From this package's folder, where the workspace links @switchyard/code-mode-nats (whatever folder vitest runs in).
    cwd: join(dirname(fileURLToPath(import.meta.url)), '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  hostId = await new Promise<string>((resolve, reject) => {
    host.stdout!.once('data', (text: Buffer) => resolve(text.toString('utf8').trim()));
    host.once('exit', (code) => reject(new Error(`runtime host exited with ${code}`)));
  });
  raw = await connect({ servers: server.url, inboxPrefix: 'switchyard.agent.x.inbox' });
}, 60_000);
afterAll(async () => {
  await raw?.close();
  host?.kill('SIGKILL');
  await server?.stop();
  report('nats boundary', `${tried.length} hostile inputs, runtime host alive and serving after each:\n  - ${tried.join('\n  - ')}`);
});

const place = async (agent: string, body: string) => JSON.parse((await raw.request(`switchyard.place.${agent}`, body, { timeout: 10_000 })).string()) as { ok: boolean; error?: string; runtime?: string; conn?: string };

/** Places a connection for agent `x` and returns a sender plus the closes the host sends back. */
async function placed(wanted: string) {
  // The host may name an earlier placement of `x` that no hello followed yet; that is the one to use.
  const reply = await place('x', JSON.stringify({ v: 1, conn: wanted, heartbeatMs: 1000 }));
  expect(reply).toMatchObject({ ok: true, runtime: hostId, conn: expect.stringMatching(/^[\w-]+$/) });
  const conn = reply.conn!;
  const back: string[] = [];
  const sub = raw.subscribe(`switchyard.agent.x.c.${conn}`, { callback: (_error, msg) => void back.push(msg.string()) });
  await raw.flush();
  return {
    send: (payload: string | Uint8Array) => raw.publish(`switchyard.rt.${hostId}.x.${conn}`, payload),
    back,
    done: () => sub.unsubscribe(),
  };
}

const until = async (check: () => boolean, what: string) => {
  const end = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

const hello = (seq: number) => `F${seq} ${JSON.stringify([{ t: 'hello', version: 1, maxFrameBytes: 65536 }])}`;

describe('hostile agent host against a runtime host', () => {
  it('declines malformed placement requests with a reason', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['not JSON', '{', /placement request is not JSON/],
      ['wrong version', JSON.stringify({ v: 9, conn: 'c1' }), /placement version 9 is not supported/],
      ['no connection id', JSON.stringify({ v: 1 }), /names no valid connection/],
      ['a connection id with subject syntax', JSON.stringify({ v: 1, conn: 'a.>' }), /names no valid connection/],
      ['a 65-character connection id', JSON.stringify({ v: 1, conn: 'c'.repeat(65) }), /names no valid connection/],
      ['a 512 KB body', JSON.stringify({ v: 1, conn: 'c1', pad: 'x'.repeat(512 * 1024) }), /^$/],
    ];
    for (const [name, body, reason] of cases) {
      const reply = await place('x', body);
      if (reason.source === '^$') expect(reply.ok).toBe(true);
      else expect(reply).toMatchObject({ ok: false, error: expect.stringMatching(reason) });
      tried.push(`placement: ${name}`);
    }
  });

  it('bounds connections: a placement flood costs nothing (one pending connection per agent host); served connections stop at maxConnections', async () => {
    const answered = async (agent: string, conn: string) => {
      const back: string[] = [];
      const sub = raw.subscribe(`switchyard.agent.${agent}.c.${conn}`, { callback: (_error, msg) => void back.push(msg.string()) });
      await raw.flush();
      raw.publish(`switchyard.rt.${hostId}.${agent}.${conn}`, hello(1));
      await raw.flush();
      await new Promise((resolve) => setTimeout(resolve, 300));
      sub.unsubscribe();
      return back;
    };
    // 40 placements without a hello: all are told the first one's connection; the others are never served.
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => place('flood', JSON.stringify({ v: 1, conn: `f${i}`, heartbeatMs: 1000 }))));
    expect(new Set(replies.map((reply) => (reply as { conn?: string }).conn))).toEqual(new Set(['f0']));
    expect(await answered('flood', 'f39')).toEqual([]);
    tried.push('placement flood (40 placements of one agent host without a hello)');
    // Served connections: 8 with a hello, then the next placement is declined.
    const open: string[] = [];
    for (let i = 0; i < 8; i++) {
      const conn = (await place('flood', JSON.stringify({ v: 1, conn: `g${i}`, heartbeatMs: 1000 }))).conn!;
      const back = await answered('flood', conn);
      expect(back[0]).toMatch(/^F1 \[\{"t":"hello","version":1,/);
      open.push(conn);
    }
    expect(await place('other', JSON.stringify({ v: 1, conn: 'o1', heartbeatMs: 1000 }))).toMatchObject({ ok: false, error: 'runtime host is full (8 connections)' });
    // Closing them frees the room.
    for (const conn of open) raw.publish(`switchyard.rt.${hostId}.flood.${conn}`, 'X done');
    await raw.flush();
    const end = Date.now() + 15_000;
    while (!(await place('other', JSON.stringify({ v: 1, conn: 'o1', heartbeatMs: 1000 }))).ok) {
      if (Date.now() > end) throw new Error('closed connections did not free the room');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    tried.push('connection flood (9 served connections against maxConnections 8)');
  });

  it('ends a connection on a malformed envelope, a sequence gap, a duplicate and an oversized reassembly — each with its cause', async () => {
    const cases: Array<[string, (send: (p: string | Uint8Array) => void) => void, RegExp]> = [
      ['an envelope without kind or sequence', (send) => send('hello'), /^X protocol violation: a message that is not a frame envelope$/],
      ['a sequence gap', (send) => send(hello(5)), /^X frames lost in transit \(expected frame 1 from agent host x, got 5\)$/],
      ['a duplicated frame', (send) => { send(hello(1)); send(hello(1)); }, /^X frames lost in transit \(expected frame 2 from agent host x, got 1\)$/],
      ['chunks past maxFrameBytes', (send) => { for (let i = 1; i <= 3; i++) send(`C${i} ${'y'.repeat(30_000)}`); }, /^X protocol violation: a frame of more than 65536 bytes is over the limit of 65536 bytes$/],
      ['a first frame that is not hello', (send) => send(`F1 ${JSON.stringify([{ t: 'ping', id: 1 }])}`), /protocol violation: the first message must be hello/],
      // The engine's connection ends on it; the close names no reason (the agent host broke the protocol).
      ['a frame that is not JSON', (send) => send('F1 [{'), /^X$/],
    ];
    let n = 0;
    for (const [name, attack, expected] of cases) {
      const conn = placed(`k${++n}`);
      const { send, back, done } = await conn;
      attack(send);
      await until(() => back.some((text) => expected.test(text)), name);
      done();
      tried.push(`frames: ${name}`);
    }
  });

  it('drops frames and answers heartbeats "unknown" for connections nobody placed', async () => {
    raw.publish(`switchyard.rt.${hostId}.x.neverplaced`, hello(1));
    const ping = await raw.request(`switchyard.rt.${hostId}.x.neverplaced.ping`, '', { timeout: 10_000 });
    expect(ping.string()).toBe('unknown');
    tried.push('frames and heartbeats for an unplaced connection');
  });
});

describe('hostile peers against an agent host', () => {
  it('a junk frame from a "runtime host" ends only that link; a fake placement answer is refused; the next cell runs', async () => {
    // Many placement attempts: the fake below shares the queue group, and NATS picks a member at random.
    const runtime = createNatsRuntime({ servers: server.url, agentId: 'victim', placement: { attempts: 40 } });
    let calls = 0;
    const session = runtime.openSession({ invokeTool: () => (calls++, new Promise(() => {})), notify: () => {}, cellClosed: () => {} });
    const frames: string[] = [];
    const spy = raw.subscribe('switchyard.rt.*.victim.*', { callback: (_error, msg) => void frames.push(msg.subject) });
    const running = session.createCell({ source: `await tools.hang({})`, tools: [{ name: 'hang', description: '', kind: 'function' }], yieldTimeMs: 60_000 });
    // Wait until the cell runs (its nested call went out), then forge a frame from the "runtime host".
    await until(() => frames.filter((subject) => !subject.endsWith('.ping')).length >= 1, "the victim's frames");
    const conn = frames[0].split('.').at(-1)!;
    await until(() => calls === 1, 'the nested call');
    raw.publish(`switchyard.agent.victim.c.${conn}`, 'F999 []');
    expect((await running).observation).toMatchObject({ kind: 'completed', error: expect.stringMatching(/^exec runtime ended unexpectedly: frames lost in transit \(expected frame \d+ from runtime host target, got 999\)$/) });
    spy.unsubscribe();
    tried.push('agent host: a forged frame out of sequence');

    // A fake runtime host joins the queue group answering placements with junk: the agent host asks again.
    const fake = raw.subscribe('switchyard.place.*', { queue: 'switchyard-runtime-hosts', callback: (_error, msg) => void msg.respond('{"v":1,"ok":true,"runtime":"../.."}') });
    await raw.flush();
    const next = await session.createCell({ source: `text('still fine')`, tools: [], yieldTimeMs: 60_000 });
    expect(next.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'still fine' }] });
    fake.unsubscribe();
    tried.push('agent host: malformed placement replies in the queue group');

    // A forged frame racing the runtime host's hello: the handshake fails (or the link ends) with the cause; nothing throws.
    const fresh = runtime.openSession({ invokeTool: async () => 1, notify: () => {}, cellClosed: () => {} });
    const race = raw.subscribe('switchyard.rt.*.victim.*', {
      callback: (_error, msg) => raw.publish(`switchyard.agent.victim.c.${msg.subject.split('.').at(-1)}`, 'F1 [{"t":"bogus"}]'),
    });
    await raw.flush();
    const raced = await fresh.createCell({ source: `text('x')`, tools: [], yieldTimeMs: 60_000 }).then(
      ({ observation }) => (observation as { error?: string }).error ?? 'completed',
      (error: Error) => error.message,
    );
    race.unsubscribe();
    expect(raced).toMatch(/(exec runtime failed to start|exec runtime ended unexpectedly): (protocol violation: unknown message type "bogus"|frames lost in transit)/);
    tried.push('agent host: a forged frame racing the handshake');
    await runtime.shutdown();
    expect(host.exitCode).toBeNull();
  });
});
