/**
 * What sealing promises on the bus (`@switchyard/code-mode-nats`, a real nats-server, runtime
 * hosts in their own processes): a runtime host with `sealing: true` serves sealed placements only,
 * whatever a request carries beside a signature; and an eavesdropper that reads every subject
 * learns the size class of a frame, never its exact length.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, nkeys, type NatsConnection } from '@nats-io/transport-node';
import { createNatsRuntime } from '@switchyard/code-mode-nats';
// The hostile client speaks the real protocol: the package's own signing and placement texts.
import { signed, loadIdentity } from '../../../packages/code-mode-nats/src/seal.ts';
import { PLACEMENT_VERSION, requestText } from '../../../packages/code-mode-nats/src/subjects.ts';
import { startNatsServer, type NatsServer } from '@switchyard/config/nats-server';
import { spawnRuntimeHost } from './nats-runtime-host';
import { report } from '../src/profile';

let server: NatsServer;
const hosts: ChildProcess[] = [];
let raw: NatsConnection;
const hostKey = nkeys.createUser();
const hostSeed = new TextDecoder().decode(hostKey.getSeed());

beforeAll(async () => {
  server = await startNatsServer();
  raw = await connect({ servers: server.url, inboxPrefix: 'switchyard.agent.x.inbox' });
}, 60_000);
afterAll(async () => {
  await raw?.close();
  for (const host of hosts) host.kill('SIGKILL');
  await server?.stop();
});

type Reply = { ok: boolean; error?: string; eph?: string };
const placeUnder = async (prefix: string, agent: string, body: unknown) =>
  JSON.parse((await raw.request(`${prefix}.place.${agent}`, JSON.stringify(body), { timeout: 10_000 })).string()) as Reply;

const attacker = loadIdentity(undefined, undefined, 'test');
/** A placement request signed by its key, as the protocol says, but carrying no ephemeral key: nothing to seal frames with. */
function signedWithoutEphemeral(agent: string, conn: string) {
  const request = { v: PLACEMENT_VERSION, conn, heartbeatMs: 1000, key: attacker.publicKey };
  return { ...request, sig: signed(attacker, requestText(agent, request as never)) };
}

describe('sealing: true serves sealed placements only (issue 47, row 10)', () => {
  it('declines a signed placement without an ephemeral key; the same request is served where sealing is off (control)', async () => {
    const sealed = await spawnRuntimeHost({ servers: server.url, subjectPrefix: 'sealed', name: 'sealed', identity: { seed: hostSeed } });
    const clear = await spawnRuntimeHost({ servers: server.url, subjectPrefix: 'clear', name: 'clear', identity: { seed: hostSeed }, sealing: false });
    hosts.push(sealed.host, clear.host);

    const refused = await placeUnder('sealed', 'x', signedWithoutEphemeral('x', 'c1'));
    expect(refused).toMatchObject({ ok: false, error: expect.stringMatching(/serves sealed placements only/) });
    expect(refused.eph).toBeUndefined();
    // Control: the request is well formed and correctly signed; a host without sealing serves it,
    // which is what a sealing host did before (its frames then travelled in clear).
    const served = await placeUnder('clear', 'x', signedWithoutEphemeral('x', 'c1'));
    expect(served).toMatchObject({ ok: true });
    report('nats sealing', `a signed placement without an ephemeral key: declined by sealing: true ("${refused.error}"), served by sealing: false (control)`);
  }, 60_000);
});

/** Sizes of the frame messages (not heartbeats) on the bus while `run` runs, smallest first. */
async function frameSizes(run: () => Promise<unknown>): Promise<number[]> {
  const sizes: number[] = [];
  const sniff = raw.subscribe('pad.>', {
    callback: (_error, msg) => {
      const parts = msg.subject.split('.');
      // frames: pad.rt.<runtime>.<agent>.<conn> and pad.agent.<agent>.c.<runtime>.<conn>
      const frame = (parts[1] === 'rt' && parts.length === 5 && parts[4] !== '_') || (parts[1] === 'agent' && parts[3] === 'c');
      if (frame) sizes.push(msg.data.length);
    },
  });
  await raw.flush();
  await run();
  // the frames that follow a cell's answer (its closing) arrive after it
  await new Promise((resolve) => setTimeout(resolve, 300));
  await raw.flush();
  sniff.unsubscribe();
  return sizes.sort((a, b) => a - b);
}

/**
 * The documented size classes, written out again here (not imported): 512 bytes, then powers of
 * two and the halfway points between them. A sealed message adds its clear sequence number (8)
 * and tag (16) to its class.
 */
function isSealedClass(size: number): boolean {
  const sealed = size - 8 - 16;
  for (let power = 512; power <= 1 << 20; power *= 2) if (sealed === power || sealed === power + power / 2) return true;
  return false;
}

describe('an eavesdropper sees size classes, not lengths (issue 47: pad sealed frames)', () => {
  it('9 cells whose sources and results are 600 to 640 characters look the same on the bus; 4,600 characters show (control)', async () => {
    const { host } = await spawnRuntimeHost({ servers: server.url, subjectPrefix: 'pad', name: 'pad', identity: { seed: hostSeed } });
    hosts.push(host);
    const runtime = createNatsRuntime({ servers: server.url, subjectPrefix: 'pad', agentId: 'listener', trustedRuntimeHosts: [hostKey.getPublicKey()], heartbeat: { intervalMs: 60_000 } });
    const session = runtime.openSession({ invokeTool: async () => 1, notify: () => {}, cellClosed: () => {} });
    // The first cell places the session; the measured cells reuse its connection.
    await session.createCell({ source: `text('warm')`, tools: [], yieldTimeMs: 60_000 });
    const cell = (length: number) => () => session.createCell({ source: `text(${JSON.stringify('s'.repeat(length))})`, tools: [], yieldTimeMs: 60_000 });
    const patterns = new Map<string, number[]>();
    const seen: number[] = [];
    for (let length = 600; length <= 640; length += 5) {
      const sizes = await frameSizes(cell(length));
      seen.push(...sizes);
      // how many frames of the smallest class fall in a cell's window is timing (acks, the closing)
      const key = sizes.filter((size) => size > sizes[0]).join(',');
      patterns.set(key, [...(patterns.get(key) ?? []), length]);
    }
    const larger = await frameSizes(cell(4_600));
    await session.shutdown();
    await runtime.shutdown();

    // Every frame on the bus is a size class; lengths 40 characters apart fall in at most two.
    expect(seen.filter((size) => !isSealedClass(size))).toEqual([]);
    expect(patterns.size).toBeLessThanOrEqual(2);
    // Control: the measurement sees a real difference (the same cell, 4,000 characters longer).
    const [base] = patterns.keys();
    expect(larger.filter((size) => size > larger[0]).join(',')).not.toBe(base);
    report('nats sealing', `frame sizes seen by an eavesdropper for 9 cells of 600…640 characters: ${[...patterns.keys()].map((key) => `[${key}]`).join(' ')}; 4,600 characters: [${larger.join(',')}] (control)`);
  }, 60_000);
});
