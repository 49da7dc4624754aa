import type { CellJournalUpdate, CodeModeSessionState, RestoreOptions, RestoreResult } from './cell-journal';
import type { CellLimitExceededEvent, CellResumedEvent, RuntimeAdmittedEvent, RuntimeLostEvent, RuntimeQueuedEvent, RuntimeRefusedEvent } from './events';
import type { JsonValue } from './json';
import type { ContentItem } from './wire';

/**
 * The cell contract: what a Code Mode runtime (cells of model JavaScript) and its host say to
 * each other. A runtime implements {@link CodeModeRuntime} → {@link CodeModeSession}; the host
 * implements {@link CellHost}. The in-process engine, the process runtime (cells in worker
 * processes) and any remote runtime implement the same contract, so `@switchyard/code-mode` works
 * with all of them without knowing which one it has.
 */

/** One nested tool call a cell asks its host to run (`await tools.<tool>(input)` inside the cell). */
export interface CellToolRequest {
  /** The cell that made the call. */
  readonly cellId: string;
  /** `tool-1`, `tool-2`, … per cell, in the order the cell made its calls. */
  readonly runtimeToolCallId: string;
  /** The descriptor name as called in JS (`tools.<tool>(…)`), i.e. a {@link CellToolDescriptor} `name`. */
  readonly tool: string;
  /** Function tools: the JSON object argument (`{}` when called with nothing); freeform tools: the string. */
  readonly input: JsonValue | string | undefined;
  /**
   * The JSON text of `input` as the cell produced it, when the runtime has it (`undefined`: no
   * argument). A host that parses arguments itself (the registry validates function arguments from
   * their text) takes this instead of re-encoding `input`; `input` is then decoded only when read.
   */
  readonly inputJson?: string;
  /**
   * Aborted when the call's result can no longer reach the cell: the cell completed, failed, was
   * terminated, its session shut down, or the runtime holding it ended. The host should stop the
   * tool; whatever it answers afterwards is dropped.
   */
  readonly signal: AbortSignal;
}

/** A nested call's result as {@link CellHost.invokeToolJson} gives it: its JSON text, or its value. */
export type CellToolResult = { readonly json: string | undefined } | { readonly value: JsonValue };

/**
 * What a runtime reports about itself to its host beside observations (the protocol events
 * `runtime-lost`, `cell-limit-exceeded` and `cell-resumed`, and the admission queue's `runtime-queued`,
 * `runtime-admitted` and `runtime-refused`), through the optional {@link CellHost.runtimeEvent}. A
 * host that does not implement it loses nothing the model sees: every failure also reaches the
 * model through an observation or a failed `createCell`.
 */
export type CellRuntimeEvent = RuntimeLostEvent | CellLimitExceededEvent | CellResumedEvent | RuntimeQueuedEvent | RuntimeAdmittedEvent | RuntimeRefusedEvent;

/**
 * The one delegate a runtime session talks to, implemented by the host (`@switchyard/code-mode`).
 * Every member may be called from any point of a cell's life; a delegate that throws (or rejects
 * from `notify`, `cellClosed`, `runtimeEvent`) never harms the runtime or the cell.
 */
export interface CellHost {
  /**
   * Runs one nested call. Resolves with the tool's JSON result; rejects with a string or an Error,
   * and the promise inside the cell then rejects with that text. Called concurrently.
   */
  invokeTool(request: CellToolRequest): Promise<JsonValue>;
  /**
   * Optional: runs one nested call like {@link invokeTool} but resolves with the result's JSON text
   * when the host holds it (`{ json }`, `undefined`: no value; a relaying runtime has the text as it
   * arrived, a JSON tool output has its own), else with the value (`{ value }`: the runtime encodes
   * it once, after checking its limits). The text then reaches the isolate, which parses it,
   * without being decoded and encoded again on the way.
   */
  invokeToolJson?(request: CellToolRequest): Promise<CellToolResult>;
  /** `notify(text)` from a cell: the host injects `text` into the active turn. Never awaited. */
  notify(event: { readonly cellId: string; readonly text: string }): void;
  /** The cell left its session (its final observation was taken, it was terminated, or its runtime ended). Called once per cell. */
  cellClosed(cellId: string): void;
  /** Optional: runtime failures and limit hits, for the host's log and metrics (see {@link CellRuntimeEvent}). */
  runtimeEvent?(event: CellRuntimeEvent): void;
  /**
   * Optional: each change to the session's durable state as it happens, in order (see
   * {@link CellJournalUpdate}; called by the session that keeps the journals). A store writes them
   * ahead: for a `call-issued` update the tool is invoked only once the returned promise resolved
   * (a rejection fails that call inside the cell, the tool not run); other updates are not awaited.
   */
  journal?(update: CellJournalUpdate): void | Promise<void>;
}

