import { hostname } from 'node:os';
import { isSwitchyardError, errorMessage, type JsonValue, type SessionLease, type SessionStore, type StoredSession, type SwitchyardError } from '@switchyard/protocol';
import { storeError } from '@switchyard/kit/internal';

// A session's link to its store: the lease (taken at open, renewed on a timer, released at
// shutdown), the commits (one at a time, in order: what changed since the last one), and the
// journal's write-ahead appends (batched within a tick).

/** The `storeOptions` of `createSession`: how a session with a `store` holds its lease and what it may write. */
export interface SessionStoreOptions {
  /** Who holds the lease (shown in `LEASE_HELD` errors). Default `<hostname>:<pid>`. */
  owner?: string;
  /** How long the lease lasts without renewal (ms); it is renewed every third of it. Default 30,000. */
  leaseTtlMs?: number;
  /**
   * How long opening the session waits for a lease another process holds (ms), retrying until it
   * expires or is released. Default 0: a held lease fails at once with `LEASE_HELD`.
   */
  leaseWaitMs?: number;
  /** The most the history may take in the store (bytes of JSON). Default 64 MiB; a commit past it fails `LIMIT_EXCEEDED`. */
  maxHistoryBytes?: number;
  /** The most the state document may take (bytes of JSON: stored values, pending items, journals). Default 16 MiB. */
  maxStateBytes?: number;
}

export const DEFAULT_LEASE_TTL_MS = 30_000;
export const DEFAULT_MAX_HISTORY_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_STATE_BYTES = 16 * 1024 * 1024;

/** What a commit writes, built by the session at the moment the commit runs. */
export interface CommitContent {
  /**
   * History changes (keep the first `keep`, append the rest; `cutBack`: `keep` is below what the
   * store holds), the length of the kept items' JSON (encodes them), and the callback that settles them.
   */
  history?: { keep: number; append: JsonValue[]; cutBack: boolean; keptJsonLength(): number; settle(saved: boolean): void };
  /** The state document now. */
  state: JsonValue;
  /** The state document absorbed every journal entry reported so far (Code Mode exported its state). */
  absorbsJournal: boolean;
}

