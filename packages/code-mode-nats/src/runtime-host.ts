import { hostname } from 'node:os';
import { nodeSnapshotFlagProblem, type ProcessWorkerOptions } from '@switchyard/code-mode-runtime';
import { DEFAULT_MAX_FRAME_BYTES, RUNTIME_HOST_CAPS, createWorkerPool, serveRuntime, type CellLimitCaps, type EngineSessionOptions, type WorkerPoolPlacement } from '@switchyard/code-mode-runtime/protocol';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { checkToken, config, connectNats, positive, type NatsConnectOptions } from './connection';
import { createNatsTransport, type NatsTransport, type ReassemblyBudget } from './nats-transport';
import { checkRuntimeHostOptions } from './options';
import { checkPublicKeys, deriveKeys, ephemeral, loadIdentity, signed, verified, type NatsIdentity, type NatsIdentityOption, type PlacementKeys } from './seal';
import { WorkerSession } from './worker-session';
import { PLACEMENT_VERSION, pingText, randomToken, replyText, requestText, subjects, type PlacementReply, type PlacementRequest, type Subjects } from './subjects';

/**
 * What one runtime host accepts. Its caps on the per-cell limits (`heapMb`, `cpuTimeMs`, …: every
 * limit a runtime holds, `CellLimitCaps`) bound what an agent host asks for per session; a cap not
 * given is the limit's own default for a cell of the capped heap (the code-mode-runtime README's
 * Limits table: 128 MB, 60,000 ms, …), and `wallTimeMs` is uncapped unless given.
 */
export interface RuntimeHostLimits extends CellLimitCaps {
  /** Sessions placed here at once (placement requests beyond it are declined). Default 1,000. */
  maxSessions?: number;
  /** Connections at once (one per placed session of an agent host). Default 1,000. */
  maxConnections?: number;
  /** Biggest frame accepted from an agent host (bytes, reassembled). Default 64 MiB. */
  maxFrameBytes?: number;
  /** Bytes of partly received (chunked) frames held at once, all connections together. Default 128 MiB. */
  maxReassemblyBytes?: number;
  /**
   * A connection with no frame and no heartbeat from its agent host for this long is closed and
   * its cells stopped (ms); at least 4 × the agent host's heartbeat interval. Default 30,000.
   */
  agentSilenceMs?: number;
}

/** Options of {@link serveRuntimeOverNats}. */
export interface ServeRuntimeOverNatsOptions extends NatsConnectOptions {
  /** Shown to agent hosts in causes and placement replies. Default `<hostname>-<pid>`. */
  name?: string;
  /** This host's subject token. Default: 16 random characters (a restarted host is a new host). */
  id?: string;
  /** The queue group placement requests are shared in. Default `switchyard-runtime-hosts`. */
  queue?: string;
  limits?: RuntimeHostLimits;
  /**
   * The NKey this host signs placements with (`{ seed }` or `{ seedFile }`). Default: the NKey of
   * `auth` when it is one, else a key made at start (agent hosts that pin keys refuse it).
   */
  identity?: NatsIdentityOption;
  /**
   * Agent hosts this runtime host serves, by agent id: the public NKey(s) that must sign their
   * placements. Default: any agent host (placements are still sealed, but not authenticated).
   */
  trustedAgentHosts?: Record<string, string | string[]>;
  /** `false`: frames travel in clear (benchmarks, a trusted single-tenant bus); sealed placements are still served. Default `true`. */
  sealing?: boolean;
  /**
   * Where cells run. `'process'` (default): in worker processes, one agent host (tenant) per worker
   * (a V8 fatal error or a memory blow-up ends only that agent host's cells here); `'in-process'`:
   * isolates of this process (lower latency; one tenant's crash ends the host and every tenant's cells).
   */
  isolation?: 'process' | 'in-process';
  /**
   * The worker pool of `isolation: 'process'`: `max` workers at once (default: sized for the
   * machine, see `@switchyard/code-mode-runtime`), `admissionMs` and `maxQueued` (the admission
   * queue's bounds), `idleMs`, `prewarm`, `memoryMb`, `heartbeatTimeoutMs` (default here 60,000),
   * `deathSignal`. Each agent host's cells run in workers of its own (`perSession`).
   */
  workers?: Omit<ProcessWorkerOptions, 'shared' | 'perSession' | 'sessionsPerWorker' | 'maxFrameBytes'>;
  /** Called once when the host stopped (closed, or its NATS connection ended for good). */
  onClosed?(cause: string | undefined): void;
}

