// The agent host's side: cells placed on runtime hosts over NATS.
export { createNatsRuntime } from './agent-runtime';
export type { NatsHeartbeatOptions, NatsPlacementOptions, NatsRuntime, NatsRuntimeEvent, NatsRuntimeOptions, RuntimeHostDroppedEvent } from './agent-runtime';

// The runtime host's side.
export { serveRuntimeOverNats } from './runtime-host';
export type { NatsRuntimeHost, RuntimeHostLimits, ServeRuntimeOverNatsOptions } from './runtime-host';

// Sessions kept in NATS JetStream key-value (a SessionStore for a fleet of agent hosts).
export { createNatsSessionStore } from './session-store';
export type { NatsSessionStoreOptions } from './session-store';

// Connecting to NATS (both sides).
export type { NatsAuth, NatsConnectOptions } from './connection';

// Sealed placements: the NKey a side signs with.
export type { NatsIdentityOption } from './seal';

export { VERSION } from './version';
