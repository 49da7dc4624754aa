import type { CellHost, CellJournalRecord, CellJournalUpdate, CellToolRequest, CellToolResult, ContentItem, JournalCallResult } from '@switchyard/protocol';
import { CellJournal, type CellJournalStart } from './cell-journal';
import { asHostAnswer, failureText, runOnHost } from './call-outcome';
import { divergence } from '../cell-replay';
import { newSessionId } from './state';

/**
 * The journals of an engine session that is its host's journal keeper (the in-process runtime:
 * the session lives in the agent host). Each cell's nested calls and `notify()` texts pass through
 * its journal on their way to the host (`hostFor`): a new call is journaled (and written ahead)
 * before the host runs it, its outcome when it settles; a call the journal already has is never
 * run again — answered from the journal, joined while it runs, and asked of the host again (same
 * `runtimeToolCallId`) only when a restore left it open.
 */
export class EngineJournals {
  private readonly journals = new Map<string, CellJournal>();
  private readonly running = new Map<string, Promise<JournalCallResult>>();
  /** The session's identity in its exported state. */
  id = newSessionId();

  constructor(
    private readonly host: CellHost,
    readonly maxBytes: number,
  ) {}

  private get report(): ((update: CellJournalUpdate) => void | Promise<void>) | undefined {
    const host = this.host;
    return host.journal ? (update) => host.journal?.(update) : undefined;
  }

  open(start: CellJournalStart): CellJournal {
    const journal = new CellJournal(start, this.maxBytes, this.report, () => this.id);
    this.journals.set(start.cellId, journal);
    journal.opened();
    return journal;
  }

  /** A journal from a restored record (checked). */
  restored(record: CellJournalRecord): CellJournal {
    const journal = CellJournal.restored(record, this.maxBytes, this.report, () => this.id);
    this.journals.set(record.cellId, journal);
    return journal;
  }

  get(cellId: string): CellJournal | undefined {
    return this.journals.get(cellId);
  }

  entries(cellId: string, entries: string): void {
    this.journals.get(cellId)?.appendEntries(entries);
  }

  handedOut(cellId: string, items: readonly ContentItem[]): void {
    this.journals.get(cellId)?.handedOut(items);
  }

  committed(cellId: string, writes: ReadonlyArray<readonly [string, string]>): void {
    this.journals.get(cellId)?.commit(writes);
  }

  close(cellId: string): void {
    const journal = this.journals.get(cellId);
    if (!journal) return;
    this.journals.delete(cellId);
    journal.closed();
  }

  records(): CellJournalRecord[] {
    return [...this.journals.values()].map((journal) => journal.record());
  }

  /** The host cell `cellId` talks to: the session's host, with the journal in between. */
  hostFor(cellId: string): CellHost {
    const host = this.host;
    return {
      invokeTool: (request) => this.invoke(cellId, request).then((answer) => ('json' in answer && answer.json !== undefined ? JSON.parse(answer.json) : undefined)),
      invokeToolJson: (request) => this.invoke(cellId, request),
      notify: (event) => {
        this.journals.get(cellId)?.notified(event.text);
        host.notify(event);
      },
      cellClosed: (id) => host.cellClosed(id),
      runtimeEvent: (event) => host.runtimeEvent?.(event),
    };
  }

  private async invoke(cellId: string, request: CellToolRequest): Promise<CellToolResult> {
    const journal = this.journals.get(cellId);
    if (!journal) return asHostAnswer(await runOnHost(this.host, request));
    const { runtimeToolCallId: id, tool } = request;
    const key = `${cellId}\u0000${id}`;
    const journaled = journal.call(id);
    if (journaled) {
      if (!journal.matches(id, tool, request.inputJson)) throw divergence(cellId, `it called tools.${tool} where its journal has tools.${journaled.tool} (${id})`);
      if (journaled.result) return asHostAnswer(journaled.result);
      const joined = this.running.get(key);
      if (joined) return asHostAnswer(await joined);
      if (journaled.settled) throw `tool \`${tool}\` was not called again: its call ${id} was answered before`;
    } else {
      try {
        await journal.issue(id, tool, request.inputJson).written;
      } catch (error) {
        const result: JournalCallResult = { ok: false, error: `tool \`${tool}\` was not called: its journal entry could not be written (${failureText(error)})` };
        journal.settle(id, result);
        return asHostAnswer(result);
      }
    }
    const running = runOnHost(this.host, request).then((result) => {
      journal.settle(id, result);
      return result;
    });
    this.running.set(key, running);
    try {
      return await asHostAnswer(await running);
    } finally {
      if (this.running.get(key) === running) this.running.delete(key);
    }
  }
}
