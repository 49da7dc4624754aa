import type { CellJournalRecord, CodeModeSessionState, RestoreOptions, RestoreResult } from '@switchyard/protocol';
import { checkRecord, checkState } from './journal/state';
import { applyJournalUpdates } from './journal/updates';
import type { StoredPair } from './code-mode-session';

/** Why a cell of a restore is not resumed: the text it ends with, and the error code of the restore's answer. */
export interface ResumeFailure {
  error: string;
  code: 'INVALID_JOURNAL' | 'LIMIT_EXCEEDED';
}

/**
 * One cell of a state, checked: its record to resume, or its failure. `duplicate`: a second
 * journal under a cell id an earlier one of the state holds — only reported, since the id (and
 * its end) belongs to the earlier cell.
 */
export type PlannedCell = { cellId: string; record: CellJournalRecord } | { cellId: string; failure: ResumeFailure; duplicate?: true };

/** A restore worked out before anything of it is applied. */
export interface RestorePlan {
  /** The session identity the restored journals carry. */
  id: string;
  stored: StoredPair[];
  cells: PlannedCell[];
}

/**
 * Checks a state (with the journal updates reported after it, `options.journal`) for a session
 * whose journals may take `maxJournalBytes` each (0: journals are off). Throws `INVALID_JOURNAL`
 * for a state that is not one; a bad cell fails alone: a journal that does not check, one marked
 * unresumable, any when journals are off, and a cell id the state holds twice.
 */
export function planRestore(raw: CodeModeSessionState, options: RestoreOptions, maxJournalBytes: number): RestorePlan {
  const state = applyJournalUpdates(checkState(raw), options.journal ?? []);
  const seen = new Set<string>();
  const cells = state.cells.map((cell, index): PlannedCell => {
    const { cellId, record, error } = checkRecord(cell, state.id, index);
    if (seen.has(cellId)) return { cellId, failure: { code: 'INVALID_JOURNAL', error: `cannot resume cell ${cellId}: the state holds its journal twice` }, duplicate: true };
    seen.add(cellId);
    if (!record) return { cellId, failure: { code: 'INVALID_JOURNAL', error: error!.message } };
    if (record.unresumable !== undefined || maxJournalBytes === 0) {
      const reason = record.unresumable ?? 'this runtime keeps no journals (maxJournalBytes 0)';
      return { cellId, failure: { code: 'LIMIT_EXCEEDED', error: `cannot resume cell ${cellId}: ${reason}` } };
    }
    return { cellId, record };
  });
  return { id: state.id, stored: state.stored.map(([key, json]) => [key, json]), cells };
}

/**
 * Carries a plan out: a failed cell is remembered through `unresumed` (its next observation is
 * that failure; a duplicate is only reported), each record is resumed by `resume` — all started in
 * the state's order, then awaited — whose failure fails that cell alone.
 */
export async function applyRestorePlan(
  plan: RestorePlan,
  unresumed: (cellId: string, error: string) => void,
  resume: (record: CellJournalRecord) => Promise<ResumeFailure | undefined>,
): Promise<RestoreResult> {
  const cells: Array<RestoreResult['cells'][number]> = [];
  const resumed: Array<Promise<void>> = [];
  for (const planned of plan.cells) {
    const { cellId } = planned;
    if ('failure' in planned) {
      if (!planned.duplicate) unresumed(cellId, planned.failure.error);
      cells.push({ cellId, resumed: false, ...planned.failure });
      continue;
    }
    const slot = cells.length;
    cells.push({ cellId, resumed: true });
    resumed.push(
      resume(planned.record).then((failure) => {
        if (failure === undefined) return;
        unresumed(cellId, failure.error);
        cells[slot] = { cellId, resumed: false, ...failure };
      }),
    );
  }
  await Promise.all(resumed);
  return { cells };
}
