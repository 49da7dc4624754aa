import { errorMessage, isSwitchyardError, type JsonValue, type SessionCommit, type SessionLease, type SessionLeaseRequest, type SessionStore, type StoredSession } from '@switchyard/protocol';
import { checkLease, decodeStoreRecord, encodeStoreRecord, grantLease, leaseFromJson, storeError } from '@switchyard/kit/internal';
import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { checkConnectOptions, config, connectNats, positive, type NatsConnectOptions } from './connection';

// A SessionStore for a fleet: NATS JetStream key-value (the engine the fleet already runs), with
// its object store for large values. One key per session, `<id>.head`, names everything of the
// session's current version and holds its lease; every write puts its data under new keys first
// and then swaps the head with a compare-and-set on its revision. A crash at any point leaves the
// old head (the previous version) or the new one; a process that lost the lease fails the swap.

/** Options of {@link createNatsSessionStore}. */
export interface NatsSessionStoreOptions extends Omit<NatsConnectOptions, 'subjectPrefix'> {
  /** The key-value bucket (created if missing; `<bucket>-large` is its object store). Default `switchyard-sessions`. */
  bucket?: string;
  /** Replicas of the bucket and the object store when they are created (1, 3 or 5). Default 1. */
  replicas?: number;
  /** Values larger than this (bytes of sealed JSON) go to the object store. Default 256 KiB (under NATS's 1 MiB payload). */
  inlineMaxBytes?: number;
}

/** What a head record names: the current version of one session. */
interface Head {
  version: number;
  lease: SessionLease | undefined;
  /** The key of the state document, if one was committed. */
  state: string | null;
  /** History segments, in order: a key and how many items it holds. */
  history: Array<{ key: string; count: number }>;
  /** Journal batches (each a list of entries), in order. */
  journal: string[];
}

const BUCKET = /^[A-Za-z0-9_-]{1,64}$/;
/** Keys of one session: the id in base64url (any session id is a valid key then). */
const sessionKey = (sessionId: string) => Buffer.from(sessionId, 'utf8').toString('base64url') || '_';
/** Segments kept before a commit merges the whole history into one. */
const MAX_SEGMENTS = 32;

function emptyHead(): Head {
  return { version: 0, lease: undefined, state: null, history: [], journal: [] };
}

function readHead(text: string, sessionId: string): Head {
  const value = decodeStoreRecord(text, sessionId, 'the head record') as Record<string, unknown>;
  const history = value?.history as Head['history'];
  const journal = value?.journal as string[];
  if (!Number.isInteger(value?.version) || !Array.isArray(history) || !Array.isArray(journal) || !(value.state === null || typeof value.state === 'string')) {
    throw storeError('STORE_CORRUPT', sessionId, 'its head record is corrupted (a field is missing)');
  }
  if (!history.every((segment) => typeof segment?.key === 'string' && Number.isInteger(segment.count)) || !journal.every((key) => typeof key === 'string')) {
    throw storeError('STORE_CORRUPT', sessionId, 'its head record is corrupted (a segment is malformed)');
  }
  return { version: value.version as number, lease: leaseFromJson(value.lease as JsonValue, sessionId), state: value.state as string | null, history, journal };
}

/** True for the compare-and-set's refusal: the head moved under us (or exists when we created it). */
function isWrongSequence(error: unknown): boolean {
  const text = errorMessage(error);
  return /wrong last sequence|10071|key exists/i.test(text);
}

/**
 * A `SessionStore` on NATS JetStream key-value, for agent hosts of a fleet: any host may resume a
 * session another one ran (once its lease expired), every commit is a compare-and-set of the
 * session's head key. Connects on first use (`servers`, `auth`, `tls` as the runtime's options);
 * creates the bucket when missing. A value over `inlineMaxBytes` goes to the bucket's object store.
 */
