import { SwitchyardError, errorMessage, hasErrorCode, type CellObservation, type CodeModeSessionState, type RestoreOptions, type RestoreResult } from '@switchyard/protocol';
import type { CellJournal } from './journal/cell-journal';
import type { EngineJournals } from './journal/engine-journals';
import { interruptedByRestart } from './journal/call-outcome';
import { checkRecord, checkState } from './journal/state';
import { applyJournalUpdates } from './journal/updates';
import type { ResumeCellOptions, StoredValueStore } from './code-mode-session';

/** What a restore needs of the engine session. */
interface RestorableSession {
  readonly cellCount: number;
  resumeCell(options: ResumeCellOptions): Promise<CellObservation | undefined>;
  unresumable(cellId: string, error: string): void;
}

/**
 * Settles, in a journal just restored, every call that was in flight when the state was taken:
 * after a restart of the agent host it is gone, so it fails as interrupted — unless its tool is
 * idempotent, which then runs again (left open, the host is asked again under the same id). When
 * only a runtime was lost (`hostRestarted: false`) every open call is left for the host to join.
 */
export function interruptOpenCalls(journal: CellJournal, hostRestarted: boolean): void {
  if (!hostRestarted) return;
  const { tools } = journal.creation;
  for (const call of journal.replayJournal().calls) {
    if (call.result !== undefined || journal.call(call.id)?.settled) continue;
    const idempotent = tools.some((tool) => tool.name === call.tool && tool.idempotent === true);
    if (!idempotent) journal.settle(call.id, { ok: false, error: interruptedByRestart(call.tool) });
  }
}

/** `Session.restore` of an engine session that keeps its journals (the in-process runtime). */
export async function restoreEngineSession(
  session: RestorableSession,
  settings: { journals?: EngineJournals; store: StoredValueStore; storedValues: boolean },
  raw: CodeModeSessionState,
  options: RestoreOptions,
): Promise<RestoreResult> {
  const journals = settings.journals;
  const state = applyJournalUpdates(checkState(raw), options.journal ?? []);
  if (session.cellCount > 0) throw new SwitchyardError('INVALID_INPUT', 'restore must come before the session creates its first cell');
  if (journals) journals.id = state.id;
  settings.store.replace?.(state.stored.map(([key, json]) => [key, json]));
  const cells: Array<RestoreResult['cells'][number]> = [];
  for (let index = 0; index < state.cells.length; index++) {
    const checked = checkRecord(state.cells[index], state.id, index);
    const fail = (code: 'INVALID_JOURNAL' | 'LIMIT_EXCEEDED', error: string) => {
      session.unresumable(checked.cellId, error);
      cells.push({ cellId: checked.cellId, resumed: false, code, error });
    };
    const record = checked.record;
    if (!record) {
      fail('INVALID_JOURNAL', checked.error!.message);
      continue;
    }
    if (record.unresumable !== undefined || !journals) {
      fail('LIMIT_EXCEEDED', `cannot resume cell ${record.cellId}: ${record.unresumable ?? 'this runtime keeps no journals (maxJournalBytes 0)'}`);
      continue;
    }
    const journal = journals.restored(record);
    interruptOpenCalls(journal, options.hostRestarted ?? true);
    try {
      const { cellId, source, tools, typescript, seed } = record;
      await session.resumeCell({ cellId, source, tools, typescript, seed, journal: journal.replayJournal(), stored: record.stored.map(([key, json]) => [key, json]) });
      cells.push({ cellId, resumed: true });
    } catch (error) {
      journals.close(record.cellId);
      fail(hasErrorCode(error, 'INVALID_JOURNAL') ? 'INVALID_JOURNAL' : 'LIMIT_EXCEEDED', errorMessage(error));
    }
  }
  return { cells };
}