/** A running runtime host. */
export interface NatsRuntimeHost {
  readonly id: string;
  readonly name: string;
  /** Connections, sessions and placements right now. */
  stats(): { connections: number; sessions: number };
  /** Stops taking placements, closes every connection (their cells fail on the agent hosts with this cause) and the NATS connection. */
  close(cause?: string): Promise<void>;
  /** Resolves when the host stopped. */
  readonly closed: Promise<string | undefined>;
}

interface Served {
  transport: NatsTransport;
  agent: string;
  sessions: Set<string>;
  lastSeen: number;
  silenceMs: number;
}

interface Expected {
  conn: string;
  heartbeatMs: number;
  timer: NodeJS.Timeout;
  /** The placement's keys (absent for an unsealed placement). */
  keys?: PlacementKeys;
}

/** How long a placed connection may take to say hello (ms). */
const EXPECT_MS = 15_000;
/**
 * Placed connections of one agent host awaiting their hello (an agent host placing many sessions
 * at once has that many); a newer placement evicts the oldest, so a flood costs a bounded amount
 * (an entry is a connection id, two keys and a timer).
 */
const PENDING_PER_AGENT = 256;

/** The checked options of a runtime host. */
interface HostSettings {
  prefix: string;
  id: string;
  name: string;
  queue: string;
  limits: ReturnType<typeof hostLimits>;
  identity: NatsIdentity;
  trusted?: Map<string, string[]>;
  sealing: boolean;
  /** The worker pool cells run in (`isolation: 'process'`); absent: isolates of this process. */
  pool?: WorkerPoolPlacement;
  /** Makes the pool (`isolation: 'process'`), once connected. */
  makePool?: () => WorkerPoolPlacement;
}

/**
 * Serves Code Mode cells to agent hosts over NATS: joins the placement queue group, accepts the
 * sessions placed on it, runs their cells in isolates of this process (the engine of
 * `@switchyard/code-mode-runtime` behind the runtime protocol) and sends every nested call back to
 * the agent host that owns the cell. It never has the agent hosts' tools: only the descriptors of
 * the tools a cell may call and the calls its cells make. Rejects with an Error when the server
 * refuses the credentials or cannot be reached, and with a `CONFIG` error naming the option for
 * unknown or invalid options.
 */
export async function serveRuntimeOverNats(options: ServeRuntimeOverNatsOptions): Promise<NatsRuntimeHost> {
  const settings = hostSettings(options);
  const nc = await connectNats(options, { name: `switchyard runtime host ${settings.name}`, who: 'serveRuntimeOverNats' });
  settings.pool = settings.makePool?.();
  const host = new RuntimeHost(nc, settings, options.onClosed);
  return {
    id: settings.id,
    name: settings.name,
    stats: () => host.stats(),
    close: (cause) => host.close(cause),
    closed: host.closed,
  };
}

