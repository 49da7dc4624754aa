import type {
  CellEndEvent,
  CellHost,
  CellLimitExceededEvent,
  CellStartEvent,
  CodeModeRuntime,
  CodeModeSession,
  CustomToolCallOutputItem,
  JsonValue,
  RuntimeLostEvent,
} from '@switchyard/protocol';
import { createEventHub } from '@switchyard/kit';
import { DispatchBroker, type NestedWorker } from './dispatch-broker';
import { BackgroundWatcher } from './background-watch';

/** One host session's Code Mode state: its runtime session (cells, stored values) and its broker. */
export interface BrokerSession {
  readonly sessionId: string;
  readonly runtime: CodeModeSession;
  readonly broker: DispatchBroker;
  /** Observes yielded cells nobody waits on, when the host delivers background completions. */
  readonly watcher: BackgroundWatcher;
}

/**
 * Opens one code-mode session per host session, lazily (the first `exec`), and shuts it down with
 * it. Cells are keyed by host session, not by turn, so a yielded cell survives turns.
 */
/** The cell lifecycle events the service emits, and the runtime's own reports (a lost runtime, a cell stopped at a limit). */
export type CellEvent = CellStartEvent | CellEndEvent | RuntimeLostEvent | CellLimitExceededEvent;

/** What a runtime session offers for durable state (read structurally: a runtime without it persists nothing). */
interface DurableRuntimeSession extends CodeModeSession {
  exportState?(): unknown;
  restore?(state: unknown, options: { hostRestarted: boolean }): Promise<{ cells: ReadonlyArray<{ cellId: string; resumed: boolean; error?: string }> }>;
}

export class CodeModeService {
  private readonly sessions = new Map<string, BrokerSession>();
  // a throwing listener is reported (process warning SWITCHYARD_LISTENER) and never reaches the cell or the call
  private readonly events = createEventHub<CellEvent>({ name: 'code-mode' });
  private closing = false;

  /**
   * Subscribes to `cell-start` (a cell was created by `exec`), `cell-end` (its completion,
   * failure or termination was observed), and what the runtime reports: `runtime-lost` (a worker
   * holding cells ended) and `cell-limit-exceeded`. Returns the unsubscribe function. A throwing
   * listener is reported as a `SWITCHYARD_LISTENER` process warning and never reaches the cell.
   */
  onCellEvent(listener: (event: CellEvent) => void): () => void {
    return this.events.onAny(listener);
  }

  /** Emits a cell event to every listener. */
  emitCellEvent(event: CellEvent): void {
    this.events.emit(event);
  }

  constructor(private readonly runtime: CodeModeRuntime) {}

  private readonly journalListeners = new Map<string, (update: JsonValue) => void | Promise<void>>();

  /**
   * Hears each change to the host session's durable state as its runtime reports it (a runtime
   * that journals its cells): a session store writes them ahead. The listener's promise is what the
   * runtime waits for before a journaled nested call runs. One listener per session; returns the
   * function that removes it.
   */
  onJournal(sessionId: string, listener: (update: JsonValue) => void | Promise<void>): () => void {
    this.journalListeners.set(sessionId, listener);
    return () => {
      if (this.journalListeners.get(sessionId) === listener) this.journalListeners.delete(sessionId);
    };
  }

  /** The session's state, opened on first use. */
  session(sessionId: string): BrokerSession {
    let session = this.sessions.get(sessionId);
    if (!session) {
      const broker = new DispatchBroker({ onCellStart: (cellId, start) => this.emitCellEvent({ type: 'cell-start', cellId, ...start }) });
      const host: CellHost & { journal(update: unknown): void | Promise<void> } = {
        invokeTool: (request) => broker.invoke(request),
        invokeToolJson: (request) => broker.invokeJson(request),
        notify: ({ cellId, text }) => broker.notify(cellId, text),
        cellClosed: (cellId) => broker.closeCell(cellId),
        runtimeEvent: (event) => this.emitCellEvent(event),
        // a runtime that journals its cells reports each change here; the session's store writes it ahead
        journal: (update) => this.journalListeners.get(sessionId)?.(update as JsonValue),
      };
      const runtime = this.runtime.openSession(host);
      session = { sessionId, runtime, broker, watcher: new BackgroundWatcher(runtime) };
      this.sessions.set(sessionId, session);
    }
    return session;
  }

  /** Attaches the running step's worker for the session's nested calls; returns the detach function. */
  attachWorker(sessionId: string, worker: NestedWorker, options?: { background?: boolean }): () => void {
    return this.session(sessionId).broker.attachWorker(worker, options);
  }

  /** Items injected by `notify()` in this session since the last call. */
  takeInjected(sessionId: string): CustomToolCallOutputItem[] {
    return this.sessions.get(sessionId)?.broker.takeInjected() ?? [];
  }

  /**
   * The host session's durable state as its runtime session exports it (committed stored values,
   * and open cells' journals where the runtime keeps them), for a session store; `undefined` when
   * the session was not opened here or its runtime exports nothing. Never throws.
   */
  exportState(sessionId: string): JsonValue | undefined {
    const runtime = this.sessions.get(sessionId)?.runtime as DurableRuntimeSession | undefined;
    try {
      return runtime?.exportState?.() as JsonValue | undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Opens the host session from a state {@link exportState} gave (possibly in another process),
   * before any cell: says which cells resumed and which were lost. A runtime session that cannot
   * restore restores nothing.
   */
  async restore(sessionId: string, state: JsonValue, _journal: readonly JsonValue[], options: { hostRestarted: boolean }): Promise<{ resumed: string[]; lost: Array<{ cellId: string; reason: string }> }> {
    const runtime = this.session(sessionId).runtime as DurableRuntimeSession;
    if (typeof runtime.restore !== 'function') return { resumed: [], lost: [] };
    const result = await runtime.restore(state, { hostRestarted: options.hostRestarted });
    const resumed: string[] = [];
    const lost: Array<{ cellId: string; reason: string }> = [];
    for (const cell of result.cells) {
      if (cell.resumed) resumed.push(cell.cellId);
      else lost.push({ cellId: cell.cellId, reason: cell.error ?? 'it could not be resumed' });
    }
    return { resumed, lost };
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
