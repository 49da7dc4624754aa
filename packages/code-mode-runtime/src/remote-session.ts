import {
  CODE_MODE_STATE_FORMAT,
  CODE_MODE_STATE_VERSION,
  RESTORE_TOO_LATE_MESSAGE,
  SwitchyardError,
  errorMessage,
  hasErrorCode,
  isSwitchyardError,
  type CellHost,
  type CellObservation,
  type CodeModeSession,
  type CodeModeSessionState,
  type CreateCellOptions,
  type CreatedCell,
  type ObserveOptions,
  type RestoreOptions,
  type RestoreResult,
} from '@switchyard/protocol';
import { UnresumedCells, cellIdInUse, checkYieldTime, creationCancelled, failedEnd, notFound, shuttingDown, tooManyCells, validateCreateOptions } from './code-mode-session';
import { ReplyTimeoutError, RuntimeLostError, type RuntimeClient, type RuntimeEventMessage } from './runtime-client';
import { cellError, cellIdOf, splitStoredPairs, type EngineSessionOptions } from './protocol';
import { checkIdempotencyKey, joinAnswer } from './reply-cache';
import { CellJournal } from './journal/cell-journal';
import { newSeed } from './journal/hashing';
import { RemoteCore, type Binding, type HostCell, type KeyedRequest } from './remote-binding';
import { CallProxy } from './remote-calls';
import { RuntimeEvents } from './remote-events';
import { Resumer, lostText } from './remote-replay';
import { restoreRemoteSession } from './remote-restore';

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
  /**
   * `options.tenant`: whose session it is; a placement that isolates tenants never mixes two on one
   * runtime. `options.alone`: a runtime no other session uses while this lease lives (the quarantine
   * replay of one cell after its runtime was lost twice).
   */
  acquire(sink: RuntimeSink, options?: { tenant?: string; alone?: boolean }): Promise<RuntimeLease>;
  /** A replay alone proved this tenant's cell crashed its runtime: place the tenant alone from now on. */
  isolateTenant?(tenant: string): void;
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

/** How long a keyed request cancelled here keeps its runtime connection for a retry (ms). */
const RETRY_WINDOW_MS = 60_000;

/** {@link RuntimeLease.replyGraceMs} when the placement does not say. */
const DEFAULT_REPLY_GRACE_MS = 30_000;

/** The most a yield time can be on the wire (and as a Node timer). */
const MAX_YIELD_MS = 2 ** 31 - 1;

/**
 * A session whose cells run in a runtime reached over the runtime protocol (a worker process, a
 * remote runtime host). It keeps with the host what must survive the runtime: the committed stored
 * values (each cell gets a snapshot when it starts, its writes commit when it completes), the cell
 * ids, and each cell's journal. When the runtime ends, its cells are replayed from their journals
 * on another runtime (`remote-replay.ts`: requests waiting on them are answered from there, no
 * nested call runs twice); a cell that cannot be resumed fails with "exec runtime ended
 * unexpectedly: <cause>" and why, and the next `createCell` gets a fresh runtime.
 */
export class RemoteSession implements CodeModeSession {
  private readonly core: RemoteCore;
  private readonly calls: CallProxy;
  private readonly events: RuntimeEvents;
  private readonly resumer: Resumer;
  private pendingCreations = 0;
  private shutdownPromise: Promise<void> | undefined;
  /** Cells a restore could not resume: their next observation is this failure. */
  private readonly unresumed: UnresumedCells;

  constructor(settings: RemoteSessionSettings) {
    const core = (this.core = new RemoteCore(settings));
    this.unresumed = new UnresumedCells((cellId) => core.settings.host.cellClosed(cellId));
    this.calls = new CallProxy(core, (cell, message) => this.events.failCell(cell, message));
    this.events = new RuntimeEvents(core, this.calls, (cell) => {
      this.forget(cell, true);
      this.core.unbindIfIdle(cell.binding);
    });
    this.resumer = new Resumer(core, this.calls, (cell, announce) => this.forget(cell, announce));
    core.onEvent = (binding, message) => this.events.onEvent(binding, message);
    core.onLost = (binding, cause) => this.resumer.lost(binding, cause);
    core.dropCalls = (binding) => this.calls.release(binding, () => true);
  }

