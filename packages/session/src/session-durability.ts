import { type SwitchyardError, type JsonValue, type ResponseItem, type RunningWork, type StoredSession, type ToolCallItem } from '@switchyard/protocol';
import { storeError } from '@switchyard/kit/internal';
import type { CodeMode } from '@switchyard/code-mode';
import {
  SESSION_EXPORT_FORMAT,
  SESSION_STATE_FORMAT,
  SESSION_STATE_VERSION,
  checkStateDocument,
  lostCellItem,
  lostWorkItem,
  resumedExecOutput,
  type OpenCell,
  type SessionExport,
  type SessionStateDocument,
} from './durable-state';
import { exportCodeModeState, restoreCodeMode, watchCodeModeJournal, type RestoredCells } from './code-mode-durability';
import type { CommitContent } from './session-persistence';
import { codeModeFor, currentExecutors, type SessionState } from './session-state';

// A session kept in a store (or exported and restored): what it commits, how it comes back.

/** Everything a session resumes from: a store's records or an export. */
interface DurableSource {
  readonly history: readonly JsonValue[];
  /** History items the store already holds (0 for an export: all of it is new to the store). */
  readonly saved: number;
  readonly doc: SessionStateDocument;
  readonly journal: readonly JsonValue[];
}

/** Work the session's tools keep running past their calls (each distinct function asked once). */
function runningWork(state: SessionState): RunningWork[] {
  const seen = new Set<unknown>();
  const work: RunningWork[] = [];
  try {
    for (const executor of currentExecutors(state.options)) {
      const read = executor.runningWork;
      if (typeof read !== 'function' || seen.has(read)) continue;
      seen.add(read);
      for (const item of read({ sessionId: state.sessionId })) {
        // only what the state document can hold: a malformed entry must not make the record unreadable
        if (typeof item?.callId !== 'string' || typeof item.command !== 'string') continue;
        work.push({ callId: item.callId, command: item.command, ...(Number.isInteger(item.processId) ? { processId: item.processId } : {}) });
      }
    }
  } catch {
    // a tools function or an executor that throws records no work
  }
  return work;
}

/** The session's state document now. */
export function stateDocument(state: SessionState): SessionStateDocument {
  const codeMode = exportCodeModeState(state.codeMode, state.sessionId);
  return {
    format: SESSION_STATE_FORMAT,
    version: SESSION_STATE_VERSION,
    sessionId: state.sessionId,
    usedTokens: state.usedTokens,
    pending: [...state.carried, ...(state.inbox?.peek() ?? [])],
    work: runningWork(state),
    cells: [...state.openCells].map(([cellId, execCallId]) => (execCallId === undefined ? { cellId } : { cellId, execCallId })),
    ...(codeMode !== undefined ? { codeMode } : {}),
  };
}

/** `session.export()`: the whole durable state as one JSON document (a deep copy). */
export function exportSession(state: SessionState): SessionExport {
  const document: SessionExport = {
    format: SESSION_EXPORT_FORMAT,
    version: SESSION_STATE_VERSION,
    sessionId: state.sessionId,
    history: state.history.items,
    state: stateDocument(state),
    journal: [],
  };
  return JSON.parse(JSON.stringify(document)) as SessionExport;
}

/** What a commit writes now (read when the commit starts, so it includes everything before it). */
export function commitContent(state: SessionState): CommitContent {
  const document = stateDocument(state);
  const changes = state.history.takeChanges();
  return {
    state: document as unknown as JsonValue,
    absorbsJournal: document.codeMode !== undefined,
    ...(changes ? { history: { ...changes, append: changes.append as unknown as JsonValue[] } } : {}),
  };
}

/** Follows what the state document records of Code Mode: open cells, and the journal's write-ahead entries. */
export function watchCodeMode(state: SessionState, codeMode: CodeMode): void {
  codeMode.onCellEvent((event) => {
    if (event.type === 'cell-start') state.openCells.set(event.cellId, event.execCallId);
    else if (event.type === 'cell-end') state.openCells.delete(event.cellId);
    else if (event.type === 'runtime-lost') for (const cellId of event.cellIds) state.openCells.delete(cellId);
    else return;
    state.persistence?.schedule();
  });
  const persistence = state.persistence;
  if (persistence) watchCodeModeJournal(codeMode, state.sessionId, (update) => persistence.append(update));
}

