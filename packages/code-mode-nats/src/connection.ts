import { readFileSync } from 'node:fs';
import { SwitchyardError } from '@switchyard/protocol';
import {
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
  type Authenticator,
  type NatsConnection,
  type NodeConnectionOptions,
  type TlsOptions,
} from '@nats-io/transport-node';

/**
 * How a client proves who it is to the NATS server: a user and password, an NKey seed (the
 * server keeps only the public key), a decentralized-auth credentials file (JWT + seed), or a
 * token. The seed and the credentials are read by this process only; nothing of them is sent.
 */
export type NatsAuth =
  | { user: string; pass: string }
  | { nkeySeed: string }
  | { nkeySeedFile: string }
  | { credsFile: string }
  | { token: string };

/** Where and how to connect (shared by agent hosts and runtime hosts). */
export interface NatsConnectOptions {
  /** One URL or several of the same cluster (`nats://host:4222`, `tls://host:4222`). */
  servers: string | string[];
  /** Credentials; omitted: an anonymous connection (only for a server without auth). */
  auth?: NatsAuth;
  /** TLS options, passed to the NATS client as they are (`ca`, `cert`, `key`, `caFile`, `certFile`, `keyFile`, `handshakeFirst`). */
  tls?: TlsOptions;
  /** The first token of every subject this library uses. Default `switchyard`. */
  subjectPrefix?: string;
  /** Milliseconds to wait for the first connection to the server. Default 10,000. */
  connectTimeoutMs?: number;
}

/** A subject token: no dots, no wildcards, no whitespace. */
const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;
/** A subject prefix: one or more tokens separated by dots. */
const PREFIX = /^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,7}$/;

export function config(message: string): SwitchyardError {
  return new SwitchyardError('CONFIG', message);
}

/** Whether `value` is one subject token: 1-64 characters of [A-Za-z0-9_-]. */
export function isToken(value: unknown): value is string {
  return typeof value === 'string' && TOKEN.test(value);
}

/** Checks a subject token option (`agentId`, a runtime host id). */
export function checkToken(value: unknown, name: string): string {
  if (!isToken(value)) {
    throw config(`${name} must be 1-64 characters of [A-Za-z0-9_-] (one NATS subject token; got ${JSON.stringify(value)})`);
  }
  return value;
}

/** Checks the common options; returns the subject prefix. */
export function checkConnectOptions(options: NatsConnectOptions, who: string): string {
  if (typeof options !== 'object' || options === null) throw config(`${who} expects an options object with servers`);
  const servers = Array.isArray(options.servers) ? options.servers : [options.servers];
  if (servers.length === 0 || !servers.every((server) => typeof server === 'string' && server.length > 0)) {
    throw config(`${who} option servers must be a NATS URL or a non-empty array of them (got ${JSON.stringify(options.servers)})`);
  }
  const prefix = options.subjectPrefix ?? 'switchyard';
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    throw config(`${who} option subjectPrefix must be dot-separated tokens of [A-Za-z0-9_-] (got ${JSON.stringify(options.subjectPrefix)})`);
  }
  authenticator(options.auth, who);
  if (options.connectTimeoutMs !== undefined) positive(options.connectTimeoutMs, `${who} option connectTimeoutMs`, 1);
  return prefix;
}

/** A whole number ≥ minimum, else CONFIG naming the option. */
export function positive(value: unknown, name: string, minimum: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < minimum) {
    throw config(`${name} must be a number >= ${minimum} (got ${String(value)})`);
  }
  return Math.floor(value);
}

function authenticator(auth: NatsAuth | undefined, who: string): Authenticator | undefined {
  if (auth === undefined) return undefined;
  const bad = () => config(`${who} option auth must be { user, pass }, { nkeySeed }, { nkeySeedFile }, { credsFile } or { token }`);
  if (typeof auth !== 'object' || auth === null) throw bad();
  const text = (value: unknown) => typeof value === 'string' && value.length > 0;
  if ('user' in auth) {
    if (!text(auth.user) || typeof auth.pass !== 'string') throw bad();
    return usernamePasswordAuthenticator(auth.user, auth.pass);
  }
  if ('nkeySeed' in auth) {
    if (!text(auth.nkeySeed)) throw bad();
    return nkeyAuthenticator(new TextEncoder().encode(auth.nkeySeed.trim()));
  }
  if ('nkeySeedFile' in auth) {
    if (!text(auth.nkeySeedFile)) throw bad();
    // Read at connect time (a rotated seed file is picked up on the next connection).
    return nkeyAuthenticator(() => new TextEncoder().encode(readFileSync(auth.nkeySeedFile, 'utf8').trim()));
  }
  if ('credsFile' in auth) {
    if (!text(auth.credsFile)) throw bad();
    return credsAuthenticator(() => new Uint8Array(readFileSync(auth.credsFile)));
  }
  if ('token' in auth) {
    if (!text(auth.token)) throw bad();
    return tokenAuthenticator(auth.token);
  }
  throw bad();
}

/**
 * Connects with the official client. Reconnects forever after a first success (frames lost
 * meanwhile are detected by the transport's sequence numbers and fail only the connections
 * they belonged to); a refused login is final.
 */
export async function connectNats(options: NatsConnectOptions, extra: { name: string; inboxPrefix?: string; who: string }): Promise<NatsConnection> {
  const settings: NodeConnectionOptions = {
    servers: options.servers,
    name: extra.name,
    timeout: options.connectTimeoutMs ?? 10_000,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    pingInterval: 10_000,
    maxPingOut: 3,
    inboxPrefix: extra.inboxPrefix,
  };
  const auth = authenticator(options.auth, extra.who);
  if (auth) settings.authenticator = auth;
  if (options.tls) settings.tls = options.tls;
  try {
    return await connect(settings);
  } catch (error) {
    const servers = Array.isArray(options.servers) ? options.servers.join(', ') : options.servers;
    throw new Error(`could not connect to NATS at ${servers}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
}
