import {
  CODE_MODE_STATE_FORMAT,
  CODE_MODE_STATE_VERSION,
  SwitchyardError,
  type CellHost,
  type CellJournalRecord,
  type CellObservation,
  type CodeModeRuntime,
  type ContentItem,
} from '@switchyard/protocol';
import { argumentsHash } from './journal/hashing';
import { checkRecord, sealRecord } from './journal/state';

/** Options of {@link replayCells}. */
export interface ReplayCellsOptions {
  /** The runtime the cells re-run in (its sessions must have `restore`, as this package's do). */
  runtime: CodeModeRuntime;
  /** How long one observation of a replayed cell may wait (ms) before it is asked again. Default 10,000. */
  yieldTimeMs?: number;
  /** How long a replayed cell may run in all (ms) before it is terminated. Default 60,000. */
  timeoutMs?: number;
}

/** What a recorded cell did when re-run from its journal. */
export interface ReplayedCell {
  cellId: string;
  /** `completed` (with `error` when it failed, as a divergence does) or `terminated` (it ran past `timeoutMs`). */
  kind: 'completed' | 'terminated';
  /** Every output item it produced, from its first. */
  items: ContentItem[];
  error?: string;
  /** Its `notify()` texts. */
  notifies: string[];
  /** Nested calls the cell made that its journal could not answer (each failed inside the cell; no tool ran). */
  unanswered: Array<{ runtimeToolCallId: string; tool: string }>;
}

/**
 * Re-runs recorded cells offline, each from its journal (`CellJournalRecord`, as
 * `exportState()` or a `cell-closed` journal update gives it) in a fresh isolate of `runtime`:
 * every nested call is answered from the journal — **no tool runs** — in the recorded order, the
 * clock and `Math.random` answer what they answered, and every output item is produced again from
 * the first. A cell that does not do what its journal says fails with `cannot resume cell X: …`
 * (`it called tools.b where its journal has tools.a`, …). For debugging a turn, for evaluation,
 * and for trying a changed cell against recorded results (edit the record's `source`, then
 * `sealCellJournal` it). Each cell runs in a session of its own, from the stored values it
 * started with. Rejects with `INVALID_JOURNAL` for a record that does not check.
 */
export async function replayCells(records: readonly CellJournalRecord[], options: ReplayCellsOptions): Promise<ReplayedCell[]> {
  const checked = records.map((record, index) => {
    const result = checkRecord(record, (record as { session?: string } | null)?.session ?? '', index);
    if (!result.record) throw result.error!;
    return result.record;
  });
  return Promise.all(checked.map((record) => replayOne(record, options)));
}

/**
 * Seals an edited cell journal again (its `check`): a record changed on purpose (another source,
 * for an offline replay) is then accepted; anything else changed still reads as corrupted.
 */
export function sealCellJournal(record: Omit<CellJournalRecord, 'check'> & { check?: string }): CellJournalRecord {
  const { check: _check, ...rest } = record;
  return sealRecord(rest);
}

async function replayOne(record: CellJournalRecord, options: ReplayCellsOptions): Promise<ReplayedCell> {
  const notifies: string[] = [];
  const unanswered: ReplayedCell['unanswered'] = [];
  const results = new Map(record.calls.map((call) => [call.id, call]));
  // Only calls whose delivery the entries lack reach this host: answered from the record when it
  // has their result, refused otherwise. Nothing here runs a tool.
  const host: CellHost = {
    invokeTool: async (request) => {
      const call = results.get(request.runtimeToolCallId);
      if (call?.result && call.tool === request.tool && call.hash === argumentsHash(request.inputJson ?? (request.input === undefined ? undefined : JSON.stringify(request.input)))) {
        if (!call.result.ok) throw call.result.error;
        return call.result.json === undefined ? null : JSON.parse(call.result.json);
      }
      unanswered.push({ runtimeToolCallId: request.runtimeToolCallId, tool: request.tool });
      throw `tool \`${request.tool}\` was not run in the replay: the journal has no result for ${request.runtimeToolCallId}`;
    },
    notify: ({ text }) => void notifies.push(text),
    cellClosed: () => undefined,
  };
  const session = options.runtime.openSession(host);
  try {
    if (!session.restore) throw new SwitchyardError('CONFIG', 'replayCells: the runtime cannot restore cells (its sessions have no restore)');
    const fresh = sealRecord({ ...stripCheck(record), observed: { items: 0, itemsHash: '', notifies: 0, notifiesHash: '' }, committed: false });
    const restored = await session.restore(
      { format: CODE_MODE_STATE_FORMAT, version: CODE_MODE_STATE_VERSION, id: record.session, stored: [], cells: [fresh] },
      { hostRestarted: false },
    );
    const outcome = restored.cells[0];
    if (outcome && !outcome.resumed) return { cellId: record.cellId, kind: 'completed', items: [], error: outcome.error, notifies, unanswered };
    const items: ContentItem[] = [];
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const left = deadline - Date.now();
      const observation: CellObservation =
        left <= 0 ? await session.terminate(record.cellId) : await session.observe(record.cellId, { yieldTimeMs: Math.min(left, options.yieldTimeMs ?? 10_000) });
      items.push(...observation.items);
      if (observation.kind === 'yielded') continue;
      const error = observation.kind === 'completed' ? observation.error : undefined;
      return { cellId: record.cellId, kind: observation.kind, items, ...(error === undefined ? {} : { error }), notifies, unanswered };
    }
  } finally {
    await session.shutdown();
  }
}

function stripCheck(record: CellJournalRecord): Omit<CellJournalRecord, 'check'> {
  const { check: _check, ...rest } = record;
  return rest;
}
