import type { ContentItem, JsonValue } from '@switchyard/protocol';

/** One nested tool call a cell asks its host to run. */
export interface CellToolRequest {
  /** The cell that made the call. */
  cellId: string;
  /** `tool-1`, `tool-2`, … per cell, in call order. */
  runtimeToolCallId: string;
  /** The descriptor name as called in JS (`tools.<tool>(…)`). */
  tool: string;
  /** Function tools: the JSON object argument (`{}` when called with nothing); freeform tools: the string. */
  input: JsonValue | string | undefined;
  /** Aborted when the cell completes, is terminated, or the session shuts down. */
  signal: AbortSignal;
}

/**
 * The one delegate a session talks to. `invokeTool` resolves with the tool's JSON result, or
 * rejects with a string or an Error: the promise inside the cell then rejects with that text.
 * A delegate that throws never harms the runtime.
 */
export interface CellHost {
  invokeTool(request: CellToolRequest): Promise<JsonValue>;
  notify(event: { cellId: string; text: string }): void;
  cellClosed(cellId: string): void;
}

/** One tool a cell may call. */
export interface CellToolDescriptor {
  /** JS identifier under `tools.` (also `ALL_TOOLS[i].name`). */
  name: string;
  /** Shown as `ALL_TOOLS[i].description`. */
  description: string;
  /** `function` tools take an object or nothing, `freeform` tools a string. */
  kind: 'function' | 'freeform';
}

/** What one `createCell` / `observe` / `terminate` call saw. `wallTimeMs` is that call's own duration. */
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
  /** How long the first observation waits before yielding "still running". */
  yieldTimeMs: number;
  /** `true` always strips types, `false` never; omitted: strip only when the source does not parse as JavaScript. */
  typescript?: boolean;
  /**
   * Cancels the first observation only: on abort it detaches without taking the output and rejects
   * with `SwitchyardError('ABORTED')` whose `cellId` property names the created cell; the cell keeps
   * running and a later `observe` gets everything. Already aborted: nothing is created (no `cellId`).
   */
  signal?: AbortSignal;
}

/** Options of {@link CodeModeSession.observe}. */
export interface ObserveOptions {
  yieldTimeMs: number;
  /** Same as calling `terminate(cellId)`. */
  terminate?: boolean;
  /**
   * Cancels this observation (reference §3.3 "dropped observer"): on abort the observer detaches
   * without taking the buffered output or closing the cell, and the call rejects with
   * `SwitchyardError('ABORTED')`. The next observation gets all output, and the completion if the
   * cell completed meanwhile. Not used by `terminate`.
   */
  signal?: AbortSignal;
}

/**
 * One agent session's cells and stored values. Service-level failures reject with a
 * `SwitchyardError`: `CELL_NOT_FOUND`, `RESPOND_TO_MODEL` (second observer, already terminating),
 * `SHUTTING_DOWN`, `LIMIT_EXCEEDED`, `INVALID_INPUT`, `ABORTED` (the call's `signal` was aborted).
 */
export interface CodeModeSession {
  createCell(options: CreateCellOptions): Promise<{ cellId: string; observation: CellObservation }>;
  observe(cellId: string, options: ObserveOptions): Promise<CellObservation>;
  terminate(cellId: string): Promise<CellObservation>;
  shutdown(): Promise<void>;
}

/** Opens sessions; `shutdown` shuts every session down. */
export interface CodeModeRuntime {
  openSession(host: CellHost): CodeModeSession;
  shutdown(): Promise<void>;
}
