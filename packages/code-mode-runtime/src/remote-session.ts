import {
  SwitchyardError,
  errorMessage,
  hasErrorCode,
  isSwitchyardError,
  type CellHost,
  type CellObservation,
  type CodeModeSession,
  type CreateCellOptions,
  type CreatedCell,
  type ObserveOptions,
} from '@switchyard/protocol';
import {
  cellIdInUse,
  checkYieldTime,
  creationCancelled,
  notFound,
  shuttingDown,
  tooManyCells,
  validateCreateOptions,
} from './code-mode-session';
import { ReplyTimeoutError, RuntimeLostError, type RuntimeClient, type RuntimeEventMessage } from './runtime-client';
import { BacklogError, ProtocolError, cellError, cellIdOf, splitStoredPairs, type EngineSessionOptions } from './protocol';
import { TurnQueue, resultUnits } from './turn-queue';
import { callToolRequest } from './tool-request';
import { ReplyCache, checkIdempotencyKey, joinAnswer } from './reply-cache';
import { newStateId, storedPairsOf, storedValuesState, type StoredValuesState } from './stored-state';
import { hostLimits, newAccount, pairBytes, StoredValues, type CellAccount, type HostLimits } from './host-limits';

/** What a placement delivers to the session it serves: the runtime's messages for it, and its loss. */
export interface RuntimeSink {
  onEvent(message: RuntimeEventMessage): void;
  onLost(cause: string): void;
}

/** One session's hold on a runtime connection, until `release()`. */
export interface RuntimeLease {
  readonly client: RuntimeClient;
  /** The session's key on that connection. */
  readonly key: string;
  /** Keeps the Node event loop alive while the session waits on the runtime (counted). */
  hold(): () => void;
  /** Gives the connection back (the session has no cells on it any more). */
  release(): void;
  /**
   * How long beyond a creation's yield time its reply may take on this connection (ms) before an
   * unkeyed `createCell` gives up on it (its reply or its request was lost): the cell is
   * terminated and the creation answers a failure saying so. Default 30,000.
   */
  readonly replyGraceMs?: number;
}

/**
 * Where a session's cells go. The process runtime's worker pool is one; a remote placement (runtime
 * hosts over a message bus) is another. `acquire` rejects with an Error whose message says why no
 * runtime could be had ("exec runtime failed to start: …").
 */
export interface RuntimePlacement {
  /** `options.tenant`: whose session it is; a placement that isolates tenants never mixes two on one runtime. */
  acquire(sink: RuntimeSink, options?: { tenant?: string }): Promise<RuntimeLease>;
}

/** Options of {@link RemoteSession}. */
export interface RemoteSessionSettings {
  host: CellHost;
  engine: EngineSessionOptions;
  placement: RuntimePlacement;
  nextCellId(): string;
  /** The session's tenant (`openSession(host, { tenant })`), passed to the placement. */
  tenant?: string;
  /** Called once the session has shut down. */
  closed?(): void;
}

interface Binding {
  lease: RuntimeLease;
  /** Cells of this session living on this connection (ids), and creations still in flight. */
  cells: Set<string>;
  creating: number;
  lost: boolean;
  /** What the host counts per cell of this binding (calls, notify bytes, staged writes). */
  accounts: Map<string, CellAccount>;
  /** Bytes of commit parts staged across the binding's cells. */
  stagedBytes: number;
  /** Nested calls in flight (and waiting to start): runtime call number → its cancel handle and cell. */
  calls: Map<number, { controller: AbortController; cellId: string }>;
  /** The highest call number this binding has seen: a runtime numbers its calls upward per connection. */
  lastCall: number;
  /** The host work of this binding's calls, in slices per event-loop turn. */
  work: TurnQueue;
  /** Keyed requests in flight or kept for a retry: the binding stays while any is (see `retain`). */
  retained: number;
  /** Why the runtime was lost (set when it was, not when the binding was given back). */
  cause?: string;
}

