// The runtime: cells in isolates, in worker processes by default.
export { createCodeModeRuntime } from './code-mode-runtime';
export type { CodeModeRuntimeOptions } from './code-mode-runtime';
export { DEFAULT_CPU_TIME_MS, RUNTIME_LIMIT_OPTION_RULES } from './runtime-options';
export type { RuntimeLimitOptions } from './runtime-options';
export { RUNTIME_HOST_CAPS, type CellLimitCaps, type CellLimitOptions } from './cell-limits';
export { nodeSnapshotFlagProblem } from './node-snapshot-check';

// Durable cells: journals, their replay after a lost runtime or a restart, offline replay.
export { replayCells, sealCellJournal } from './replay-cells';
export type { ReplayCellsOptions, ReplayedCell } from './replay-cells';
export { MAX_RUNTIME_LOSSES } from './remote-replay';
export { defaultMaxJournalBytes } from './engine-session';
export type { NodeSnapshotCheckOptions } from './node-snapshot-check';

// The runtime protocol: runtime hosts and placements beyond the local worker pool.
export { createRemoteRuntime, createWorkerPool, DEFAULT_SESSIONS_PER_WORKER } from './process-runtime';
export type { ProcessWorkerOptions, RemoteRuntimeOptions, WorkerPoolPlacement, WorkerPoolStats } from './process-runtime';
export type { RuntimeLease, RuntimePlacement, RuntimeSink } from './remote-session';
export { connectRuntime, RuntimeLostError } from './runtime-client';
export type { ConnectRuntimeOptions, RuntimeClient, RuntimeEventMessage } from './runtime-client';
export { serveRuntime, encodeResult as encodeJournalResult } from './runtime-server';
export { callToolRequest } from './tool-request';
export type { ServeRuntimeOptions } from './runtime-server';
export type { ResumeCellOptions, StoredValueStore } from './code-mode-session';
export { DEFAULT_MAX_FRAME_BYTES, DURABLE_CELLS_CAPABILITY, ProtocolError, createStreamTransport, formatFrame, parseFrame, createTransportEnding, splitStoredPairs } from './protocol';
export type { EngineSessionOptions, StoredPair, RuntimeTransport, StreamTransportOptions, TransportEnding } from './protocol';

export { VERSION } from './version';
