import type {
  CellJournalUpdate,
  CodeModeSessionState,
  RestoreResult,
  CellEndEvent,
  CellRuntimeEvent,
  CellHost,
  CellStartEvent,
  CodeModeRuntime,
  CodeModeSession,
  CustomToolCallOutputItem,
} from '@switchyard/protocol';
import { createEventHub } from '@switchyard/kit/internal';
import { RESTORE_TOO_LATE_MESSAGE, SwitchyardError } from '@switchyard/protocol';
import { DispatchBroker, type BrokerCellState, type NestedWorker } from './dispatch-broker';
import { BackgroundWatcher } from './background-watch';

/** One host session's Code Mode state: its runtime session (cells, stored values) and its broker. */
export interface BrokerSession {
  readonly sessionId: string;
  readonly runtime: CodeModeSession;
  readonly broker: DispatchBroker;
  /** Observes yielded cells nobody waits on, when the host delivers background completions. */
  readonly watcher: BackgroundWatcher;
}

/** The cell lifecycle events the service emits, and the runtime's own reports (a lost runtime, a cell stopped at a limit, a replayed cell, the admission queue). */
export type CellEvent = CellStartEvent | CellEndEvent | CellRuntimeEvent;

/** The `format` of a {@link CodeModeState}. */
export const CODE_MODE_SERVICE_STATE_FORMAT = 'switchyard.code-mode';

/**
 * One host session's durable Code Mode state, JSON-serializable: the runtime session's state
 * (committed stored values, each open cell's journal) and, per open cell, what dispatches its
 * nested calls (the `exec` call it answers, its tools). A store persists it; `restoreSession`
 * takes it back, in this process or another.
 */
export interface CodeModeState {
  readonly format: typeof CODE_MODE_SERVICE_STATE_FORMAT;
  readonly version: 1;
  readonly runtime: CodeModeSessionState;
  readonly cells: readonly BrokerCellState[];
}

/**
 * One change to a host session's durable Code Mode state, in order: the runtime's
 * `CellHost.journal` update, and for `cell-opened` also what dispatches the new cell's nested
 * calls (`broker`), so that a store holding an older {@link CodeModeState} plus these updates can
 * restore a cell opened after that state was taken.
 */
export type CodeModeJournalUpdate =
  | Exclude<CellJournalUpdate, { type: 'cell-opened' }>
  | (Extract<CellJournalUpdate, { type: 'cell-opened' }> & { readonly broker?: BrokerCellState });

/** Options of {@link CodeModeService.restore}. */
export interface ServiceRestoreOptions {
  /** The agent host restarted (default true): a nested call that was in flight is interrupted, unless its tool is idempotent. */
  readonly hostRestarted?: boolean;
  /** The updates reported (`onJournal`, the `journal` option) after `state` was exported, in order: applied before the restore. */
  readonly journal?: readonly CodeModeJournalUpdate[];
  /** The tenant the session opens with, as for `attachWorker` (a session restored in a new process is opened here). */
  readonly tenant?: string;
}

/**
 * Opens one code-mode session per host session, lazily (the first `exec`), and shuts it down with
 * it. Cells are keyed by host session, not by turn, so a yielded cell survives turns.
 */
export class CodeModeService {
  private readonly sessions = new Map<string, BrokerSession>();
  // a throwing listener is reported (process warning SWITCHYARD_LISTENER) and never reaches the cell or the call
  private readonly events = createEventHub<CellEvent>({ name: 'code-mode' });
  private closing = false;

  /**
   * Subscribes to `cell-start` (a cell was created by `exec`), `cell-end` (its completion,
   * failure or termination was observed), and what the runtime reports: `runtime-lost` (a worker
   * holding cells ended), `cell-limit-exceeded`, and the admission queue's `runtime-queued`,
   * `runtime-admitted` and `runtime-refused`. Returns the unsubscribe function. A throwing
   * listener is reported as a `SWITCHYARD_LISTENER` process warning and never reaches the cell.
   */
  onCellEvent(listener: (event: CellEvent) => void): () => void {
    return this.events.onAny(listener);
  }

  /** Emits a cell event to every listener. */
  emitCellEvent(event: CellEvent): void {
    this.events.emit(event);
  }

  private readonly journalListeners = new Map<string, (update: CodeModeJournalUpdate) => void | Promise<void>>();

  /** `defaultTenant`: the tenant of a session whose opener names none (`createCodeMode({ tenant })`). */
  constructor(
    private readonly runtime: CodeModeRuntime,
    private readonly journal?: (sessionId: string, update: CodeModeJournalUpdate) => void | Promise<void>,
    private readonly defaultTenant?: string,
  ) {}

  /**
   * Hears each change to the host session's durable state as its runtime reports it (a runtime
   * that journals its cells), for the cells created from now on: a session store writes them
   * ahead. A nested call runs only once the promise returned for its `call-issued` resolved (a
   * rejection fails the call, the tool not run). One listener per session (beside the `journal`
   * option's); returns the function that removes it.
   */
  onJournal(sessionId: string, listener: (update: CodeModeJournalUpdate) => void | Promise<void>): () => void {
    this.journalListeners.set(sessionId, listener);
    return () => {
      if (this.journalListeners.get(sessionId) === listener) this.journalListeners.delete(sessionId);
    };
  }

  /** Whether anyone takes the session's journal updates (without, the runtime builds none). */
  private journalTaken(sessionId: string): boolean {
    return this.journal !== undefined || this.journalListeners.has(sessionId);
  }