/** A keyed `createCell` / `observe`: where its retries go. */
interface KeyedRequest {
  /** Its key in `RemoteSession.keyed`. */
  key: string;
  cellId: string;
  binding: Binding;
  /** A creation's source (a retry must repeat it). */
  source?: string;
  /** The creation was sent once (later sends are retries). */
  sent?: boolean;
  /** Set while the request, cancelled here, keeps its binding for a retry. */
  timer?: NodeJS.Timeout;
  /** The answer the request got here: a retry repeats it without asking the runtime. */
  answer?: CellObservation;
}

/** How long a keyed request cancelled here keeps its runtime connection for a retry (ms). */
const RETRY_WINDOW_MS = 60_000;

/** {@link RuntimeLease.replyGraceMs} when the placement does not say. */
const DEFAULT_REPLY_GRACE_MS = 30_000;

/** The most a yield time can be on the wire (and as a Node timer). */
const MAX_YIELD_MS = 2 ** 31 - 1;

/**
 * A session whose cells run in a runtime reached over the runtime protocol (a worker process, a
 * remote runtime host). It keeps with the host what must survive the runtime: the committed stored
 * values (each cell gets a snapshot when it starts, its writes commit when it completes) and the
 * cell ids. When the runtime ends, only its cells fail: each pending `createCell` / `observe` /
 * `terminate` answers once with "exec runtime ended unexpectedly: <cause>", pending nested calls
 * are aborted and their results dropped, a later observe of those cells is `CELL_NOT_FOUND`, and
 * the next `createCell` gets a fresh runtime.
 */
export class RemoteSession implements CodeModeSession {
  private readonly settings: RemoteSessionSettings;
  /** The limits this host enforces on what the runtime sends. */
  private readonly limits: HostLimits;
  /** Committed stored values: key → JSON text, within the session's budget. */
  private readonly stored: StoredValues;
  /** Cells whose runtime broke a host limit: their completion fails with it. */
  private readonly failures = new Map<string, string>();
  /** Keyed creations and observations: where their retries go (the most recent `maxCells` + 8). */
  private readonly keyed: ReplyCache<KeyedRequest>;
  /** Every cell the session holds (and the cells being created), by id → the binding it lives on. */
  private readonly cells = new Map<string, Binding>();
  private pendingCreations = 0;
  private binding: Binding | undefined;
  private binding$: Promise<Binding> | undefined;
  private shutdownPromise: Promise<void> | undefined;
  /** The identity of the session's durable state (kept across a restore). */
  private stateId = newStateId();

  constructor(settings: RemoteSessionSettings) {
    this.settings = settings;
    this.limits = hostLimits(settings.engine);
    this.stored = new StoredValues(this.limits);
    this.keyed = new ReplyCache(settings.engine.maxCells + 8);
  }

  async createCell(options: CreateCellOptions): Promise<CreatedCell> {
    const startedAt = performance.now();
    if (this.shutdownPromise) throw shuttingDown();
    validateCreateOptions(options);
    if (options.signal?.aborted) throw creationCancelled();
    const key = options.idempotencyKey === undefined ? undefined : `create\u0000${options.idempotencyKey}`;
    const earlier = key === undefined ? undefined : this.keyed.get(key);
    // The same key and source: a retry, sent to the runtime that holds the original cell (which answers it again).
    if (earlier && earlier.source === options.source) return this.createOn(earlier.binding, earlier.cellId, options, startedAt, earlier);
    const held = this.cells.size + this.pendingCreations;
    if (held >= this.settings.engine.maxCells) throw tooManyCells(held, this.settings.engine.maxCells);
    if (options.cellId !== undefined && this.cells.has(options.cellId)) throw cellIdInUse(options.cellId);
    const cellId = options.cellId ?? this.settings.nextCellId();
    this.pendingCreations++;
    let binding: Binding;
    try {
      binding = await this.bind();
    } catch (error) {
      // No runtime could be had (it failed to start, or a worker limit): a service failure.
      throw isSwitchyardError(error) ? error : new SwitchyardError('RESPOND_TO_MODEL', errorMessage(error), { cause: error });
    } finally {
      this.pendingCreations--;
    }
    if (this.shutdownPromise) {
      this.unbindIfIdle(binding);
      throw shuttingDown();
    }
    this.cells.set(cellId, binding);
    binding.cells.add(cellId);
    const entry = key === undefined ? undefined : { key, cellId, source: options.source, binding };
    if (key !== undefined) this.keyed.set(key, entry!);
    return this.createOn(binding, cellId, options, startedAt, entry);
  }

