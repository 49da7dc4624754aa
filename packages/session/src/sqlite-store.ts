import { SwitchyardError, errorMessage, isSwitchyardError, type JsonValue, type SessionCommit, type SessionLease, type SessionLeaseRequest, type SessionStore, type StoredSession } from '@switchyard/protocol';
import { checkLease, checkOptions, decodeStoreRecord, encodeStoreRecord, grantLease, leaseFromJson, optionRules as rule, storeError } from '@switchyard/kit/internal';
import { SQLITE_SCHEMA } from './sql/schema.generated';

// The embedded SessionStore: one SQLite file through node:sqlite (built into Node 22.13+ and 24, no
// native module to compile), in WAL mode. Every commit is one transaction.

/** Options of {@link createSqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * When a commit is on disk. `'normal'` (default; WAL with `synchronous=NORMAL`): a commit
   * survives a crash of the process (SIGKILL, an exception) as soon as it resolved; a power loss or
   * an OS crash may roll back the last commits before the next checkpoint (never a mix of two).
   * `'full'`: every commit is fsynced before it resolves (survives a power loss; costs one fsync per
   * commit, a few ms on most disks).
   */
  synchronous?: 'normal' | 'full';
  /** How long a write waits for another process's write lock on the same file (ms). Default 5,000. */
  busyTimeoutMs?: number;
}

/** The schema version of the file's tables; a file written by a newer library is refused (`STORE_VERSION`). */
const SCHEMA_VERSION = 1;

/** What this module uses of node:sqlite's `DatabaseSync` (typed here: Node 20's types have no node:sqlite). */
interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}
interface Statement {
  run(...parameters: unknown[]): unknown;
  get(...parameters: unknown[]): Record<string, unknown> | undefined;
  all(...parameters: unknown[]): Array<Record<string, unknown>>;
}

/**
 * node:sqlite, loaded when a store is created (never at import: the package also runs on Node 20,
 * which has no node:sqlite). A CONFIG error says what is needed.
 */
function openDatabase(path: string): Database {
  const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const sqlite = getBuiltin?.call(process, 'node:sqlite') as { DatabaseSync?: new (path: string) => Database } | undefined;
  if (!sqlite?.DatabaseSync) {
    throw new SwitchyardError('CONFIG', `createSqliteStore needs node:sqlite, built into Node 22.13+ and 24; this is Node ${process.versions.node} (use another SessionStore, e.g. createNatsSessionStore, or a newer Node)`);
  }
  try {
    return new sqlite.DatabaseSync(path);
  } catch (error) {
    throw new SwitchyardError('CONFIG', `createSqliteStore: cannot open ${JSON.stringify(path)}: ${errorMessage(error)}`, { cause: error });
  }
}

