export { createCodeModeRuntime } from './code-mode-runtime';
export type { CodeModeRuntimeOptions } from './code-mode-runtime';
// The cell contract lives in @switchyard/protocol; re-exported for hosts that import it from here.
export type {
  CellHost,
  CellObservation,
  CellRuntimeEvent,
  CellToolDescriptor,
  CellToolRequest,
  CodeModeRuntime,
  CodeModeSession,
  CreateCellOptions,
  CreatedCell,
  ObserveOptions,
} from '@switchyard/protocol';

export { stripTypes, CELL_FILENAME } from './cell-source';
export { nodeSnapshotFlagProblem } from './node-snapshot-check';
export type { NodeSnapshotCheckOptions } from './node-snapshot-check';

export { VERSION } from './version';
