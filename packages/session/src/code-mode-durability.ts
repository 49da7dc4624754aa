import type { BackgroundDelivery, JsonValue } from '@switchyard/protocol';
import type { CodeMode, CodeModeJournalUpdate, CodeModeState } from '@switchyard/code-mode';

// THE SEAM between a persisted session and durable Code Mode cells. Everything the session needs
// of Code Mode to keep it in a store passes through the three functions below, and nothing else in
// the session knows how Code Mode keeps its state (it is opaque JSON here):
// - `exportState(sessionId)`: its durable state — committed stored values, every open cell's
//   journal and what dispatches its calls — as versioned JSON, synchronously; it reflects every
//   journal update reported so far;
// - `service.onJournal(sessionId, listener)`: each change to that state as it happens, in order;
//   for a nested call's `call-issued` the tool waits for the promise the listener returns
//   (write-ahead);
// - `restoreSession(sessionId, state, { journal, hostRestarted, background })`: opens the session
//   from an exported state plus the updates reported after it, before any cell is created; cells
//   resume under their own ids (calls that were in flight when the host died are interrupted,
//   unless their tool is idempotent), and the background delivery gets each resumed cell's end.
// A Code Mode without this side (another implementation of the contributor) keeps working: it
// persists nothing, and a resume reports its open cells lost.

/** What a Code Mode restore did with each cell (the session tells the model about the lost ones). */
export interface RestoredCells {
  readonly resumed: readonly string[];
  readonly lost: ReadonlyArray<{ readonly cellId: string; readonly reason: string }>;
}

/** Code Mode's durable side, read structurally (a contributor without it persists nothing). */
type DurableCodeMode = Partial<Pick<CodeMode, 'exportState' | 'restoreSession'>> & { readonly service?: Partial<Pick<CodeMode['service'], 'onJournal'>> };

const durable = (codeMode: CodeMode) => codeMode as DurableCodeMode;

/** Code Mode's durable state of `sessionId` now, or `undefined` when it keeps none. Never throws. */
export function exportCodeModeState(codeMode: CodeMode | undefined, sessionId: string): JsonValue | undefined {
  if (!codeMode) return undefined;
  try {
    return durable(codeMode).exportState?.(sessionId) as JsonValue | undefined;
  } catch {
    return undefined;
  }
}

/** Subscribes to Code Mode's journal updates of `sessionId`; a Code Mode without them gives a no-op. */
export function watchCodeModeJournal(codeMode: CodeMode, sessionId: string, listener: (update: JsonValue) => Promise<void>): () => void {
  const service = durable(codeMode).service;
  return service?.onJournal?.(sessionId, (update) => listener(update as unknown as JsonValue)) ?? (() => undefined);
}

/**
 * Hands a stored Code Mode state (and the journal updates after it) back to Code Mode after a
 * restart of the agent host. Without Code Mode's durable side, every open cell is lost (`reason`
 * says why); a state Code Mode refuses whole (another format, a newer version) loses them all with
 * its reason.
 */
export async function restoreCodeMode(
  codeMode: CodeMode,
  sessionId: string,
  restore: { state: JsonValue | undefined; journal: readonly JsonValue[]; openCells: readonly string[]; background?: BackgroundDelivery; tenant?: string },
): Promise<RestoredCells> {
  const restoreSession = durable(codeMode).restoreSession;
  if (restore.state === undefined || typeof restoreSession !== 'function') {
    const reason = restore.state === undefined ? 'no journal of it was stored' : 'this Code Mode runtime keeps no cell journals';
    return { resumed: [], lost: restore.openCells.map((cellId) => ({ cellId, reason })) };
  }
  let cells: Array<{ cellId: string; resumed: boolean; error?: string }>;
  try {
    const restored = await restoreSession.call(codeMode, sessionId, restore.state as unknown as CodeModeState, {
      hostRestarted: true,
      journal: restore.journal as unknown as CodeModeJournalUpdate[],
      ...(restore.background ? { background: restore.background } : {}),
      ...(restore.tenant !== undefined ? { tenant: restore.tenant } : {}),
    });
    cells = restored.cells.map((cell) => (cell.resumed ? { cellId: cell.cellId, resumed: true } : { cellId: cell.cellId, resumed: false, error: cell.error }));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { resumed: [], lost: restore.openCells.map((cellId) => ({ cellId, reason })) };
  }
  const resumed = cells.filter((cell) => cell.resumed).map((cell) => cell.cellId);
  const lost = cells.filter((cell) => !cell.resumed).map((cell) => ({ cellId: cell.cellId, reason: cell.error ?? 'it could not be resumed' }));
  // a cell the state had open and Code Mode did not account for kept no journal there
  const known = new Set(cells.map((cell) => cell.cellId));
  const unjournaled = restore.openCells.filter((cellId) => !known.has(cellId)).map((cellId) => ({ cellId, reason: 'this Code Mode runtime keeps no cell journals' }));
  return { resumed, lost: [...lost, ...unjournaled] };
}
