import type { ExecProcess } from './exec-process';
import { EMPTY_LINE, type TypedLine } from './typed-line';

/** At most this many live processes per toolset. */
export const DEFAULT_MAX_PROCESSES = 64;
/** The most recently used processes are never evicted. */
const PROTECTED_RECENT = 8;
/** The first session id handed out. */
const FIRST_SESSION_ID = 1000;

/** A process the model can still reach with `write_stdin`. */
export interface ProcessEntry {
  readonly id: number;
  readonly process: ExecProcess;
  /** The command as the model wrote it (hooks see it as `Bash` + `{command}`). */
  readonly command: string;
  /** The exec_command call that started it (the PostToolUse of a write_stdin that sees it finish carries this id). */
  readonly callId?: string;
  readonly sessionId: string;
  readonly turnId: string;
  lastUsed: number;
  /** The unfinished line typed into it so far (what write_stdin's hooks see before this write). */
  typed: TypedLine;
  /** write_stdin calls waiting on it now: while one is, that call reports the exit, not the background delivery. */
  polls: number;
}

/**
 * The live processes of one toolset, by session id. When full, adding one evicts (and kills) an
 * exited process first, else the least recently used one, never one of the most recent few.
 */
export class ProcessTable {
  private readonly entries = new Map<number, ProcessEntry>();
  private nextId = FIRST_SESSION_ID;
  private clock = 0;
  private readonly maxProcesses: number;

  constructor(maxProcesses = DEFAULT_MAX_PROCESSES) {
    this.maxProcesses = Math.max(1, Math.floor(maxProcesses));
  }

  get size(): number {
    return this.entries.size;
  }

  /** Session ids of the live processes (of one session when `sessionId` is given), oldest first. */
  ids(sessionId?: string): number[] {
    return [...this.entries.values()].filter((entry) => sessionId === undefined || entry.sessionId === sessionId).map((entry) => entry.id);
  }

  /** Stores a running process under a new session id, evicting one first when the table is full. */
  add(init: Omit<ProcessEntry, 'id' | 'lastUsed' | 'typed' | 'polls'>): ProcessEntry {
    while (this.entries.size >= this.maxProcesses) {
      const victim = this.pickVictim();
      if (!victim) break;
      this.remove(victim.id)?.process.kill();
    }
    const entry: ProcessEntry = { ...init, id: this.nextId++, lastUsed: ++this.clock, typed: EMPTY_LINE, polls: 0 };
    this.entries.set(entry.id, entry);
    return entry;
  }

  /**
   * The process `id` of session `sessionId`. Another session's process answers `undefined`, exactly
   * like an id that was never handed out: one toolset may serve several sessions.
   */
  get(id: number, sessionId: string): ProcessEntry | undefined {
    const entry = this.entries.get(id);
    return entry?.sessionId === sessionId ? entry : undefined;
  }

  /** Marks a process as just used (LRU order). */
  touch(entry: ProcessEntry): void {
    entry.lastUsed = ++this.clock;
  }

  remove(id: number): ProcessEntry | undefined {
    const entry = this.entries.get(id);
    this.entries.delete(id);
    return entry;
  }

  /** Kills and forgets every process matching `predicate`; returns them. */
  killWhere(predicate: (entry: ProcessEntry) => boolean): ProcessEntry[] {
    const killed: ProcessEntry[] = [];
    for (const entry of [...this.entries.values()]) {
      if (!predicate(entry)) continue;
      this.entries.delete(entry.id);
      entry.process.kill();
      killed.push(entry);
    }
    return killed;
  }

  private pickVictim(): ProcessEntry | undefined {
    const byRecent = [...this.entries.values()].sort((a, b) => b.lastUsed - a.lastUsed);
    const protectedCount = Math.min(PROTECTED_RECENT, this.maxProcesses - 1);
    const candidates = byRecent.slice(protectedCount).reverse(); // least recently used first
    return candidates.find((entry) => entry.process.exited) ?? candidates[0];
  }
}