  /** Hands a runtime's update to the `journal` option and the session's listener; the write-ahead promise is both of theirs. */
  private forwardJournal(session: BrokerSession, update: CellJournalUpdate): void | Promise<void> {
    const broker = update.type === 'cell-opened' ? session.broker.exportCell(update.cellId) : undefined;
    const full: CodeModeJournalUpdate = update.type === 'cell-opened' && broker ? { ...update, broker } : update;
    const written = [this.journal?.(session.sessionId, full), this.journalListeners.get(session.sessionId)?.(full)].filter((result) => result instanceof Promise);
    if (written.length === 0) return undefined;
    return Promise.all(written).then(() => undefined);
  }

  /**
   * The session's state, opened on first use — in the runtime with `tenant` (the step's, else the
   * default; none: the session is a tenant of its own). A session keeps the tenant it opened with.
   */
  session(sessionId: string, tenant?: string): BrokerSession {
    let session = this.sessions.get(sessionId);
    if (!session) {
      const broker = new DispatchBroker({ onCellStart: (cellId, start) => this.emitCellEvent({ type: 'cell-start', cellId, ...start }) });
      const service = this;
      const owner = tenant ?? this.defaultTenant;
      const host: CellHost = {
        invokeTool: (request) => broker.invoke(request),
        invokeToolJson: (request) => broker.invokeJson(request),
        notify: ({ cellId, text }) => broker.notify(cellId, text),
        cellClosed: (cellId) => broker.closeCell(cellId),
        runtimeEvent: (event) => this.emitCellEvent(event),
        // a getter: a session store may start listening after the session opened; read for each new cell
        get journal() {
          return service.journalTaken(sessionId) ? (update: CellJournalUpdate) => service.forwardJournal(opened, update) : undefined;
        },
      };
      const runtime = owner === undefined ? this.runtime.openSession(host) : this.runtime.openSession(host, { tenant: owner });
      const opened: BrokerSession = { sessionId, runtime, broker, watcher: new BackgroundWatcher(runtime) };
      session = opened;
      this.sessions.set(sessionId, session);
    }
    return session;
  }

  /** Attaches the running step's worker for the session's nested calls; returns the detach function. */
  attachWorker(sessionId: string, worker: NestedWorker, options?: { background?: boolean; tenant?: string }): () => void {
    return this.session(sessionId, options?.tenant).broker.attachWorker(worker, options);
  }

  /** Items injected by `notify()` in this session since the last call. */
  takeInjected(sessionId: string): CustomToolCallOutputItem[] {
    return this.sessions.get(sessionId)?.broker.takeInjected() ?? [];
  }

  /**
   * The durable state of a host session (see {@link CodeModeState}); undefined when the session
   * has no Code Mode state yet, or its runtime keeps none (`exportState` missing).
   */
  exportState(sessionId: string): CodeModeState | undefined {
    const session = this.sessions.get(sessionId);
    const runtime = session?.runtime.exportState?.();
    if (!session || !runtime) return undefined;
    return { format: CODE_MODE_SERVICE_STATE_FORMAT, version: 1, runtime, cells: session.broker.exportCells() };
  }

  /**
   * Restores a host session from a state {@link exportState} gave, brought up to date with the
   * updates reported after it (`options.journal`): its stored values, and its cells, which resume
   * under their own ids (a `wait` gets their end). Before the session's first `exec`. Rejects with
   * `INVALID_JOURNAL` for a state that is not one (another format, a newer version), `CONFIG` for a
   * runtime that cannot restore; a bad cell fails that cell only.
   */
  async restore(sessionId: string, state: CodeModeState, options: ServiceRestoreOptions = {}): Promise<RestoreResult> {
    if (typeof state !== 'object' || state === null || state.format !== CODE_MODE_SERVICE_STATE_FORMAT || !Array.isArray(state.cells)) {
      throw new SwitchyardError('INVALID_JOURNAL', `cannot restore Code Mode session ${sessionId}: its state is not a "${CODE_MODE_SERVICE_STATE_FORMAT}" state`);
    }
    if (state.version > 1) throw new SwitchyardError('INVALID_JOURNAL', `cannot restore Code Mode session ${sessionId}: its state is of version ${state.version}, newer than this package reads (1)`);
    const session = this.session(sessionId, options.tenant);
    if (!session.runtime.restore) throw new SwitchyardError('CONFIG', 'the Code Mode runtime cannot restore sessions (its sessions have no restore)');
    // Checked before the gates are replaced: a live session's cells keep their records.
    if (session.broker.hasOpenCells) throw new SwitchyardError('INVALID_INPUT', RESTORE_TOO_LATE_MESSAGE);
    const journal = options.journal ?? [];
    // The gates first: a restored cell's first nested call finds its tools.
    for (const cell of brokerCells(state.cells, journal)) session.broker.restoreCell(cell);
    return session.runtime.restore(state.runtime, { hostRestarted: options.hostRestarted ?? true, journal });
  }

  /** Shuts one host session's cells down (within the runtime's 1 s bound). */
  async closeSession(sessionId: string): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    await session.runtime.shutdown();
  }

  /** Shuts every session down. */
  async shutdown(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await Promise.all([...this.sessions.keys()].map((id) => this.closeSession(id)));
  }
}

/** The broker cells of a state after the updates that followed it: cells opened since added, cells closed since dropped. */
function brokerCells(cells: readonly BrokerCellState[], journal: readonly CodeModeJournalUpdate[]): BrokerCellState[] {
  const byId = new Map(cells.map((cell) => [cell.cellId, cell]));
  for (const update of journal) {
    if (update?.type === 'cell-opened' && update.broker) byId.set(update.cellId, update.broker);
    else if (update?.type === 'cell-closed') byId.delete(update.cellId);
  }
  return [...byId.values()];
}
