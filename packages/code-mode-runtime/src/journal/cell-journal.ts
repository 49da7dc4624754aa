import {
  CODE_MODE_STATE_VERSION,
  type CellJournalRecord,
  type CellJournalUpdate,
  type CellToolDescriptor,
  type ContentItem,
  type JournalCall,
  type JournalCallResult,
  type JournalObserved,
} from '@switchyard/protocol';
import type { ReplayJournal } from '../cell-replay';
import { argumentsHash, chainItem, chainText } from './hashing';
import { sealRecord } from './state';

/** What a cell journal starts from: the cell's creation. */
export interface CellJournalStart {
  cellId: string;
  source: string;
  tools: readonly CellToolDescriptor[];
  typescript?: boolean;
  stored: ReadonlyArray<readonly [string, string]>;
  seed: string;
}

/** A nested call as the journal holds it (`settled` stays true when a budget dropped the result). */
interface JournalEntryCall {
  readonly id: string;
  readonly tool: string;
  readonly hash: string;
  result?: JournalCallResult;
  settled: boolean;
}

const bytesOf = (text: string | undefined) => (text === undefined ? 0 : Buffer.byteLength(text, 'utf8'));

/** The sentence a cell lost with an unresumable journal adds to its failure. */
export function overBudget(maxBytes: number): string {
  return `its journal passed ${maxBytes} bytes (maxJournalBytes)`;
}

/**
 * The journal of one cell as the agent host keeps it (the session that holds the cell's journal:
 * `RemoteSession`, or the in-process engine session): the cell's creation, the entries its runtime
 * reported, every nested call it made with its argument hash and its result, and what has been
 * handed out of it. Bounded by `maxBytes` (UTF-8 of the source, entries, call records and results):
 * past it the cell runs on but cannot be resumed (`unresumable`), and what a replay would have
 * needed is dropped (the call ids and hashes stay: a call is never run twice either way). Each
 * change is reported through `report` (the host's `CellHost.journal`).
 */
export class CellJournal {
  readonly cellId: string;
  private readonly start: CellJournalStart;
  private entries = '';
  private readonly calls = new Map<string, JournalEntryCall>();
  private observed: JournalObserved = { items: 0, itemsHash: '', notifies: 0, notifiesHash: '' };
  private committed = false;
  private bytes: number;
  unresumable: string | undefined;
  /** Runtimes the cell has lost (crash replays). */
  losses = 0;

  constructor(
    start: CellJournalStart,
    private readonly maxBytes: number,
    /** Where updates go (`CellHost.journal`); undefined: the host takes none. */
    private readonly report: ((update: CellJournalUpdate) => void | Promise<void>) | undefined,
    private readonly sessionId: () => string,
  ) {
    this.cellId = start.cellId;
    this.start = start;
    this.bytes = bytesOf(start.source) + bytesOf(JSON.stringify(start.tools));
    if (this.bytes > maxBytes) this.markUnresumable(overBudget(maxBytes), false);
  }

  /** A journal restored from its record (checked by `checkRecord`), counted against `maxBytes` again. */
  static restored(record: CellJournalRecord, maxBytes: number, report: ((update: CellJournalUpdate) => void | Promise<void>) | undefined, sessionId: () => string): CellJournal {
    const journal = new CellJournal(record, maxBytes, report, sessionId);
    journal.observed = record.observed;
    journal.committed = record.committed;
    for (const call of record.calls) journal.calls.set(call.id, { ...call, settled: call.result !== undefined });
    if (record.unresumable !== undefined) journal.markUnresumable(record.unresumable, false);
    if (journal.unresumable !== undefined) return journal;
    journal.entries = record.entries;
    let bytes = record.entries.length;
    for (const call of record.calls) bytes += call.id.length + call.tool.length + call.hash.length + 8 + (call.result ? (call.result.ok ? bytesOf(call.result.json) : bytesOf(call.result.error)) : 0);
    journal.bytes += bytes;
    if (journal.bytes > maxBytes) journal.markUnresumable(overBudget(maxBytes), false);
    return journal;
  }

  /** Reports the journal's creation (the host's first update for the cell). */
  opened(): void {
    if (this.report) this.emit({ type: 'cell-opened', cellId: this.cellId, record: this.record() });
  }

  appendEntries(entries: string): void {
    if (this.unresumable !== undefined) return;
    this.entries = this.entries === '' ? entries : `${this.entries},${entries}`;
    if (this.charge(entries.length + 1)) this.emit({ type: 'entries', cellId: this.cellId, entries });
  }

  /** The call as journaled, or undefined for a call not journaled yet. */
  call(id: string): Readonly<JournalEntryCall> | undefined {
    return this.calls.get(id);
  }

