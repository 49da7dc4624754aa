// The host's entry: a Code Mode runtime, its options and limits, durable cells. What a runtime
// transport needs (the runtime protocol, placements, the worker pool as a placement) is in
// `@switchyard/code-mode-runtime/protocol` (`protocol-entry.ts`).

// The runtime: cells in isolates, in worker processes by default.
export { createCodeModeRuntime } from './code-mode-runtime';
export type { CodeModeRuntimeOptions } from './code-mode-runtime';
export { DEFAULT_CPU_TIME_MS } from './runtime-options';
export type { RuntimeLimitOptions } from './runtime-options';
export type { CellLimitOptions } from './cell-limits';
export { DEFAULT_SESSIONS_PER_WORKER } from './process-runtime';
export type { ProcessWorkerOptions } from './process-runtime';
export { nodeSnapshotFlagProblem } from './node-snapshot-check';
export type { NodeSnapshotCheckOptions } from './node-snapshot-check';

// Durable cells: journals, their replay after a lost runtime or a restart, offline replay.
export { replayCells, sealCellJournal } from './replay-cells';
export type { ReplayCellsOptions, ReplayedCell } from './replay-cells';
export { MAX_RUNTIME_LOSSES } from './remote-replay';
export { defaultMaxJournalBytes } from './engine-session';

export { VERSION } from './version';
