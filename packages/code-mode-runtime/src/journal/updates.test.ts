import { describe, expect, it } from 'vitest';
import { CODE_MODE_STATE_FORMAT, CODE_MODE_STATE_VERSION, type CellJournalUpdate, type CodeModeSessionState } from '@switchyard/protocol';
import { CellJournal } from './cell-journal';
import { checkRecord } from './state';
import { applyJournalUpdates } from './updates';

// A store keeps a session's last export plus the journal updates reported after it; the restore
// applies them. The state so brought up to date must be the state the host would have exported at
// the last update: same records, sealed, each one checking.

const SESSION = 'a1b2c3d4e5f6a1b2c3d4e5f6';
const tools = [{ name: 'echo', description: 'echo', kind: 'function' as const }];

function journalOf(cellId: string, updates: CellJournalUpdate[]): CellJournal {
  const journal = new CellJournal({ cellId, source: `await tools.echo({ n: 1 }); // ${cellId}`, tools, stored: [['k', '1']], seed: '0'.repeat(32) }, 1 << 20, (update) => void updates.push(update), () => SESSION);
  journal.opened();
  return journal;
}

const stateOf = (journals: CellJournal[], stored: Array<[string, string]>): CodeModeSessionState => ({
  format: CODE_MODE_STATE_FORMAT,
  version: CODE_MODE_STATE_VERSION,
  id: SESSION,
  stored,
  cells: journals.map((journal) => journal.record()),
});

describe('applyJournalUpdates: a stored export plus the updates after it', () => {
  it('gives the state the host would export at the last update (cells opened and closed since, calls, results, output, stored writes)', () => {
    const updates: CellJournalUpdate[] = [];
    const a = journalOf('cellA', updates);
    a.appendEntries('d1700000000000');
    a.issue('tool-1', 'echo', '{"n":1}');
    const closing = journalOf('cellC', updates);
    const exported = stateOf([a, closing], [['k', '1']]);
    updates.length = 0;
    // after the export
    a.settle('tool-1', { ok: true, json: '{"n":1}' });
    a.appendEntries('r1');
    a.handedOut([{ type: 'input_text', text: 'one' }]);
    a.issue('tool-2', 'echo', '{"n":2}');
    const b = journalOf('cellB', updates);
    b.appendEntries('t1');
    closing.commit([['k', '2'], ['new', '"v"']]);
    closing.closed();
    const now = stateOf([a, b], [['k', '2'], ['new', '"v"']]);
    const applied = applyJournalUpdates(exported, updates);
    expect(applied).toEqual(now);
    applied.cells.forEach((record, index) => expect(checkRecord(record, SESSION, index).error).toBeUndefined());
  });

  it('a malformed update fails its own cell only (its journal no longer checks); an update of a cell the state does not hold is skipped', () => {
    const updates: CellJournalUpdate[] = [];
    const a = journalOf('cellA', updates);
    const b = journalOf('cellB', updates);
    const exported = stateOf([a, b], []);
    b.appendEntries('r1');
    const applied = applyJournalUpdates(exported, [
      { type: 'entries', cellId: 'cellA', entries: 42 },
      ...updates.slice(2),
      { type: 'call-settled', cellId: 'ghost', id: 'tool-1', result: { ok: true } },
      'not an update',
    ] as never);
    expect(applied.cells.map((record) => record.cellId)).toEqual(['cellA', 'cellB']);
    expect(checkRecord(applied.cells[0], SESSION, 0).error?.message).toBe('cannot resume cell cellA: its journal is corrupted (its fields do not match its check)');
    expect(checkRecord(applied.cells[1], SESSION, 1).record?.entries).toBe('r1');
  });

  it('an unresumable update drops what a replay would need, as the host did', () => {
    const updates: CellJournalUpdate[] = [];
    const a = journalOf('cellA', updates);
    a.issue('tool-1', 'echo', '{}');
    const exported = stateOf([a], []);
    updates.length = 0;
    a.settle('tool-1', { ok: true, json: '"x"' });
    a.markUnresumable('its journal passed 10 bytes (maxJournalBytes)');
    expect(applyJournalUpdates(exported, updates)).toEqual(stateOf([a], []));
  });
});
