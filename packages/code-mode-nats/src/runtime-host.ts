import { hostname } from 'node:os';
import { DEFAULT_MAX_FRAME_BYTES, nodeSnapshotFlagProblem, serveRuntime, type EngineSessionOptions } from '@switchyard/code-mode-runtime';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { checkToken, config, connectNats, positive, type NatsConnectOptions } from './connection';
import { createNatsTransport, type NatsTransport } from './nats-transport';
import { checkRuntimeHostOptions } from './options';
import { PLACEMENT_VERSION, randomToken, subjects, type PlacementReply, type PlacementRequest } from './subjects';

/** What one runtime host accepts; the engine limits cap what an agent host asks for per session. */
export interface RuntimeHostLimits {
  /** Sessions placed here at once (placement requests beyond it are declined). Default 1,000. */
  maxSessions?: number;
  /** Connections (agent hosts) at once. Default 256. */
  maxConnections?: number;
  /** Most V8 heap per cell (MB); a session asking for more gets this. Default 128. */
  heapMb?: number;
  /** Most CPU time per cell (ms); a session asking for more, or for none, gets this. Default 60,000. */
  cpuTimeMs?: number;
  /** Most wall time per cell (ms); a session asking for more, or for none, gets this. Default none. */
  wallTimeMs?: number;
  /** Most cells per session. Default 32. */
  maxCells?: number;
  /** Biggest frame accepted from an agent host (bytes, reassembled). Default 64 MiB. */
  maxFrameBytes?: number;
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
}

