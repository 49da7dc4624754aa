import { CELL_ID_PATTERN, CODE_MODE_STATE_FORMAT, CODE_MODE_STATE_VERSION, SwitchyardError, hasErrorCode } from '@switchyard/protocol';
import type {
  CellHost,
  CellObservation,
  CellToolDescriptor,
  CodeModeSession,
  CodeModeSessionState,
  CreateCellOptions,
  CreatedCell,
  ObserveOptions,
  RestoreOptions,
  RestoreResult,
} from '@switchyard/protocol';
import { Cell, observationCancelled, type CellLimits } from './cell';
import type { ReplayJournal } from './cell-replay';
import type { EngineJournals } from './journal/engine-journals';
import { newSeed } from './journal/hashing';
import { restoreEngineSession } from './engine-restore';
import { newSessionId } from './journal/state';
import { ReplyCache, checkIdempotencyKey, joinAnswer } from './reply-cache';
import { cellError, cellIdOf } from './protocol/wire-error';

/** `[key, JSON text]` of one stored value. */
export type StoredPair = [string, string];

/**
 * Where a session's committed stored values live: each cell starts from `snapshot(cellId)` and,
 * when it completes, its writes go to `commit(cellId, writes)` (atomically with its transition to
 * completed; terminated cells commit nothing). In process the session holds them
 * ({@link createStoredValues}); in a worker process they live with the host, which sends each
 * cell's snapshot with its creation and receives the writes.
 */
export interface StoredValueStore {
  snapshot(cellId: string): StoredPair[];
  commit(cellId: string, writes: StoredPair[]): void;
  /** Replaces every value (a restore); only a store that keeps the values itself has it. */
  replace?(pairs: readonly StoredPair[]): void;
}

/** A store that keeps the values itself (key → JSON text; the last writer of a key wins). */
export function createStoredValues(): StoredValueStore & { readonly values: Map<string, string> } {
  const values = new Map<string, string>();
  return {
    values,
    snapshot: () => [...values],
    commit(_cellId, writes) {
      for (const [key, json] of writes) if (typeof key === 'string' && typeof json === 'string') values.set(key, json);
    },
    replace(pairs) {
      values.clear();
      for (const [key, json] of pairs) values.set(key, json);
    },
  };
}

/** A cell re-run from its journal (`Session.resumeCell`): a creation plus the journal and the seed. */
export interface ResumeCellOptions {
  cellId: string;
  source: string;
  tools: readonly CellToolDescriptor[];
  typescript?: boolean;
  seed: string;
  journal: ReplayJournal;
  /** The snapshot the cell started with; default: the store's (`StoredValueStore.snapshot`). */
  stored?: StoredPair[];
  /** Attach an observer: the promise resolves with the cell's observation (else as soon as the replay started). */
  yieldTimeMs?: number;
}

/** Everything a session needs from its runtime. */
export interface SessionSettings {
  host: CellHost;
  limits: CellLimits;
  maxCells: number;
  storedValues: boolean;
  /** Where committed stored values live. */
  store: StoredValueStore;
  nextCellId(): string;
  /** Called once the session has shut down. */
  closed(session: Session): void;
  /** Keeps each cell's journal here (the in-process runtime: this session is its host's); absent: they are kept elsewhere. */
  journals?: EngineJournals;
}

/** The service failures of a session, shared by the engine and the process runtime (same texts). */
export const notFound = (cellId: string) => new SwitchyardError('CELL_NOT_FOUND', `exec cell ${cellId} not found`);
export const shuttingDown = () => new SwitchyardError('SHUTTING_DOWN', 'code mode session is shutting down');
export const tooManyCells = (running: number, limit: number) =>
  new SwitchyardError(
    'LIMIT_EXCEEDED',
    `exec cell limit reached: this session already runs ${running} cells (limit ${limit}); wait for one to finish or terminate one`,
  );
export const creationCancelled = () => new SwitchyardError('ABORTED', 'exec cell creation was cancelled');
export const cellIdInUse = (cellId: string) => new SwitchyardError('INVALID_INPUT', `createCell: cell id ${cellId} is already used by a cell of this session`);
export const secondObserver = (cellId: string) => new SwitchyardError('RESPOND_TO_MODEL', `exec cell ${cellId} already has an active observer`);
export const alreadyTerminating = (cellId: string) => new SwitchyardError('RESPOND_TO_MODEL', `exec cell ${cellId} is already terminating`);

