import type { CellToolDescriptor } from './code-mode-cell';

/**
 * Durable cells: the journal of a Code Mode cell, as its host keeps it, exports it and restores it.
 *
 * Everything nondeterministic enters a cell through its runtime's prelude (nested-call results,
 * timer firings, reads of the clock, randomness from a journaled seed), and the prelude records it
 * in delivery order. The host that keeps the cell's journal (the agent host) can then re-run the
 * cell in a fresh isolate and get the same cell: recorded answers are delivered in the recorded
 * order, nested calls are checked against their entries and never run twice, output already
 * observed is not emitted again. A `SessionStore` persists what {@link CodeModeSession.exportState}
 * returns and feeds it back to {@link CodeModeSession.restore}; {@link CellHost.journal} reports
 * each change as it happens, so a store can write ahead.
 */

/** The `format` of a {@link CodeModeSessionState}. */
export const CODE_MODE_STATE_FORMAT = 'switchyard.code-mode-session';

/** The `version` of the state (and of each cell journal) this package writes and reads. */
export const CODE_MODE_STATE_VERSION = 1;

/**
 * The message of the `INVALID_INPUT` error {@link CodeModeSession.restore} rejects with once the
 * session has created a cell: a restore replaces the session's stored values and cells, so it comes
 * first. Every implementation (and a service restoring through one) uses this text.
 */
export const RESTORE_TOO_LATE_MESSAGE = 'restore must come before the session creates its first cell';

/** How a journaled nested call settled: its result's JSON text (`undefined`: no value), or the text the cell's promise rejected with. */
export type JournalCallResult = { readonly ok: true; readonly json?: string } | { readonly ok: false; readonly error: string };

/** One nested call of a cell as its journal holds it. */
export interface JournalCall {
  /** `tool-1`, `tool-2`, … in the order the cell made its calls. */
  readonly id: string;
  /** The `tools.<name>` the cell called. */
  readonly tool: string;
  /** The first 16 hex digits of the SHA-256 of the arguments' JSON text as the cell produced it. */
  readonly hash: string;
  /** How the call settled; absent while it was in flight. */
  readonly result?: JournalCallResult;
}

/**
 * What the host has already handed out of a cell: output items taken by observations (`exec`,
 * `wait`, background delivery) and `notify()` texts injected, with a chained hash of each (so a
 * replay that produces different output is caught). A replay skips these.
 */
export interface JournalObserved {
  /** Output items (`text`, `image`, `console.*`) handed out. */
  readonly items: number;
  /** Chained SHA-256 (hex) of those items, `''` for none. */
  readonly itemsHash: string;
  /** `notify()` texts handed to the host. */
  readonly notifies: number;
  /** Chained SHA-256 (hex) of those texts, `''` for none. */
  readonly notifiesHash: string;
}

/**
 * The journal of one open cell: everything needed to re-run it. JSON-serializable. `check` seals
 * it: a record whose fields do not hash to it is corrupted, and one whose `session` is not its
 * state's `id` belongs to another session; either fails that cell only (`INVALID_JOURNAL`).
 */
export interface CellJournalRecord {
  readonly version: number;
  /** The session state (`CodeModeSessionState.id`) the cell belongs to. */
  readonly session: string;
  readonly cellId: string;
  readonly source: string;
  readonly tools: readonly CellToolDescriptor[];
  readonly typescript?: boolean;
  /** The stored values the cell started with: `[key, JSON text]`. */
  readonly stored: ReadonlyArray<readonly [string, string]>;
  /** The seed of the cell's `Math.random` (32 hex digits). */
  readonly seed: string;
  /**
   * What entered the cell, in order, as its runtime reported it: `r<N>` the result of `tool-N`
   * was delivered; `t<id>.<id>…` a batch of timers fired; `d<ms>` or `d<ms>*<count>` the clock was
   * read (`count` times in a row); comma-separated.
   */
  readonly entries: string;
  /** Every nested call the host received, in order. */
  readonly calls: readonly JournalCall[];
  readonly observed: JournalObserved;
  /** The cell's stored writes were committed (a replay commits nothing again). */
  readonly committed: boolean;
  /** Why the cell cannot be resumed (its journal passed its byte budget, its runtime keeps no journal); absent: it can. */
  readonly unresumable?: string;
  /** Seals the record: the first 32 hex digits of the SHA-256 of its other fields. */
  readonly check: string;
}

/**
 * A Code Mode session's durable state: its committed stored values and the journal of every open
 * cell. Versioned: a state of another `format` or a newer `version` is refused (`INVALID_JOURNAL`).
 */
export interface CodeModeSessionState {
  readonly format: typeof CODE_MODE_STATE_FORMAT;
  readonly version: number;
  /** The session's identity (random, kept across restores): each cell journal names it. */
  readonly id: string;
  /** Committed stored values: `[key, JSON text]`. */
  readonly stored: ReadonlyArray<readonly [string, string]>;
  readonly cells: readonly CellJournalRecord[];
}

/**
 * One change to a session's durable state, reported through {@link CellHost.journal} as it
 * happens (in order): a store that applies them to the last exported state has the current one.
 * A `call-issued` is reported before the tool is invoked, and the tool waits for the promise
 * `journal` returns (write-ahead); a `call-settled` as soon as the result is known.
 */
export type CellJournalUpdate =
  | { readonly type: 'cell-opened'; readonly cellId: string; readonly record: CellJournalRecord }
  | { readonly type: 'entries'; readonly cellId: string; readonly entries: string }
  | { readonly type: 'call-issued'; readonly cellId: string; readonly call: JournalCall }
  | { readonly type: 'call-settled'; readonly cellId: string; readonly id: string; readonly result: JournalCallResult }
  | { readonly type: 'output-observed'; readonly cellId: string; readonly observed: JournalObserved }
  | { readonly type: 'stored-committed'; readonly cellId: string; readonly writes: ReadonlyArray<readonly [string, string]> }
  | { readonly type: 'unresumable'; readonly cellId: string; readonly reason: string }
  /** The cell left its session; `record` is its journal as it ended (what an offline replay of the cell takes). */
  | { readonly type: 'cell-closed'; readonly cellId: string; readonly record: CellJournalRecord };

/** Options of {@link CodeModeSession.restore}. */
export interface RestoreOptions {
  /**
   * `true` (default): the agent host that ran the state's nested calls restarted, so a call that
   * was in flight is gone: it rejects inside the resumed cell with "tool `x` was interrupted by a
   * restart of its host", unless its tool is safe to repeat (`CellToolDescriptor.idempotent`),
   * which runs again. `false`: only a runtime was lost, the host lives on: a call in flight is
   * asked of the host again under the same `runtimeToolCallId`, and the host joins it (the Code
   * Mode broker does) instead of running it twice.
   */
  readonly hostRestarted?: boolean;
  /**
   * The updates {@link CellHost.journal} reported after the state was exported, in order (what a
   * store appended since its last export): applied to the state before it is restored. A cell
   * they open is restored, a cell they close is not; a malformed update fails its cell only.
   */
  readonly journal?: readonly CellJournalUpdate[];
}

/** What {@link CodeModeSession.restore} did with each cell of the state. */
export interface RestoreResult {
  readonly cells: ReadonlyArray<
    | { readonly cellId: string; readonly resumed: true }
    /** Not resumed (a bad journal, an unresumable one): a `wait` on the cell gets its failure, `error`. */
    | { readonly cellId: string; readonly resumed: false; readonly code: 'INVALID_JOURNAL' | 'LIMIT_EXCEEDED'; readonly error: string }
  >;
}
