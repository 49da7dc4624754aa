import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { encodeStoreRecord } from '@switchyard/kit/internal';
import type { SessionStore } from '@switchyard/protocol';
import { createSession, createSqliteStore } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { createNatsSessionStore } from '@switchyard/code-mode-nats';
import { startNatsServer, type NatsServer } from '@switchyard/config/nats-server';
import { report } from '../src/profile';
import { say } from './helpers';

// Bad records in a real SQLite file and a real NATS JetStream bucket: each attack damages one
// session's records; its resume must fail with the documented code naming the session, its
// records must stay as they were (nothing repaired or dropped on read), and a bystander session of
// the same store must resume. A store that fails mid-write must leave the last good version.

/** node:sqlite, typed here (the Node types in use predate it). */
interface DatabaseSync {
  prepare(sql: string): { run(...parameters: unknown[]): unknown; all(...parameters: unknown[]): unknown[] };
  close(): void;
}
const { DatabaseSync } = process.getBuiltinModule('node:sqlite') as { DatabaseSync: new (path: string) => DatabaseSync };

const dir = mkdtempSync(join(tmpdir(), 'switchyard-store-records-'));
let nats: NatsServer;
beforeAll(async () => {
  nats = await startNatsServer(`jetstream { store_dir: "${join(dir, 'js')}" }`);
});
afterAll(async () => {
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Two sessions with two turns each, written through real sessions, then the store closed. */
async function seed(store: SessionStore & { close(): Promise<void> }, ids: string[]): Promise<void> {
  for (const id of ids) {
    const session = createSession({ tools: [], store, sessionId: id });
    for (const turn of [1, 2]) await session.runTurn({ model: createScriptedModel([[say(`${id} answer ${turn}`)]]), input: `${id} question ${turn}` });
    await session.shutdown();
  }
  await store.close();
}

/** Opens `id` from a fresh store: the load's error (or undefined) and the history it got. */
async function resume(store: SessionStore & { close(): Promise<void> }, id: string): Promise<{ error?: { code: string; message: string }; history: number }> {
  const session = createSession({ tools: [], store, sessionId: id });
  const error = await session.ready.then(
    () => undefined,
    (caught: { code: string; message: string }) => caught,
  );
  const history = session.history.length;
  await session.shutdown();
  await store.close();
  return { error, history };
}

const SQLITE_ATTACKS: Array<{ name: string; sql: (db: DatabaseSync, id: string) => void; code: string; message: RegExp }> = [
  { name: 'state record cut short', sql: (db, id) => db.prepare('UPDATE switchyard_sessions SET state = substr(state, 1, length(state) - 9) WHERE id = ?').run(id), code: 'STORE_CORRUPT', message: /the state record is corrupted: its contents .* do not match its checksum/ },
  { name: 'one byte of a history item changed (still JSON)', sql: (db, id) => db.prepare("UPDATE switchyard_history SET item = replace(item, 'answer', 'answeR') WHERE session = ? AND idx = 1").run(id), code: 'STORE_CORRUPT', message: /history item 1 is corrupted/ },
  { name: 'a history row deleted', sql: (db, id) => db.prepare('DELETE FROM switchyard_history WHERE session = ? AND idx = 2').run(id), code: 'STORE_CORRUPT', message: /history item 2 is missing \(the session has 4\)/ },
  { name: 'a record of a future schema version', sql: (db, id) => db.prepare("UPDATE switchyard_history SET item = '9' || substr(item, 2) WHERE session = ? AND idx = 0").run(id), code: 'STORE_VERSION', message: /history item 0 has record schema version 9, newer than this library reads \(1\)/ },
  { name: 'a state document of a future version (sealed correctly)', sql: (db, id) => db.prepare('UPDATE switchyard_sessions SET state = ? WHERE id = ?').run(encodeStoreRecord({ format: 'switchyard.session-state', version: 99 }), id), code: 'STORE_VERSION', message: /its state document has version 99/ },
  { name: 'a state document that is not one (sealed correctly)', sql: (db, id) => db.prepare('UPDATE switchyard_sessions SET state = ? WHERE id = ?').run(encodeStoreRecord(42), id), code: 'STORE_CORRUPT', message: /its state document is not a switchyard.session-state document/ },
  { name: 'a history item that is not an item (sealed correctly)', sql: (db, id) => db.prepare('UPDATE switchyard_history SET item = ? WHERE session = ? AND idx = 0').run(encodeStoreRecord('x'), id), code: 'STORE_CORRUPT', message: /history item 0 is not an item/ },
  { name: 'a lease record of garbage', sql: (db, id) => db.prepare("UPDATE switchyard_sessions SET lease = 'garbage' WHERE id = ?").run(id), code: 'STORE_CORRUPT', message: /the lease record is not a sealed record/ },
  { name: 'a negative history length', sql: (db, id) => db.prepare('UPDATE switchyard_sessions SET history_length = -1 WHERE id = ?').run(id), code: 'STORE_CORRUPT', message: /its session row is corrupted/ },
];

describe('bad records in a SQLite file', () => {
  for (const attack of SQLITE_ATTACKS) {
    it(`${attack.name}: ${attack.code} for that session, its records untouched, the bystander resumes`, async () => {
      const path = join(dir, `${attack.name.replace(/\W+/g, '-')}.db`);
      await seed(createSqliteStore(path), ['victim', 'bystander']);
      const db = new DatabaseSync(path);
      attack.sql(db, 'victim');
      // the session's data (its lease is taken and given back by the attempt)
      const dump = () => JSON.stringify([db.prepare("SELECT version, state, history_length, journal_length FROM switchyard_sessions WHERE id = 'victim'").all(), db.prepare("SELECT * FROM switchyard_history WHERE session = 'victim'").all()]);
      const before = dump();
      const victim = await resume(createSqliteStore(path), 'victim');
      expect(victim.error?.code).toBe(attack.code);
      expect(victim.error?.message).toMatch(/^session victim: /);
      expect(victim.error?.message).toMatch(attack.message);
      // a failed load repairs, drops and overwrites nothing
      expect(dump()).toBe(before);
      db.close();
      const bystander = await resume(createSqliteStore(path), 'bystander');
      expect(bystander).toEqual({ error: undefined, history: 4 });
    });
  }

  it('a store that fails mid-write: the turn fails STORE_FAILED naming the session, the last good version loads', async () => {
    const path = join(dir, 'mid-write.db');
    const inner = createSqliteStore(path);
    let commits = 0;
    const failing: SessionStore = { lease: inner.lease, load: inner.load, commit: (id, commit) => (++commits > 3 ? Promise.reject(new Error('I/O error: disk detached')) : inner.commit(id, commit)) };
    const session = createSession({ tools: [], store: failing, sessionId: 'flaky' });
    await session.runTurn({ model: createScriptedModel([[say('kept')]]), input: 'first' });
    commits = 100;
    await expect(session.runTurn({ model: createScriptedModel([[say('lost')]]), input: 'second' })).rejects.toMatchObject({ code: 'STORE_FAILED', message: 'session flaky: the store failed: I/O error: disk detached' });
    await session.shutdown();
    await inner.close();
    const reread = createSession({ tools: [], store: createSqliteStore(path), sessionId: 'flaky', storeOptions: { leaseWaitMs: 60_000 } });
    await reread.ready;
    expect(reread.history.map((item) => (item as { content?: string }).content)).toEqual(['first', 'kept']);
    await reread.shutdown();
    report('session store records', `SQLite: ${SQLITE_ATTACKS.length} damaged records each failed its session only with its code, nothing repaired on read; a failing commit kept the last good version`);
  }, 120_000);
});

describe('bad records in a NATS JetStream bucket', () => {
  async function withKv<T>(bucket: string, body: (kv: KV) => Promise<T>): Promise<T> {
    const nc = await connect({ servers: nats.url });
    try {
      return await body(await new Kvm(nc).open(bucket));
    } finally {
      await nc.drain();
    }
  }
  const head = (id: string) => `${Buffer.from(id).toString('base64url')}.head`;
  const attacks: Array<{ name: string; damage: (kv: KV) => Promise<void>; code: string; message: RegExp }> = [
    { name: 'head cut short', damage: async (kv) => void (await kv.put(head('victim'), (await kv.get(head('victim')))!.string().slice(0, -4))), code: 'STORE_CORRUPT', message: /the head record is corrupted/ },
    {
      name: 'a history segment deleted',
      damage: async (kv) => {
        const record = JSON.parse((await kv.get(head('victim')))!.string().split(' ').slice(2).join(' ')) as { history: Array<{ key: string }> };
        await kv.delete(record.history[0].key);
      },
      code: 'STORE_CORRUPT',
      message: /history segment 0 is missing/,
    },
    { name: 'a head of a future schema version', damage: async (kv) => void (await kv.put(head('victim'), `7${(await kv.get(head('victim')))!.string().slice(1)}`)), code: 'STORE_VERSION', message: /has record schema version 7/ },
  ];
  for (const attack of attacks) {
    it(`${attack.name}: ${attack.code} for that session, the bystander resumes`, async () => {
      const bucket = `records-${attack.name.replace(/\W+/g, '-')}`;
      await seed(createNatsSessionStore({ servers: nats.url, bucket }), ['victim', 'bystander']);
      await withKv(bucket, attack.damage);
      const victim = await resume(createNatsSessionStore({ servers: nats.url, bucket }), 'victim');
      expect(victim.error?.code).toBe(attack.code);
      expect(victim.error?.message).toMatch(/^session victim: /);
      expect(victim.error?.message).toMatch(attack.message);
      expect(await resume(createNatsSessionStore({ servers: nats.url, bucket }), 'bystander')).toEqual({ error: undefined, history: 4 });
    });
  }
});