/** Throws INVALID_INPUT unless `yieldTimeMs` is a non-negative number. */
export function checkYieldTime(yieldTimeMs: unknown): void {
  if (typeof yieldTimeMs !== 'number' || Number.isNaN(yieldTimeMs) || yieldTimeMs < 0) {
    throw new SwitchyardError('INVALID_INPUT', 'observe expects a non-negative yieldTimeMs');
  }
}

/** A keyed creation: what a retry must match (`source`), the cell, and its answer; `cancelled`: the first observation was cancelled. */
interface KeyedCreation {
  source: string;
  cellId: string;
  reply: Promise<CreatedCell>;
  cancelled: boolean;
}

const hasCellId = (error: unknown) => hasErrorCode(error, 'ABORTED') && cellIdOf(error) !== undefined;

/** One session: its cells and its stored-values map. */
export class Session implements CodeModeSession {
  private readonly settings: SessionSettings;
  private readonly cells = new Map<string, Cell>();
  /** Keyed creations and observations, for their retries (the most recent `maxCells` + 8 of each). */
  private readonly creations: ReplyCache<KeyedCreation>;
  private readonly observations: ReplyCache<Promise<CellObservation>>;
  private shutdownPromise: Promise<void> | undefined;
  /** Cells a restore could not resume: their next observation is this failure. */
  private readonly unresumed = new Map<string, string>();
  /** The session's identity in its exported state when it keeps no journals. */
  private stateId: string | undefined;

  constructor(settings: SessionSettings) {
    this.settings = settings;
    this.creations = new ReplyCache(settings.maxCells + 8);
    this.observations = new ReplyCache(settings.maxCells + 8);
  }

  async createCell(options: CreateCellOptions): Promise<CreatedCell> {
    const startedAt = performance.now();
    if (this.shutdownPromise) throw shuttingDown();
    validateCreateOptions(options);
    if (options.signal?.aborted) throw creationCancelled();
    const key = options.idempotencyKey;
    const earlier = key === undefined ? undefined : this.creations.get(key);
    // The same key and the same source: a retry of that creation, never a second run.
    if (earlier && earlier.source === options.source) return this.retryCreation(earlier, options);
    // Every cell the session still holds counts: running, terminating, and completed but not yet
    // observed (those keep their output buffered until a wait or terminate takes it).
    const running = this.cells.size;
    if (running >= this.settings.maxCells) throw tooManyCells(running, this.settings.maxCells);
    if (options.cellId !== undefined && (this.cells.has(options.cellId) || this.unresumed.has(options.cellId))) throw cellIdInUse(options.cellId);
    const id = options.cellId ?? this.settings.nextCellId();
    const reply = this.start(id, options, startedAt);
    if (key !== undefined) this.rememberCreation(key, { source: options.source, cellId: id, reply, cancelled: false });
    return reply;
  }

  private async start(id: string, options: CreateCellOptions, startedAt: number): Promise<CreatedCell> {
    const { store, storedValues } = this.settings;
    const stored = storedValues ? store.snapshot(id) : [];
    const seed = options.seed ?? newSeed();
    this.settings.journals?.open({ cellId: id, source: options.source, tools: options.tools, typescript: options.typescript, stored, seed });
    const cell = this.newCell(id, stored, seed);
    this.cells.set(cell.id, cell);
    // The first observer attaches before the cell's first instruction, so a yield_control()
    // can never race with it (before the first observation).
    const observation = this.handOut(id, cell.observe(options.yieldTimeMs, startedAt, options.signal));
    void cell.start(options.source, options.tools, options.typescript);
    try {
      return { cellId: cell.id, observation: await observation };
    } catch (error) {
      // Only an aborted signal rejects the first observation: name the cell, which keeps running
      // with its output kept, so the host can still observe or terminate it.
      throw cellError(error, cell.id);
    }
  }

  /** A cell of this session (throws `INVALID_JOURNAL` when `replay` cannot be read). */
  private newCell(id: string, stored: StoredPair[], seed: string, replay?: ReplayJournal): Cell {
    const { store, host, journals } = this.settings;
    return new Cell({
      id,
      host: journals ? journals.hostFor(id) : host,
      limits: this.settings.limits,
      storedSnapshot: stored,
      storedValues: this.settings.storedValues,
      seed,
      replay,
      journal: (entries) => (journals ? journals.entries(id, entries) : host.journal?.({ type: 'entries', cellId: id, entries })),
      commit: (writes) => {
        store.commit(id, writes);
        journals?.committed(id, writes);
      },
      closed: (closedCell) => {
        this.cells.delete(closedCell.id);
        journals?.close(closedCell.id);
        try {
          host.cellClosed(closedCell.id);
        } catch {
          // a broken host never harms the runtime
        }
      },
    });
  }