  /** Sends `create-cell` (a retry when `keyed` was already sent once); a lost runtime answers with the failure observation. */
  private async createOn(binding: Binding, cellId: string, options: CreateCellOptions, startedAt: number, keyed?: KeyedRequest): Promise<CreatedCell> {
    const retry = keyed !== undefined && keyed.sent === true;
    if (keyed?.answer) return joinAnswer(Promise.resolve({ cellId, observation: keyed.answer }), options.signal, creationCancelled);
    if (retry && binding.lost) {
      if (binding.cause === undefined) throw notFound(cellId);
      return { cellId, observation: lostObservation(cellId, binding.cause, startedAt) };
    }
    if (keyed) keyed.sent = true;
    binding.creating++;
    this.unretain(keyed);
    const release = binding.lease.hold();
    try {
      const { client, key } = binding.lease;
      // The snapshot: values too many for one frame go ahead in `stored` parts (a retry starts nothing: none).
      const pairs = this.settings.engine.storedValues && !retry ? this.stored.entries() : [];
      const parts = splitStoredPairs(pairs, Math.floor(client.maxFrameBytes / 2));
      const last = parts.pop() ?? [];
      for (const part of parts) client.post({ t: 'stored', session: key, cellId, values: part });
      const observation = await client.request(
        {
          t: 'create-cell',
          session: key,
          cellId,
          source: options.source,
          // every field of a descriptor travels: the engine reads the ones it knows
          tools: options.tools.map((tool) => ({ ...tool })),
          yieldTimeMs: clampYield(options.yieldTimeMs),
          typescript: options.typescript,
          stored: last,
          ...(options.idempotencyKey === undefined ? {} : { key: options.idempotencyKey }),
        },
        options.signal,
        // A keyed creation is answered by its retry (the caller's); an unkeyed one has no retry: bounded here.
        keyed ? undefined : Math.min(MAX_YIELD_MS, clampYield(options.yieldTimeMs) + replyGrace(binding)),
      );
      const answer = this.timed(observation, cellId, startedAt);
      if (keyed) keyed.answer = answer;
      return { cellId, observation: answer };
    } catch (error) {
      if (error instanceof RuntimeLostError) return { cellId, observation: lostObservation(cellId, error.reason, startedAt) };
      if (error instanceof ReplyTimeoutError) return { cellId, observation: await this.createTimedOut(binding, cellId, error, startedAt) };
      throw this.createFailed(binding, cellId, error, keyed);
    } finally {
      release();
      binding.creating--;
      this.unbindIfIdle(binding);
    }
  }

  /**
   * A creation failed. Cancelled after creation: the cell runs on (the error names it); a keyed
   * creation cancelled here may have started (its answer may be on its way or lost): its cell and
   * its runtime are kept for a retry. Anything else created nothing.
   */
  private createFailed(binding: Binding, cellId: string, error: unknown, keyed: KeyedRequest | undefined): unknown {
    if (hasErrorCode(error, 'ABORTED') && cellIdOf(error) === cellId) return error;
    if (keyed && hasErrorCode(error, 'ABORTED')) {
      this.retain(keyed);
      return cellError(error, cellId);
    }
    // Nothing was created: a retry under the key is a new creation.
    if (keyed) this.keyed.forget(keyed.key, keyed);
    this.forget(binding, cellId);
    return error;
  }