  async createCell(options: CreateCellOptions): Promise<CreatedCell> {
    const startedAt = performance.now();
    if (this.shutdownPromise) throw shuttingDown();
    validateCreateOptions(options);
    if (options.signal?.aborted) throw creationCancelled();
    const { core } = this;
    const key = options.idempotencyKey === undefined ? undefined : `create\u0000${options.idempotencyKey}`;
    const earlier = key === undefined ? undefined : core.keyed.get(key);
    // The same key and source: a retry, sent to the runtime that holds the original cell (which answers it again).
    if (earlier && earlier.source === options.source) return this.createOn(earlier.binding, earlier.cellId, options, startedAt, earlier);
    const held = core.cells.size + this.pendingCreations + this.unresumed.size;
    if (held >= core.settings.engine.maxCells) throw tooManyCells(held, core.settings.engine.maxCells);
    if (options.cellId !== undefined && (core.cells.has(options.cellId) || this.unresumed.has(options.cellId))) throw cellIdInUse(options.cellId);
    const cellId = options.cellId ?? core.settings.nextCellId();
    this.pendingCreations++;
    let binding: Binding;
    try {
      binding = await core.bind();
    } catch (error) {
      // No runtime could be had (it failed to start, or a worker limit): a service failure.
      throw isSwitchyardError(error) ? error : new SwitchyardError('RESPOND_TO_MODEL', errorMessage(error), { cause: error });
    } finally {
      this.pendingCreations--;
    }
    if (this.shutdownPromise) {
      core.unbindIfIdle(binding);
      throw shuttingDown();
    }
    const seed = options.seed ?? newSeed();
    const stored = core.settings.engine.storedValues ? core.stored.entries() : [];
    const journal = core.maxJournalBytes > 0 ? this.newJournal({ cellId, source: options.source, tools: options.tools, typescript: options.typescript, stored, seed }) : undefined;
    core.addCell(cellId, binding, journal);
    journal?.opened();
    const entry = key === undefined ? undefined : { key, cellId, source: options.source, binding };
    if (key !== undefined) core.keyed.set(key, entry!);
    return this.createOn(binding, cellId, { ...options, seed }, startedAt, entry, stored);
  }

  private newJournal(start: ConstructorParameters<typeof CellJournal>[0]): CellJournal {
    return new CellJournal(start, this.core.maxJournalBytes, this.core.report, () => this.core.id);
  }

