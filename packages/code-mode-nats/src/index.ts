export { createNatsRuntime } from './agent-runtime';
export type { NatsHeartbeatOptions, NatsPlacementOptions, NatsRuntimeOptions } from './agent-runtime';
export { serveRuntimeOverNats } from './runtime-host';
export type { NatsRuntimeHost, RuntimeHostLimits, ServeRuntimeOverNatsOptions } from './runtime-host';
export type { NatsAuth, NatsConnectOptions } from './connection';
export { PLACEMENT_VERSION } from './subjects';
export type { PlacementReply, PlacementRequest } from './subjects';
export { VERSION } from './version';
