// The agent host's side: cells placed on runtime hosts over NATS.
export { createNatsRuntime } from './agent-runtime';
export type { NatsHeartbeatOptions, NatsPlacementOptions, NatsRuntimeOptions } from './agent-runtime';

// The runtime host's side.
export { serveRuntimeOverNats } from './runtime-host';
export type { NatsRuntimeHost, RuntimeHostLimits, ServeRuntimeOverNatsOptions } from './runtime-host';

// Connecting to NATS (both sides).
export type { NatsAuth, NatsConnectOptions } from './connection';

export { VERSION } from './version';