/** The options checked and filled in, in the order their errors are reported; throws a `CONFIG` error. */
function hostSettings(options: ServeRuntimeOverNatsOptions): HostSettings {
  const prefix = checkRuntimeHostOptions(options);
  const id = options.id === undefined ? randomToken() : checkToken(options.id, 'serveRuntimeOverNats option id');
  const name = options.name ?? `${hostname()}-${process.pid}`;
  if (typeof name !== 'string' || name.length === 0 || name.length > 128) throw config('serveRuntimeOverNats option name must be a string of 1-128 characters');
  const queue = options.queue ?? 'switchyard-runtime-hosts';
  if (typeof queue !== 'string' || !/^[A-Za-z0-9_.-]{1,128}$/.test(queue)) throw config('serveRuntimeOverNats option queue must be 1-128 characters of [A-Za-z0-9_.-]');
  const limits = hostLimits(options.limits ?? {});
  const isolation = options.isolation ?? 'process';
  if (isolation !== 'process' && isolation !== 'in-process') throw config(`serveRuntimeOverNats option isolation must be 'process' or 'in-process' (got ${String(isolation)})`);
  if (isolation === 'in-process' && options.workers !== undefined) throw config("serveRuntimeOverNats option workers needs isolation: 'process'");
  const problem = isolation === 'in-process' ? nodeSnapshotFlagProblem() : undefined;
  if (problem) throw config(`serveRuntimeOverNats runs cells in this process (isolation: 'in-process'): ${problem}`);
  const identity = loadIdentity(options.identity, options.auth, 'serveRuntimeOverNats');
  const trusted = options.trustedAgentHosts === undefined ? undefined : trustedAgents(options.trustedAgentHosts);
  if (options.sealing !== undefined && typeof options.sealing !== 'boolean') throw config('serveRuntimeOverNats option sealing must be a boolean');
  // The pool starts its prewarmed worker at once: it is made after the NATS connection is up (a
  // worker starting meanwhile would compete with the connection's handshake on a busy machine).
  // A worker serves every session of one agent host here (dozens of cells starting at once): it gets
  // 60 s to answer a heartbeat, not the local pool's 15 s, before it is taken for stuck and killed.
  const workers = { heartbeatTimeoutMs: 60_000, ...options.workers, maxFrameBytes: limits.maxFrameBytes, shared: false };
  const makePool = (prewarm?: boolean) => createWorkerPool({ ...workers, ...(prewarm === false && { prewarm }) }, limits.caps.heapMb);
  // Checked now (a CONFIG error names the option), before connecting: a pool that starts nothing.
  if (isolation === 'process') void makePool(false).shutdown();
  return { prefix, id, name, queue, limits, identity, trusted, sealing: options.sealing ?? true, makePool: isolation === 'process' ? makePool : undefined };
}

function trustedAgents(option: unknown): Map<string, string[]> {
  const name = 'serveRuntimeOverNats option trustedAgentHosts';
  if (typeof option !== 'object' || option === null || Array.isArray(option)) throw config(`${name} must map agent ids to public NKeys`);
  const out = new Map<string, string[]>();
  for (const [agent, keys] of Object.entries(option)) out.set(checkToken(agent, `${name} key`), checkPublicKeys(keys, `${name}.${agent}`));
  return out;
}

const connectionKey = (agent: string, conn: string) => `${agent}.${conn}`;

