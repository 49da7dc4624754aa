/**
 * A rogue runtime host over NATS: it answers placement with a valid signature (the agent host pins
 * no keys) and speaks the sealed runtime protocol with the package's own sealing and framing, then
 * floods the agent host with nested calls, notify texts and staged commits, breaks the protocol or
 * sends frames that do not open. The agent host holds its documented limits whatever arrives, fails
 * only the offending cell, and drops a runtime host that misbehaved from its placement (a
 * `runtime-host-dropped` event and a `SWITCHYARD_RUNTIME_HOST_DROPPED` warning): the next exec
 * places on another runtime host, or, with none, fails naming the drop. Every flood is bounded
 * (at most ~26 MB of frames); the honest runtime host runs in a child process.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createNatsRuntime, type NatsRuntime, type RuntimeHostDroppedEvent } from '@switchyard/code-mode-nats';
import type { CellHost, CellRuntimeEvent } from '@switchyard/protocol';
import { parseFrame } from '@switchyard/code-mode-runtime/protocol';
// The rogue speaks the real protocol: the package's own placement texts, sealing and framing.
import { deriveKeys, ephemeral, loadIdentity, seal, signed } from '../../../packages/code-mode-nats/src/seal.ts';
import { pingText, replyText, requestText } from '../../../packages/code-mode-nats/src/subjects.ts';
import { createNatsTransport, type NatsTransport } from '../../../packages/code-mode-nats/src/nats-transport.ts';
import { startNatsServer, type NatsServer } from '@switchyard/config/nats-server';
import { spawnRuntimeHost } from './nats-runtime-host';
import { until } from '@switchyard/test-helpers';
import { errorOf } from './helpers';

const LIMITS = { heapMb: 16, maxInFlightCalls: 64, maxOutputBytes: 1024 * 1024, maxStoredBytes: 4 * 1024 * 1024 };
const KB64 = 'n'.repeat(64 * 1024);
type Message = Record<string, unknown> & { t: string };

let server: NatsServer;
let honest: ChildProcess | undefined;
const closers: Array<() => Promise<unknown>> = [];
const warnings: Error[] = [];
const onWarning = (warning: Error) => void warnings.push(warning);

beforeAll(async () => {
  server = await startNatsServer();
  process.on('warning', onWarning);
}, 60_000);
afterAll(async () => {
  process.off('warning', onWarning);
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  honest?.kill('SIGKILL');
  await server?.stop();
});

/** A rogue runtime host `id` on subject prefix `prefix`: each cell's source names its misbehaviour. */
async function rogueHost(prefix: string, id: string) {
  const nc: NatsConnection = await connect({ servers: server.url });
  closers.push(() => nc.close());
  const me = loadIdentity(undefined, undefined, 'rogue');
  const connections = new Map<string, { transport: NatsTransport; subject: string; agentKey: Buffer }>();
  const log = { refused: 0, snapshots: [] as unknown[], placements: 0 };
  let call = 0;
  nc.subscribe(`${prefix}.place.*`, {
    queue: 'switchyard-runtime-hosts',
    callback: (_error, msg) => {
      log.placements++;
      const agent = msg.subject.split('.').at(-1)!;
      const request = JSON.parse(msg.string());
      const own = ephemeral();
      const reply = { v: 3 as const, ok: true as const, runtime: id, name: id, conn: request.conn, sessions: 0, maxSessions: 100, key: me.publicKey, eph: own.public };
      const text = replyText(agent, request.eph, reply);
      const keys = deriveKeys(own, request.eph, `${requestText(agent, request)}\n${text}`)!;
      const subject = `${prefix}.agent.${agent}.c.${id}.${request.conn}`;
      const transport = createNatsTransport({ nc, subject, maxFrameBytes: 64 * 1024 * 1024, peer: `agent host ${agent}`, keys: { send: keys.toAgent, receive: keys.toRuntime } });
      const send = (messages: Message[]) => transport.send(JSON.stringify(messages));
      transport.onFrame((frame) => {
        for (const message of parseFrame(frame) as Message[]) {
          if (message.t === 'hello') send([{ t: 'hello', version: message.version, maxFrameBytes: 64 * 1024 * 1024, capabilities: [] }]);
          else if (message.t === 'open-session' || message.t === 'close-session' || message.t === 'ping') send([{ t: 'reply', id: message.id, ok: true }]);
          else if (message.t === 'create-cell') misbehave(message, send, subject);
          else if (message.t === 'call-result' && message.ok === false) log.refused++;
        }
      });
      connections.set(`${agent}.${request.conn}`, { transport, subject, agentKey: keys.toAgent });
      msg.respond(JSON.stringify({ ...reply, sig: signed(me, text) }));
    },
  });
  nc.subscribe(`${prefix}.rt.${id}.>`, {
    callback: (_error, msg) => {
      const [agent, conn, kind] = msg.subject.slice(`${prefix}.rt.${id}.`.length).split('.');
      if (kind === 'ping') return void msg.respond(`ok|${signed(me, pingText(agent!, id, msg.string().split(' ')[1]!, 'ok'))}`);
      connections.get(`${agent}.${conn}`)?.transport.deliver(msg.data);
    },
  });
  await nc.flush();

  function misbehave(message: Message, send: (messages: Message[]) => void, subject: string): void {
    const { id: request, session, cellId, source } = message as unknown as { id: number; session: string; cellId: string; source: string };
    log.snapshots.push(message.stored);
    const of = (t: string, extra: Record<string, unknown>) => ({ t, session, cellId, ...extra });
    const done = () => setTimeout(() => send([{ t: 'reply', id: request, ok: true, value: { kind: 'completed', cellId, items: [{ type: 'input_text', text: 'rogue' }], wallTimeMs: 1 } }]), 300);
    if (source === 'calls') send(Array.from({ length: 1000 }, () => of('call', { call: ++call, runtimeToolCallId: `tool-${call}`, tool: 'hang', input: {} })));
    if (source === 'notify') for (let frame = 0; frame < 8; frame++) send(Array.from({ length: 50 }, () => of('notify', { text: KB64 })));
    if (source === 'commit-flood') for (let frame = 0; frame < 8; frame++) send(Array.from({ length: 50 }, (_, i) => of('commit', { writes: [[`f${frame}-${i}`, JSON.stringify(KB64)]], more: true })));
    if (source === 'violation') return send([{ t: 'reply', id: 9_999, ok: true }]);
    // A frame sealed under a key of its own, with the next sequence number: it does not open.
    if (source === 'garbage') return void nc.publish(subject, seal(Buffer.alloc(32, 7), 0x46, 3, new TextEncoder().encode('[]')));
    done();
  }
  return log;
}

