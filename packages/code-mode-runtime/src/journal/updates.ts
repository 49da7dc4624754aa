import type { CellJournalRecord, CodeModeSessionState, JournalCall, JournalCallResult, JournalObserved } from '@switchyard/protocol';
import { checkRecord, isCallResult, isJournalCall, isObserved, isStoredPair, sealRecord, type UnsealedRecord } from './state';

/**
 * A state as exported, brought up to date with the `CellHost.journal` updates reported after it (a
 * store keeps the last export and appends the updates: `RestoreOptions.journal`). Each update is
 * applied as the host's own journal applied it when it happened; a record changed here is sealed
 * again. An update naming a cell the state does not hold (closed before, or never opened) is
 * skipped; a malformed update of a held cell leaves that cell's journal corrupted (its restore
 * fails with `INVALID_JOURNAL`, no other cell touched); a cell whose journal was already bad is
 * left as it was (its restore says why). Stored writes apply to the session whatever their cell.
 */
export function applyJournalUpdates(state: CodeModeSessionState, updates: readonly unknown[]): CodeModeSessionState {
  if (updates.length === 0) return state;
  const stored = new Map<string, string>(state.stored.map(([key, json]) => [key, json]));
  const cells = new Map<string, { record: unknown; open?: Open }>();
  state.cells.forEach((record, index) => {
    const checked = checkRecord(record, state.id, index);
    cells.set(checked.cellId, { record, ...(checked.record ? { open: opened(checked.record) } : {}) });
  });
  for (const raw of updates) {
    const update = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    if (update.type === 'stored-committed' && Array.isArray(update.writes)) {
      for (const pair of update.writes) if (isStoredPair(pair)) stored.set(pair[0], pair[1]);
    }
    if (typeof update.cellId !== 'string') continue;
    if (update.type === 'cell-opened') {
      const checked = checkRecord(update.record, state.id, cells.size);
      cells.set(update.cellId, { record: update.record, ...(checked.record && checked.cellId === update.cellId ? { open: opened(checked.record) } : {}) });
      continue;
    }
    if (update.type === 'cell-closed') {
      cells.delete(update.cellId);
      continue;
    }
    const cell = cells.get(update.cellId);
    if (!cell?.open) continue;
    if (!apply(cell.open, update)) {
      // corrupted: its seal no longer matches, so its restore fails it alone
      cell.record = { ...sealRecord(cell.open.record), check: 'corrupted update' };
      cell.open = undefined;
    }
  }
  return {
    ...state,
    stored: [...stored],
    cells: [...cells.values()].map((cell) => (cell.open?.changed ? sealRecord(cell.open.record) : cell.record)) as CellJournalRecord[],
  };
}

interface Open {
  record: Mutable<UnsealedRecord>;
  changed: boolean;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function opened(record: CellJournalRecord): Open {
  const { check: _check, ...rest } = record;
  return { record: { ...rest, calls: record.calls.map((call) => ({ ...call })) }, changed: false };
}

/** Applies one update to an open cell's record; false when the update is malformed. */
function apply(open: Open, update: Record<string, unknown>): boolean {
  if (!KNOWN_UPDATES.has(update.type as string)) return true;
  const record = open.record;
  open.changed = true;
  switch (update.type) {
    case 'entries': {
      if (typeof update.entries !== 'string') return false;
      if (record.unresumable === undefined) record.entries = record.entries === '' ? update.entries : `${record.entries},${update.entries}`;
      return true;
    }
    case 'call-issued': {
      if (!isJournalCall(update.call) || update.call.result !== undefined) return false;
      const { id, tool, hash } = update.call;
      if (!record.calls.some((call) => call.id === id)) record.calls = [...record.calls, { id, tool, hash }];
      return true;
    }
    case 'call-settled': {
      if (typeof update.id !== 'string' || !isCallResult(update.result)) return false;
      const result = update.result as JournalCallResult;
      if (record.unresumable === undefined) record.calls = record.calls.map((call): JournalCall => (call.id === update.id && call.result === undefined ? { ...call, result } : call));
      return true;
    }
    case 'output-observed': {
      if (!isObserved(update.observed)) return false;
      record.observed = update.observed as JournalObserved;
      return true;
    }
    case 'stored-committed':
      record.committed = true;
      return true;
    default: {
      // 'unresumable'
      if (typeof update.reason !== 'string') return false;
      record.unresumable ??= update.reason;
      record.entries = '';
      record.stored = [];
      record.calls = record.calls.map(({ id, tool, hash }) => ({ id, tool, hash }));
      return true;
    }
  }
}

/** The updates that change a held cell's record (`cell-opened` and `cell-closed` are handled before; others are skipped). */
const KNOWN_UPDATES: ReadonlySet<string> = new Set(['entries', 'call-issued', 'call-settled', 'output-observed', 'stored-committed', 'unresumable']);