function prepareSchema(db: Database, options: SqliteStoreOptions, path: string): void {
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}; PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 5000};`);
  db.exec(SQLITE_SCHEMA);
  const row = db.prepare('SELECT value FROM switchyard_meta WHERE key = ?').get('schema');
  const version = row ? Number(row.value) : undefined;
  if (version === undefined) db.prepare('INSERT OR IGNORE INTO switchyard_meta (key, value) VALUES (?, ?)').run('schema', String(SCHEMA_VERSION));
  else if (!(version <= SCHEMA_VERSION)) {
    throw new SwitchyardError('STORE_VERSION', `createSqliteStore: ${path} has schema version ${row!.value}, newer than this library reads (${SCHEMA_VERSION}): upgrade @switchyard/session`);
  }
}

interface SessionRow {
  version: number;
  lease: SessionLease | undefined;
  state: string | null;
  historyLength: number;
  journalLength: number;
}

/** Statements of one store, prepared once. */
function statements(db: Database) {
  return {
    row: db.prepare('SELECT version, lease, state, history_length, journal_length FROM switchyard_sessions WHERE id = ?'),
    insertRow: db.prepare('INSERT INTO switchyard_sessions (id, version, lease, state, history_length, journal_length) VALUES (?, 0, ?, NULL, 0, 0)'),
    setLease: db.prepare('UPDATE switchyard_sessions SET lease = ? WHERE id = ?'),
    setRow: db.prepare('UPDATE switchyard_sessions SET version = ?, state = ?, history_length = ?, journal_length = ? WHERE id = ?'),
    history: db.prepare('SELECT idx, item FROM switchyard_history WHERE session = ? AND idx < ? ORDER BY idx'),
    cutHistory: db.prepare('DELETE FROM switchyard_history WHERE session = ? AND idx >= ?'),
    addHistory: db.prepare('INSERT OR REPLACE INTO switchyard_history (session, idx, item) VALUES (?, ?, ?)'),
    journal: db.prepare('SELECT seq, entry FROM switchyard_journal WHERE session = ? AND seq < ? ORDER BY seq'),
    dropJournal: db.prepare('DELETE FROM switchyard_journal WHERE session = ?'),
    addJournal: db.prepare('INSERT OR REPLACE INTO switchyard_journal (session, seq, entry) VALUES (?, ?, ?)'),
    deleteSession: [
      db.prepare('DELETE FROM switchyard_sessions WHERE id = ?'),
      db.prepare('DELETE FROM switchyard_history WHERE session = ?'),
      db.prepare('DELETE FROM switchyard_journal WHERE session = ?'),
    ],
  };
}

function readRow(raw: Record<string, unknown> | undefined, sessionId: string): SessionRow | undefined {
  if (!raw) return undefined;
  const lease = raw.lease === null ? undefined : leaseFromJson(decodeStoreRecord(raw.lease, sessionId, 'the lease record'), sessionId);
  const numbers = [raw.version, raw.history_length, raw.journal_length].map(Number);
  if (numbers.some((value) => !Number.isInteger(value) || value < 0)) throw storeError('STORE_CORRUPT', sessionId, 'its session row is corrupted (a count is not a non-negative integer)');
  return { version: numbers[0], lease, state: raw.state as string | null, historyLength: numbers[1], journalLength: numbers[2] };
}

/** Reads `length` consecutive records from 0 (`STORE_CORRUPT` when one is missing or does not read back). */
function readSequence(rows: Array<Record<string, unknown>>, length: number, sessionId: string, what: string): JsonValue[] {
  const values: JsonValue[] = [];
  for (const [index, row] of rows.entries()) {
    if (Number(row.idx ?? row.seq) !== index) break;
    values.push(decodeStoreRecord(row.item ?? row.entry, sessionId, `${what} ${index}`));
  }
  if (values.length !== length) throw storeError('STORE_CORRUPT', sessionId, `${what} ${values.length} is missing (the session has ${length})`);
  return values;
}

/**
 * A `SessionStore` in one SQLite file (created if missing), for a host on one machine: every commit
 * is one transaction in WAL mode (see {@link SqliteStoreOptions.synchronous} for when it is on disk),
 * several processes may open the same file (the lease decides who drives each session). Needs
 * node:sqlite (Node 22.13+ / 24): elsewhere, creating one throws `CONFIG`. `':memory:'` keeps
 * everything in memory (tests).
 */
// long-function: a factory whose returned object literal is the store (its prepared statements and the methods over them); each method is short
export function createSqliteStore(path: string, options: SqliteStoreOptions = {}): SessionStore & { close(): Promise<void> } {
  if (typeof path !== 'string' || path === '') throw new SwitchyardError('CONFIG', 'createSqliteStore: `path` must be a file path (or ":memory:")');
  checkOptions('createSqliteStore', options, { synchronous: rule.oneOf('normal', 'full'), busyTimeoutMs: rule.number({ min: 0, integer: true }) });
  const db = openDatabase(path);
  try {
    prepareSchema(db, options, path);
  } catch (error) {
    db.close();
    throw error;
  }
  const sql = statements(db);
  let closed = false;
  /** Runs `body` in one write transaction; any failure rolls it back and rejects with a store error naming the session. */
  const write = <T>(sessionId: string, body: () => T): T => {
    if (closed) throw storeError('STORE_FAILED', sessionId, 'the SQLite store is closed');
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      throw storeError('STORE_FAILED', sessionId, `SQLite could not begin a write: ${errorMessage(error)}`, error);
    }
    try {
      const result = body();
      db.exec('COMMIT');
      return result;
    } catch (error) {
      db.exec('ROLLBACK');
      if (isSwitchyardError(error)) throw error;
      throw storeError('STORE_FAILED', sessionId, `SQLite write failed: ${errorMessage(error)}`, error);
    }
  };
  const read = <T>(sessionId: string, body: () => T): T => {
    if (closed) throw storeError('STORE_FAILED', sessionId, 'the SQLite store is closed');
    try {
      return body();
    } catch (error) {
      if (isSwitchyardError(error)) throw error;
      throw storeError('STORE_FAILED', sessionId, `SQLite read failed: ${errorMessage(error)}`, error);
    }
  };
  const store = {
    async lease(sessionId: string, request: SessionLeaseRequest): Promise<SessionLease> {
      return write(sessionId, () => {
        const row = readRow(sql.row.get(sessionId), sessionId);
        const granted = grantLease(sessionId, row?.lease, request);
        const text = encodeStoreRecord(granted as unknown as JsonValue);
        if (row) sql.setLease.run(text, sessionId);
        else sql.insertRow.run(sessionId, text);
        return granted;
      });
    },
    async load(sessionId: string): Promise<StoredSession | undefined> {
      return read(sessionId, () => {
        const row = readRow(sql.row.get(sessionId), sessionId);
        if (!row) return undefined;
        const state = row.state === null ? undefined : decodeStoreRecord(row.state, sessionId, 'the state record');
        const history = readSequence(sql.history.all(sessionId, row.historyLength), row.historyLength, sessionId, 'history item');
        const journal = readSequence(sql.journal.all(sessionId, row.journalLength), row.journalLength, sessionId, 'journal entry');
        return { state, history, journal, lease: row.lease, version: row.version };
      });
    },
    async commit(sessionId: string, commit: SessionCommit): Promise<void> {
      write(sessionId, () => {
        const row = readRow(sql.row.get(sessionId), sessionId);
        checkLease(sessionId, row?.lease, commit.lease);
        let { historyLength, journalLength, state } = row!;
        if (commit.history) {
          const keep = Math.min(commit.history.keep, historyLength);
          if (keep < historyLength) sql.cutHistory.run(sessionId, keep);
          commit.history.append.forEach((item, offset) => sql.addHistory.run(sessionId, keep + offset, encodeStoreRecord(item)));
          historyLength = keep + commit.history.append.length;
        }
        if (commit.journal?.reset) {
          sql.dropJournal.run(sessionId);
          journalLength = 0;
        }
        for (const entry of commit.journal?.append ?? []) sql.addJournal.run(sessionId, journalLength++, encodeStoreRecord(entry));
        if (commit.state !== undefined) state = encodeStoreRecord(commit.state);
        sql.setRow.run(row!.version + 1, state, historyLength, journalLength, sessionId);
      });
    },
    async delete(sessionId: string): Promise<void> {
      write(sessionId, () => {
        for (const statement of sql.deleteSession) statement.run(sessionId);
      });
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
  return store;
}