/** One rogue on prefix `rg` for the tests without an honest runtime host (each test's agent host is new to it). */
let shared: ReturnType<typeof rogueHost> | undefined;
const sharedRogue = () => (shared ??= rogueHost('rg', 'rogue2'));

/** An agent host `agentId` on `prefix` with the limits above; records nested calls, notify bytes, events and drops. */
function agentHost(prefix: string, agentId: string, attempts = 20) {
  const runtime: NatsRuntime = createNatsRuntime({ servers: server.url, subjectPrefix: prefix, agentId, placement: { attempts, timeoutMs: 5_000 }, ...LIMITS });
  closers.push(() => runtime.shutdown());
  const log = { started: 0, inFlight: 0, maxInFlight: 0, notifyBytes: 0, events: [] as CellRuntimeEvent[], drops: [] as RuntimeHostDroppedEvent[] };
  runtime.on('runtime-host-dropped', (event) => log.drops.push(event));
  const host: CellHost = {
    invokeTool: ({ signal }) => {
      log.started++;
      log.inFlight++;
      log.maxInFlight = Math.max(log.maxInFlight, log.inFlight);
      return new Promise((_, reject) => signal.addEventListener('abort', () => (log.inFlight--, reject('aborted'))));
    },
    notify: ({ text }) => void (log.notifyBytes += Buffer.byteLength(text)),
    cellClosed: () => {},
    runtimeEvent: (event) => void log.events.push(event),
  };
  const session = runtime.openSession(host);
  const cell = (source: string) => session.createCell({ source, tools: [{ name: 'hang', description: '', kind: 'function' }], yieldTimeMs: 30_000 }).then((created) => created.observation);
  return { runtime, log, cell };
}