/** Hands open cells back to Code Mode (or finds them lost: a direct session, no journal, no durable runtime). */
async function restoreCells(state: SessionState, source: DurableSource): Promise<RestoredCells> {
  const cells = source.doc.cells.map((cell) => cell.cellId);
  if (cells.length === 0 && source.doc.codeMode === undefined) return { resumed: [], lost: [] };
  if (state.toolMode === 'direct') return { resumed: [], lost: cells.map((cellId) => ({ cellId, reason: 'the session no longer runs Code Mode' })) };
  const codeMode = (await codeModeFor(state)) as CodeMode;
  return restoreCodeMode(codeMode, state.sessionId, { state: source.doc.codeMode, journal: source.journal, openCells: cells, background: state.inbox?.delivery, tenant: state.options.tenant });
}

/**
 * Applies a durable source to a fresh session: Code Mode first (its cells resume or are found
 * lost), then the history (an `exec` call the restart left open is answered: "Script running …"
 * when its cell resumed, its loss otherwise), then what the next request carries once: pending
 * completions, the processes that died with the old host, cells lost after their `exec` answered.
 */
async function applySource(state: SessionState, source: DurableSource): Promise<void> {
  state.usedTokens = source.doc.usedTokens;
  const restored = await restoreCells(state, source);
  const byCell = new Map<string, OpenCell>(source.doc.cells.map((cell) => [cell.cellId, cell]));
  const byCall = new Map<string, OpenCell>(source.doc.cells.filter((cell) => cell.execCallId !== undefined).map((cell) => [cell.execCallId!, cell]));
  const lost = new Map(restored.lost.map((cell) => [cell.cellId, cell.reason]));
  for (const cellId of restored.resumed) state.openCells.set(cellId, byCell.get(cellId)?.execCallId);
  const closedByUs = new Set<string>();
  const close = (call: ToolCallItem) => {
    const cell = call.type === 'custom_tool_call' ? byCall.get(call.call_id) : undefined;
    if (!cell) return undefined;
    closedByUs.add(cell.cellId);
    const reason = lost.get(cell.cellId);
    return (reason === undefined ? resumedExecOutput(cell) : lostCellItem(cell, reason)) as never;
  };
  state.history.replace(source.history as unknown as ResponseItem[], { close, saved: source.saved });
  const lostCells = [...lost].filter(([cellId]) => !closedByUs.has(cellId)).map(([cellId, reason]) => lostCellItem(byCell.get(cellId) ?? { cellId }, reason));
  state.carried.push(...source.doc.pending, ...source.doc.work.map(lostWorkItem), ...lostCells.filter((item): item is ResponseItem => item !== undefined));
}

function fromStore(stored: StoredSession, sessionId: string): DurableSource | undefined {
  if (stored.state === undefined && stored.history.length === 0) return undefined;
  stored.history.forEach((item, index) => {
    if (typeof item !== 'object' || item === null || typeof (item as { type?: unknown }).type !== 'string') {
      throw storeError('STORE_CORRUPT', sessionId, `history item ${index} is not an item`);
    }
  });
  if (stored.state === undefined) throw storeError('STORE_CORRUPT', sessionId, 'it has a history but no state document');
  return { history: stored.history, saved: stored.history.length, doc: checkStateDocument(stored.state, sessionId, 'STORE_CORRUPT'), journal: stored.journal };
}

/**
 * Opens a session that has a `store` or a `restore` document: takes the lease, loads what the
 * store holds (or the export), resumes it, and commits the result at once (so what the restart
 * reports to the model is reported once). `state.ready` is this promise.
 */
export async function openDurable(state: SessionState, restore: SessionExport | undefined): Promise<void> {
  const persistence = state.persistence;
  const stored = persistence ? await persistence.open() : undefined;
  try {
    let source = stored ? fromStore(stored, state.sessionId) : undefined;
    if (!source && restore) source = { history: restore.history as unknown as JsonValue[], saved: 0, doc: restore.state, journal: restore.journal };
    if (source) await applySource(state, source);
  } catch (error) {
    // a session that did not load never writes over what its store holds
    persistence?.abandon(error as SwitchyardError);
    throw error;
  }
  await persistence?.save();
}
