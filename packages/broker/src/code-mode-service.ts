import type { CustomToolCallOutputItem } from '@switchyard/protocol';
import { DispatchBroker, type NestedWorker } from './dispatch-broker';
import type { CodeModeRuntimeLike, RuntimeSession } from './runtime-types';

/** One host session's Code Mode state: its runtime session (cells, stored values) and its broker. */
export interface BrokerSession {
  readonly sessionId: string;
  readonly runtime: RuntimeSession;
  readonly broker: DispatchBroker;
}

/**
 * Opens one code-mode session per host session, lazily (the first `exec`), and shuts it down with
 * it. Cells are keyed by host session, not by turn, so a yielded cell survives turns.
 */
export class CodeModeService {
  private readonly sessions = new Map<string, BrokerSession>();
  private closing = false;

  constructor(private readonly runtime: CodeModeRuntimeLike) {}

  /** The session's state, opened on first use. */
  session(sessionId: string): BrokerSession {
    let session = this.sessions.get(sessionId);
    if (!session) {
      const broker = new DispatchBroker();
      const runtime = this.runtime.openSession({
        invokeTool: (request) => broker.invoke(request),
        notify: ({ cellId, text }) => broker.notify(cellId, text),
        cellClosed: (cellId) => broker.closeCell(cellId),
      });
      session = { sessionId, runtime, broker };
      this.sessions.set(sessionId, session);
    }
    return session;
  }

  /** True when the session has been opened. */
  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** Attaches the running step's worker for the session's nested calls; returns the detach function. */
  attachWorker(sessionId: string, worker: NestedWorker): () => void {
    return this.session(sessionId).broker.attachWorker(worker);
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
