/**
 * The NATS boundary of Code Mode (`@switchyard/code-mode-nats`): a runtime host in its own process
 * and agent hosts here, on a real nats-server, attacked by a raw NATS client that knows the
 * protocol: hostile placement requests (unsigned, badly signed, malformed keys, floods), sealed
 * frames out of order, frames that do not open, oversized reassembly, frames for connections
 * nobody placed; and, against agent hosts, a bus peer that reads every subject and forges or
 * replays a runtime host's frames, and a rogue runtime host that answers placement. Each must end
 * only the placement it targets (with a clear cause) or be refused; nothing forged reaches a cell
 * or a tool, and the runtime host stays alive and serves.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nkeys, type NatsConnection } from '@nats-io/transport-node';
import { createNatsRuntime, serveRuntimeOverNats } from '@switchyard/code-mode-nats';
// The hostile client speaks the real protocol: the package's own sealing and placement texts.
import { deriveKeys, ephemeral, open, seal, signed, loadIdentity } from '../../../packages/code-mode-nats/src/seal.ts';
import { replyText, requestText } from '../../../packages/code-mode-nats/src/subjects.ts';
import type { NatsServer } from '@switchyard/config/nats-server';
import { startHostOverNats, stopHostOverNats } from './nats-runtime-host';
import { report } from '../src/profile';
import { until } from '@switchyard/test-helpers';

let server: NatsServer;
let host: ChildProcess;
let hostId = '';
let raw: NatsConnection;
const tried: string[] = [];
const targetKey = nkeys.createUser();
const targetSeed = new TextDecoder().decode(targetKey.getSeed());

beforeAll(async () => {
  ({ server, host, hostId, raw } = await startHostOverNats({ name: 'target', identity: { seed: targetSeed }, limits: { maxFrameBytes: 65536, maxConnections: 8 } }));
}, 60_000);
afterAll(async () => {
  await stopHostOverNats({ server, host, raw });
  report('nats boundary', `${tried.length} hostile inputs, runtime host alive and serving after each:\n  - ${tried.join('\n  - ')}`);
});

type Reply = { ok: boolean; error?: string; runtime?: string; conn?: string; key?: string; eph?: string; sig?: string; name?: string };
const place = async (agent: string, body: unknown) =>
  JSON.parse((await raw.request(`switchyard.place.${agent}`, typeof body === 'string' ? body : JSON.stringify(body), { timeout: 10_000 })).string()) as Reply;

const attacker = loadIdentity(undefined, undefined, 'test');
/** A placement request of agent `agent` signed as the protocol says, with `extra` fields over it. */
function signedRequest(agent: string, conn: string, extra: Record<string, unknown> = {}) {
  const own = ephemeral();
  const request = { v: 3 as const, conn, heartbeatMs: 1000, key: attacker.publicKey, eph: own.public, ...extra };
  return { own, request: { ...request, sig: signed(attacker, requestText(agent, request)) } };
}

/** Places connection `conn` for agent `agent` with a signed request; returns a sealed sender and what the host sends back, opened. */
async function placed(agent: string, conn: string) {
  const { own, request } = signedRequest(agent, conn);
  const reply = await place(agent, request);
  expect(reply).toMatchObject({ ok: true, runtime: hostId, conn, key: targetKey.getPublicKey() });
  const text = replyText(agent, request.eph, reply as never);
  const keys = deriveKeys(own, reply.eph, `${requestText(agent, request)}\n${text}`)!;
  const back: string[] = [];
  const sub = raw.subscribe(`switchyard.agent.${agent}.c.${hostId}.${conn}`, {
    callback: (_error, msg) => {
      const opened = open(keys.toAgent, msg.data);
      back.push(opened ? `${String.fromCharCode(opened.kind)}${opened.seq} ${new TextDecoder().decode(opened.body)}` : 'unopened');
    },
  });
  await raw.flush();
  let seq = 0;
  const subject = `switchyard.rt.${hostId}.${agent}.${conn}`;
  return {
    send: (frame: string, kind = 0x46, at = ++seq) => raw.publish(subject, seal(keys.toRuntime, kind, at, new TextEncoder().encode(frame))),
    sendRaw: (payload: string | Uint8Array) => raw.publish(subject, payload),
    back,
    done: () => sub.unsubscribe(),
  };
}

