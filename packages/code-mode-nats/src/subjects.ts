/**
 * The subjects of one deployment (`<p>` is the subject prefix, `switchyard` by default):
 *
 * | subject | who publishes | who subscribes |
 * |---|---|---|
 * | `<p>.place.<agent>` | agent host `<agent>` (a request) | every runtime host, in one queue group |
 * | `<p>.rt.<runtime>.<agent>.<conn>` | agent host `<agent>`: frames of connection `<conn>` | runtime host `<runtime>` |
 * | `<p>.rt.<runtime>.<agent>.<conn>.ping` | agent host `<agent>`: heartbeats (requests) | runtime host `<runtime>` |
 * | `<p>.agent.<agent>.c.<runtime>.<conn>` | runtime host `<runtime>`: frames of connection `<conn>` | agent host `<agent>` |
 * | `<p>.agent.<agent>.inbox.>` | replies to `<agent>`'s requests (placement, heartbeats) | agent host `<agent>` |
 *
 * A runtime host takes the agent's identity from the subject a message came on, never from its
 * body, so NATS permissions that let user `<agent>` publish only to `<p>.place.<agent>` and
 * `<p>.rt.*.<agent>.>` and subscribe only to `<p>.agent.<agent>.>` keep agent hosts apart; the
 * runtime host's id in its frames' subject lets permissions scope each runtime host too
 * (publish only to `<p>.agent.*.c.<runtime>.*`, replies through `allow_responses`).
 */
export interface Subjects {
  prefix: string;
  place(agent: string): string;
  placeAll(): string;
  runtime(runtime: string, agent: string, conn: string): string;
  runtimeAll(runtime: string): string;
  agent(agent: string, runtime: string, conn: string): string;
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
    agent: (agent, runtime, conn) => `${prefix}.agent.${agent}.c.${runtime}.${conn}`,
    // Frames and replies live in separate subtrees: a wildcard subscription that also matched the
    // request inbox would swallow the server's "no responders" status that heartbeats rely on.
    agentAll: (agent) => `${prefix}.agent.${agent}.c.*.*`,
    inbox: (agent) => `${prefix}.agent.${agent}.inbox`,
  };
}

/**
 * The placement request (JSON). Sealed (the default): `key` is the agent host's public NKey,
 * `eph` its ephemeral X25519 public key (base64url) and `sig` its signature of
 * {@link requestText}. Unsealed (both ends configured `sealing: false`): none of the three.
 */
export interface PlacementRequest {
  v: 3;
  /** The connection id the agent host will use; one connection per placed session. */
  conn: string;
  /** How often the agent host sends heartbeats (ms): the runtime host drops connections silent for much longer. */
  heartbeatMs: number;
  key?: string;
  eph?: string;
  sig?: string;
}

/** The placement reply (JSON); an acceptance of a sealed request carries the runtime host's `key`, `eph` and its signature of {@link replyText}. */
export type PlacementReply =
  | { v: 3; ok: true; runtime: string; name: string; conn: string; sessions: number; maxSessions: number; key?: string; eph?: string; sig?: string }
  | { v: 3; ok: false; runtime: string; name: string; error: string };

/**
 * Version of the placement exchange and of the sealed frames it sets up (the runtime protocol
 * inside connections has its own). 3: sealed frames are padded to size classes.
 */
export const PLACEMENT_VERSION = 3 as const;

/** What the agent host signs: its identity from the subject, the connection, and both its keys. */
export function requestText(agent: string, request: PlacementRequest): string {
  return `switchyard place v3|${agent}|${request.conn}|${request.heartbeatMs}|${request.key}|${request.eph}`;
}

/** What the runtime host signs: the request's ephemeral key (so the reply answers that request only), its own keys and name. */
export function replyText(agent: string, requestEph: string, reply: { runtime: string; conn: string; key?: string; eph?: string; name: string }): string {
  return `switchyard placed v3|${agent}|${reply.runtime}|${reply.conn}|${requestEph}|${reply.key}|${reply.eph}|${reply.name}`;
}

/**
 * What a runtime host signs in a heartbeat's answer (`<answer>|<signature>`): the agent host and
 * runtime host of the subject, the request's random nonce (so an old answer cannot be replayed)
 * and the answer ("ok", or "unknown a,b" naming connections it does not serve).
 */
export function pingText(agent: string, runtime: string, nonce: string, answer: string): string {
  return `switchyard ping v1|${agent}|${runtime}|${nonce}|${answer}`;
}

/** A random id of 16 base-32 characters (80 bits), usable as a subject token. */
export function randomToken(): string {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  let out = '';
  for (const byte of bytes) out += alphabet[byte & 31];
  return out;
}