/** One tool a cell may call, as the cell sees it. */
export interface CellToolDescriptor {
  /** JS identifier under `tools.` (also `ALL_TOOLS[i].name`). */
  readonly name: string;
  /** Shown as `ALL_TOOLS[i].description`. */
  readonly description: string;
  /** `function` tools take an object or nothing, `freeform` tools a string. */
  readonly kind: 'function' | 'freeform';
  /**
   * The tool's TypeScript declaration (`declare const tools: { name(args: T): Promise<O>; };`,
   * see `codeModeDeclaration`), shown as `ALL_TOOLS[i].declaration`, so a cell can read the exact
   * types of any tool, described in the `exec` description or not. Omitted: the runtime shows the
   * untyped declaration (`args: unknown` or `input: string`, `Promise<unknown>`).
   */
  readonly declaration?: string;
  /**
   * The tool is safe to run again with the same arguments (`defineFunctionTool({ idempotent: true })`,
   * an MCP tool annotated `idempotentHint: true`): when a cell resumes after its agent host
   * restarted, a call of it that was in flight runs again instead of failing as interrupted.
   */
  readonly idempotent?: boolean;
}

/**
 * What one `createCell` / `observe` / `terminate` call saw: output items produced since the
 * previous observation, and how the cell stands. `wallTimeMs` is that call's own duration (not the
 * cell's lifetime).
 * - `yielded`: still running (the yield timer fired or the cell called `yield_control()`).
 * - `completed`: finished; `error` is set when the script failed (uncaught error, a limit, a lost runtime).
 * - `terminated`: stopped by `terminate` (or session shutdown) before it finished.
 */
export type CellObservation =
  | { kind: 'yielded'; cellId: string; items: ContentItem[]; wallTimeMs: number }
  | { kind: 'completed'; cellId: string; items: ContentItem[]; error?: string; wallTimeMs: number }
  | { kind: 'terminated'; cellId: string; items: ContentItem[]; wallTimeMs: number };

/** Options of {@link CodeModeSession.createCell}. */
export interface CreateCellOptions {
  /** JavaScript (or TypeScript) evaluated as the async module `exec_main.mjs`. */
  source: string;
  /** The tools on `tools` and `ALL_TOOLS`, fixed for the cell's life. */
  tools: readonly CellToolDescriptor[];
  /** How long the first observation waits (ms) before it yields "still running". */
  yieldTimeMs: number;
  /**
   * The cell's id, chosen by the host (`createCellIdGenerator` of `@switchyard/kit` makes such ids), so the host knows it
   * before the first observation: nested calls and notifications that arrive while `createCell`
   * is pending already name it. 1–64 characters of `[0-9A-Za-z_-]`, unused by the session's other
   * cells, else `INVALID_INPUT`. Omitted: the runtime allocates one (16 characters of
   * {@link CELL_ID_ALPHABET}).
   */
  cellId?: string;
  /** `true` always strips TypeScript types, `false` never; omitted: strip only when the source does not parse as JavaScript. */
  typescript?: boolean;
  /**
   * The seed of the cell's `Math.random` (32 hex digits), chosen by the host that journals the
   * cell so it can replay it. Omitted: a random one.
   */
  seed?: string;
  /**
   * Makes the call safe to retry (1–256 characters; `@switchyard/code-mode` uses the exec call's
   * turn, step and `call_id`). A later `createCell` with the same key and the same `source` is a retry:
   * it starts nothing and answers with the original cell (its id and its first observation, the
   * same one again), even when the first answer was lost on its way; when the first observation
   * was cancelled, the retry observes that cell. A different `source` under a used key is a new
   * cell. A session remembers its most recent keyed answers only (at least `maxCells` of them).
   */
  idempotencyKey?: string;
  /**
   * Cancels the first observation only: on abort it detaches without taking the output and rejects
   * with `SwitchyardError('ABORTED')` whose `cellId` property names the created cell; the cell keeps
   * running and a later `observe` gets everything. Already aborted: nothing is created (no `cellId`).
   */
  signal?: AbortSignal;
}