/** A running runtime host: its subscriptions, the connections it serves and the ones placed and awaited. */
class RuntimeHost {
  readonly closed: Promise<string | undefined>;
  private resolveClosed!: (cause: string | undefined) => void;
  private readonly names: Subjects;
  private readonly limits: ReturnType<typeof hostLimits>;
  private readonly runtimePrefix: string;
  private readonly served = new Map<string, Served>();
  /** Placed connections awaiting their hello, by agent host, then connection id. */
  private readonly expected = new Map<string, Map<string, Expected>>();
  private sessions = 0;
  /** Bytes of partly received frames, all connections together (bounded by `maxReassemblyBytes`). */
  private readonly reassembly: ReassemblyBudget;
  private closing: Promise<void> | undefined;
  private readonly placeSub: Subscription;
  private readonly frameSub: Subscription;
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly nc: NatsConnection,
    private readonly settings: HostSettings,
    private readonly onClosed: ((cause: string | undefined) => void) | undefined,
  ) {
    this.closed = new Promise<string | undefined>((resolve) => (this.resolveClosed = resolve));
    this.names = subjects(settings.prefix);
    this.limits = settings.limits;
    this.reassembly = { used: 0, max: settings.limits.maxReassemblyBytes };
    this.runtimePrefix = `${settings.prefix}.rt.${settings.id}.`;
    this.placeSub = nc.subscribe(this.names.placeAll(), { queue: settings.queue, callback: (error, msg) => void (error || guarded(() => this.place(msg))) });
    this.frameSub = nc.subscribe(this.names.runtimeAll(settings.id), { callback: (error, msg) => void (error || guarded(() => this.frame(msg))) });
    // Connections whose agent host went silent (it died or was partitioned) end; their cells stop.
    this.sweep = setInterval(() => this.endSilent(), 1_000);
    this.sweep.unref();
    void nc.closed().then((error) => this.natsClosed(error));
  }

  stats(): { connections: number; sessions: number } {
    return { connections: this.served.size, sessions: this.sessions };
  }

  close(cause = 'the runtime host was shut down'): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.sweep);
      this.placeSub.unsubscribe();
      for (const pending of this.expected.values()) for (const entry of pending.values()) clearTimeout(entry.timer);
      this.expected.clear();
      for (const connection of [...this.served.values()]) connection.transport.end(`runtime host ${this.settings.name} is shutting down: ${cause}`);
      this.frameSub.unsubscribe();
      // Let the closes and the engines' last messages go out, then leave.
      await this.nc.drain().catch(() => undefined);
      await this.settings.pool?.shutdown();
      this.resolveClosed(cause);
      this.onClosed?.(cause);
    })();
    return this.closing;
  }

  private natsClosed(error: Error | void): void {
    if (this.closing) return;
    const cause = error ? `the NATS connection ended: ${error.message}` : 'the NATS connection closed';
    clearInterval(this.sweep);
    for (const connection of [...this.served.values()]) connection.transport.end(cause);
    void this.settings.pool?.shutdown();
    this.resolveClosed(cause);
    this.onClosed?.(cause);
  }

  private endSilent(): void {
    const now = Date.now();
    for (const connection of this.served.values()) {
      if (now - connection.lastSeen > connection.silenceMs) {
        connection.transport.end(`no frame or heartbeat from agent host ${connection.agent} for ${connection.silenceMs} ms`);
      }
    }
  }

  private place(msg: Msg): void {
    const reply = this.placement(msg.subject.slice(this.names.place('').length), msg);
    try {
      msg.respond(JSON.stringify(reply));
    } catch {
      // the agent host will time out and ask again
    }
  }

  /** The answer to one placement request from agent host `agent`. */
  private placement(agent: string, msg: Msg): PlacementReply {
    const { id: runtime, name } = this.settings;
    const declined = (error: string): PlacementReply => ({ v: PLACEMENT_VERSION, ok: false, runtime, name, error });
    let request: PlacementRequest;
    try {
      request = JSON.parse(msg.string()) as PlacementRequest;
    } catch {
      return declined('placement request is not JSON');
    }
    if (request?.v !== PLACEMENT_VERSION) {
      return declined(`placement version ${String(request?.v)} is not supported (this runtime host speaks ${PLACEMENT_VERSION})`);
    }
    if (this.closing) return declined('runtime host is shutting down');
    if (typeof request.conn !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(request.conn) || !/^[A-Za-z0-9_-]{1,64}$/.test(agent)) {
      return declined('placement request names no valid connection');
    }
    const heartbeatMs = typeof request.heartbeatMs === 'number' && request.heartbeatMs > 0 ? Math.min(request.heartbeatMs, 60_000) : 1_000;
    const refused = this.refusal(agent, request);
    if (refused) return declined(refused);
    const { maxSessions, maxConnections } = this.limits;
    if (this.sessions >= maxSessions) return declined(`runtime host is full (${this.sessions} of ${maxSessions} sessions)`);
    if (this.served.size >= maxConnections) return declined(`runtime host is full (${maxConnections} connections)`);
    const accepted = { v: PLACEMENT_VERSION, ok: true as const, runtime, name, conn: request.conn, sessions: this.sessions, maxSessions };
    if (request.eph === undefined) {
      this.expect(agent, { conn: request.conn, heartbeatMs });
      return accepted;
    }
    const own = ephemeral();
    const reply = { ...accepted, key: this.settings.identity.publicKey, eph: own.public };
    const text = replyText(agent, request.eph, reply);
    const keys = deriveKeys(own, request.eph, `${requestText(agent, request)}\n${text}`);
    if (!keys) return declined('placement request carries a malformed ephemeral key');
    this.expect(agent, { conn: request.conn, heartbeatMs, keys });
    return { ...reply, sig: signed(this.settings.identity, text) };
  }

  /** Why a placement request is refused on its identity: unsigned or without an ephemeral key where sealing is required, a bad signature, a key not trusted for `agent`. */
  private refusal(agent: string, request: PlacementRequest): string | undefined {
    const { sealing, trusted } = this.settings;
    if (request.eph === undefined && request.sig === undefined && request.key === undefined) {
      if (sealing) return 'this runtime host serves sealed placements only (the agent host has sealing off)';
      return trusted ? 'this runtime host serves signed placements only' : undefined;
    }
    // a signature alone seals nothing: without an ephemeral key the frames would travel in clear
    if (sealing && request.eph === undefined) return 'this runtime host serves sealed placements only (the request carries no ephemeral key)';
    if (!verified(request.key, requestText(agent, request), request.sig)) return 'placement request is not signed by the key it names';
    const keys = trusted?.get(agent);
    if (trusted && !keys) return `agent host ${agent} is not trusted by this runtime host`;
    if (keys && !keys.includes(request.key!)) return `agent host ${agent} signed with a key this runtime host does not trust`;
    return undefined;
  }

  /** Awaits the hello of a placed connection for {@link EXPECT_MS}; a newer placement evicts the oldest beyond {@link PENDING_PER_AGENT}. */
  private expect(agent: string, entry: Omit<Expected, 'timer'>): void {
    let pending = this.expected.get(agent);
    if (!pending) this.expected.set(agent, (pending = new Map()));
    pending.get(entry.conn) && clearTimeout(pending.get(entry.conn)!.timer);
    pending.delete(entry.conn);
    if (pending.size >= PENDING_PER_AGENT) {
      const [oldest, first] = pending.entries().next().value as [string, Expected];
      clearTimeout(first.timer);
      pending.delete(oldest);
    }
    const timer = setTimeout(() => this.unexpect(agent, entry.conn), EXPECT_MS);
    timer.unref();
    pending.set(entry.conn, { ...entry, timer });
  }

  private unexpect(agent: string, conn: string): Expected | undefined {
    const pending = this.expected.get(agent);
    const entry = pending?.get(conn);
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    pending!.delete(conn);
    if (pending!.size === 0) this.expected.delete(agent);
    return entry;
  }

  private frame(msg: Msg): void {
    const rest = msg.subject.slice(this.runtimePrefix.length).split('.');
    const [agent, conn, kind] = rest;
    if (!agent || !conn || rest.length > 3) return;
    if (kind === 'ping') {
      // "<conns>" or, from an agent host that seals, "<conns> <nonce>": the answer is then signed.
      const [list, nonce] = msg.string().split(' ');
      return this.ping(agent, conn === '_' ? list!.split(',') : [conn], msg, nonce);
    }
    if (kind !== undefined) return;
    let connection = this.served.get(connectionKey(agent, conn));
    if (!connection) {
      // Frames on connections no placement announced are dropped: a runtime host serves only what it accepted.
      if (!this.expected.get(agent)?.has(conn) || this.closing || this.served.size >= this.limits.maxConnections) return;
      connection = this.open(agent, conn, this.unexpect(agent, conn)!);
    }
    connection.lastSeen = Date.now();
    connection.transport.deliver(msg.data);
  }

  /**
   * One heartbeat of agent host `agent` for its connections `conns` (all of them on this host, in
   * one request): each is seen; the answer names those this host does not serve ("unknown a,b"),
   * signed with this host's NKey over the request's nonce when there is one (a sealing agent host).
   */
  private ping(agent: string, conns: string[], msg: Msg, nonce: string | undefined): void {
    const unknown: string[] = [];
    const now = Date.now();
    for (const conn of conns.slice(0, 10_000)) {
      const connection = this.served.get(connectionKey(agent, conn));
      if (connection && !connection.transport.closed) connection.lastSeen = now;
      else if (/^[A-Za-z0-9_-]{1,64}$/.test(conn)) unknown.push(conn);
    }
    try {
      const answer = unknown.length === 0 ? 'ok' : `unknown ${unknown.join(',')}`;
      const valid = nonce !== undefined && /^[A-Za-z0-9_-]{1,64}$/.test(nonce);
      msg.respond(valid ? `${answer}|${signed(this.settings.identity, pingText(agent, this.settings.id, nonce, answer))}` : answer);
    } catch {
      // nothing to answer to
    }
  }

  private open(agent: string, conn: string, { heartbeatMs, keys }: Expected): Served {
    const key = connectionKey(agent, conn);
    const { limits } = this;
    const { pool } = this.settings;
    const transport = createNatsTransport({
      nc: this.nc,
      subject: this.names.agent(agent, this.settings.id, conn),
      maxFrameBytes: limits.maxFrameBytes,
      reassembly: this.reassembly,
      peer: `agent host ${agent}`,
      keys: keys && { send: keys.toAgent, receive: keys.toRuntime },
    });
    const connection: Served = { transport, agent, sessions: new Set(), lastSeen: Date.now(), silenceMs: Math.max(limits.agentSilenceMs, 4 * heartbeatMs) };
    this.served.set(key, connection);
    serveRuntime({
      transport,
      maxFrameBytes: limits.maxFrameBytes,
      // The engine hands over every parsed open-session: this host caps its limits and counts it.
      admitSession: (session, options) => {
        if (this.sessions >= limits.maxSessions) return `runtime host is full (${this.sessions} of ${limits.maxSessions} sessions)`;
        if (!connection.sessions.has(session)) {
          connection.sessions.add(session);
          this.sessions++;
        }
        return capped(options, limits);
      },
      // Each agent host is a tenant: its sessions' cells run in a worker no other agent host's cells share.
      openSession: pool && ((_session, options, host, store) => new WorkerSession({ options, host, store, pool, tenant: agent })),
      // The relay passes the workers' journal entries to the agent host and its replays to a worker.
      relaysDurableCells: true,
      sessionClosed: (session) => {
        if (connection.sessions.delete(session)) this.sessions--;
      },
      onClosed: () => {
        this.served.delete(key);
        this.sessions -= connection.sessions.size;
        connection.sessions.clear();
      },
    });
    return connection;
  }
}

