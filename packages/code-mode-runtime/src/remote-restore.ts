import type { CodeModeSessionState, RestoreOptions, RestoreResult } from '@switchyard/protocol';
import { CellJournal } from './journal/cell-journal';
import { interruptOpenCalls } from './engine-restore';
import { applyRestorePlan, planRestore } from './restore-plan';
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
  const plan = planRestore(raw, options, core.maxJournalBytes);
  core.id = plan.id;
  core.stored.replace(plan.stored);
  let target: Promise<Binding> | undefined;
  return applyRestorePlan(plan, unresumed, (record) => {
    const journal = CellJournal.restored(record, core.maxJournalBytes, core.report, () => core.id);
    interruptOpenCalls(journal, options.hostRestarted ?? true);
    target ??= core.bind();
    const cell = core.addCell(record.cellId, undefined as never, journal);
    cell.account.committed = record.committed;
    return resumer.resume(cell, target);
  });
}