// the version this agent host speaks (2: durable cells)
const HELLO = JSON.stringify([{ t: 'hello', version: 2, maxFrameBytes: 65536 }]);

describe('hostile agent host against a runtime host', () => {
  it('declines malformed, unsigned and badly signed placement requests with a reason', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['not JSON', '{', /placement request is not JSON/],
      ['wrong version', { v: 1, conn: 'c1', heartbeatMs: 1000 }, /placement version 1 is not supported/],
      ['no connection id', { v: 3 }, /names no valid connection/],
      ['a connection id with subject syntax', { v: 3, conn: 'a.>' }, /names no valid connection/],
      ['a 65-character connection id', { v: 3, conn: 'c'.repeat(65) }, /names no valid connection/],
      ['an unsealed placement', { v: 3, conn: 'c1', heartbeatMs: 1000 }, /serves sealed placements only/],
      ['a signature by another key', { ...signedRequest('x', 'c1').request, key: nkeys.createUser().getPublicKey() }, /not signed by the key it names/],
      ['a signature over another agent id', signedRequest('y', 'c1').request, /not signed by the key it names/],
      ['a changed field under the signature', { ...signedRequest('x', 'c1').request, heartbeatMs: 5 }, /not signed by the key it names/],
      ['a malformed ephemeral key', signedRequest('x', 'c1', { eph: 'A'.repeat(43) }).request, /malformed ephemeral key/],
      ['a 512 KB body', { ...signedRequest('x', 'c1').request, pad: 'x'.repeat(512 * 1024) }, /^$/],
    ];
    for (const [name, body, reason] of cases) {
      const reply = await place('x', body);
      if (reason.source === '^$') expect(reply.ok).toBe(true);
      else expect(reply).toMatchObject({ ok: false, error: expect.stringMatching(reason) });
      tried.push(`placement: ${name}`);
    }
  });

  it('bounds connections: 300 placements without a hello keep 256 awaited (the oldest evicted); served connections stop at maxConnections', async () => {
    const hello = async (agent: string, conn: string) => {
      const peer = await placed(agent, conn).catch(() => undefined);
      return peer;
    };
    for (let i = 0; i < 300; i++) expect((await place('flood', signedRequest('flood', `f${i}`).request)).ok).toBe(true);
    // f0 was evicted: its hello (sealed with keys nobody kept) is dropped without an answer.
    const back: string[] = [];
    const sub = raw.subscribe(`switchyard.agent.flood.c.${hostId}.f0`, { callback: (_error, msg) => void back.push(msg.string()) });
    raw.publish(`switchyard.rt.${hostId}.flood.f0`, 'F1 ' + HELLO);
    await raw.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(back).toEqual([]);
    sub.unsubscribe();
    tried.push('placement flood (300 signed placements of one agent host without a hello)');
    const open: Array<Awaited<ReturnType<typeof placed>>> = [];
    for (let i = 0; i < 8; i++) {
      const peer = (await hello('many', `g${i}`))!;
      peer.send(HELLO);
      await until(() => peer.back.length > 0, 'hello');
      expect(peer.back[0]).toMatch(/^F1 \[\{"t":"hello","version":2,/);
      open.push(peer);
    }
    expect(await place('other', signedRequest('other', 'o1').request)).toMatchObject({ ok: false, error: 'runtime host is full (8 connections)' });
    for (const peer of open) {
      peer.send('done', 0x58);
      peer.done();
    }
    await raw.flush();
    const end = Date.now() + 15_000;
    while (!(await place('other', signedRequest('other', 'o1').request)).ok) {
      if (Date.now() > end) throw new Error('closed connections did not free the room');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    tried.push('connection flood (9 served connections against maxConnections 8)');
  });

  it('ends a sealed connection on a frame that does not open, a gap, a replay, an oversized reassembly — each with its cause', async () => {
    const otherKey = randomBytes(32);
    const cases: Array<[string, (peer: Awaited<ReturnType<typeof placed>>) => void, RegExp]> = [
      ['a clear envelope (the old protocol)', (peer) => peer.sendRaw('F1 ' + HELLO), /^X1 a frame from agent host x did not open \(forged, corrupted or sealed for another placement\); 1 dropped$/],
      ['a frame sealed with another key', (peer) => peer.sendRaw(seal(otherKey, 0x46, 1, new TextEncoder().encode(HELLO))), /^X1 a frame from agent host x did not open/],
      ['a replay back to back', (peer) => { peer.send(HELLO, 0x46, 1); peer.send(HELLO, 0x46, 1); }, /^X\d a frame from agent host x was replayed \(expected frame 2, got 1\)$/],
      ['a sequence gap', (peer) => peer.send(HELLO, 0x46, 5), /^X1 frames lost in transit \(expected frame 1 from agent host x, got 5\)$/],
      ['a replayed frame', (peer) => { peer.send(HELLO, 0x46, 1); setTimeout(() => peer.send(HELLO, 0x46, 1), 300); }, /^X2 a frame from agent host x was replayed \(expected frame 2, got 1\)$/],
      ['chunks past maxFrameBytes', (peer) => { for (let i = 1; i <= 3; i++) peer.send('y'.repeat(30_000), 0x43); }, /^X1 protocol violation: a frame of more than 65536 bytes is over the limit of 65536 bytes$/],
      ['a first frame that is not hello', (peer) => peer.send(JSON.stringify([{ t: 'ping', id: 1 }])), /protocol violation: the first message must be hello/],
      ['a frame that is not JSON', (peer) => peer.send('[{'), /^X1 $/],
    ];
    let n = 0;
    for (const [name, attack, expected] of cases) {
      const peer = await placed('x', `k${++n}`);
      attack(peer);
      await until(() => peer.back.some((text) => expected.test(text)), `${name} (got ${JSON.stringify(peer.back)})`);
      peer.done();
      tried.push(`frames: ${name}`);
    }
  });

  it('drops frames and answers heartbeats "unknown" for connections nobody placed', async () => {
    raw.publish(`switchyard.rt.${hostId}.x.neverplaced`, 'F1 ' + HELLO);
    const ping = await raw.request(`switchyard.rt.${hostId}.x._.ping`, 'neverplaced', { timeout: 10_000 });
    expect(ping.string()).toBe('unknown neverplaced');
    tried.push('frames and heartbeats for an unplaced connection');
  });
});

describe('a bus peer against an agent host (it may read and publish every subject)', () => {
  it('reads only ciphertext; a forged or replayed "runtime host" frame runs no tool and ends only its own connection, whose cell is replayed on a fresh placement; the next exec places afresh', async () => {
    const SECRET = 'prod-token-51f0';
    const deploys: unknown[] = [];
    // This bus has no per-runtime-host permissions: the forger is a bus peer, not the runtime host,
    // so the agent host keeps using it (dropMs 0; the deployment's permissions make such frames the
    // runtime host's own, see nats-rogue-host.test.ts).
    const runtime = createNatsRuntime({ servers: server.url, agentId: 'victim', trustedRuntimeHosts: [targetKey.getPublicKey()], placement: { attempts: 10, dropMs: 0 } });
    let releaseB!: () => void;
    const gateB = new Promise<void>((resolve) => (releaseB = resolve));
    let waitingB = false;
    const invokeTool = async (request: { tool: string; input: unknown }) => {
      if (request.tool === 'deploy') return deploys.push(request.input), { secret: SECRET };
      waitingB = true;
      return gateB.then(() => 'b done');
    };
    const eventsA: Array<{ type: string; cause?: string }> = [];
    const hostOf = (events?: typeof eventsA) => ({ invokeTool, notify: () => {}, cellClosed: () => {}, runtimeEvent: (event: { type: string }) => events?.push(event) }) as never;
    const sessionA = runtime.openSession(hostOf(eventsA));
    const sessionB = runtime.openSession(hostOf());
    const captured: Array<{ subject: string; data: Uint8Array }> = [];
    const sniff = raw.subscribe('switchyard.>', { callback: (_error, msg) => void captured.push({ subject: msg.subject, data: msg.data.slice() }) });
    await raw.flush();
    const tools = [{ name: 'deploy', description: 'Deploys.', kind: 'function' as const }, { name: 'wait_b', description: '', kind: 'function' as const }];
    const first = await sessionA.createCell({ source: `const r = await tools.deploy({ env: 'staging' }); text('deployed ' + r.secret);`, tools, yieldTimeMs: 60_000 });
    expect(first.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: `deployed ${SECRET}` }] });
    expect(deploys).toEqual([{ env: 'staging' }]);
    const toVictim = (from: number) => captured.slice(from).filter(({ subject }) => subject.startsWith('switchyard.agent.victim.c.'));
    const connA = toVictim(0)[0].subject.split('.').at(-1)!;
    // Session B holds a running cell on the same runtime host throughout.
    let mark = captured.length;
    const runningB = sessionB.createCell({ source: `text(await tools.wait_b({}))`, tools, yieldTimeMs: 60_000 });
    await until(() => waitingB, "session B's call");
    const connB = toVictim(mark).find(({ subject }) => !subject.endsWith(`.${connA}`))!.subject.split('.').at(-1)!;
    // Everything on the bus: no source, tool name, input or secret can be read.
    const wire = captured.map(({ data }) => new TextDecoder().decode(data)).join('\n');
    for (const clear of [SECRET, 'tools.deploy', '"staging"', 'Deploys.', 'create-cell', '"t":"call"']) expect(wire).not.toContain(clear);
    tried.push('agent host: a bus peer reads every frame of a placement (ciphertext only)');

    // The runtime host's frames to session A's connection: replay its `call` frame (the one that ran deploy).
    const framesA = toVictim(0).filter(({ subject }) => subject.endsWith(`.${connA}`));
    const second = sessionA.createCell({ source: `await new Promise((r) => setTimeout(r, 3000)); text('second done')`, tools, yieldTimeMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const frame of framesA) raw.publish(frame.subject, frame.data);
    const replayed = await second;
    // The connection ended (the replayed frames ran nothing); the cell was replayed on a new one and completed.
    expect(replayed.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'second done' }] });
    expect(eventsA).toMatchObject([
      { type: 'runtime-lost', cause: expect.stringMatching(/^a frame from runtime host target was replayed \(expected frame \d+, got 1\)$/) },
      { type: 'cell-resumed' },
    ]);
    expect(deploys).toEqual([{ env: 'staging' }]);
    tried.push("agent host: a replay of the runtime host's sealed frames (its deploy call among them)");

    // A forged frame in clear with a plausible next sequence number, and one sealed under a key of its own.
    mark = captured.length;
    const third = sessionA.createCell({ source: `await new Promise((r) => setTimeout(r, 3000)); text('third done')`, tools, yieldTimeMs: 60_000 });
    const fresh = () => toVictim(mark).find(({ subject }) => !subject.endsWith(`.${connA}`) && !subject.endsWith(`.${connB}`));
    await until(() => fresh() !== undefined, "session A's new placement");
    const connA2 = fresh()!.subject;
    const forgedCall = JSON.stringify([{ t: 'call', call: 1, session: 's1', cellId: 'x', tool: 'deploy', input: { env: 'prod', by: 'attacker' } }]);
    raw.publish(connA2, `F3 ${forgedCall}`);
    const forged = await third;
    expect(forged.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'third done' }] });
    expect(eventsA.slice(2)).toMatchObject([
      { type: 'runtime-lost', cause: expect.stringMatching(/^a frame from runtime host target did not open \(forged, corrupted or sealed for another placement\); 1 dropped$/) },
      { type: 'cell-resumed' },
    ]);
    expect(deploys).toEqual([{ env: 'staging' }]);
    tried.push('agent host: a forged frame with the next sequence number');

    // Session B never noticed; session A's next exec runs on a fresh placement.
    releaseB();
    expect((await runningB).observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'b done' }] });
    const next = await sessionA.createCell({ source: `text('fresh')`, tools, yieldTimeMs: 60_000 });
    expect(next.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'fresh' }] });
    sniff.unsubscribe();
    await runtime.shutdown();
  }, 90_000);

  it('a bus peer answering heartbeats first ("unknown <conn>", unsigned) ends no placement: answers must carry the runtime host\'s signature over the nonce', async () => {
    const runtime = createNatsRuntime({ servers: server.url, agentId: 'beaten', trustedRuntimeHosts: [targetKey.getPublicKey()], heartbeat: { intervalMs: 200 } });
    let forged = 0;
    const forger = raw.subscribe(`switchyard.rt.${hostId}.beaten._.ping`, {
      callback: (_error, msg) => {
        forged++;
        msg.respond(`unknown ${msg.string().split(' ')[0]}`);
      },
    });
    await raw.flush();
    const session = runtime.openSession({ invokeTool: async () => 1, notify: () => {}, cellClosed: () => {} });
    const { observation } = await session.createCell({ source: `await new Promise((r) => setTimeout(r, 3000)); text('alive')`, tools: [], yieldTimeMs: 60_000 });
    expect(forged).toBeGreaterThan(3);
    expect(observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'alive' }] });
    forger.unsubscribe();
    await runtime.shutdown();
    tried.push('agent host: forged heartbeat answers ("unknown <conn>") from a bus peer');
  }, 60_000);

  it('a rogue runtime host answering placement is refused (a key the agent host does not pin); junk replies too; cells run on the trusted host', async () => {
    const rogue = await serveRuntimeOverNats({ servers: server.url, name: 'rogue' });
    const junk = raw.subscribe('switchyard.place.*', { queue: 'switchyard-runtime-hosts', callback: (_error, msg) => void msg.respond('{"v":3,"ok":true,"runtime":"../.."}') });
    await raw.flush();
    const runtime = createNatsRuntime({ servers: server.url, agentId: 'pinned', trustedRuntimeHosts: targetKey.getPublicKey(), placement: { attempts: 60 } });
    const outputs: unknown[] = [];
    for (let i = 0; i < 6; i++) {
      const session = runtime.openSession({ invokeTool: async () => 1, notify: () => {}, cellClosed: () => {} });
      outputs.push((await session.createCell({ source: `text('on ' + ${i})`, tools: [], yieldTimeMs: 60_000 })).observation);
      await session.shutdown();
    }
    for (const [i, observation] of outputs.entries()) expect(observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: `on ${i}` }] });
    expect(rogue.stats().connections).toBe(0);
    junk.unsubscribe();
    await runtime.shutdown();
    // An agent host pinning a key no host has: every answer is refused, the cell fails naming why, nothing runs.
    const strict = createNatsRuntime({ servers: server.url, agentId: 'strict', trustedRuntimeHosts: [nkeys.createUser().getPublicKey()], placement: { attempts: 4 } });
    const lonely = strict.openSession({ invokeTool: async () => 1, notify: () => {}, cellClosed: () => {} });
    const refused = await lonely.createCell({ source: `text('x')`, tools: [], yieldTimeMs: 60_000 }).then(() => 'ran', (error: Error) => error.message);
    expect(refused).toMatch(/^exec runtime failed to start: no runtime host accepted the session after 4 placement request\(s\) on switchyard\.place\.strict \(runtime host (rogue|target) signed with a key this agent host does not trust \(U[A-Z2-7]{55}\)/);
    await strict.shutdown();
    await rogue.close();
    tried.push('agent host: a rogue runtime host and junk placement replies in the queue group');
  }, 120_000);
});
