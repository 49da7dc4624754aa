import type { CodeModeSessionState, RestoreOptions, RestoreResult } from '@switchyard/protocol';
import { CellJournal } from './journal/cell-journal';
import { checkRecord, checkState } from './journal/state';
import { applyJournalUpdates } from './journal/updates';
import { interruptOpenCalls } from './engine-restore';
import type { Binding, RemoteCore } from './remote-binding';
import type { Resumer } from './remote-replay';

/**
 * `RemoteSession.restore`: the state's stored values become the session's, and each cell journal
 * that checks is resumed on one runtime under its own id (`resume-cell`); a cell whose journal is
 * bad or unresumable is failed alone (`unresumed`: its next observation is that failure).
 */
export async function restoreRemoteSession(
  core: RemoteCore,
  resumer: Resumer,
  raw: CodeModeSessionState,
  options: RestoreOptions,
  unresumed: (cellId: string, error: string) => void,
): Promise<RestoreResult> {
  const state = applyJournalUpdates(checkState(raw), options.journal ?? []);
  core.id = state.id;
  core.stored.replace(state.stored.map(([key, json]) => [key, json]));
  const cells: Array<RestoreResult['cells'][number]> = [];
  const resumed: Array<Promise<void>> = [];
  let target: Promise<Binding> | undefined;
  for (let index = 0; index < state.cells.length; index++) {
    const checked = checkRecord(state.cells[index], state.id, index);
    const record = checked.record;
    if (!record || record.unresumable !== undefined || core.maxJournalBytes === 0) {
      const code = record ? 'LIMIT_EXCEEDED' : 'INVALID_JOURNAL';
      const error = record ? `cannot resume cell ${record.cellId}: ${record.unresumable ?? 'this runtime keeps no journals (maxJournalBytes 0)'}` : checked.error!.message;
      unresumed(checked.cellId, error);
      cells.push({ cellId: checked.cellId, resumed: false, code, error });
      continue;
    }
    if (core.cells.has(record.cellId)) {
      const error = `cannot resume cell ${record.cellId}: the state holds its journal twice`;
      cells.push({ cellId: record.cellId, resumed: false, code: 'INVALID_JOURNAL', error });
      continue;
    }
    const journal = CellJournal.restored(record, core.maxJournalBytes, core.report, () => core.id);
    interruptOpenCalls(journal, options.hostRestarted ?? true);
    target ??= core.bind();
    const cell = core.addCell(record.cellId, undefined as never, journal);
    cell.account.committed = record.committed;
    const slot = cells.length;
    cells.push({ cellId: record.cellId, resumed: true });
    resumed.push(
      resumer.resume(cell, target).then((failure) => {
        if (failure === undefined) return;
        unresumed(record.cellId, failure.error);
        cells[slot] = { cellId: record.cellId, resumed: false, ...failure };
      }),
    );
  }
  await Promise.all(resumed);
  return { cells };
}
