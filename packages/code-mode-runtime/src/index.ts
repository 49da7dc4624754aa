export { createCodeModeRuntime } from './code-mode-runtime';
export type { CodeModeRuntimeOptions } from './code-mode-runtime';
export { createRemoteRuntime } from './process-runtime';
export type { ProcessWorkerOptions, RemoteRuntimeOptions } from './process-runtime';
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

// The runtime protocol: for runtime hosts and placements beyond the local worker pool.
export {
  RUNTIME_PROTOCOL_VERSION,
  DEFAULT_MAX_FRAME_BYTES,
  ProtocolError,
  createStreamTransport,
  parseHostMessage,
  parseRuntimeMessage,
} from './runtime-protocol';
export type { EngineSessionOptions, HostMessage, RuntimeMessage, RuntimeTransport, StreamTransportOptions } from './runtime-protocol';
export { serveRuntime } from './runtime-server';
export type { ServeRuntimeOptions } from './runtime-server';
export { connectRuntime, RuntimeLostError } from './runtime-client';
export type { ConnectRuntimeOptions, RuntimeClient, RuntimeEventMessage } from './runtime-client';
export type { RuntimeLease, RuntimePlacement, RuntimeSink } from './remote-session';

export { stripTypes, CELL_FILENAME } from './cell-source';
export { nodeSnapshotFlagProblem } from './node-snapshot-check';
export type { NodeSnapshotCheckOptions } from './node-snapshot-check';

export { VERSION } from './version';