/** Length of the JSON of an array: `keep` items whose array's JSON takes `keptLength`, then the items of the array whose JSON is `appendText`. */
function joinedArrayLength(keptLength: number, keep: number, appendText: string): number {
  if (appendText === '[]') return keptLength;
  if (keep === 0) return appendText.length;
  // the kept array's ']' and the appended one's '[' go; one ',' joins them
  return keptLength + appendText.length - 1;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class SessionPersistence {
  private lease: SessionLease | undefined;
  /** Set when the session can no longer write (its lease was taken over, the store closed): every later write fails with it. */
  private failure: SwitchyardError | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private savedState: string | undefined;
  /** Bytes of JSON the store's copy of the history takes: unknown until a commit with history changes measures what it keeps. */
  private historyBytes: number | undefined;
  /** The store's journal (or the buffer) may hold entries no saved state document absorbed yet. */
  private journalDirty = false;
  private buffer: { entries: JsonValue[]; settled: Array<(error?: unknown) => void> } | undefined;
  private waitingSave: Promise<void> | undefined;
  private closed = false;
  readonly owner: string;
  private readonly ttlMs: number;

  constructor(
    private readonly store: SessionStore,
    private readonly sessionId: string,
    private readonly options: SessionStoreOptions,
    private readonly content: () => CommitContent,
  ) {
    this.owner = options.owner ?? `${hostname()}:${process.pid}`;
    this.ttlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  }

  /** Takes the lease (waiting up to `leaseWaitMs` for a held one), then loads what the store holds. */
  async open(): Promise<StoredSession | undefined> {
    const deadline = Date.now() + (this.options.leaseWaitMs ?? 0);
    for (;;) {
      try {
        this.lease = await this.store.lease(this.sessionId, { owner: this.owner, ttlMs: this.ttlMs });
        break;
      } catch (error) {
        if (!isSwitchyardError(error) || error.code !== 'LEASE_HELD' || Date.now() >= deadline) throw this.named(error);
        await sleep(Math.min(250, Math.max(10, deadline - Date.now())));
      }
    }
    this.heartbeat = setInterval(() => void this.renew(), Math.max(10, Math.floor(this.ttlMs / 3)));
    this.heartbeat.unref?.();
    const stored = await this.store.load(this.sessionId).catch((error: unknown) => {
      const failure = this.named(error);
      this.abandon(failure);
      throw failure;
    });
    if (stored?.state !== undefined) this.savedState = JSON.stringify(stored.state);
    this.journalDirty = (stored?.journal.length ?? 0) > 0;
    return stored;
  }

  /**
   * The session could not be loaded (a bad record, a newer schema): it must never write over what
   * the store holds. Every later write fails with `error`; the lease is released.
   */
  abandon(error: SwitchyardError): void {
    if (this.failure) return;
    this.failure = error;
    clearInterval(this.heartbeat);
    const lease = this.lease;
    if (lease) void this.enqueue(() => this.store.lease(this.sessionId, { owner: this.owner, ttlMs: 0, renew: lease })).catch(() => undefined);
  }

  /**
   * Commits what changed; resolves once it is durable. A save asked while another waits to start
   * shares it (what it writes is read when it starts).
   */
  save(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.waitingSave) return this.waitingSave;
    const run = this.enqueue(() => {
      this.waitingSave = undefined;
      return this.commitNow();
    });
    this.waitingSave = run;
    return run;
  }

  /** A save nobody waits for (its failure is kept for the next write to report). */
  schedule(): void {
    if (this.closed || this.failure) return;
    this.save().catch(() => undefined);
  }

  /**
   * Appends a journal entry ahead of what it announces; resolves once it is durable. Entries of
   * one tick go in one commit.
   */
  append(entry: JsonValue): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.resolve();
    let buffer = this.buffer;
    if (!buffer) {
      buffer = this.buffer = { entries: [], settled: [] };
      setImmediate(() => {
        if (this.buffer !== buffer) return;
        this.buffer = undefined;
        this.enqueue(() => this.commitJournal(buffer!.entries)).then(
          () => buffer!.settled.forEach((settle) => settle()),
          (error: unknown) => buffer!.settled.forEach((settle) => settle(error)),
        );
      });
    }
    buffer.entries.push(entry);
    this.journalDirty = true;
    return new Promise<void>((resolve, reject) => buffer!.settled.push((error) => (error === undefined ? resolve() : reject(error))));
  }

  /** The final save, then the lease is released; nothing is written afterwards. */
  async close(): Promise<void> {
    if (this.closed) return;
    const final = this.failure ? undefined : this.save().catch((error: unknown) => error);
    const error = await final;
    this.closed = true;
    clearInterval(this.heartbeat);
    await this.queue;
    const lease = this.lease;
    if (lease && !this.failure) await this.enqueue(() => this.store.lease(this.sessionId, { owner: this.owner, ttlMs: 0, renew: lease })).catch(() => undefined);
    if (error) throw error;
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async commitNow(): Promise<void> {
    if (this.failure) throw this.failure;
    const content = this.content();
    const stateText = JSON.stringify(content.state);
    const maxState = this.options.maxStateBytes ?? DEFAULT_MAX_STATE_BYTES;
    if (stateText.length > maxState) throw this.limit(`its state document would be ${stateText.length} bytes, over maxStateBytes (${maxState})`);
    const history = content.history;
    let historyBytes = this.historyBytes;
    if (history) {
      // a running count: only the first history commit and a cut-back encode what the store keeps
      const kept = history.cutBack || historyBytes === undefined ? history.keptJsonLength() : historyBytes;
      historyBytes = joinedArrayLength(kept, history.keep, JSON.stringify(history.append));
      const maxHistory = this.options.maxHistoryBytes ?? DEFAULT_MAX_HISTORY_BYTES;
      if (historyBytes > maxHistory) {
        history.settle(false);
        throw this.limit(`its history would be ${historyBytes} bytes, over maxHistoryBytes (${maxHistory})`);
      }
    }
    // entries buffered now are part of the exported state: they need no write of their own
    // (a reset only when there is something to reset: a state document alone writes nothing new)
    const absorbs = content.absorbsJournal && this.journalDirty;
    const absorbed = absorbs ? this.takeBuffer() : undefined;
    const changedState = stateText !== this.savedState;
    if (!history && !changedState && !absorbs) return;
    // entries appended while the commit runs make the journal dirty again
    if (absorbs) this.journalDirty = false;
    try {
      await this.store.commit(this.sessionId, {
        lease: this.lease!,
        ...(changedState ? { state: content.state } : {}),
        ...(history ? { history: { keep: history.keep, append: history.append } } : {}),
        ...(absorbs ? { journal: { reset: true } } : {}),
      });
    } catch (error) {
      if (absorbs) this.journalDirty = true;
      history?.settle(false);
      const failure = this.named(error);
      absorbed?.settled.forEach((settle) => settle(failure));
      throw this.noteFailure(failure);
    }
    history?.settle(true);
    this.historyBytes = historyBytes;
    this.savedState = stateText;
    absorbed?.settled.forEach((settle) => settle());
  }

  private takeBuffer() {
    const buffer = this.buffer;
    this.buffer = undefined;
    return buffer;
  }

  private async commitJournal(entries: JsonValue[]): Promise<void> {
    if (this.failure) throw this.failure;
    // the entries land in the store's journal now: the next state document that absorbs them resets it
    this.journalDirty = true;
    try {
      await this.store.commit(this.sessionId, { lease: this.lease!, journal: { append: entries } });
    } catch (error) {
      throw this.noteFailure(this.named(error));
    }
  }

  private async renew(): Promise<void> {
    if (this.closed || this.failure || !this.lease) return;
    const lease = this.lease;
    await this.enqueue(async () => {
      this.lease = await this.store.lease(this.sessionId, { owner: this.owner, ttlMs: this.ttlMs, renew: lease });
    }).catch((error: unknown) => this.noteFailure(this.named(error)));
  }

  /** A lost lease ends this process's hold on the session for good; other failures may pass. */
  private noteFailure(error: SwitchyardError): SwitchyardError {
    if (error.code === 'LEASE_HELD') {
      this.failure = error;
      clearInterval(this.heartbeat);
    }
    return error;
  }

  private limit(problem: string): SwitchyardError {
    return storeError('LIMIT_EXCEEDED', this.sessionId, `${problem}; the store keeps its last commit (start a new session, or a shorter history, to go on persisting)`);
  }

  /** Store errors name the session already; anything else becomes `STORE_FAILED` naming it. */
  private named(error: unknown): SwitchyardError {
    if (isSwitchyardError(error)) return error;
    return storeError('STORE_FAILED', this.sessionId, `the store failed: ${errorMessage(error)}`, error);
  }

  /** The error every write reports once the session lost its lease. */
  get lost(): SwitchyardError | undefined {
    return this.failure;
  }
}
