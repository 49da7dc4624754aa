import { isSwitchyardError, type JsonValue, type SessionStore } from '@switchyard/protocol';

// The conformance checks every SessionStore passes (the SQLite store, the NATS store, a third
// party's): plain async functions that throw on a failure, so any test runner can run them.

/** One check: its name and the function that throws when the store fails it. */
export interface SessionStoreCheck {
  readonly name: string;
  run(store: SessionStore): Promise<void>;
}

function fail(message: string): never {
  throw new Error(`SessionStore check failed: ${message}`);
}
function same(actual: unknown, expected: unknown, what: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) fail(`${what}: expected ${e}, got ${a}`);
}
async function rejectsWith(promise: Promise<unknown>, code: string, what: string): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (!isSwitchyardError(error) || error.code !== code) fail(`${what}: expected a ${code} error, got ${String(error)}`);
    return error;
  }
  return fail(`${what}: expected a ${code} error, it resolved`);
}
let counter = 0;
const freshId = (label: string) => `check-${label}-${process.pid}-${Date.now()}-${counter++}`;

/** The checks, in the order a suite runs them. */
export const SESSION_STORE_CHECKS: readonly SessionStoreCheck[] = [
  {
    name: 'an unknown session loads as undefined',
    async run(store) {
      same(await store.load(freshId('unknown')), undefined, 'load of a session never written');
    },
  },
  {
    name: 'a lease, a commit and a load give back state, history and journal as written',
    async run(store) {
      const id = freshId('roundtrip');
      const lease = await store.lease(id, { owner: 'host-a', ttlMs: 60_000 });
      same([lease.owner, lease.epoch], ['host-a', 1], 'first lease');
      const state: JsonValue = { format: 'x', nested: { list: [1, 'two', null, true] }, text: 'ünïcødé \u2028' };
      await store.commit(id, { lease, state, history: { keep: 0, append: [{ type: 'message', role: 'user', content: 'hi' }] }, journal: { append: [{ n: 1 }, { n: 2 }] } });
      await store.commit(id, { lease, history: { keep: 1, append: [{ type: 'message', role: 'assistant', content: 'hello' }] }, journal: { append: [{ n: 3 }] } });
      const loaded = await store.load(id);
      same(loaded?.state, state, 'state');
      same(loaded?.history, [{ type: 'message', role: 'user', content: 'hi' }, { type: 'message', role: 'assistant', content: 'hello' }], 'history');
      same(loaded?.journal, [{ n: 1 }, { n: 2 }, { n: 3 }], 'journal');
      same(loaded?.version, 2, 'version');
      same(loaded?.lease?.token, lease.token, 'lease token');
    },
  },
  {
    name: 'history is cut back to `keep` before an append; a journal reset drops every entry',
    async run(store) {
      const id = freshId('cut');
      const lease = await store.lease(id, { owner: 'a', ttlMs: 60_000 });
      await store.commit(id, { lease, history: { keep: 0, append: [1, 2, 3, 4] }, journal: { append: ['a', 'b'] } });
      await store.commit(id, { lease, history: { keep: 2, append: [5] }, journal: { reset: true, append: ['c'] } });
      const loaded = await store.load(id);
      same(loaded?.history, [1, 2, 5], 'history after a cut');
      same(loaded?.journal, ['c'], 'journal after a reset');
    },
  },
  {
    name: 'a live lease is refused to another owner (LEASE_HELD naming the holder); an expired one is taken over with a higher epoch',
    async run(store) {
      const id = freshId('lease');
      const now = Date.now();
      const first = await store.lease(id, { owner: 'host-a', ttlMs: 1_000, now });
      const refused = await rejectsWith(store.lease(id, { owner: 'host-b', ttlMs: 1_000, now: now + 500 }), 'LEASE_HELD', 'a second owner while the lease lives');
      if (!refused.message.includes(id) || !refused.message.includes('host-a')) fail(`LEASE_HELD message must name the session and the holder: ${refused.message}`);
      const second = await store.lease(id, { owner: 'host-b', ttlMs: 1_000, now: now + 1_500 });
      same([second.owner, second.epoch], ['host-b', first.epoch + 1], 'the lease taken over');
      if (second.token === first.token) fail('a new acquisition must get a new token');
    },
  },
  {
    name: 'a commit or renewal under a lease taken over fails LEASE_HELD and writes nothing',
    async run(store) {
      const id = freshId('fence');
      const now = Date.now();
      const old = await store.lease(id, { owner: 'host-a', ttlMs: 1_000, now });
      await store.commit(id, { lease: old, state: { by: 'a' }, history: { keep: 0, append: ['a1'] } });
      const taken = await store.lease(id, { owner: 'host-b', ttlMs: 60_000, now: now + 2_000 });
      await rejectsWith(store.commit(id, { lease: old, state: { by: 'zombie' }, history: { keep: 1, append: ['zombie'] }, journal: { append: ['z'] } }), 'LEASE_HELD', 'a commit of the old holder');
      await rejectsWith(store.lease(id, { owner: 'host-a', ttlMs: 1_000, renew: old }), 'LEASE_HELD', 'a renewal of the old holder');
      const loaded = await store.load(id);
      same([loaded?.state, loaded?.history, loaded?.journal, loaded?.lease?.token], [{ by: 'a' }, ['a1'], [], taken.token], 'the store after the refused writes');
    },
  },
  {
    name: 'renewing keeps the token and epoch and moves the expiry; ttlMs 0 releases it for anyone',
    async run(store) {
      const id = freshId('renew');
      const now = Date.now();
      const lease = await store.lease(id, { owner: 'a', ttlMs: 1_000, now });
      const renewed = await store.lease(id, { owner: 'a', ttlMs: 5_000, renew: lease, now: now + 900 });
      same([renewed.token, renewed.epoch, renewed.expiresAt], [lease.token, lease.epoch, now + 5_900], 'renewed lease');
      await store.lease(id, { owner: 'a', ttlMs: 0, renew: renewed, now: now + 1_000 });
      const next = await store.lease(id, { owner: 'b', ttlMs: 1_000, now: now + 1_001 });
      same(next.epoch, lease.epoch + 1, 'epoch after a release');
    },
  },
  {
    name: 'sessions are independent: one session’s writes and leases never show in another',
    async run(store) {
      const a = freshId('a');
      const b = freshId('b');
      const leaseA = await store.lease(a, { owner: 'x', ttlMs: 60_000 });
      const leaseB = await store.lease(b, { owner: 'y', ttlMs: 60_000 });
      await Promise.all([
        store.commit(a, { lease: leaseA, state: 'A', history: { keep: 0, append: ['a'] } }),
        store.commit(b, { lease: leaseB, state: 'B', history: { keep: 0, append: ['b', 'b'] } }),
      ]);
      await rejectsWith(store.commit(a, { lease: leaseB, state: 'wrong' }), 'LEASE_HELD', "a commit under another session's lease");
      same([(await store.load(a))?.history, (await store.load(b))?.history, (await store.load(a))?.state], [['a'], ['b', 'b'], 'A'], 'both sessions');
    },
  },
  {
    name: 'large values round-trip (a 2 MB state, a 1.5 MB history item)',
    async run(store) {
      const id = freshId('large');
      const lease = await store.lease(id, { owner: 'a', ttlMs: 60_000 });
      const state = { blob: 'x'.repeat(2 * 1024 * 1024) };
      const item = { type: 'message', role: 'user', content: 'y'.repeat(1536 * 1024) };
      await store.commit(id, { lease, state, history: { keep: 0, append: [item, 'small'] } });
      const loaded = await store.load(id);
      same([(loaded?.state as { blob: string }).blob.length, (loaded?.history[0] as { content: string }).content.length, loaded?.history[1]], [state.blob.length, item.content.length, 'small'], 'large values');
    },
  },
];