// long-function: a factory whose returned object literal is the store (lease, load, commit, delete, close over one connection); each method is short, the split by method is left to the house issue
export function createNatsSessionStore(options: NatsSessionStoreOptions): SessionStore & { close(): Promise<void> } {
  checkConnectOptions({ ...options, subjectPrefix: undefined }, 'createNatsSessionStore');
  const bucket = options.bucket ?? 'switchyard-sessions';
  if (typeof bucket !== 'string' || !BUCKET.test(bucket)) throw config(`createNatsSessionStore option bucket must be 1-64 characters of [A-Za-z0-9_-] (got ${JSON.stringify(options.bucket)})`);
  const replicas = options.replicas === undefined ? 1 : positive(options.replicas, 'createNatsSessionStore option replicas', 1);
  const inlineMax = options.inlineMaxBytes === undefined ? 256 * 1024 : positive(options.inlineMaxBytes, 'createNatsSessionStore option inlineMaxBytes', 1024);
  let opened: Promise<{ nc: NatsConnection; kv: KV; objects: ObjectStore }> | undefined;
  let closed = false;
  /** The head this process last read or wrote, per session, with its revision (the compare-and-set's expectation). */
  const heads = new Map<string, { head: Head; revision: number }>();

  const connectOnce = () =>
    (opened ??= (async () => {
      const nc = await connectNats(options, { name: `switchyard-session-store-${process.pid}`, who: 'createNatsSessionStore' });
      const kv = await new Kvm(nc).create(bucket, { history: 1, replicas });
      const objects = await new Objm(nc).create(`${bucket}-large`, { replicas });
      return { nc, kv, objects };
    })());

  /** Runs `body` with the connection; every failure that is not already a store error becomes `STORE_FAILED` naming the session. */
  async function withStore<T>(sessionId: string, body: (parts: { kv: KV; objects: ObjectStore }) => Promise<T>): Promise<T> {
    if (closed) throw storeError('STORE_FAILED', sessionId, 'the NATS session store is closed');
    try {
      return await body(await connectOnce());
    } catch (error) {
      if (isSwitchyardError(error)) throw error;
      throw storeError('STORE_FAILED', sessionId, `NATS failed: ${errorMessage(error)}`, error);
    }
  }

  async function putValue(parts: { kv: KV; objects: ObjectStore }, key: string, value: JsonValue): Promise<void> {
    const text = encodeStoreRecord({ v: value });
    if (Buffer.byteLength(text) <= inlineMax) {
      await parts.kv.put(key, text);
      return;
    }
    await parts.objects.putBlob({ name: key }, new TextEncoder().encode(encodeStoreRecord(value)));
    await parts.kv.put(key, encodeStoreRecord({ o: key }));
  }

  async function getValue(parts: { kv: KV; objects: ObjectStore }, key: string, sessionId: string, what: string): Promise<JsonValue> {
    const entry = await parts.kv.get(key);
    if (!entry || entry.operation !== 'PUT') throw storeError('STORE_CORRUPT', sessionId, `${what} is missing (key ${key})`);
    const wrapper = decodeStoreRecord(entry.string(), sessionId, what) as { v?: JsonValue; o?: string };
    if (typeof wrapper?.o === 'string') {
      const blob = await parts.objects.getBlob(wrapper.o);
      if (!blob) throw storeError('STORE_CORRUPT', sessionId, `${what} is missing (object ${wrapper.o})`);
      return decodeStoreRecord(new TextDecoder().decode(blob), sessionId, what);
    }
    if (!wrapper || !('v' in wrapper)) throw storeError('STORE_CORRUPT', sessionId, `${what} is not a value record`);
    return wrapper.v as JsonValue;
  }

  async function getHead(kv: KV, sessionId: string): Promise<{ head: Head; revision: number } | undefined> {
    const entry = await kv.get(`${sessionKey(sessionId)}.head`);
    if (!entry || entry.operation !== 'PUT') return undefined;
    const read = { head: readHead(entry.string(), sessionId), revision: entry.revision };
    heads.set(sessionId, read);
    return read;
  }

  /** Swaps the head (create when `revision` is 0); false when it moved under us. */
  async function swapHead(kv: KV, sessionId: string, head: Head, revision: number): Promise<boolean> {
    const key = `${sessionKey(sessionId)}.head`;
    const text = encodeStoreRecord(head as unknown as JsonValue);
    try {
      const written = revision === 0 ? await kv.create(key, text) : await kv.update(key, text, revision);
      heads.set(sessionId, { head, revision: written });
      return true;
    } catch (error) {
      if (isWrongSequence(error)) return false;
      throw error;
    }
  }

  /**
   * Checks the lease against the head (the one this process last saw, re-read when it moved) and
   * swaps in the head `next` builds; retries a few times when the head moved but the lease holds.
   */
  async function updateHead(kv: KV, sessionId: string, lease: SessionLease, next: (head: Head) => Promise<Head>): Promise<{ old: Head; head: Head }> {
    for (let attempt = 0; attempt < 4; attempt++) {
      const read = (attempt === 0 ? heads.get(sessionId) : undefined) ?? (await getHead(kv, sessionId));
      checkLease(sessionId, read?.head.lease, lease);
      const head = await next(read!.head);
      if (await swapHead(kv, sessionId, head, read!.revision)) return { old: read!.head, head };
    }
    throw storeError('STORE_FAILED', sessionId, 'its head kept changing under a commit');
  }

  const garbage = (kv: KV, keys: Iterable<string>) => Promise.all([...keys].map((key) => kv.delete(key).catch(() => undefined)));

  return {
    async lease(sessionId: string, request: SessionLeaseRequest): Promise<SessionLease> {
      return withStore(sessionId, async ({ kv }) => {
        for (let attempt = 0; attempt < 5; attempt++) {
          const current = await getHead(kv, sessionId);
          const granted = grantLease(sessionId, current?.head.lease, request);
          const head = { ...(current?.head ?? emptyHead()), lease: granted };
          if (await swapHead(kv, sessionId, head, current?.revision ?? 0)) return granted;
        }
        throw storeError('LEASE_HELD', sessionId, 'its lease kept changing while this process asked for it (another process is taking it)');
      });
    },
    async load(sessionId: string): Promise<StoredSession | undefined> {
      return withStore(sessionId, async (parts) => {
        const current = await getHead(parts.kv, sessionId);
        if (!current) return undefined;
        const { head } = current;
        const [state, segments, batches] = await Promise.all([
          head.state === null ? undefined : getValue(parts, head.state, sessionId, 'the state record'),
          Promise.all(head.history.map((segment, index) => getValue(parts, segment.key, sessionId, `history segment ${index}`))),
          Promise.all(head.journal.map((key, index) => getValue(parts, key, sessionId, `journal batch ${index}`))),
        ]);
        const history: JsonValue[] = [];
        segments.forEach((segment, index) => {
          if (!Array.isArray(segment) || segment.length !== head.history[index].count) throw storeError('STORE_CORRUPT', sessionId, `history segment ${index} holds ${Array.isArray(segment) ? segment.length : 'no'} items where its head says ${head.history[index].count}`);
          history.push(...segment);
        });
        const journal = batches.flatMap((batch, index) => {
          if (!Array.isArray(batch)) throw storeError('STORE_CORRUPT', sessionId, `journal batch ${index} is not a list`);
          return batch;
        });
        return { state, history, journal, lease: head.lease, version: head.version };
      });
    },
    async commit(sessionId: string, commit: SessionCommit): Promise<void> {
      await withStore(sessionId, async (parts) => {
        const base = sessionKey(sessionId);
        // the epoch keeps a writer that lost the lease from overwriting the new holder's keys
        const tag = `${commit.lease.epoch}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
        const written: string[] = [];
        const put = async (key: string, value: JsonValue) => {
          await putValue(parts, key, value);
          written.push(key);
        };
        let outcome: { old: Head; head: Head };
        try {
          outcome = await updateHead(parts.kv, sessionId, commit.lease, async (old) => {
            const head: Head = { ...old, version: old.version + 1, history: [...old.history], journal: commit.journal?.reset ? [] : [...old.journal] };
            if (commit.state !== undefined) await put((head.state = `${base}.s.${tag}`), commit.state);
            if (commit.history) head.history = await nextHistory(old.history, commit.history, `${base}.h.${tag}`, put);
            if (commit.journal?.append?.length) {
              const key = `${base}.j.${tag}`;
              await put(key, [...commit.journal.append]);
              head.journal.push(key);
            }
            return head;
          });
        } catch (error) {
          await garbage(parts.kv, written);
          throw error;
        }
        const live = new Set([outcome.head.state, ...outcome.head.history.map((segment) => segment.key), ...outcome.head.journal]);
        const dropped = [outcome.old.state, ...outcome.old.history.map((segment) => segment.key), ...outcome.old.journal].filter((key): key is string => key !== null && !live.has(key));
        await garbage(parts.kv, dropped);
      });

      /**
       * The history segments after `change`: whole segments below `keep` stay; the kept part of a
       * segment cut in two and the new items go to one new segment (with every earlier one merged
       * into it once there are MAX_SEGMENTS).
       */
      async function nextHistory(old: Head['history'], change: NonNullable<SessionCommit['history']>, key: string, put: (key: string, value: JsonValue) => Promise<void>): Promise<Head['history']> {
        const parts = await connectOnce();
        const read = (segment: { key: string }, index: number) => getValue(parts, segment.key, sessionId, `history segment ${index}`) as Promise<JsonValue[]>;
        let segments: Head['history'] = [];
        let count = 0;
        for (const segment of old) {
          if (count + segment.count > change.keep) break;
          segments.push(segment);
          count += segment.count;
        }
        let items: JsonValue[] = [...change.append];
        if (count < change.keep) items = [...(await read(old[segments.length], segments.length)).slice(0, change.keep - count), ...items];
        if (items.length === 0) return segments;
        if (segments.length >= MAX_SEGMENTS) {
          items = [...(await Promise.all(segments.map(read))).flat(), ...items];
          segments = [];
        }
        await put(key, items);
        return [...segments, { key, count: items.length }];
      }
    },
    async delete(sessionId: string): Promise<void> {
      await withStore(sessionId, async ({ kv }) => {
        const current = await getHead(kv, sessionId);
        if (!current) return;
        const { head } = current;
        await garbage(kv, [`${sessionKey(sessionId)}.head`, ...(head.state ? [head.state] : []), ...head.history.map((segment) => segment.key), ...head.journal]);
        heads.delete(sessionId);
      });
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const connection = await opened?.catch(() => undefined);
      await connection?.nc.drain().catch(() => undefined);
    },
  };
}