/** Options of {@link CodeModeSession.observe}. */
export interface ObserveOptions {
  /** How long to wait (ms) for completion or a `yield_control()` before yielding "still running". */
  yieldTimeMs: number;
  /** Same as calling `terminate(cellId)`. */
  terminate?: boolean;
  /**
   * Makes the observation safe to retry (1–256 characters; `@switchyard/code-mode` uses the wait
   * call's turn, step and `call_id`). A later `observe` of the same cell with the same key answers with
   * the same observation again (still waiting: the same pending one), so output in an answer lost
   * on its way is replayed, never lost or observed twice; a cancelled observation is forgotten (the
   * retry observes afresh). A new key is a new observation.
   */
  idempotencyKey?: string;
  /**
   * Cancels this observation (a dropped observer): on abort the observer detaches without taking
   * the buffered output or closing the cell, and the call rejects with `SwitchyardError('ABORTED')`.
   * The next observation gets all output, and the completion if the cell completed meanwhile.
   */
  signal?: AbortSignal;
}

/** What {@link CodeModeSession.createCell} resolves with: the cell's id and its first observation. */
export interface CreatedCell {
  /** The cell's id (the host-chosen `cellId` when one was given). */
  cellId: string;
  /** The first observation (`yielded`, or `completed` when the cell finished within `yieldTimeMs`). */
  observation: CellObservation;
}

/**
 * One agent session's cells and stored values (`store` / `load`, shared by the session's cells,
 * committed when a cell completes). Service-level failures reject with a `SwitchyardError`:
 * `CELL_NOT_FOUND` ("exec cell X not found"), `RESPOND_TO_MODEL` (a second observer, already
 * terminating), `SHUTTING_DOWN`, `LIMIT_EXCEEDED` (too many cells), `INVALID_INPUT`, `ABORTED`
 * (the call's `signal` was aborted). Script failures are observations, never rejections.
 */
export interface CodeModeSession {
  /** Starts a cell and waits for its first observation (completion or yield). */
  createCell(options: CreateCellOptions): Promise<CreatedCell>;
  /** Waits on a running cell (or takes a buffered completion, which closes the cell). */
  observe(cellId: string, options: ObserveOptions): Promise<CellObservation>;
  /** Stops a cell: `terminated` with the unobserved output, or its completion when it already completed. */
  terminate(cellId: string): Promise<CellObservation>;
  /** Terminates every cell and refuses new ones (`SHUTTING_DOWN`). Resolves within about 1 s. */
  shutdown(): Promise<void>;
  /**
   * Optional (durable cells): the session's durable state — committed stored values and the
   * journal of every open cell — as JSON-serializable data, for a store. Synchronous; never throws.
   */
  exportState?(): CodeModeSessionState;
  /**
   * Optional (durable cells): restores a state {@link exportState} gave (of this session or of one
   * in another process): its stored values, and its cells, which resume from their journals under
   * their own ids (a later `observe` gets their output and end). Call it before any `createCell`:
   * after one it rejects with `INVALID_INPUT` (`RESTORE_TOO_LATE_MESSAGE`). Rejects with
   * `INVALID_JOURNAL` when the state as a whole is unusable (another format, a newer
   * version); a bad cell journal fails that cell only (see {@link RestoreResult}).
   */
  restore?(state: CodeModeSessionState, options?: RestoreOptions): Promise<RestoreResult>;
}

/** Options of {@link CodeModeRuntime.openSession}. */
export interface OpenSessionOptions {
  /**
   * Who the session belongs to. Sessions of the same tenant may share a worker process; sessions of
   * different tenants (or without one: every such session is its own tenant) never do.
   */
  tenant?: string;
}

/** Opens sessions; `shutdown` shuts every session down and releases what the runtime holds (isolates, worker processes). */
export interface CodeModeRuntime {
  /** Opens one session talking to `host`. Throws `SHUTTING_DOWN` after `shutdown()`, `CONFIG` for a host without `invokeTool`. */
  openSession(host: CellHost, options?: OpenSessionOptions): CodeModeSession;
  /** Shuts every session down; no cell, isolate or worker process outlives the returned promise. */
  shutdown(): Promise<void>;
}

/** The alphabet of generated cell ids (Crockford-like base32 without i, l, o, u). */
export const CELL_ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** What a host-chosen cell id must look like (see {@link CreateCellOptions.cellId}). */
export const CELL_ID_PATTERN = /^[0-9A-Za-z_-]{1,64}$/;
