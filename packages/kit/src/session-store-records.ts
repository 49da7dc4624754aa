import { createHash, randomUUID } from 'node:crypto';
import { SwitchyardError, type JsonValue, type SessionLease, type SessionLeaseRequest, type SwitchyardErrorCode } from '@switchyard/protocol';

// What every SessionStore shares: how a record is sealed on its way to disk and checked on its way
// back, and how a lease is granted. The SQLite store and the NATS store both use these, so a record
// and a lease mean the same in each.

/** The schema version of a sealed record this library writes; a newer one is refused (`STORE_VERSION`). */
export const STORE_RECORD_VERSION = 1;

/** The first 16 hex digits of the SHA-256 of `text`. */
function checkOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** A store error naming the session: `session <id>: <message>`. */
export function storeError(code: SwitchyardErrorCode, sessionId: string, message: string, cause?: unknown): SwitchyardError {
  return new SwitchyardError(code, `session ${sessionId}: ${message}`, cause === undefined ? undefined : { cause });
}

/**
 * Seals a JSON value for a store: `<version> <check> <json>`, where `check` hashes the JSON text,
 * so a record cut short or changed on disk is caught when it is read back.
 */
export function encodeStoreRecord(value: JsonValue): string {
  const json = JSON.stringify(value);
  return `${STORE_RECORD_VERSION} ${checkOf(json)} ${json}`;
}

/**
 * Opens a sealed record. Throws `STORE_VERSION` for a record of a newer schema and `STORE_CORRUPT`
 * for anything that does not read back as written (truncated, changed, not a record), naming the
 * session and the record (`where`).
 */
export function decodeStoreRecord(text: unknown, sessionId: string, where: string): JsonValue {
  if (typeof text !== 'string') throw storeError('STORE_CORRUPT', sessionId, `${where} is not a sealed record (got ${text === null ? 'null' : typeof text})`);
  const first = text.indexOf(' ');
  const second = first < 0 ? -1 : text.indexOf(' ', first + 1);
  const version = Number(text.slice(0, first));
  if (second < 0 || !Number.isInteger(version) || version < 1) throw storeError('STORE_CORRUPT', sessionId, `${where} is not a sealed record (it starts ${JSON.stringify(text.slice(0, 24))})`);
  if (version > STORE_RECORD_VERSION) {
    throw storeError('STORE_VERSION', sessionId, `${where} has record schema version ${version}, newer than this library reads (${STORE_RECORD_VERSION}): upgrade @switchyard/session`);
  }
  const json = text.slice(second + 1);
  if (checkOf(json) !== text.slice(first + 1, second)) throw storeError('STORE_CORRUPT', sessionId, `${where} is corrupted: its contents (${json.length} characters) do not match its checksum (truncated or changed)`);
  try {
    return JSON.parse(json) as JsonValue;
  } catch (error) {
    throw storeError('STORE_CORRUPT', sessionId, `${where} is corrupted: ${(error as Error).message}`, error);
  }
}

const describeLease = (lease: SessionLease) => `${lease.owner} (lease epoch ${lease.epoch}, until ${new Date(lease.expiresAt).toISOString()})`;

/**
 * The lease a store grants for `request` when the session's lease is `current` (see
 * `SessionStore.lease`), or throws `LEASE_HELD` naming who holds it. Pure: the store writes the
 * result with its own compare-and-set.
 */
export function grantLease(sessionId: string, current: SessionLease | undefined, request: SessionLeaseRequest): SessionLease {
  const now = request.now ?? Date.now();
  if (request.renew) {
    checkLease(sessionId, current, request.renew);
    return { ...current!, expiresAt: now + request.ttlMs };
  }
  if (current && current.expiresAt > now) throw storeError('LEASE_HELD', sessionId, `held by ${describeLease(current)}; another process drives it`);
  return { owner: request.owner, token: randomUUID(), epoch: (current?.epoch ?? 0) + 1, expiresAt: now + request.ttlMs };
}

/**
 * Throws `LEASE_HELD` unless `lease` is still the session's lease `current` (same token and epoch).
 * An expired lease nobody took over is still current: its holder may go on and renew it.
 */
export function checkLease(sessionId: string, current: SessionLease | undefined, lease: SessionLease): void {
  if (current && current.token === lease.token && current.epoch === lease.epoch) return;
  const holder = current ? `it is now held by ${describeLease(current)}` : 'the store has no lease for it';
  throw storeError('LEASE_HELD', sessionId, `the lease of ${lease.owner} (epoch ${lease.epoch}) is no longer current: ${holder}`);
}

/** A lease read back from a store, checked field by field (`STORE_CORRUPT` otherwise). */
export function leaseFromJson(value: JsonValue | undefined, sessionId: string): SessionLease | undefined {
  if (value === undefined || value === null) return undefined;
  const lease = value as Partial<SessionLease>;
  if (typeof lease.owner !== 'string' || typeof lease.token !== 'string' || !Number.isInteger(lease.epoch) || typeof lease.expiresAt !== 'number') {
    throw storeError('STORE_CORRUPT', sessionId, 'its lease record is corrupted (owner, token, epoch or expiry missing)');
  }
  return { owner: lease.owner, token: lease.token, epoch: lease.epoch as number, expiresAt: lease.expiresAt };
}