/** How long a placed connection may take to say hello (ms). */
const EXPECT_MS = 15_000;

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
  const prefix = checkRuntimeHostOptions(options);
  const id = options.id === undefined ? randomToken() : checkToken(options.id, 'serveRuntimeOverNats option id');
  const name = options.name ?? `${hostname()}-${process.pid}`;
  if (typeof name !== 'string' || name.length === 0 || name.length > 128) throw config('serveRuntimeOverNats option name must be a string of 1-128 characters');
  const queue = options.queue ?? 'switchyard-runtime-hosts';
  if (typeof queue !== 'string' || !/^[A-Za-z0-9_.-]{1,128}$/.test(queue)) throw config('serveRuntimeOverNats option queue must be 1-128 characters of [A-Za-z0-9_.-]');
  const limits = hostLimits(options.limits ?? {});
  const problem = nodeSnapshotFlagProblem();
  if (problem) throw config(`serveRuntimeOverNats runs cells in this process: ${problem}`);
  const names = subjects(prefix);

  const nc = await connectNats(options, { name: `switchyard runtime host ${name}`, who: 'serveRuntimeOverNats' });
  const served = new Map<string, Served>();
  const expected = new Map<string, Expected>();
  let sessions = 0;
  let closing: Promise<void> | undefined;
  let resolveClosed!: (cause: string | undefined) => void;
  const closed = new Promise<string | undefined>((resolve) => (resolveClosed = resolve));

  const runtimePrefix = `${prefix}.rt.${id}.`;
  const connectionKey = (agent: string, conn: string) => `${agent}.${conn}`;

  const placeSub: Subscription = nc.subscribe(names.placeAll(), { queue, callback: (error, msg) => void (error || guarded(() => place(msg))) });
  const frameSub: Subscription = nc.subscribe(names.runtimeAll(id), { callback: (error, msg) => void (error || guarded(() => frame(msg))) });

  function place(msg: Msg): void {
    const agent = msg.subject.slice(names.place('').length);
    const answer = (reply: PlacementReply) => {
      try {
        msg.respond(JSON.stringify(reply));
      } catch {
        // the agent host will time out and ask again
      }
    };
    let request: PlacementRequest;
    try {
      request = JSON.parse(msg.string()) as PlacementRequest;
    } catch {
      return answer({ v: PLACEMENT_VERSION, ok: false, runtime: id, name, error: 'placement request is not JSON' });
    }
    if (request?.v !== PLACEMENT_VERSION) {
      return answer({ v: PLACEMENT_VERSION, ok: false, runtime: id, name, error: `placement version ${String(request?.v)} is not supported (this runtime host speaks ${PLACEMENT_VERSION})` });
    }
    if (closing) return answer({ v: PLACEMENT_VERSION, ok: false, runtime: id, name, error: 'runtime host is shutting down' });
    if (typeof request.conn !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(request.conn) || !/^[A-Za-z0-9_-]{1,64}$/.test(agent)) {
      return answer({ v: PLACEMENT_VERSION, ok: false, runtime: id, name, error: 'placement request names no valid connection' });
    }
    if (sessions >= limits.maxSessions) return answer({ v: PLACEMENT_VERSION, ok: false, runtime: id, name, error: `runtime host is full (${sessions} of ${limits.maxSessions} sessions)` });
    let conn = request.conn;
    const pending = expected.get(agent);
    if (pending) {
      // One placed connection per agent host may wait for its hello: every placement until then
      // names that one, so concurrent placements share it and a flood costs nothing.
      conn = pending.conn;
    } else if (!served.has(connectionKey(agent, conn))) {
      if (served.size >= limits.maxConnections) {
        return answer({ v: PLACEMENT_VERSION, ok: false, runtime: id, name, error: `runtime host is full (${limits.maxConnections} connections)` });
      }
      const heartbeatMs = typeof request.heartbeatMs === 'number' && request.heartbeatMs > 0 ? request.heartbeatMs : 1_000;
      const timer = setTimeout(() => expected.get(agent)?.conn === conn && expected.delete(agent), EXPECT_MS);
      timer.unref();
      expected.set(agent, { conn, heartbeatMs, timer });
    }
    answer({ v: PLACEMENT_VERSION, ok: true, runtime: id, name, conn, sessions, maxSessions: limits.maxSessions });
  }

  function frame(msg: Msg): void {
    const rest = msg.subject.slice(runtimePrefix.length).split('.');
    const [agent, conn, kind] = rest;
    if (!agent || !conn || rest.length > 3) return;
    const key = connectionKey(agent, conn);
    let connection = served.get(key);
    if (kind === 'ping') {
      if (connection) connection.lastSeen = Date.now();
      try {
        msg.respond(connection && !connection.transport.closed ? 'ok' : 'unknown');
      } catch {
        // nothing to answer to
      }
      return;
    }
    if (kind !== undefined) return;
    if (!connection) {
      const placed = expected.get(agent);
      // Frames on connections no placement announced are dropped: a runtime host serves only what it accepted.
      if (!placed || placed.conn !== conn || closing || served.size >= limits.maxConnections) return;
      clearTimeout(placed.timer);
      expected.delete(agent);
      connection = open(agent, conn, placed.heartbeatMs);
    }
    connection.lastSeen = Date.now();
    connection.transport.deliver(msg.data);
  }

  function open(agent: string, conn: string, heartbeatMs: number): Served {
    const key = connectionKey(agent, conn);
    const transport = createNatsTransport({ nc, subject: names.agent(agent, conn), maxFrameBytes: limits.maxFrameBytes, peer: `agent host ${agent}` });
    const connection: Served = { transport, agent, sessions: new Set(), lastSeen: Date.now(), silenceMs: Math.max(limits.agentSilenceMs, 4 * heartbeatMs) };
    served.set(key, connection);
    // The engine sees the agent host's frames after this host has capped its limits and counted its sessions.
    const inner = watchSessions(transport, connection, limits, (delta) => (sessions += delta));
    serveRuntime({
      transport: inner,
      maxFrameBytes: limits.maxFrameBytes,
      onClosed: () => {
        served.delete(key);
        sessions -= connection.sessions.size;
        connection.sessions.clear();
      },
    });
    return connection;
  }

  // Connections whose agent host went silent (it died or was partitioned) end; their cells stop.
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const connection of served.values()) {
      if (now - connection.lastSeen > connection.silenceMs) {
        connection.transport.end(`no frame or heartbeat from agent host ${connection.agent} for ${connection.silenceMs} ms`);
      }
    }
  }, 1_000);
  sweep.unref();

  const close = (cause = 'the runtime host was shut down') => {
    closing ??= (async () => {
      clearInterval(sweep);
      placeSub.unsubscribe();
      for (const entry of expected.values()) clearTimeout(entry.timer);
      expected.clear();
      for (const connection of [...served.values()]) connection.transport.end(`runtime host ${name} is shutting down: ${cause}`);
      frameSub.unsubscribe();
      // Let the closes and the engines' last messages go out, then leave.
      await nc.drain().catch(() => undefined);
      resolveClosed(cause);
      options.onClosed?.(cause);
    })();
    return closing;
  };
  void nc.closed().then((error) => {
    if (closing) return;
    const cause = error ? `the NATS connection ended: ${error.message}` : 'the NATS connection closed';
    clearInterval(sweep);
    for (const connection of [...served.values()]) connection.transport.end(cause);
    resolveClosed(cause);
    options.onClosed?.(cause);
  });

  return {
    id,
    name,
    stats: () => ({ connections: served.size, sessions }),
    close,
    closed,
  };
}

