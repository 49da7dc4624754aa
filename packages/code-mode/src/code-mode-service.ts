import type {
  CellEndEvent,
  CellHost,
  CellLimitExceededEvent,
  CellStartEvent,
  CodeModeRuntime,
  CodeModeSession,
  CustomToolCallOutputItem,
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

  /** `defaultTenant`: the tenant of a session whose opener names none (`createCodeMode({ tenant })`). */
  constructor(
    private readonly runtime: CodeModeRuntime,
    private readonly defaultTenant?: string,
  ) {}

  /**
   * The session's state, opened on first use — in the runtime with `tenant` (the step's, else the
   * default; none: the session is a tenant of its own). A session keeps the tenant it opened with.
   */
  session(sessionId: string, tenant?: string): BrokerSession {
    let session = this.sessions.get(sessionId);
    if (!session) {
      const broker = new DispatchBroker({ onCellStart: (cellId, start) => this.emitCellEvent({ type: 'cell-start', cellId, ...start }) });
      const owner = tenant ?? this.defaultTenant;
      const host: CellHost = {
        invokeTool: (request) => broker.invoke(request),
        invokeToolJson: (request) => broker.invokeJson(request),
        notify: ({ cellId, text }) => broker.notify(cellId, text),
        cellClosed: (cellId) => broker.closeCell(cellId),
        runtimeEvent: (event) => this.emitCellEvent(event),
      };
      const runtime = owner === undefined ? this.runtime.openSession(host) : this.runtime.openSession(host, { tenant: owner });
      session = { sessionId, runtime, broker, watcher: new BackgroundWatcher(runtime) };
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