  /** An observation on its way out: its items count as handed out in the cell's journal. */
  private handOut(cellId: string, observation: Promise<CellObservation>): Promise<CellObservation> {
    const journals = this.settings.journals;
    if (!journals) return observation;
    return observation.then((answer) => {
      journals.handedOut(cellId, answer.items);
      return answer;
    });
  }

  /**
   * Re-runs a cell from its journal in a fresh isolate, under its own id (see `CellReplay`).
   * Resolves with its observation when `yieldTimeMs` is given, else once it started. Rejects with
   * `INVALID_JOURNAL` for a journal that cannot be read, or as `createCell` does.
   */
  async resumeCell(options: ResumeCellOptions): Promise<CellObservation | undefined> {
    const startedAt = performance.now();
    if (this.shutdownPromise) throw shuttingDown();
    if (this.cells.has(options.cellId)) throw cellIdInUse(options.cellId);
    if (this.cells.size >= this.settings.maxCells) throw tooManyCells(this.cells.size, this.settings.maxCells);
    const stored = options.stored ?? (this.settings.storedValues ? this.settings.store.snapshot(options.cellId) : []);
    const cell = this.newCell(options.cellId, stored, options.seed, options.journal);
    this.cells.set(cell.id, cell);
    const observation = options.yieldTimeMs === undefined ? undefined : this.handOut(cell.id, cell.observe(options.yieldTimeMs, startedAt));
    void cell.start(options.source, options.tools, options.typescript);
    return observation;
  }

  exportState(): CodeModeSessionState {
    const journals = this.settings.journals;
    return {
      format: CODE_MODE_STATE_FORMAT,
      version: CODE_MODE_STATE_VERSION,
      id: journals?.id ?? (this.stateId ??= newSessionId()),
      stored: this.settings.store.snapshot(''),
      cells: journals?.records() ?? [],
    };
  }

  restore(state: CodeModeSessionState, options: RestoreOptions = {}): Promise<RestoreResult> {
    if (this.shutdownPromise) return Promise.reject(shuttingDown());
    return restoreEngineSession(this, this.settings, state, options);
  }

  get cellCount(): number {
    return this.cells.size + this.unresumed.size;
  }

  /** A cell a restore could not resume: its next observation is the failure (restore's use). */
  unresumable(cellId: string, error: string): void {
    this.unresumed.set(cellId, error);
  }

  /** Keeps a keyed creation's answer for its retries; a failed creation is forgotten (its retry creates afresh). */
  private rememberCreation(key: string, entry: KeyedCreation): void {
    this.creations.set(key, entry);
    entry.reply.catch((error: unknown) => {
      if (this.creations.get(key) !== entry) return;
      if (hasCellId(error)) entry.cancelled = true;
      else this.creations.forget(key, entry);
    });
  }

  /** A retried creation: the original answer (or the one still on its way); after a cancelled first observation, an observation of the cell. */
  private retryCreation(entry: KeyedCreation, options: CreateCellOptions): Promise<CreatedCell> {
    const { cellId } = entry;
    if (!entry.cancelled) {
      return joinAnswer(entry.reply, options.signal, () => cellError(creationCancelled(), cellId)).catch((error: unknown) => {
        // The original's first observation was cancelled while this retry waited on it: observe instead.
        if (!hasCellId(error) || options.signal?.aborted) throw error;
        entry.cancelled = true;
        return this.retryCreation(entry, options);
      });
    }
    entry.cancelled = false;
    entry.reply = this.observe(cellId, { yieldTimeMs: options.yieldTimeMs, signal: options.signal }).then(
      (observation) => ({ cellId, observation }),
      (error: unknown) => {
        throw cellError(error, cellId);
      },
    );
    entry.reply.catch((error: unknown) => {
      if (hasErrorCode(error, 'ABORTED')) entry.cancelled = true;
    });
    return entry.reply;
  }

