import { CELL_ID_PATTERN, SwitchyardError, hasErrorCode } from '@switchyard/protocol';
import type { CellHost, CellObservation, CodeModeSession, CreateCellOptions, CreatedCell, ObserveOptions } from '@switchyard/protocol';
import { Cell, observationCancelled, type CellLimits } from './cell';
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
  };
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
    if (options.cellId !== undefined && this.cells.has(options.cellId)) throw cellIdInUse(options.cellId);
    const id = options.cellId ?? this.settings.nextCellId();
    const reply = this.start(id, options, startedAt);
    if (key !== undefined) this.rememberCreation(key, { source: options.source, cellId: id, reply, cancelled: false });
    return reply;
  }

  private async start(id: string, options: CreateCellOptions, startedAt: number): Promise<CreatedCell> {
    const { store } = this.settings;
    const cell = new Cell({
      id,
      host: this.settings.host,
      limits: this.settings.limits,
      storedSnapshot: this.settings.storedValues ? store.snapshot(id) : [],
      storedValues: this.settings.storedValues,
      commit: (writes) => store.commit(id, writes),
      closed: (closedCell) => {
        this.cells.delete(closedCell.id);
        try {
          this.settings.host.cellClosed(closedCell.id);
        } catch {
          // a broken host never harms the runtime
        }
      },
    });
    this.cells.set(cell.id, cell);
    // The first observer attaches before the cell's first instruction, so a yield_control()
    // can never race with it (before the first observation).
    const observation = cell.observe(options.yieldTimeMs, startedAt, options.signal);
    void cell.start(options.source, options.tools, options.typescript);
    try {
      return { cellId: cell.id, observation: await observation };
    } catch (error) {
      // Only an aborted signal rejects the first observation: name the cell, which keeps running
      // with its output kept, so the host can still observe or terminate it.
      throw cellError(error, cell.id);
    }
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
    if (!cell) throw notFound(cellId);
    if (cell.hasObserver()) throw secondObserver(cellId);
    checkYieldTime(options?.yieldTimeMs);
    const reply = cell.observe(options.yieldTimeMs, startedAt, options.signal);
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
    if (!cell) throw notFound(cellId);
    // Cleanup still running (aborted nested calls get up to 100 ms to settle): a second terminate
    // is refused with the model-visible text, the first one answers.
    if (cell.state === 'terminating') throw alreadyTerminating(cellId);
    return cell.terminate(startedAt);
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