/** A handler bug drops one message, never the host. */
function guarded(task: () => void): void {
  try {
    task();
  } catch {
    // dropped: the agent host's request times out or its connection fails with a sequence gap
  }
}

/** The limits, checked and filled in. */
function hostLimits(limits: RuntimeHostLimits): Required<Omit<RuntimeHostLimits, 'wallTimeMs'>> & { wallTimeMs?: number } {
  const name = (key: string) => `serveRuntimeOverNats option limits.${key}`;
  const pick = (key: keyof RuntimeHostLimits, fallback: number, minimum: number) => (limits[key] === undefined ? fallback : positive(limits[key], name(key), minimum));
  return {
    maxSessions: pick('maxSessions', 1_000, 1),
    maxConnections: pick('maxConnections', 256, 1),
    heapMb: pick('heapMb', 128, 8),
    cpuTimeMs: pick('cpuTimeMs', 60_000, 1),
    wallTimeMs: limits.wallTimeMs === undefined ? undefined : positive(limits.wallTimeMs, name('wallTimeMs'), 1),
    maxCells: pick('maxCells', 32, 1),
    maxFrameBytes: pick('maxFrameBytes', DEFAULT_MAX_FRAME_BYTES, 64 * 1024),
    agentSilenceMs: pick('agentSilenceMs', 30_000, 100),
  };
}

/**
 * A transport in front of the engine's: `open-session` requests get this host's caps on their
 * engine limits (the agent host asks, the runtime host decides), and open sessions are counted
 * for placement. Other frames pass through untouched (the check is a substring test; only frames
 * that may hold a session message are parsed).
 */
function watchSessions(
  outer: NatsTransport,
  connection: Served,
  limits: ReturnType<typeof hostLimits>,
  count: (delta: number) => void,
): NatsTransport {
  let listener: (frame: string) => void = () => {};
  outer.onFrame((frame) => {
    if (!frame.includes('-session"')) return listener(frame);
    let messages: unknown;
    try {
      messages = JSON.parse(frame);
    } catch {
      return listener(frame); // the engine reports the violation
    }
    if (!Array.isArray(messages)) return listener(frame);
    let changed = false;
    for (const message of messages as Array<{ t?: unknown; session?: unknown; options?: EngineSessionOptions }>) {
      if (typeof message !== 'object' || message === null || typeof message.session !== 'string') continue;
      if (message.t === 'open-session' && typeof message.options === 'object' && message.options !== null) {
        message.options = capped(message.options, limits);
        changed = true;
        if (!connection.sessions.has(message.session)) {
          connection.sessions.add(message.session);
          count(+1);
        }
      } else if (message.t === 'close-session' && connection.sessions.delete(message.session)) count(-1);
    }
    listener(changed ? JSON.stringify(messages) : frame);
  });
  return {
    ...outer,
    send: (frame) => outer.send(frame),
    onClose: (fn) => outer.onClose(fn),
    close: () => outer.close(),
    onFrame(fn) {
      listener = fn;
    },
    deliver: (payload) => outer.deliver(payload),
    end: (reason) => outer.end(reason),
    get closed() {
      return outer.closed;
    },
  };
}

function capped(options: EngineSessionOptions, limits: ReturnType<typeof hostLimits>): EngineSessionOptions {
  const min = (asked: unknown, cap: number) => (typeof asked === 'number' && asked >= 0 ? Math.min(asked, cap) : cap);
  return {
    ...options,
    heapMb: min(options.heapMb, limits.heapMb),
    cpuTimeMs: min(options.cpuTimeMs, limits.cpuTimeMs),
    wallTimeMs: limits.wallTimeMs === undefined ? options.wallTimeMs : min(options.wallTimeMs, limits.wallTimeMs),
    maxCells: min(options.maxCells, limits.maxCells),
  };
}