  /**
   * An unkeyed creation whose reply did not come in time (lost with its request or on its way
   * back): the cell, if the runtime made it, is terminated (bounded by the same grace) and
   * forgotten; the creation answers a failure naming the time waited, with what the terminate
   * returned of the cell's output.
   */
  private async createTimedOut(binding: Binding, cellId: string, timeout: ReplyTimeoutError, startedAt: number): Promise<CellObservation> {
    const grace = replyGrace(binding);
    const terminate = { t: 'terminate', session: binding.lease.key, cellId } as const;
    const ended = await binding.lease.client.request(terminate, undefined, grace).catch(() => undefined);
    this.failures.delete(cellId);
    this.forget(binding, cellId, true);
    const error = `exec runtime did not answer within ${timeout.timeoutMs} ms (the yield time and ${grace} ms for the link): the reply to the cell's creation was lost, and the cell was terminated`;
    return { kind: 'completed', cellId, items: ended?.items ?? [], error, wallTimeMs: performance.now() - startedAt };
  }

  async observe(cellId: string, options: ObserveOptions): Promise<CellObservation> {
    const startedAt = performance.now();
    if (options?.terminate) return this.terminate(cellId);
    if (this.shutdownPromise) throw shuttingDown();
    checkIdempotencyKey(options?.idempotencyKey, 'observe');
    const key = options?.idempotencyKey === undefined ? undefined : `observe\u0000${cellId}\u0000${options.idempotencyKey}`;
    const earlier = key === undefined ? undefined : this.keyed.get(key);
    if (earlier?.answer) return earlier.answer;
    // A retried observation goes where the first one went, even when the cell has closed since.
    const binding = this.cells.get(cellId) ?? (earlier && !earlier.binding.lost ? earlier.binding : undefined);
    if (!binding) throw notFound(cellId);
    checkYieldTime(options?.yieldTimeMs);
    const keyed = earlier ?? (key === undefined ? undefined : { key, cellId, binding });
    if (key !== undefined) this.keyed.set(key, keyed!);
    const message = { t: 'observe' as const, session: binding.lease.key, cellId, yieldTimeMs: clampYield(options.yieldTimeMs) };
    binding.retained++;
    this.unretain(keyed);
    try {
      const answer = await this.ask(binding, cellId, startedAt, options.idempotencyKey === undefined ? message : { ...message, key: options.idempotencyKey }, options.signal);
      if (keyed) keyed.answer = answer;
      return answer;
    } catch (error) {
      // Cancelled here, its answer may be lost on its way: the runtime is kept for a retry.
      if (keyed && hasErrorCode(error, 'ABORTED')) this.retain(keyed);
      throw error;
    } finally {
      binding.retained--;
      this.unbindIfIdle(binding);
    }
  }

  /**
   * Keeps `keyed`'s runtime connection (and the runtime's session, which holds the answers to
   * repeat) for {@link RETRY_WINDOW_MS} after the request was cancelled here, although the
   * session may have no cell left on it: a retry within that window is answered again.
   */
  private retain(keyed: KeyedRequest): void {
    if (keyed.timer !== undefined) return;
    keyed.binding.retained++;
    keyed.timer = setTimeout(() => this.unretain(keyed), RETRY_WINDOW_MS);
    keyed.timer.unref?.();
  }

  private unretain(keyed: KeyedRequest | undefined): void {
    if (keyed?.timer === undefined) return;
    clearTimeout(keyed.timer);
    keyed.timer = undefined;
    keyed.binding.retained--;
    this.unbindIfIdle(keyed.binding);
  }

