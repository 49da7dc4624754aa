export { createCodeModeRuntime } from './code-mode-runtime';
export type { CodeModeRuntimeOptions } from './code-mode-runtime';
export type {
  CellHost,
  CellObservation,
  CellToolDescriptor,
  CellToolRequest,
  CodeModeRuntime,
  CodeModeSession,
  CreateCellOptions,
  ObserveOptions,
} from './cell-host';

export { createCellIdGenerator, CELL_ID_ALPHABET } from './cell-id';
export { stripTypes, CELL_FILENAME } from './cell-source';
export { nodeSnapshotFlagProblem } from './node-snapshot-check';
export type { NodeSnapshotCheckOptions } from './node-snapshot-check';

export { VERSION } from './version';
