import type { JsonValue } from '@switchyard/protocol';
import type { Observation } from './response';

/**
 * The parts of `@switchyard/code-mode-runtime` the broker uses, typed structurally so any runtime
 * with the same shape (in-process, remote, a test double for a unit test) plugs in.
 */
export interface RuntimeCellHost {
  invokeTool(request: { cellId: string; runtimeToolCallId: string; tool: string; input: JsonValue | string | undefined; signal: AbortSignal }): Promise<JsonValue>;
  notify(event: { cellId: string; text: string }): void;
  cellClosed(cellId: string): void;
}

export interface RuntimeCellTool {
  name: string;
  description: string;
  kind: 'function' | 'freeform';
}

export interface RuntimeSession {
  /**
   * `signal` cancels the first observation only: the call rejects with code `ABORTED` (carrying
   * `cellId` when the cell was created) and the cell keeps running with its output kept.
   */
  createCell(options: { source: string; tools: readonly RuntimeCellTool[]; yieldTimeMs: number; signal?: AbortSignal }): Promise<{ cellId: string; observation: Observation }>;
  /** `signal` detaches the observer without taking the output (the next observation gets it) and rejects with code `ABORTED`. */
  observe(cellId: string, options: { yieldTimeMs: number; signal?: AbortSignal }): Promise<Observation>;
  terminate(cellId: string): Promise<Observation>;
  shutdown(): Promise<void>;
}

export interface CodeModeRuntimeLike {
  openSession(host: RuntimeCellHost): RuntimeSession;
}

