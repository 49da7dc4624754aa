import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import type { ResponseItem, SessionStore } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { SESSION_STORE_CHECKS, createScriptedModel } from '@switchyard/session/testing';
import { createNatsSessionStore } from '../src/index';
import { startNatsServer, type NatsServer } from '@switchyard/config/nats-server';
import { say } from '@switchyard/test-helpers';

// The NATS JetStream key-value SessionStore against a real `nats-server` with JetStream on disk.

let server: NatsServer;
const dir = mkdtempSync(join(tmpdir(), 'switchyard-nats-store-'));
const stores: Array<{ close(): Promise<void> }> = [];
beforeAll(async () => {
  server = await startNatsServer(`jetstream { store_dir: "${dir}" }`);
});
afterAll(async () => {
  for (const store of stores) await store.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});
function natsStore(bucket = 'sessions-test', extra: { inlineMaxBytes?: number } = {}) {
  const store = createNatsSessionStore({ servers: server.url, bucket, ...extra });
  stores.push(store);
  return store;
}
const roleLines = (items: readonly ResponseItem[]) => items.map((item) => `${(item as { role?: string }).role}:${String((item as { content?: unknown }).content)}`);

describe('createNatsSessionStore: the SessionStore checks on a real nats-server -js', () => {
  let store: SessionStore;
  beforeAll(() => {
    store = natsStore('checks');
  });
  for (const check of SESSION_STORE_CHECKS) it(check.name, () => check.run(store));

  it('a long history stays a few segments: 100 commits of one item each load back in order', async () => {
    const id = 'many-commits';
    const lease = await store.lease(id, { owner: 'a', ttlMs: 60_000 });
    for (let index = 0; index < 100; index++) await store.commit(id, { lease, history: { keep: index, append: [index] } });
    await store.commit(id, { lease, history: { keep: 50, append: ['cut'] } });
    const loaded = await store.load(id);
    expect(loaded?.history).toEqual([...Array.from({ length: 50 }, (_, index) => index), 'cut']);
  });
});

describe('createNatsSessionStore: options and bad records', () => {
  it('options are checked with CONFIG errors naming them', () => {
    expect(() => createNatsSessionStore({ servers: [] })).toThrow(/createNatsSessionStore option servers/);
    expect(() => createNatsSessionStore({ servers: 'nats://127.0.0.1:1', bucket: 'a.b' })).toThrow(/option bucket must be/);
    expect(() => createNatsSessionStore({ servers: 'nats://127.0.0.1:1', inlineMaxBytes: 10 })).toThrow(/option inlineMaxBytes must be a number >= 1024/);
  });

  it('a corrupted head fails that session’s load with STORE_CORRUPT naming it; the bucket’s other sessions load', async () => {
    const store = natsStore('corrupt');
    for (const id of ['fine', 'broken']) {
      const lease = await store.lease(id, { owner: 'a', ttlMs: 60_000 });
      await store.commit(id, { lease, state: { id }, history: { keep: 0, append: [id] } });
    }
    const nc = await connect({ servers: server.url });
    const kv = await new Kvm(nc).open('corrupt');
    const key = `${Buffer.from('broken').toString('base64url')}.head`;
    const text = (await kv.get(key))!.string();
    await kv.put(key, text.slice(0, -5));
    await nc.drain();
    const fresh = natsStore('corrupt');
    await expect(fresh.load('broken')).rejects.toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringMatching(/^session broken: the head record is corrupted/) });
    expect((await fresh.load('fine'))?.history).toEqual(['fine']);
  });

  it('a server that is not there fails with STORE_FAILED naming the session', async () => {
    const store = createNatsSessionStore({ servers: 'nats://127.0.0.1:1', connectTimeoutMs: 500 });
    stores.push(store);
    await expect(store.load('nowhere')).rejects.toMatchObject({ code: 'STORE_FAILED', message: expect.stringContaining('session nowhere: NATS failed') });
  });
});

describe('a session kept in NATS, resumed by another agent host', () => {
  it('host A runs a turn and stops renewing; host B (its own connection) takes the session over once the lease expires', async () => {
    const a = natsStore('fleet', { inlineMaxBytes: 1024 });
    const deaf: SessionStore = { lease: (id, request) => (request.renew ? Promise.resolve(request.renew) : a.lease(id, request)), load: a.load, commit: a.commit };
    const hostA = createSession({ tools: [], store: deaf, sessionId: 'user-42', storeOptions: { owner: 'agent-a', leaseTtlMs: 400 } });
    // an item past inlineMaxBytes goes through the object store
    await hostA.runTurn({ model: createScriptedModel([[say('a'.repeat(4000))]]), input: 'hello' });
    const hostB = createSession({ tools: [], store: natsStore('fleet'), sessionId: 'user-42', storeOptions: { owner: 'agent-b', leaseWaitMs: 10_000 } });
    await hostB.ready;
    expect(roleLines(hostB.history)).toEqual(['user:hello', `assistant:${'a'.repeat(4000)}`]);
    await hostB.runTurn({ model: createScriptedModel([[say('b')]]), input: 'again' });
    await expect(hostA.runTurn({ model: createScriptedModel([[say('zombie')]]), input: 'late' })).rejects.toMatchObject({ code: 'LEASE_HELD', message: expect.stringContaining('agent-b') });
    await hostB.shutdown();
    await hostA.shutdown();
    const reader = createSession({ tools: [], store: natsStore('fleet'), sessionId: 'user-42' });
    await reader.ready;
    expect(roleLines(reader.history)).toEqual(['user:hello', `assistant:${'a'.repeat(4000)}`, 'user:again', 'assistant:b']);
    await reader.shutdown();
  });
});