/** A handler bug drops one message, never the host. */
function guarded(task: () => void): void {
  try {
    task();
  } catch {
    // dropped: the agent host's request times out or its connection fails with a sequence gap
  }
}

/** This host's own bounds, checked and filled in. */
interface HostBounds {
  maxSessions: number;
  maxConnections: number;
  maxFrameBytes: number;
  maxReassemblyBytes: number;
  agentSilenceMs: number;
  /** The caps on the per-cell limits (undefined: uncapped). */
  caps: ReturnType<typeof RUNTIME_HOST_CAPS.fill>;
}

/** The limits, checked and filled in. */
function hostLimits(limits: RuntimeHostLimits): HostBounds {
  const name = (key: string) => `serveRuntimeOverNats option limits.${key}`;
  const pick = (key: keyof RuntimeHostLimits, fallback: number, minimum: number) => (limits[key] === undefined ? fallback : positive(limits[key], name(key), minimum));
  return {
    maxSessions: pick('maxSessions', 1_000, 1),
    maxConnections: pick('maxConnections', 1_000, 1),
    maxFrameBytes: pick('maxFrameBytes', DEFAULT_MAX_FRAME_BYTES, 64 * 1024),
    maxReassemblyBytes: pick('maxReassemblyBytes', 128 * 1024 * 1024, 64 * 1024),
    agentSilenceMs: pick('agentSilenceMs', 30_000, 100),
    caps: RUNTIME_HOST_CAPS.fill(limits, (value, key, min) => positive(value, name(key), min)),
  };
}

/**
 * The options a session runs with: every limit the agent host asked for, capped by this host's
 * own maximum (a limit not asked for, or asked as no limit, gets the maximum). Applied to the
 * parsed `open-session` the engine acts on, so no spelling of the message escapes it.
 */
export function capped(options: EngineSessionOptions, limits: HostBounds): EngineSessionOptions {
  return { ...RUNTIME_HOST_CAPS.apply(options, limits.caps), storedValues: options.storedValues !== false } as EngineSessionOptions;
}
