import type { ContentItem, JournalCall, JournalCallResult, JournalObserved } from '@switchyard/protocol';
import { argumentsHash, chainItem, chainText } from './journal/hashing';
import { invalidJournal, parseEntries, type JournalDelivery } from './journal/entries';

/** What a runtime is given to re-run a cell from its journal (the rest of the record travels as a creation does). */
export interface ReplayJournal {
  /** `CellJournalRecord.entries`. */
  readonly entries: string;
  /** The journal's nested calls; a result is needed for each call whose delivery the entries record. */
  readonly calls: readonly JournalCall[];
  readonly observed: JournalObserved;
  /** The cell's stored writes were committed already: the replay commits nothing. */
  readonly committed: boolean;
}

/** What the replay asks of its cell. */
export interface ReplayCellPort {
  /** Enters `sync` (a barrier: the cell answers `synced` once everything before it ran). */
  sync(sequence: number): void;
  /** Enters a journaled result, marked replayed. */
  deliverResult(id: string, tool: string, result: JournalCallResult): void;
  /** Enters a journaled timer batch, marked replayed. */
  deliverTimers(ids: readonly number[]): void;
  /** The replay is over: the cell runs live from here (deferred timers start, held results enter). */
  live(): void;
  /** The cell did not do what its journal says: it fails with `cannot resume cell X: <reason>`. */
  diverge(reason: string): void;
}

interface ReplayCall {
  readonly tool: string;
  readonly hash: string;
  readonly result?: JournalCallResult;
  /** Its result's delivery is in the entries: it is answered from the journal, never sent to the host. */
  readonly delivered: boolean;
}

/**
 * Re-runs a cell from its journal, inside the runtime that holds the cell. The module runs as it
 * did; the journaled deliveries are entered one at a time, each once the cell has run everything
 * the previous one caused (a `sync` barrier, so the cell stands exactly where it stood when the
 * delivery first came) and only once what it needs exists — the call it answers was made, the
 * timers it fires were set — else the cell diverged. Every nested call the cell makes is checked
 * against the journal (tool and argument hash) and, when the journal delivers its result, is not
 * sent to the host. Output items and `notify()` texts the host already handed out are dropped, and
 * their hash chain compared. Past the last delivery the cell is live: calls go to the host (which
 * answers a call it journaled from its journal, or joins it), deferred timers start, results that
 * came early enter in the order they came.
 */
export class CellReplay {
  private readonly deliveries: JournalDelivery[];
  /** The clock reads of the journal, for the prelude (`PreludeConfig.replayTimes`). */
  readonly times: number[];
  private readonly calls = new Map<string, ReplayCall>();
  private readonly firedTimers = new Set<number>();
  private readonly observed: JournalObserved;
  readonly committed: boolean;
  private next = 0;
  private sequence = 0;
  private readonly made = new Set<string>();
  private highestTimer = 0;
  private readonly deferredTimers = new Map<number, number>();
  private held: Array<() => void> = [];
  private items = 0;
  private itemsHash = '';
  private notifies = 0;
  private notifiesHash = '';
  private over = false;
  isLive = false;

  /** Throws `INVALID_JOURNAL` for a journal that cannot be read or does not hold together. */
  constructor(
    private readonly cellId: string,
    journal: ReplayJournal,
    private readonly port: ReplayCellPort,
  ) {
    const { deliveries, times } = parseEntries(cellId, journal.entries);
    this.deliveries = deliveries;
    this.times = times;
    this.observed = journal.observed;
    this.committed = journal.committed;
    const delivered = new Set<string>();
    for (const delivery of deliveries) {
      if (delivery.kind === 'timers') for (const id of delivery.ids) this.firedTimers.add(id);
      else if (delivered.has(delivery.id)) throw invalidJournal(cellId, `the result of ${delivery.id} is delivered twice`);
      else delivered.add(delivery.id);
    }
    for (const call of journal.calls) {
      if (this.calls.has(call.id)) throw invalidJournal(cellId, `${call.id} is journaled twice`);
      const isDelivered = delivered.delete(call.id);
      if (isDelivered && call.result === undefined) throw invalidJournal(cellId, `the result of ${call.id} is delivered, but the journal has none`);
      this.calls.set(call.id, { tool: call.tool, hash: call.hash, result: call.result, delivered: isDelivered });
    }
    for (const id of delivered) throw invalidJournal(cellId, `the result of ${id} is delivered, but the journal has no such call`);
  }

  /** The module started: wait for the first barrier. */
  begin(): void {
    this.port.sync(++this.sequence);
  }

