/**
 * The subjects of one deployment (`<p>` is the subject prefix, `switchyard` by default):
 *
 * | subject | who publishes | who subscribes |
 * |---|---|---|
 * | `<p>.place.<agent>` | agent host `<agent>` (a request) | every runtime host, in one queue group |
 * | `<p>.rt.<runtime>.<agent>.<conn>` | agent host `<agent>`: frames of connection `<conn>` | runtime host `<runtime>` |
 * | `<p>.rt.<runtime>.<agent>.<conn>.ping` | agent host `<agent>`: heartbeats (requests) | runtime host `<runtime>` |
 * | `<p>.agent.<agent>.c.<conn>` | the runtime host of `<conn>`: its frames | agent host `<agent>` |
 * | `<p>.agent.<agent>.inbox.>` | replies to `<agent>`'s requests (placement, heartbeats) | agent host `<agent>` |
 *
 * A runtime host takes the agent's identity from the subject a message came on, never from its
 * body, so NATS permissions that let user `<agent>` publish only to `<p>.place.<agent>` and
 * `<p>.rt.*.<agent>.>` and subscribe only to `<p>.agent.<agent>.>` keep agent hosts apart.
 */
export interface Subjects {
  prefix: string;
  place(agent: string): string;
  placeAll(): string;
  runtime(runtime: string, agent: string, conn: string): string;
  runtimeAll(runtime: string): string;
  agent(agent: string, conn: string): string;
  agentAll(agent: string): string;
  inbox(agent: string): string;
}

export function subjects(prefix: string): Subjects {
  return {
    prefix,
    place: (agent) => `${prefix}.place.${agent}`,
    placeAll: () => `${prefix}.place.*`,
    runtime: (runtime, agent, conn) => `${prefix}.rt.${runtime}.${agent}.${conn}`,
    runtimeAll: (runtime) => `${prefix}.rt.${runtime}.>`,
    agent: (agent, conn) => `${prefix}.agent.${agent}.c.${conn}`,
    // Frames and replies live in separate subtrees: a wildcard subscription that also matched the
    // request inbox would swallow the server's "no responders" status that heartbeats rely on.
    agentAll: (agent) => `${prefix}.agent.${agent}.c.*`,
    inbox: (agent) => `${prefix}.agent.${agent}.inbox`,
  };
}

/** The placement request's body (JSON). */
export interface PlacementRequest {
  v: 1;
  /** The connection id the agent host will use if this runtime host is new to it. */
  conn: string;
  /** How often the agent host sends heartbeats (ms): the runtime host drops connections silent for much longer. */
  heartbeatMs: number;
}

/** The placement reply's body (JSON). */
export type PlacementReply =
  /** `conn`: the connection id to use if this runtime host is new to the agent host (the request's, or one placed before and not yet opened). */
  | { v: 1; ok: true; runtime: string; name: string; conn: string; sessions: number; maxSessions: number }
  | { v: 1; ok: false; runtime: string; name: string; error: string };

/** Version of the placement exchange (the runtime protocol inside connections has its own). */
export const PLACEMENT_VERSION = 1;

/** A random id of 16 base-32 characters (80 bits), usable as a subject token. */
export function randomToken(): string {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  let out = '';
  for (const byte of bytes) out += alphabet[byte & 31];
  return out;
}
