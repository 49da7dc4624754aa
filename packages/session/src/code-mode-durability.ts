import type { BackgroundDelivery, JsonValue } from '@switchyard/protocol';
import type { CodeMode } from '@switchyard/code-mode';

// THE SEAM between a persisted session and durable Code Mode cells (issue 43's API). Everything the
// session needs of Code Mode to keep it in a store passes through the three functions below, and
// nothing else in the session knows how Code Mode keeps its state. Code Mode's side is read
// structurally: a Code Mode without it keeps working, it just persists nothing (its stored values
// and open cells are then lost with the process, and a resume reports such cells lost).
//
// What Code Mode offers here (its service, per host session):
// - `exportState(sessionId)`: its durable state — committed stored values and every open cell's
//   journal — as versioned JSON, synchronously; it reflects every journal update reported so far;
// - `onJournal(sessionId, listener)`: each change to that state as it happens, in order; for a
//   nested call's "issued" entry the tool waits for the promise the listener returns (write-ahead);
// - `restore(sessionId, state, journal, options)`: opens the session from an exported state plus
//   the updates reported after it (`hostRestarted: true`: calls in flight were interrupted), before
//   any cell is created; restored cells keep their ids, a `wait` or the background delivery gets
//   their end; it says which cells resumed.

/** What a Code Mode restore did with each cell (the session tells the model about the lost ones). */
export interface RestoredCells {
  readonly resumed: readonly string[];
  readonly lost: ReadonlyArray<{ readonly cellId: string; readonly reason: string }>;
}

/** Code Mode's durable side, as the session reads it (see above). */
interface DurableService {
  exportState?(sessionId: string): JsonValue | undefined;
  onJournal?(sessionId: string, listener: (update: JsonValue) => void | Promise<void>): () => void;
  restore?(
    sessionId: string,
    state: JsonValue,
    journal: readonly JsonValue[],
    options: { readonly hostRestarted: boolean; readonly background?: BackgroundDelivery },
  ): Promise<RestoredCells>;
}

const durable = (codeMode: CodeMode) => codeMode.service as unknown as DurableService;

/** Code Mode's durable state of `sessionId` now, or `undefined` when it keeps none. Never throws. */
export function exportCodeModeState(codeMode: CodeMode | undefined, sessionId: string): JsonValue | undefined {
  if (!codeMode) return undefined;
  try {
    return durable(codeMode).exportState?.(sessionId);
  } catch {
    return undefined;
  }
}

/** Subscribes to Code Mode's journal updates of `sessionId`; a Code Mode without them gives a no-op. */
export function watchCodeModeJournal(codeMode: CodeMode, sessionId: string, listener: (update: JsonValue) => Promise<void>): () => void {
  return durable(codeMode).onJournal?.(sessionId, listener) ?? (() => undefined);
}

/**
 * Hands a stored Code Mode state (and the journal updates after it) back to Code Mode after a
 * restart. Without Code Mode's durable side, every open cell is lost (`reason` says why).
 */
export async function restoreCodeMode(
  codeMode: CodeMode,
  sessionId: string,
  restore: { state: JsonValue | undefined; journal: readonly JsonValue[]; openCells: readonly string[]; background?: BackgroundDelivery },
): Promise<RestoredCells> {
  const service = durable(codeMode);
  if (restore.state === undefined || typeof service.restore !== 'function') {
    const reason = restore.state === undefined ? 'no journal of it was stored' : 'this Code Mode runtime keeps no cell journals';
    return { resumed: [], lost: restore.openCells.map((cellId) => ({ cellId, reason })) };
  }
  const restored = await service.restore(sessionId, restore.state, restore.journal, { hostRestarted: true, background: restore.background });
  // a cell the state had open and Code Mode did not account for kept no journal there
  const known = new Set([...restored.resumed, ...restored.lost.map((cell) => cell.cellId)]);
  const unjournaled = restore.openCells.filter((cellId) => !known.has(cellId)).map((cellId) => ({ cellId, reason: 'this Code Mode runtime keeps no cell journals' }));
  return { resumed: restored.resumed, lost: [...restored.lost, ...unjournaled] };
}