  async observe(cellId: string, options: ObserveOptions): Promise<CellObservation> {
    const startedAt = performance.now();
    if (options?.terminate) return this.terminate(cellId);
    if (this.shutdownPromise) throw shuttingDown();
    checkIdempotencyKey(options?.idempotencyKey, 'observe');
    const key = options?.idempotencyKey === undefined ? undefined : `${cellId}\u0000${options.idempotencyKey}`;
    const earlier = key === undefined ? undefined : this.observations.get(key);
    // A retried observation: the same answer again (or the one still on its way), even after the cell closed.
    if (earlier) return joinAnswer(earlier, options.signal, () => observationCancelled(cellId));
    const cell = this.cells.get(cellId);
    if (!cell) return this.unresumedEnd(cellId, startedAt);
    if (cell.hasObserver()) throw secondObserver(cellId);
    checkYieldTime(options?.yieldTimeMs);
    const reply = this.handOut(cellId, cell.observe(options.yieldTimeMs, startedAt, options.signal));
    if (key !== undefined) {
      this.observations.set(key, reply);
      // A cancelled observation took nothing: its retry observes afresh.
      reply.catch(() => this.observations.forget(key, reply));
    }
    return reply;
  }

  async terminate(cellId: string): Promise<CellObservation> {
    const startedAt = performance.now();
    if (this.shutdownPromise) throw shuttingDown();
    const cell = this.cells.get(cellId);
    if (!cell) return this.unresumedEnd(cellId, startedAt);
    // Cleanup still running (aborted nested calls get up to 100 ms to settle): a second terminate
    // is refused with the model-visible text, the first one answers.
    if (cell.state === 'terminating') throw alreadyTerminating(cellId);
    return cell.terminate(startedAt);
  }

  /** The end of a cell a restore could not resume (once), or `CELL_NOT_FOUND`. */
  private unresumedEnd(cellId: string, startedAt: number): CellObservation {
    const error = this.unresumed.get(cellId);
    if (error === undefined) throw notFound(cellId);
    this.unresumed.delete(cellId);
    try {
      this.settings.host.cellClosed(cellId);
    } catch {
      // a broken host never harms the runtime
    }
    return { kind: 'completed', cellId, items: [], error, wallTimeMs: performance.now() - startedAt };
  }

  shutdown(): Promise<void> {
    if (!this.shutdownPromise) {
      this.shutdownPromise = Promise.all([...this.cells.values()].map((cell) => cell.shutdown())).then(() => {
        this.settings.closed(this);
      });
    }
    return this.shutdownPromise;
  }
}

/** Throws INVALID_INPUT for malformed `createCell` options (shared by the engine and the process runtime). */
export function validateCreateOptions(options: CreateCellOptions): void {
  const invalid = (message: string) => new SwitchyardError('INVALID_INPUT', message);
  if (typeof options !== 'object' || options === null) throw invalid('createCell expects an options object');
  if (typeof options.source !== 'string') throw invalid('createCell expects `source` to be a string');
  if (options.cellId !== undefined && (typeof options.cellId !== 'string' || !CELL_ID_PATTERN.test(options.cellId))) {
    throw invalid('createCell expects `cellId` to be 1-64 characters of [0-9A-Za-z_-]');
  }
  if (typeof options.yieldTimeMs !== 'number' || Number.isNaN(options.yieldTimeMs) || options.yieldTimeMs < 0) {
    throw invalid('createCell expects a non-negative `yieldTimeMs`');
  }
  if (options.typescript !== undefined && typeof options.typescript !== 'boolean') throw invalid('createCell expects `typescript` to be a boolean');
  checkIdempotencyKey(options.idempotencyKey, 'createCell');
  if (!Array.isArray(options.tools)) throw invalid('createCell expects `tools` to be an array');
  for (const tool of options.tools) {
    if (typeof tool !== 'object' || tool === null || typeof tool.name !== 'string' || tool.name === '') {
      throw invalid('createCell expects every tool to have a non-empty string `name`');
    }
    if (typeof tool.description !== 'string') throw invalid(`tool \`${tool.name}\` needs a string \`description\``);
    if (tool.kind !== 'function' && tool.kind !== 'freeform') throw invalid(`tool \`${tool.name}\` has kind ${String(tool.kind)}; expected function or freeform`);
    if (tool.declaration !== undefined && typeof tool.declaration !== 'string') throw invalid(`tool \`${tool.name}\` has a \`declaration\` that is not a string`);
  }
}
