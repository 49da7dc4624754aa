import { RESTORE_TOO_LATE_MESSAGE, SwitchyardError, errorMessage, hasErrorCode, type CellObservation, type CodeModeSessionState, type RestoreOptions, type RestoreResult } from '@switchyard/protocol';
import type { CellJournal } from './journal/cell-journal';
import type { EngineJournals } from './journal/engine-journals';
import { interruptedByRestart } from './journal/call-outcome';
import { applyRestorePlan, planRestore } from './restore-plan';
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
  settings: { journals?: EngineJournals; store: StoredValueStore },
  raw: CodeModeSessionState,
  options: RestoreOptions,
): Promise<RestoreResult> {
  const journals = settings.journals;
  const plan = planRestore(raw, options, journals?.maxBytes ?? 0);
  if (session.cellCount > 0) throw new SwitchyardError('INVALID_INPUT', RESTORE_TOO_LATE_MESSAGE);
  if (journals) journals.id = plan.id;
  settings.store.replace?.(plan.stored);
  return applyRestorePlan(plan, (cellId, error) => session.unresumable(cellId, error), (record) => {
    // a plan resumes records only when journals are on
    const journal = journals!.restored(record);
    interruptOpenCalls(journal, options.hostRestarted ?? true);
    const { cellId, source, tools, typescript, seed } = record;
    const stored = record.stored.map(([key, json]): [string, string] => [key, json]);
    return session.resumeCell({ cellId, source, tools, typescript, seed, journal: journal.replayJournal(), stored }).then(
      () => undefined,
      (error: unknown) => {
        journals!.close(cellId);
        return { code: hasErrorCode(error, 'INVALID_JOURNAL') ? 'INVALID_JOURNAL' : 'LIMIT_EXCEEDED', error: errorMessage(error) } as const;
      },
    );
  });
}