  /** The cell answered barrier `sequence`: everything it did before has arrived. */
  synced(sequence: number): void {
    if (this.over || sequence !== this.sequence) return;
    if (this.next >= this.deliveries.length) return this.goLive();
    const delivery = this.deliveries[this.next++]!;
    if (delivery.kind === 'resolve') {
      const call = this.calls.get(delivery.id)!;
      if (!this.made.has(delivery.id)) return this.diverge(`its journal has the result of tools.${call.tool} (${delivery.id}), a call it did not make`);
      this.port.deliverResult(delivery.id, call.tool, call.result!);
    } else {
      for (const id of delivery.ids) if (id > this.highestTimer) return this.diverge(`its journal fires timer ${id}, which it did not set`);
      this.port.deliverTimers(delivery.ids);
    }
    this.port.sync(++this.sequence);
  }

  /**
   * A nested call the cell made: `journal` (its result comes from the journal: not sent), `host`
   * (send it: live, or journaled without a delivered result), or `diverged`.
   */
  call(id: string, tool: string, inputJson: string | undefined): 'journal' | 'host' | 'diverged' {
    if (this.over) return 'diverged';
    const journaled = this.calls.get(id);
    if (!journaled) {
      if (this.isLive || this.next >= this.deliveries.length) return 'host';
      this.diverge(`it called tools.${tool} (${id}), which its journal does not have`);
      return 'diverged';
    }
    if (journaled.tool !== tool) {
      this.diverge(`it called tools.${tool} where its journal has tools.${journaled.tool} (${id})`);
      return 'diverged';
    }
    if (argumentsHash(inputJson) !== journaled.hash) {
      this.diverge(`it called tools.${tool} (${id}) with other arguments than its journal has`);
      return 'diverged';
    }
    this.made.add(id);
    return journaled.delivered ? 'journal' : 'host';
  }

  /** A timer the cell set: fired from the journal, deferred until live, or started now. */
  setTimer(id: number, delayMs: number): 'journal' | 'deferred' | 'start' {
    if (id > this.highestTimer) this.highestTimer = id;
    if (this.firedTimers.has(id)) return 'journal';
    if (this.isLive) return 'start';
    this.deferredTimers.set(id, delayMs);
    return 'deferred';
  }

  clearTimer(id: number): void {
    this.deferredTimers.delete(id);
  }

  /** The timers to start once live (a timer pending when the cell was lost starts its delay again). */
  takeDeferredTimers(): Array<[number, number]> {
    const timers = [...this.deferredTimers];
    this.deferredTimers.clear();
    return timers;
  }

  /** A result that came from the host: enters now when live, else once the replay is over. */
  whenLive(enter: () => void): void {
    if (this.isLive) enter();
    else this.held.push(enter);
  }

  /** An output item: false while it is one the host already handed out (dropped, its hash checked). */
  keepItem(item: ContentItem): boolean {
    if (this.items >= this.observed.items) return true;
    this.itemsHash = chainItem(this.itemsHash, item);
    if (++this.items === this.observed.items && this.itemsHash !== this.observed.itemsHash) {
      this.diverge(`its output differs from the ${this.observed.items} output items already observed`);
    }
    return false;
  }

  /** A `notify()` text: false while it is one the host already received. */
  keepNotify(text: string): boolean {
    if (this.notifies >= this.observed.notifies) return true;
    this.notifiesHash = chainText(this.notifiesHash, text);
    if (++this.notifies === this.observed.notifies && this.notifiesHash !== this.observed.notifiesHash) {
      this.diverge(`its notify() texts differ from the ${this.observed.notifies} already delivered`);
    }
    return false;
  }

  /** The cell completed: why that diverges from its journal, or undefined. */
  ended(): string | undefined {
    if (this.over) return undefined;
    if (this.next < this.deliveries.length) return `it completed where its journal has ${this.deliveries.length - this.next} more deliveries`;
    if (this.items < this.observed.items) return `it completed after ${this.items} output items, where ${this.observed.items} were already observed`;
    if (this.notifies < this.observed.notifies) return `it completed after ${this.notifies} notify() texts, where ${this.observed.notifies} were already delivered`;
    return undefined;
  }

  private goLive(): void {
    if (this.isLive) return;
    this.isLive = true;
    this.port.live();
    const held = this.held;
    this.held = [];
    for (const enter of held) enter();
  }

  private diverge(reason: string): void {
    if (this.over) return;
    this.over = true;
    this.held = [];
    this.port.diverge(reason);
  }
}

/** The text a cell that diverged from its journal fails with. */
export function divergence(cellId: string, reason: string): string {
  return `cannot resume cell ${cellId}: ${reason}`;
}