  async terminate(cellId: string): Promise<CellObservation> {
    const startedAt = performance.now();
    if (this.shutdownPromise) throw shuttingDown();
    const binding = this.cells.get(cellId);
    if (!binding) throw notFound(cellId);
    return this.ask(binding, cellId, startedAt, { t: 'terminate', session: binding.lease.key, cellId });
  }

  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.closeAll();
    return this.shutdownPromise;
  }

  /** The committed stored values as durable state, for a session store (cells are not journaled here). */
  exportState(): StoredValuesState {
    return storedValuesState(this.stateId, this.stored.entries());
  }

  /** Restores what {@link exportState} gave (before any cell is created); its cells, none here, would resume. */
  async restore(state: unknown): Promise<{ cells: [] }> {
    const { id, pairs } = storedPairsOf(state);
    const refused = this.stored.replace(pairs);
    if (refused !== undefined) throw new SwitchyardError('LIMIT_EXCEEDED', refused);
    this.stateId = id;
    return { cells: [] };
  }

  private async closeAll(): Promise<void> {
    const bindings = new Set(this.cells.values());
    if (this.binding) bindings.add(this.binding);
    await Promise.all(
      [...bindings].map(async (binding) => {
        if (!binding.lost) {
          const release = binding.lease.hold();
          // The runtime terminates the session's cells (observers answered `terminated`); bounded
          // so that an unresponsive runtime cannot hold shutdown up.
          const closing = binding.lease.client.request({ t: 'close-session', session: binding.lease.key }).catch(() => undefined);
          await Promise.race([closing, delay(1_000)]);
          release();
        }
        for (const cellId of [...binding.cells]) this.forget(binding, cellId, true);
        this.drop(binding);
      }),
    );
    this.settings.closed?.();
  }

  /** Sends an observe / terminate request; a lost runtime answers with the failure observation. */
  private async ask(binding: Binding, cellId: string, startedAt: number, message: Parameters<RuntimeClient['request']>[0], signal?: AbortSignal): Promise<CellObservation> {
    const release = binding.lease.hold();
    try {
      const observation = await binding.lease.client.request(message, signal);
      return this.timed(observation, cellId, startedAt);
    } catch (error) {
      if (error instanceof RuntimeLostError) return lostObservation(cellId, error.reason, startedAt);
      throw error;
    } finally {
      release();
    }
  }

  private timed(observation: CellObservation | undefined, cellId: string, startedAt: number): CellObservation {
    if (!observation || observation.cellId !== cellId) {
      throw new SwitchyardError('INTERNAL', `exec runtime answered for cell ${observation?.cellId ?? 'none'} instead of ${cellId}`);
    }
    const failure = this.failures.get(cellId);
    if (failure !== undefined && observation.kind !== 'yielded') {
      // The runtime made the cell break a host limit: its end is that failure (its writes were not stored).
      this.failures.delete(cellId);
      const error = observation.kind === 'completed' && observation.error ? `${observation.error}\n${failure}` : failure;
      return { kind: 'completed', cellId, items: observation.items, error, wallTimeMs: performance.now() - startedAt };
    }
    return { ...observation, wallTimeMs: performance.now() - startedAt };
  }

  /** The binding new cells go to: the current one, or a fresh lease (one acquisition at a time). */
  private bind(): Promise<Binding> {
    if (this.binding && !this.binding.lost) return Promise.resolve(this.binding);
    if (this.binding$) return this.binding$;
    const binding: Binding = { lease: undefined as never, cells: new Set(), creating: 0, lost: false, accounts: new Map(), stagedBytes: 0, calls: new Map(), lastCall: 0, work: new TurnQueue(), retained: 0 };
    // A placement may report the connection lost (or, in principle, an event) after its handshake
    // but before `acquire` has resolved: the binding has no lease yet and no cells, so the loss is
    // only remembered and the acquisition fails with its cause.
    let lostEarly: string | undefined;
    this.binding$ = this.settings.placement
      .acquire({
        onEvent: (message) => {
          if (binding.lease) this.onEvent(binding, message);
        },
        onLost: (cause) => {
          if (binding.lease) this.onLost(binding, cause);
          else lostEarly ??= cause;
        },
      }, this.settings.tenant === undefined ? undefined : { tenant: this.settings.tenant })
      .then((lease) => {
        if (lostEarly !== undefined) {
          lease.release();
          throw new Error(`exec runtime failed to start: ${lostEarly}`);
        }
        binding.lease = lease;
        this.binding = binding;
        // Pipelined: the runtime handles it before the create-cell that follows on the same connection.
        lease.client.request({ t: 'open-session', session: lease.key, options: this.settings.engine }).catch(() => undefined);
        return binding;
      })
      .finally(() => {
        this.binding$ = undefined;
      });
    return this.binding$;
  }

  /** A binding without cells gives its connection back (closing its session there). */
  private unbindIfIdle(binding: Binding): void {
    if (binding.cells.size > 0 || binding.creating > 0 || binding.retained > 0 || binding.lost) return;
    if (!binding.lease.client.ended) binding.lease.client.request({ t: 'close-session', session: binding.lease.key }).catch(() => undefined);
    this.drop(binding);
  }

  private drop(binding: Binding): void {
    if (this.binding === binding) this.binding = undefined;
    for (const { controller } of binding.calls.values()) controller.abort('exec cell ended');
    binding.calls.clear();
    binding.lost = true;
    binding.lease.release();
  }

  /** The cell left the session: tell the host once. */
  private forget(binding: Binding, cellId: string, announce = false): void {
    if (this.cells.get(cellId) !== binding) return;
    this.cells.delete(cellId);
    binding.cells.delete(cellId);
    const account = binding.accounts.get(cellId);
    if (account) binding.stagedBytes -= account.stagedBytes;
    binding.accounts.delete(cellId);
    if (announce) this.safely(() => this.settings.host.cellClosed(cellId));
  }

  private onLost(binding: Binding, cause: string): void {
    if (binding.lost) return;
    binding.cause = cause;
    const cellIds = [...binding.cells];
    for (const cellId of cellIds) this.forget(binding, cellId, true);
    this.drop(binding);
    this.safely(() => this.settings.host.runtimeEvent?.({ type: 'runtime-lost', cause, cellIds }));
  }

  private onEvent(binding: Binding, message: RuntimeEventMessage): void {
    if (binding.lost) {
      // Results of a dropped binding are not wanted; calls must still be answered once.
      if (message.t === 'call') binding.lease.client.post({ t: 'call-result', call: message.call, ok: false, error: 'exec cell ended' });
      return;
    }
    const { host } = this.settings;
    switch (message.t) {
      case 'call':
        return this.onCall(binding, message);
      case 'call-abort':
        // A call in this binding's map belongs to it (the runtime may abort it after the cell closed).
        binding.calls.get(message.call)?.controller.abort('nested tool call cancelled');
        return;
      case 'notify':
        if (this.cells.get(message.cellId) === binding && this.notifyFits(binding, message.cellId, message.text)) {
          this.safely(() => host.notify({ cellId: message.cellId, text: message.text }));
        }
        return;
      case 'commit':
        return this.onCommit(binding, message);
      case 'cell-closed':
        if (this.cells.get(message.cellId) !== binding) return;
        this.forget(binding, message.cellId, true);
        this.unbindIfIdle(binding);
        return;
      case 'cell-event':
        this.safely(() => host.runtimeEvent?.(message.event));
        return;
    }
  }

  private account(binding: Binding, cellId: string): CellAccount {
    let account = binding.accounts.get(cellId);
    if (!account) binding.accounts.set(cellId, (account = newAccount()));
    return account;
  }

  /** The runtime made `cellId` break a host limit: the cell's completion fails with `message`, the host hears it once. */
  private failCell(binding: Binding, cellId: string, message: string): void {
    const account = this.account(binding, cellId);
    if (account.failure !== undefined) return;
    account.failure = message;
    this.failures.set(cellId, message);
    binding.stagedBytes -= account.stagedBytes;
    account.staged = [];
    account.stagedBytes = 0;
    this.safely(() => this.settings.host.runtimeEvent?.({ type: 'cell-limit-exceeded', cellId, message }));
  }

  /** A notify within the cell's notify bytes (and the value size limit); over it, the cell fails. */
  private notifyFits(binding: Binding, cellId: string, text: string): boolean {
    const account = this.account(binding, cellId);
    if (account.failure !== undefined) return false;
    const { maxNotifyBytes, maxValueChars } = this.limits;
    if (text.length > maxValueChars) {
      this.failCell(binding, cellId, `exec notify limit exceeded: a notify text of ${text.length} characters is over the limit of ${maxValueChars} characters per value`);
      return false;
    }
    const bytes = Buffer.byteLength(text, 'utf8');
    if (account.notifyBytes + bytes > maxNotifyBytes) {
      this.failCell(binding, cellId, `exec notify limit exceeded: the cell's notify texts passed ${maxNotifyBytes} bytes (maxOutputBytes)`);
      return false;
    }
    account.notifyBytes += bytes;
    return true;
  }

  /** Stages commit parts (bounded by the stored budget) and commits the last one within the session's budget. */
  private onCommit(binding: Binding, message: Extract<RuntimeEventMessage, { t: 'commit' }>): void {
    const { cellId } = message;
    if (this.cells.get(cellId) !== binding || !this.settings.engine.storedValues) return;
    const account = this.account(binding, cellId);
    if (account.failure !== undefined) return;
    let bytes = 0;
    for (const pair of message.writes) bytes += pairBytes(pair);
    if (binding.stagedBytes + bytes > this.limits.maxStoredBytes) {
      const budget = this.limits.maxStoredBytes;
      return this.failCell(binding, cellId, `exec stored values budget exceeded: the cell's writes in flight passed ${budget} bytes (maxStoredBytes); none of its writes were stored, earlier values are unchanged`);
    }
    for (const pair of message.writes) account.staged.push(pair);
    account.stagedBytes += bytes;
    binding.stagedBytes += bytes;
    if (message.more) return;
    const writes = account.staged;
    binding.stagedBytes -= account.stagedBytes;
    account.staged = [];
    account.stagedBytes = 0;
    const refused = this.stored.commit(writes);
    if (refused !== undefined) this.failCell(binding, cellId, refused);
  }

  private onCall(binding: Binding, message: Extract<RuntimeEventMessage, { t: 'call' }>): void {
    const { client } = binding.lease;
    const answer = (ok: boolean, value: unknown) => {
      const account = binding.accounts.get(message.cellId);
      if (binding.calls.delete(message.call) && account) account.calls--;
      if (client.ended) return;
      if (!ok) {
        const text = String(value);
        try {
          client.post({ t: 'call-result', call: message.call, ok: false, error: text });
        } catch {
          client.post({ t: 'call-result', call: message.call, ok: false, error: `${text.slice(0, 1_000)}… (the tool's error text was too long to send to the cell)` });
        }
        return;
      }
      binding.work.push(() => this.sendResult(client, message.call, value), resultUnits(value instanceof JsonText ? value.text : value));
    };
    if (this.cells.get(message.cellId) !== binding) return answer(false, `exec cell ${message.cellId} not found`);
    if (binding.calls.has(message.call)) return binding.lease.client.lose(`protocol violation: call ${message.call} is already in flight`);
    // A runtime numbers its calls upward on a connection, so a number at or below the highest seen
    // is a replayed frame: refused, or the tool would run a second time after its first call ended.
    if (message.call <= binding.lastCall) return binding.lease.client.lose(`protocol violation: call ${message.call} repeats an earlier call`);
    binding.lastCall = message.call;
    const account = this.account(binding, message.cellId);
    if (account.calls >= this.limits.maxInFlightCalls) {
      return answer(false, `exec nested call limit exceeded: the cell has ${account.calls} nested calls in flight, the limit is ${this.limits.maxInFlightCalls} (maxInFlightCalls)`);
    }
    account.calls++;
    const controller = new AbortController();
    binding.calls.set(message.call, { controller, cellId: message.cellId });
    // Started even when the runtime already aborted it (the host sees the call and its aborted signal).
    binding.work.push(() => {
      this.startCall(message, controller.signal).then(
        (value) => answer(true, value),
        (error) => answer(false, typeof error === 'string' ? error : errorMessage(error)),
      );
    });
  }

  /** Starts the host's tool: resolves with the result's JSON text when the host holds it (`invokeToolJson`), else the value (encoded in `sendResult`, after the backlog check). */
  private startCall(message: Extract<RuntimeEventMessage, { t: 'call' }>, signal: AbortSignal): Promise<unknown> {
    const { host } = this.settings;
    try {
      const request = callToolRequest(message, signal);
      if (host.invokeToolJson) return host.invokeToolJson(request).then((answer) => ('json' in answer ? new JsonText(answer.json) : answer.value));
      return Promise.resolve(host.invokeTool(request));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Sends a tool's result (its JSON text, or a value encoded here once), or why it could not be sent (backlog, frame limit, not JSON). */
  private sendResult(client: RuntimeClient, call: number, value: unknown): void {
    if (client.ended) return;
    try {
      // A string's JSON is at least as long as the string: a result certain to pass the backlog
      // limit is refused before it is encoded (a flood of large results costs no encoding).
      const atLeast = value instanceof JsonText ? (value.text?.length ?? 0) : typeof value === 'string' ? value.length + 2 : 0;
      const limit = this.limits.maxInFlightResultBytes;
      if (client.backlogBytes + atLeast > limit) throw new BacklogError(atLeast, client.backlogBytes, limit);
      // A value JSON cannot encode (circular, BigInt) throws a TypeError here; the text travels as
      // a blob, never escaped again into the frame.
      const json = value instanceof JsonText ? value.text : JSON.stringify(value);
      client.post(json === undefined ? { t: 'call-result', call, ok: true } : { t: 'call-result', call, ok: true, json }, limit);
    } catch (error) {
      client.post({ t: 'call-result', call, ok: false, error: unsendable(error) });
    }
  }

  private safely(task: () => void): void {
    try {
      task();
    } catch {
      // a broken host never harms the session
    }
  }
}

/** A result as the JSON text the host gave (`undefined`: no value), sent as it is. */
class JsonText {
  constructor(readonly text: string | undefined) {}
}

/** Why a tool's result could not go to the cell (a frame or backlog limit, or a value JSON cannot encode). */
function unsendable(error: unknown): string {
  if (error instanceof BacklogError) {
    return `tool result could not be sent to the cell: ${error.bytes} bytes would put ${error.backlog + error.bytes} bytes of results in flight to the runtime, over the limit of ${error.limit} bytes (maxInFlightResultBytes)`;
  }
  if (error instanceof ProtocolError) return `tool result could not be sent to the cell: ${error.message}`;
  return `tool result is not JSON-serializable: ${errorMessage(error)}`;
}

function replyGrace(binding: Binding): number {
  return binding.lease.replyGraceMs ?? DEFAULT_REPLY_GRACE_MS;
}

function clampYield(yieldTimeMs: number): number {
  return Math.min(MAX_YIELD_MS, Math.max(0, Math.floor(yieldTimeMs)));
}

function lostObservation(cellId: string, cause: string, startedAt: number): CellObservation {
  return { kind: 'completed', cellId, items: [], error: `exec runtime ended unexpectedly: ${cause}`, wallTimeMs: performance.now() - startedAt };
}

const delay = (ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
  });