  /** Journals a new call; the returned promise (the host's write-ahead) resolves before the tool may run. */
  issue(id: string, tool: string, inputJson: string | undefined): { hash: string; written: void | Promise<void> } {
    const call: JournalEntryCall = { id, tool, hash: argumentsHash(inputJson), settled: false };
    this.calls.set(id, call);
    this.charge(id.length + tool.length + call.hash.length + 8);
    return { hash: call.hash, written: this.emit({ type: 'call-issued', cellId: this.cellId, call: { id, tool, hash: call.hash } }) };
  }

  /** Whether `tool` with these arguments is what the journal has for call `id`. */
  matches(id: string, tool: string, inputJson: string | undefined): boolean {
    const call = this.calls.get(id);
    return call !== undefined && call.tool === tool && call.hash === argumentsHash(inputJson);
  }

  settle(id: string, result: JournalCallResult): void {
    const call = this.calls.get(id);
    if (!call || call.settled) return;
    call.settled = true;
    if (this.unresumable !== undefined) return;
    call.result = result;
    if (this.charge(result.ok ? bytesOf(result.json) : bytesOf(result.error))) this.emit({ type: 'call-settled', cellId: this.cellId, id, result });
  }

  /** Output items the host handed out (an observation's). */
  handedOut(items: readonly ContentItem[]): void {
    if (items.length === 0 || this.unresumable !== undefined) return;
    let { itemsHash } = this.observed;
    for (const item of items) itemsHash = chainItem(itemsHash, item);
    this.observed = { ...this.observed, items: this.observed.items + items.length, itemsHash };
    this.emit({ type: 'output-observed', cellId: this.cellId, observed: this.observed });
  }

  /** A `notify()` text the host received. */
  notified(text: string): void {
    if (this.unresumable !== undefined) return;
    this.observed = { ...this.observed, notifies: this.observed.notifies + 1, notifiesHash: chainText(this.observed.notifiesHash, text) };
    this.emit({ type: 'output-observed', cellId: this.cellId, observed: this.observed });
  }

  /** The cell's stored writes were committed (a replay must not commit them again). */
  commit(writes: ReadonlyArray<readonly [string, string]>): void {
    this.committed = true;
    this.emit({ type: 'stored-committed', cellId: this.cellId, writes });
  }

  /** The cell cannot be resumed (`reason` completes "the cell could not be resumed: …"). */
  markUnresumable(reason: string, report = true): void {
    if (this.unresumable !== undefined) return;
    this.unresumable = reason;
    this.entries = '';
    for (const call of this.calls.values()) call.result = undefined;
    if (report) this.emit({ type: 'unresumable', cellId: this.cellId, reason });
  }

  /** The cell left its session: its journal as it ended goes with the update (for a record of the turn). */
  closed(): void {
    if (this.report) this.emit({ type: 'cell-closed', cellId: this.cellId, record: this.record() });
  }

  /** What a runtime needs to re-run the cell (the results of the calls whose delivery is journaled, and more). */
  replayJournal(): ReplayJournal {
    return { entries: this.entries, calls: this.callList(), observed: this.observed, committed: this.committed };
  }

  get creation(): CellJournalStart {
    return this.start;
  }

  /** The cell's journal as a sealed, JSON-serializable record. */
  record(): CellJournalRecord {
    const { cellId, source, tools, typescript, stored, seed } = this.start;
    return sealRecord({
      version: CODE_MODE_STATE_VERSION,
      session: this.sessionId(),
      cellId,
      source,
      tools: tools.map((tool) => ({ ...tool })),
      ...(typescript === undefined ? {} : { typescript }),
      stored: this.unresumable === undefined ? stored.map(([key, json]) => [key, json] as const) : [],
      seed,
      entries: this.entries,
      calls: this.callList(),
      observed: this.observed,
      committed: this.committed,
      ...(this.unresumable === undefined ? {} : { unresumable: this.unresumable }),
    });
  }

  private callList(): JournalCall[] {
    const calls: JournalCall[] = [];
    for (const { id, tool, hash, result } of this.calls.values()) calls.push(result === undefined ? { id, tool, hash } : { id, tool, hash, result });
    return calls;
  }

  /** Counts `bytes` against the budget; false (and the journal unresumable) once it is passed. */
  private charge(bytes: number): boolean {
    if (this.unresumable !== undefined) return false;
    this.bytes += bytes;
    if (this.bytes <= this.maxBytes) return true;
    this.markUnresumable(overBudget(this.maxBytes));
    return false;
  }

  private emit(update: CellJournalUpdate): void | Promise<void> {
    if (!this.report) return;
    try {
      return this.report(update);
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