  /** Sends `create-cell` (a retry when `keyed` was already sent once); a lost runtime resumes the cell elsewhere. */
  private async createOn(binding: Binding, cellId: string, options: CreateCellOptions, startedAt: number, keyed?: KeyedRequest, stored: Array<[string, string]> = []): Promise<CreatedCell> {
    const retry = keyed !== undefined && keyed.sent === true;
    if (keyed?.answer) return joinAnswer(Promise.resolve({ cellId, observation: keyed.answer }), options.signal, creationCancelled);
    const cell = this.core.cells.get(cellId);
    // A retry whose runtime was lost: its cell was resumed elsewhere (observe it there), or failed.
    if (retry && binding.lost) {
      if (cell && cell.binding !== binding) return { cellId, observation: await this.observe(cellId, { yieldTimeMs: options.yieldTimeMs, signal: options.signal }) };
      if (binding.cause === undefined) throw notFound(cellId);
      return { cellId, observation: failedEnd(cellId, lostText(binding.cause), startedAt) };
    }
    if (keyed) keyed.sent = true;
    binding.creating++;
    this.unretain(keyed);
    const release = binding.lease.hold();
    try {
      const { client, key } = binding.lease;
      // The snapshot: values too many for one frame go ahead in `stored` parts (a retry starts nothing: none).
      const parts = splitStoredPairs(retry ? [] : stored, Math.floor(client.maxFrameBytes / 2));
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
          ...(options.seed === undefined ? {} : { seed: options.seed }),
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
      if (error instanceof RuntimeLostError) return { cellId, observation: await this.afterLoss(cell, binding, error, options.yieldTimeMs, startedAt, options.signal) };
      if (error instanceof ReplyTimeoutError) return { cellId, observation: await this.createTimedOut(binding, cellId, error, startedAt) };
      throw this.createFailed(binding, cellId, error, keyed);
    } finally {
      release();
      binding.creating--;
      this.core.unbindIfIdle(binding);
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
    if (keyed) this.core.keyed.forget(keyed.key, keyed);
    const cell = this.core.cells.get(cellId);
    if (cell && cell.binding === binding) this.forget(cell, false);
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
    this.core.failures.delete(cellId);
    const cell = this.core.cells.get(cellId);
    if (cell && cell.binding === binding) this.forget(cell, true);
    const error = `exec runtime did not answer within ${timeout.timeoutMs} ms (the yield time and ${grace} ms for the link): the reply to the cell's creation was lost, and the cell was terminated`;
    return { kind: 'completed', cellId, items: ended?.items ?? [], error, wallTimeMs: performance.now() - startedAt };
  }

  async observe(cellId: string, options: ObserveOptions): Promise<CellObservation> {
    const startedAt = performance.now();
    if (options?.terminate) return this.terminate(cellId);
    if (this.shutdownPromise) throw shuttingDown();
    checkIdempotencyKey(options?.idempotencyKey, 'observe');
    const { core } = this;
    const key = options?.idempotencyKey === undefined ? undefined : `observe\u0000${cellId}\u0000${options.idempotencyKey}`;
    const earlier = key === undefined ? undefined : core.keyed.get(key);
    if (earlier?.answer) return earlier.answer;
    // A retried observation goes where the first one went, even when the cell has closed since.
    const cell = core.cells.get(cellId);
    let binding = cell?.binding ?? (earlier && !earlier.binding.lost ? earlier.binding : undefined);
    if (cell && (!binding || binding.lost) && cell.resuming) {
      // Being resumed: asked where the replay runs (or answered with its end).
      const place = await this.resumedOn(cell, binding, binding?.cause ?? 'the runtime was lost', startedAt);
      if ('end' in place) return place.end;
      binding = place.binding;
    }
    if (!binding) return this.unresumed.end(cellId, startedAt);
    checkYieldTime(options?.yieldTimeMs);
    const keyed = earlier ?? (key === undefined ? undefined : { key, cellId, binding });
    if (keyed) keyed.binding = binding;
    if (key !== undefined) core.keyed.set(key, keyed!);
    const message = { t: 'observe' as const, session: binding.lease.key, cellId, yieldTimeMs: clampYield(options.yieldTimeMs) };
    binding.retained++;
    this.unretain(keyed);
    try {
      const answer = await this.ask(cell, binding, startedAt, options.idempotencyKey === undefined ? message : { ...message, key: options.idempotencyKey }, options.signal, options.yieldTimeMs);
      if (keyed) keyed.answer = answer;
      return answer;
    } catch (error) {
      // Cancelled here, its answer may be lost on its way: the runtime is kept for a retry.
      if (keyed && hasErrorCode(error, 'ABORTED')) this.retain(keyed);
      throw error;
    } finally {
      binding.retained--;
      core.unbindIfIdle(binding);
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
    this.core.unbindIfIdle(keyed.binding);
  }

  async terminate(cellId: string): Promise<CellObservation> {
    const startedAt = performance.now();
    if (this.shutdownPromise) throw shuttingDown();
    const cell = this.core.cells.get(cellId);
    if (!cell) return this.unresumed.end(cellId, startedAt);
    cell.terminating = true;
    let binding = cell.binding;
    if ((!binding || binding.lost) && cell.resuming) {
      const place = await this.resumedOn(cell, binding, binding?.cause ?? 'the runtime was lost', startedAt);
      if ('end' in place) return place.end;
      binding = place.binding;
    }
    return this.ask(cell, binding, startedAt, { t: 'terminate', session: binding.lease.key, cellId });
  }

  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.closeAll();
    return this.shutdownPromise;
  }

  private async closeAll(): Promise<void> {
    const { core } = this;
    core.closing = true;
    const bindings = new Set<Binding>();
    for (const cell of [...core.cells.values()]) {
      if (cell.binding) bindings.add(cell.binding);
      // a restored cell whose first replay is still being placed: it ends here (the replay sees the shutdown)
      else this.forget(cell, true);
    }
    if (core.binding) bindings.add(core.binding);
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
        for (const cellId of [...binding.cells]) {
          const cell = core.cells.get(cellId);
          if (cell && cell.binding === binding) this.forget(cell, true);
        }
        if (!binding.lost) core.drop(binding);
      }),
    );
    core.settings.closed?.();
  }

  /** Sends an observe / terminate request; a lost runtime answers from the cell's replay, or with its failure. */
  private async ask(cell: HostCell | undefined, binding: Binding, startedAt: number, message: Extract<Parameters<RuntimeClient['request']>[0], { cellId: string }>, signal?: AbortSignal, yieldTimeMs?: number): Promise<CellObservation> {
    const release = binding.lease.hold();
    // Kept while the reply is on its way: the cell may close before it arrives (its `cell-closed`
    // comes first), and a lease given back then (a lone runtime ends with it) would lose the reply.
    binding.retained++;
    try {
      const observation = await binding.lease.client.request(message, signal);
      return this.timed(observation, message.cellId, startedAt);
    } catch (error) {
      if (error instanceof RuntimeLostError) return this.afterLoss(cell, binding, error, yieldTimeMs, startedAt, signal);
      throw error;
    } finally {
      release();
      binding.retained--;
      this.core.unbindIfIdle(binding);
    }
  }

  /**
   * A request on `binding` that the loss of its runtime ended: asked again where the cell was
   * resumed (an observation with what is left of its yield time; a terminate there), or answered
   * with the cell's failure.
   */
  private async afterLoss(cell: HostCell | undefined, binding: Binding, error: RuntimeLostError, yieldTimeMs: number | undefined, startedAt: number, signal?: AbortSignal): Promise<CellObservation> {
    const cellId = cell?.id ?? '';
    if (!cell) return failedEnd(cellId, lostText(error.reason), startedAt);
    const place = await this.resumedOn(cell, binding, error.reason, startedAt);
    if ('end' in place) return place.end;
    const resumed = place.binding;
    if (cell.terminating) return this.ask(cell, resumed, startedAt, { t: 'terminate', session: resumed.lease.key, cellId });
    const left = Math.max(0, (yieldTimeMs ?? 0) - (performance.now() - startedAt));
    return this.ask(cell, resumed, startedAt, { t: 'observe', session: resumed.lease.key, cellId, yieldTimeMs: clampYield(left) }, signal, yieldTimeMs);
  }

  /**
   * Where a request waiting on `cell` goes now that its runtime (`lostOn`) was lost with `cause`:
   * the binding the cell was resumed on, or the cell's end (terminated, or failed with the text
   * saying why it could not be resumed).
   */
  private async resumedOn(cell: HostCell, lostOn: Binding | undefined, cause: string, startedAt: number): Promise<{ binding: Binding } | { end: CellObservation }> {
    const place = await this.resumer.waitFor(cell, lostOn, cause);
    if (typeof place !== 'string') return { binding: place };
    if (place === '') return { end: { kind: 'terminated', cellId: cell.id, items: [], wallTimeMs: performance.now() - startedAt } };
    return { end: failedEnd(cell.id, place, startedAt) };
  }

  private timed(observation: CellObservation | undefined, cellId: string, startedAt: number): CellObservation {
    if (!observation || observation.cellId !== cellId) {
      throw new SwitchyardError('INTERNAL', `exec runtime answered for cell ${observation?.cellId ?? 'none'} instead of ${cellId}`);
    }
    this.core.cells.get(cellId)?.journal?.handedOut(observation.items);
    const failure = this.core.failures.get(cellId);
    if (failure !== undefined && observation.kind !== 'yielded') {
      // The runtime made the cell break a host limit: its end is that failure (its writes were not stored).
      this.core.failures.delete(cellId);
      const error = observation.kind === 'completed' && observation.error ? `${observation.error}\n${failure}` : failure;
      return { kind: 'completed', cellId, items: observation.items, error, wallTimeMs: performance.now() - startedAt };
    }
    return { ...observation, wallTimeMs: performance.now() - startedAt };
  }

  /** The cell left the session: its journal closes, the host hears it once (`announce`). */
  private forget(cell: HostCell, announce: boolean): void {
    const { core } = this;
    if (core.cells.get(cell.id) !== cell) return;
    core.cells.delete(cell.id);
    if (cell.binding) {
      cell.binding.cells.delete(cell.id);
      cell.binding.stagedBytes -= cell.account.stagedBytes;
    }
    cell.journal?.closed();
    this.calls.endCell(cell);
    if (announce) core.safely(() => core.settings.host.cellClosed(cell.id));
  }

  exportState(): CodeModeSessionState {
    const cells = [];
    for (const cell of this.core.cells.values()) if (cell.journal) cells.push(cell.journal.record());
    return { format: CODE_MODE_STATE_FORMAT, version: CODE_MODE_STATE_VERSION, id: this.core.id, stored: this.core.stored.entries(), cells };
  }

  restore(state: CodeModeSessionState, options: RestoreOptions = {}): Promise<RestoreResult> {
    if (this.shutdownPromise) return Promise.reject(shuttingDown());
    if (this.core.cells.size > 0 || this.unresumed.size > 0 || this.pendingCreations > 0) {
      return Promise.reject(new SwitchyardError('INVALID_INPUT', RESTORE_TOO_LATE_MESSAGE));
    }
    return restoreRemoteSession(this.core, this.resumer, state, options, (cellId, error) => this.unresumed.add(cellId, error));
  }
}

function replyGrace(binding: Binding): number {
  return binding.lease.replyGraceMs ?? DEFAULT_REPLY_GRACE_MS;
}

function clampYield(yieldTimeMs: number): number {
  return Math.min(MAX_YIELD_MS, Math.max(0, Math.floor(yieldTimeMs)));
}

const delay = (ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
  });
