import type { JsonValue } from './json';

/**
 * Sessions that outlive their process: the contract between a session (`@switchyard/session`'s
 * `createSession({ store, sessionId })`) and the place it lives — an embedded SQLite file
 * (`createSqliteStore`), NATS JetStream key-value for a fleet (`createNatsSessionStore`), or a
 * third party's database. A store keeps, per session id, three things and a lease:
 *
 * - the **state**: one JSON document the session writes whole at each commit (its stored values,
 *   pending background completions, processes it ran, open cells, …; opaque to the store);
 * - the **history**: the conversation's items, appended (and, after a failed turn, cut back);
 * - the **journal**: small JSON entries appended between commits (what entered each open Code Mode
 *   cell, written ahead of the tool calls they announce), dropped when a commit's state absorbs them;
 * - the **lease**: which process drives the session now, until when, with an epoch that grows at
 *   every acquisition. Every write names the lease it was made under; a write under a lease that is
 *   no longer the session's fails (`LEASE_HELD`), so two processes never both drive one session.
 *
 * Every method rejects with a `SwitchyardError` whose message names the session and the cause:
 * `LEASE_HELD`, `STORE_CORRUPT` (a record that does not read back as written), `STORE_VERSION` (a
 * record of a newer schema), `STORE_FAILED` (I/O). A failed call of one session never touches
 * another session's records. Implementations: keep every method safe to call concurrently for
 * different sessions; a session calls them for itself one at a time, in order.
 */
export interface SessionStore {
  /**
   * Takes the session's lease for `owner` (a new `token`, `epoch` one higher) when nobody holds
   * it, its holder let it expire, or `renew` is the current lease (then only `expiresAt` moves).
   * Rejects with `LEASE_HELD` naming the holder and its expiry when another live lease holds it,
   * or when `renew` is no longer current (taken over). `ttlMs: 0` with `renew` releases it.
   */
  lease(sessionId: string, request: SessionLeaseRequest): Promise<SessionLease>;
  /**
   * Everything the store holds of the session, as of its last commit; `undefined` for a session it
   * has never seen. Rejects with `STORE_CORRUPT` / `STORE_VERSION` / `STORE_FAILED` for this
   * session only; the records stay as they are (nothing is repaired or dropped on read).
   */
  load(sessionId: string): Promise<StoredSession | undefined>;
  /**
   * Applies one commit atomically: after a crash at any point the store holds the previous
   * version or this one, never a mix. Resolves once the commit is durable (the store's documented
   * durability). Rejects with `LEASE_HELD` when `commit.lease` is no longer the session's lease
   * (nothing written).
   */
  commit(sessionId: string, commit: SessionCommit): Promise<void>;
  /** Optional: forgets the session (every record and its lease). */
  delete?(sessionId: string): Promise<void>;
  /** Optional: ends the store's connections or files; further calls reject with `STORE_FAILED`. */
  close?(): Promise<void>;
}

/** A lease on one session: who drives it and until when. */
export interface SessionLease {
  /** The holder's name as it asked (a host name, a process id): for error messages and operators. */
  readonly owner: string;
  /** Random, new at each acquisition: what commits are checked against. */
  readonly token: string;
  /** 1 for the first acquisition, one more at each later one (renewals keep it). */
  readonly epoch: number;
  /** Milliseconds since the Unix epoch after which another process may take the lease over. */
  readonly expiresAt: number;
}

/** What {@link SessionStore.lease} is asked for. */
export interface SessionLeaseRequest {
  /** Who asks (kept in the lease, shown in `LEASE_HELD` messages). */
  readonly owner: string;
  /** How long the lease lasts from now (ms); `0` with `renew` releases it. */
  readonly ttlMs: number;
  /** The lease this process holds: renew (or release) it instead of taking a new one. */
  readonly renew?: SessionLease;
  /** The clock of the store's expiry checks (ms since the epoch). Default `Date.now()`. */
  readonly now?: number;
}

/** A session as its store holds it. */
export interface StoredSession {
  /** The state document of the last commit (`undefined` before the first commit that wrote one). */
  readonly state: JsonValue | undefined;
  /** The history items, in order. */
  readonly history: readonly JsonValue[];
  /** Journal entries appended since the last commit that reset the journal, in order. */
  readonly journal: readonly JsonValue[];
  /** The session's lease as stored (possibly expired, possibly this process's own). */
  readonly lease: SessionLease | undefined;
  /** Commits applied so far (0 when only a lease was taken). */
  readonly version: number;
}

/** One atomic change to a session. */
export interface SessionCommit {
  /** The lease the commit is made under: it must still be the session's (token and epoch). */
  readonly lease: SessionLease;
  /** The new state document (replaces the old one whole); omitted: unchanged. */
  readonly state?: JsonValue;
  /** History: keep the first `keep` items (cut back a failed turn's input), then append `append`. */
  readonly history?: { readonly keep: number; readonly append: readonly JsonValue[] };
  /** Journal: `reset` drops every entry first (the state absorbed them), then `append` adds entries. */
  readonly journal?: { readonly reset?: boolean; readonly append?: readonly JsonValue[] };
}
