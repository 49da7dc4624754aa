// `@switchyard/code-mode-runtime/protocol`: the runtime protocol for runtime transports and hosts
// (`@switchyard/code-mode-nats`): placements beyond the local worker pool, both ends of a
// connection, frames, and the pieces a relay passes on. A wire contract: versioned with the package.

// Placements: a runtime whose cells run wherever a placement puts them; the worker pool as one.
export { createRemoteRuntime, createWorkerPool } from './process-runtime';
export type { RemoteRuntimeOptions, WorkerPoolPlacement, WorkerPoolStats } from './process-runtime';
export type { RuntimeLease, RuntimePlacement, RuntimeSink } from './remote-session';
export { RUNTIME_LIMIT_OPTION_RULES } from './runtime-options';
export { RUNTIME_HOST_CAPS } from './cell-limits';
export type { CellLimitCaps } from './cell-limits';

// The two ends of a connection.
export { connectRuntime, RuntimeLostError } from './runtime-client';
export type { ConnectRuntimeOptions, RuntimeClient, RuntimeEventMessage } from './runtime-client';
export { serveRuntime, encodeResult as encodeJournalResult } from './runtime-server';
export type { ServeRuntimeOptions } from './runtime-server';
export { callToolRequest } from './tool-request';
export type { ResumeCellOptions, StoredValueStore } from './code-mode-session';

// Frames and transports.
export { DEFAULT_MAX_FRAME_BYTES, DURABLE_CELLS_CAPABILITY, ProtocolError, createStreamTransport, formatFrame, parseFrame, createTransportEnding, splitStoredPairs } from './protocol';
export type { EngineSessionOptions, StoredPair, RuntimeTransport, StreamTransportOptions, TransportEnding } from './protocol';