describe('a rogue runtime host over NATS', () => {
  it('1,000 nested calls at once: at most maxInFlightCalls run, the rest are refused; the host is dropped and the next exec places on another runtime host', async () => {
    const rogue = await rogueHost('switchyard', 'rogue1');
    const agent = agentHost('switchyard', 'victim1');
    const flooded = await agent.cell('calls');
    // At most 64 calls were admitted (those started before the connection ended are aborted with
    // it, the rest never start); the 65th was refused with the limit, which dropped the host.
    await until(() => agent.log.inFlight === 0, 'the admitted calls aborted');
    expect(agent.log.started).toBeGreaterThan(0);
    expect(agent.log.started).toBeLessThanOrEqual(64);
    expect(agent.log.maxInFlight).toBeLessThanOrEqual(64);
    expect(errorOf(flooded)).toMatch(/^exec runtime ended unexpectedly: runtime host rogue1 was dropped from placement: exec nested call limit exceeded: the cell has 64 nested calls in flight, the limit is 64 \(maxInFlightCalls\)$/);
    expect(agent.log.drops).toEqual([
      expect.objectContaining({ type: 'runtime-host-dropped', runtime: 'rogue1', name: 'rogue1', cause: 'exec nested call limit exceeded: the cell has 64 nested calls in flight, the limit is 64 (maxInFlightCalls)', forMs: 600_000 }),
    ]);
    expect(warnings.some((warning) => (warning as { code?: string }).code === 'SWITCHYARD_RUNTIME_HOST_DROPPED' && /runtime host rogue1 \(rogue1\) was dropped from placement for agent host victim1/.test(warning.message))).toBe(true);
    // An honest runtime host joins the queue group; the rogue still answers placements and is refused.
    ({ host: honest } = await spawnRuntimeHost({ servers: server.url, name: 'honest' }));
    const placementsBefore = rogue.placements;
    for (let i = 0; i < 4; i++) expect((await agent.cell(`text('honest ' + (${i} + 1))`)).items).toEqual([{ type: 'input_text', text: `honest ${i + 1}` }]);
    expect(rogue.placements - placementsBefore).toBeLessThanOrEqual(20);
  }, 120_000);

  it('400 × 64 KB of notify: the agent host takes at most maxOutputBytes; the cell fails naming the limit; the host is dropped', async () => {
    await sharedRogue();
    const agent = agentHost('rg', 'victim2', 3);
    const flooded = await agent.cell('notify');
    expect(agent.log.notifyBytes).toBeLessThanOrEqual(LIMITS.maxOutputBytes);
    expect(errorOf(flooded)).toContain(`exec notify limit exceeded: the cell's notify texts passed ${LIMITS.maxOutputBytes} bytes (maxOutputBytes)`);
    expect(agent.log.drops.map((drop) => drop.cause)).toEqual([`exec notify limit exceeded: the cell's notify texts passed ${LIMITS.maxOutputBytes} bytes (maxOutputBytes)`]);
    // No other runtime host on this prefix: the next exec fails naming the drop, and nothing runs on the rogue.
    const refused = await agent.cell(`text('x')`).then(() => 'ran', (error: Error) => error.message);
    expect(refused).toMatch(/^exec runtime failed to start: no runtime host accepted the session after 3 placement request\(s\) on rg\.place\.victim2 \(.*runtime host rogue2 was dropped from placement \(exec notify limit exceeded/);
  }, 120_000);

  it('400 staged commit parts that never end: staging stops at maxStoredBytes, the cell fails, nothing is stored (an honest cell may store too much: no drop)', async () => {
    const rogue = await sharedRogue();
    const agent = agentHost('rg', 'victim3');
    const flooded = await agent.cell('commit-flood');
    expect(errorOf(flooded)).toBe(
      `exec stored values budget exceeded: the cell's writes in flight passed ${LIMITS.maxStoredBytes} bytes (maxStoredBytes); none of its writes were stored, earlier values are unchanged`,
    );
    expect((await agent.cell('read')).items).toEqual([{ type: 'input_text', text: 'rogue' }]);
    expect(rogue.snapshots.at(-1)).toEqual([]);
    expect(agent.log.drops).toEqual([]);
  }, 120_000);

  it('a protocol violation and a frame that does not open: each fails its cell with the cause and drops the host', async () => {
    await sharedRogue();
    const broken = agentHost('rg', 'victim4', 3);
    expect(errorOf(await broken.cell('violation'))).toBe('exec runtime ended unexpectedly: protocol violation: a reply to request 9999, which is not pending');
    expect(broken.log.drops.map((drop) => drop.cause)).toEqual(['protocol violation: a reply to request 9999, which is not pending']);
    const forged = agentHost('rg', 'victim5', 3);
    expect(errorOf(await forged.cell('garbage'))).toMatch(/^exec runtime ended unexpectedly: a frame from runtime host rogue2 did not open \(forged, corrupted or sealed for another placement\); 1 dropped$/);
    expect(forged.log.drops.map((drop) => drop.runtime)).toEqual(['rogue2']);
    const refused = await forged.cell(`text('x')`).then(() => 'ran', (error: Error) => error.message);
    expect(refused).toMatch(/runtime host rogue2 was dropped from placement \(a frame from runtime host rogue2 did not open/);
  }, 120_000);
});
