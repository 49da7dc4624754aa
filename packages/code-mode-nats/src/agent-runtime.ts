import {
  DEFAULT_MAX_FRAME_BYTES,
  connectRuntime,
  createRemoteRuntime,
  type RemoteRuntimeOptions,
  type RuntimeClient,
  type RuntimeEventMessage,
  type RuntimeLease,
  type RuntimePlacement,
  type RuntimeSink,
  type RuntimeTransport,
} from '@switchyard/code-mode-runtime';
import { SwitchyardError, type CellHost, type CodeModeRuntime, type CodeModeSession } from '@switchyard/protocol';
import { createEventHub, type EventHub } from '@switchyard/kit';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { checkToken, connectNats, positive, type NatsConnectOptions } from './connection';
import { createNatsTransport, type NatsTransport } from './nats-transport';
import { checkNatsRuntimeOptions } from './options';
import { checkPublicKeys, deriveKeys, ephemeral, loadIdentity, signed, verified, type Ephemeral, type NatsIdentity, type NatsIdentityOption, type PlacementKeys } from './seal';
import { PLACEMENT_VERSION, pingText, randomToken, replyText, requestText, subjects, type PlacementReply, type PlacementRequest, type Subjects } from './subjects';

/** How sessions are placed on runtime hosts. */
export interface NatsPlacementOptions {
  /** How long one placement request waits for a runtime host's answer (ms). Default 5,000. */
  timeoutMs?: number;
  /** Placement requests per session before its cell fails (a full or silent host is skipped by asking again). Default 5. */
  attempts?: number;
  /**
   * How long a runtime host that misbehaved (frames that do not open, a protocol violation, a call
   * or notify flood past this host's limits) is left out of this agent host's
   * placements (ms); 0: never left out (a bus without per-runtime-host publish permissions, where
   * any client could forge frames on a runtime host's subjects). Default 600,000.
   */
  dropMs?: number;
}

/**
 * A runtime host misbehaved towards this agent host and is left out of its placements for `forMs`:
 * placement replies from it (its id or its key) are refused, so the next exec places on another
 * host; the connection it misbehaved on ends, this agent host's other connections to it go on. Also reported through `process.emitWarning` (type
 * `SwitchyardWarning`, code `SWITCHYARD_RUNTIME_HOST_DROPPED`).
 */
export interface RuntimeHostDroppedEvent {
  readonly type: 'runtime-host-dropped';
  /** The runtime host's subject token. */
  readonly runtime: string;
  /** Its name (as it announced it). */
  readonly name: string;
  /** The public NKey it signed its placement with (sealed placements). */
  readonly key?: string;
  /** What it did ("a frame from runtime host r1 did not open …", "exec nested call limit exceeded: …"). */
  readonly cause: string;
  /** How long it is left out (ms). */
  readonly forMs: number;
}

/** Events of a NATS runtime (one so far). */
export type NatsRuntimeEvent = RuntimeHostDroppedEvent;

/** The runtime `createNatsRuntime` returns: a `CodeModeRuntime` that also reports its events. */
export interface NatsRuntime extends CodeModeRuntime {
  /** Subscribes to an event; returns the unsubscribe function. A listener that throws is reported as a warning, never thrown into the runtime. */
  on<T extends NatsRuntimeEvent['type']>(type: T, listener: (event: Extract<NatsRuntimeEvent, { type: T }>) => void): () => void;
}

/** Liveness of runtime hosts, as seen from the agent host. */
export interface NatsHeartbeatOptions {
  /** A heartbeat request goes to each runtime host this agent host is connected to this often (ms). Default 1,000. */
  intervalMs?: number;
  /** A heartbeat not answered within this long loses the runtime host (ms). Default 10,000. */
  timeoutMs?: number;
}

/** Options of {@link createNatsRuntime}: the runtime's cell limits plus where NATS is. */
export interface NatsRuntimeOptions extends Omit<RemoteRuntimeOptions, 'placement' | 'onShutdown'>, NatsConnectOptions {
  /**
   * This agent host's subject token: its sessions' frames travel on subjects that name it, and
   * NATS permissions scoped to it keep other agent hosts out. Default: 16 random characters.
   */
  agentId?: string;
  placement?: NatsPlacementOptions;
  heartbeat?: NatsHeartbeatOptions;
  /** Biggest frame accepted from a runtime host (bytes, reassembled). Default 64 MiB. */
  maxFrameBytes?: number;
  /** Shown to the NATS server as the connection's name. Default `switchyard agent host <agentId>`. */
  name?: string;
  /**
   * The NKey this agent host signs placements with (`{ seed }` or `{ seedFile }`). Default: the
   * NKey of `auth` when it is one, else a key made for this process (runtime hosts that pin agent
   * keys refuse it).
   */
  identity?: NatsIdentityOption;
  /**
   * The public NKeys of the runtime hosts this agent host places sessions on; a placement signed
   * by any other key is refused. Default: any runtime host (frames are still sealed, but a rogue
   * runtime host that answers placement is not detected).
   */
  trustedRuntimeHosts?: string | string[];
  /** `false`: frames travel in clear (benchmarks, a trusted single-tenant bus). Default `true`. */
  sealing?: boolean;
}

/** One placed session's connection to its runtime host. */
interface Link {
  runtime: string;
  name: string;
  /** The key the runtime host signed the placement with (sealed placements). */
  key?: string;
  conn: string;
  transport: NatsTransport;
  ready: Promise<RuntimeClient>;
  client?: RuntimeClient;
  sinks: Map<string, RuntimeSink>;
  lost: boolean;
  /** Why the link was lost (set with `lost`). */
  cause?: string;
  /** The client the sessions use (see `watchedClient`). */
  watched?: RuntimeClient;
}

/** The heartbeat of one runtime host and the links it covers. */
interface Beat {
  links: Set<Link>;
  answeredAt: number;
  timer: NodeJS.Timeout;
}

/** Where one session's cells go: the connection it was placed on, while it lives. */
interface Stick {
  link?: Link;
}

let sessionSequence = 0;

/**
 * For this package's tests only (not exported from the package): `incoming` sees each frame a
 * runtime host sent, after the transport checked and reassembled it and before the runtime
 * client reads it, and returns the frame to pass on or `undefined` to lose it (a reply lost on
 * its way, with the transport's sequence intact).
 */
export const frameTap: { incoming?: (frame: string) => string | undefined } = {};

/** `transport`, with {@link frameTap} between it and its reader when a test set one. */
function tapped(transport: NatsTransport): RuntimeTransport {
  const incoming = frameTap.incoming;
  if (!incoming) return transport;
  return {
    send: (frame) => transport.send(frame),
    onClose: (listener) => transport.onClose(listener),
    close: () => transport.close(),
    onFrame: (listener) =>
      transport.onFrame((frame) => {
        const passed = incoming(frame);
        if (passed !== undefined) listener(passed);
      }),
  };
}


/**
 * A `CodeModeRuntime` whose cells run on runtime hosts reached through NATS (see
 * `serveRuntimeOverNats`). Each session is placed on one runtime host through the placement queue
 * group and its later cells go to the same host while it lives (sticky); committed stored values
 * and cell ids stay here, and every nested call comes back here to run through this host's own
 * router. A runtime host that dies, stops answering or loses frames takes no cell with it: each is
 * replayed elsewhere from the journal kept here (else fails: "exec runtime ended unexpectedly: …");
 * the session's next cell is placed on a live host. Unknown options are a `CONFIG` error naming it.
 */
export function createNatsRuntime(options: NatsRuntimeOptions): NatsRuntime {
  const prefix = checkNatsRuntimeOptions(options);
  const agentId = options.agentId === undefined ? randomToken() : checkToken(options.agentId, 'createNatsRuntime option agentId');
  const placement = options.placement ?? {};
  const timeoutMs = placement.timeoutMs === undefined ? 5_000 : positive(placement.timeoutMs, 'createNatsRuntime option placement.timeoutMs', 1);
  const attempts = placement.attempts === undefined ? 5 : positive(placement.attempts, 'createNatsRuntime option placement.attempts', 1);
  const dropMs = placement.dropMs === undefined ? 600_000 : positive(placement.dropMs, 'createNatsRuntime option placement.dropMs', 0);
  const heartbeat = options.heartbeat ?? {};
  const intervalMs = heartbeat.intervalMs === undefined ? 1_000 : positive(heartbeat.intervalMs, 'createNatsRuntime option heartbeat.intervalMs', 10);
  const heartbeatTimeoutMs = heartbeat.timeoutMs === undefined ? 10_000 : positive(heartbeat.timeoutMs, 'createNatsRuntime option heartbeat.timeoutMs', 10);
  const maxFrameBytes = options.maxFrameBytes === undefined ? DEFAULT_MAX_FRAME_BYTES : positive(options.maxFrameBytes, 'createNatsRuntime option maxFrameBytes', 64 * 1024);
  const { servers, auth, tls, subjectPrefix, connectTimeoutMs, agentId: _agent, placement: _placement, heartbeat: _heartbeat, maxFrameBytes: _frames, name, identity: _identity, trustedRuntimeHosts, sealing, ...engine } = options;
  const identity = loadIdentity(options.identity, auth, 'createNatsRuntime');
  const trusted = trustedRuntimeHosts === undefined ? undefined : checkPublicKeys(trustedRuntimeHosts, 'createNatsRuntime option trustedRuntimeHosts');
  // The engine limits are checked now (a CONFIG error names the option), not at the first cell.
  void createRemoteRuntime({ ...engine, placement: { acquire: () => Promise.reject(new Error('unused')) } });
  const agent = new Agent({
    ...{ options, prefix, agentId, timeoutMs, attempts, dropMs, intervalMs, heartbeatTimeoutMs, maxFrameBytes, identity, trusted },
    sealing: sealing ?? true,
    name: name ?? `switchyard agent host ${agentId}`,
  });

  const runtimes = new Set<CodeModeRuntime>();
  let shutdownPromise: Promise<void> | undefined;
  return {
    on: (type, listener) => agent.events.on(type, listener),
    openSession(host: CellHost): CodeModeSession {
      if (shutdownPromise) throw new SwitchyardError('SHUTTING_DOWN', 'code mode runtime is shutting down');
      // One remote runtime per session: its placement remembers the session's runtime host.
      const stick: Stick = {};
      const sessionPlacement: RuntimePlacement = { acquire: (sink) => agent.acquire(stick, sink) };
      const runtime = createRemoteRuntime({ ...engine, placement: sessionPlacement });
      runtimes.add(runtime);
      const session = runtime.openSession(watched(host, stick, agent));
      return {
        createCell: (cell) => session.createCell(cell),
        observe: (cellId, observe) => session.observe(cellId, observe),
        terminate: (cellId) => session.terminate(cellId),
        shutdown: async () => {
          await runtime.shutdown();
          runtimes.delete(runtime);
        },
      };
    },
    shutdown(): Promise<void> {
      shutdownPromise ??= (async () => {
        await Promise.all([...runtimes].map((runtime) => runtime.shutdown()));
        runtimes.clear();
        await agent.close();
      })();
      return shutdownPromise;
    },
  };
}

interface AgentSettings {
  options: NatsConnectOptions;
  prefix: string;
  agentId: string;
  timeoutMs: number;
  attempts: number;
  dropMs: number;
  intervalMs: number;
  heartbeatTimeoutMs: number;
  maxFrameBytes: number;
  name: string;
  identity: NatsIdentity;
  trusted?: string[];
  sealing: boolean;
}

/** The agent host's side of NATS: one connection to the server, one link per runtime host. */
class Agent {
  private readonly settings: AgentSettings;
  private readonly names: Subjects;
  private nc$: Promise<NatsConnection> | undefined;
  private nc: NatsConnection | undefined;
  private sub: Subscription | undefined;
  /** Links by connection id (for routing). */
  private readonly byConn = new Map<string, Link>();
  /** Heartbeats by runtime host: one request per interval covers all of this agent host's connections there. */
  private readonly beats = new Map<string, Beat>();
  /** Runtime hosts left out of placement: by id, with the key they signed with and until when. */
  private readonly excluded = new Map<string, { key?: string; until: number; cause: string }>();
  readonly events: EventHub<NatsRuntimeEvent> = createEventHub<NatsRuntimeEvent>({ name: 'nats-runtime' });
  private closing = false;

  constructor(settings: AgentSettings) {
    this.settings = settings;
    this.names = subjects(settings.prefix);
  }

  private connection(): Promise<NatsConnection> {
    if (this.closing) return Promise.reject(new SwitchyardError('SHUTTING_DOWN', 'code mode runtime is shutting down'));
    this.nc$ ??= connectNats(this.settings.options, { name: this.settings.name, inboxPrefix: this.names.inbox(this.settings.agentId), who: 'createNatsRuntime' }).then(
      (nc) => {
        this.nc = nc;
        const routed = this.names.agent(this.settings.agentId, '', '').length - 1;
        this.sub = nc.subscribe(this.names.agentAll(this.settings.agentId), {
          callback: (error, msg) => {
            if (error) return;
            const [runtime, conn] = msg.subject.slice(routed).split('.');
            const link = this.byConn.get(conn);
            // Only the runtime host the connection was placed on speaks on it.
            if (link && link.runtime === runtime) link.transport.deliver(msg.data);
          },
        });
        void nc.closed().then((error) => {
          const cause = error ? `the NATS connection ended: ${error.message}` : 'the NATS connection closed';
          for (const link of [...this.byConn.values()]) this.lose(link, cause);
          if (this.nc === nc) {
            this.nc = undefined;
            this.nc$ = undefined;
          }
        });
        return nc;
      },
      (error: unknown) => {
        // Not kept: the next cell tries again (the server may be back, the credentials fixed).
        this.nc$ = undefined;
        throw error;
      },
    );
    return this.nc$;
  }

  async acquire(stick: Stick, sink: RuntimeSink): Promise<RuntimeLease> {
    let link = stick.link;
    if (!link || link.lost) {
      link = await this.place();
      stick.link = link;
    }
    const key = `s${++sessionSequence}`;
    link.sinks.set(key, sink);
    let client: RuntimeClient;
    try {
      client = await link.ready;
    } catch (error) {
      link.sinks.delete(key);
      throw error;
    }
    // The link may have been lost between its handshake and this continuation (its sinks, this
    // one too, have then heard the cause already): no lease on a lost link.
    if (link.lost) {
      link.sinks.delete(key);
      throw new Error(`exec runtime failed to start: ${link.cause ?? `the connection to runtime host ${link.name} closed`}`);
    }
    const chosen = link;
    let released = false;
    return {
      client: this.watchedClient(link, client),
      key,
      // The NATS connection keeps the event loop alive until shutdown(); nothing to count.
      hold: () => () => {},
      release: () => {
        if (released) return;
        released = true;
        chosen.sinks.delete(key);
      },
    };
  }

  /** Asks the queue group for a runtime host and opens the session's own connection to it. */
  private async place(): Promise<Link> {
    const nc = await this.connection();
    const { agentId, attempts, timeoutMs } = this.settings;
    const subject = this.names.place(agentId);
    const reasons: string[] = [];
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (this.closing) throw new SwitchyardError('SHUTTING_DOWN', 'code mode runtime is shutting down');
      const { request, own } = this.request();
      let reply: PlacementReply;
      try {
        const msg = await nc.request(subject, JSON.stringify(request), { timeout: timeoutMs });
        reply = JSON.parse(msg.string()) as PlacementReply;
      } catch (error) {
        const text = describeRequestError(error, subject, timeoutMs);
        reasons.push(text);
        if (/permissions violation/i.test(text)) break;
        // No runtime host subscribed yet (starting, or all gone): wait a little before asking again.
        if (/no runtime host/.test(text)) await delay(Math.min(1_000, 100 * attempt));
        continue;
      }
      const accepted = this.accepted(request, own, reply);
      if (typeof accepted === 'string') {
        reasons.push(accepted);
        continue;
      }
      return this.link(nc, { runtime: reply.runtime, name: String(reply.name).slice(0, 128), key: reply.ok ? reply.key : undefined, conn: request.conn }, accepted.keys);
    }
    const distinct = [...new Set(reasons)];
    throw new Error(`exec runtime failed to start: no runtime host accepted the session after ${attempts} placement request(s) on ${subject} (${distinct.join('; ')})`);
  }

  /** A fresh placement request: a new connection id and, sealed, a new ephemeral key signed with this host's NKey. */
  private request(): { request: PlacementRequest; own?: Ephemeral } {
    const base: PlacementRequest = { v: PLACEMENT_VERSION, conn: randomToken(), heartbeatMs: this.settings.intervalMs };
    if (!this.settings.sealing) return { request: base };
    const own = ephemeral();
    const request = { ...base, key: this.settings.identity.publicKey, eph: own.public };
    return { request: { ...request, sig: signed(this.settings.identity, requestText(this.settings.agentId, request)) }, own };
  }

  /** The keys of an accepted placement, or why the reply is refused (a decline, a malformed or unsigned reply, an untrusted key). */
  private accepted(request: PlacementRequest, own: Ephemeral | undefined, reply: PlacementReply): { keys?: PlacementKeys } | string {
    const malformed = 'a runtime host answered placement with a malformed reply';
    if (!reply || reply.v !== PLACEMENT_VERSION || typeof reply.runtime !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(reply.runtime)) return malformed;
    if (!reply.ok) return `runtime host ${String(reply.name).slice(0, 128)} declined: ${String(reply.error).slice(0, 500)}`;
    if (reply.conn !== request.conn || typeof reply.name !== 'string') return malformed;
    const left = this.excludedHost(reply.runtime, reply.key);
    if (left) return `runtime host ${reply.name.slice(0, 128)} was dropped from placement (${left})`;
    if (!own) return {};
    const text = replyText(this.settings.agentId, request.eph!, reply);
    if (!verified(reply.key, text, reply.sig)) return `runtime host ${reply.name.slice(0, 128)} answered placement without a valid signature`;
    if (this.settings.trusted && !this.settings.trusted.includes(reply.key!)) {
      return `runtime host ${reply.name.slice(0, 128)} signed with a key this agent host does not trust (${reply.key})`;
    }
    const keys = deriveKeys(own, reply.eph, `${requestText(this.settings.agentId, request)}\n${text}`);
    return keys ? { keys } : malformed;
  }

  private link(nc: NatsConnection, placed: Pick<Link, 'runtime' | 'name' | 'key' | 'conn'>, keys: PlacementKeys | undefined): Link {
    const { runtime, name, conn } = placed;
    const { agentId, maxFrameBytes } = this.settings;
    const transport = createNatsTransport({
      nc,
      subject: this.names.runtime(runtime, agentId, conn),
      maxFrameBytes,
      peer: `runtime host ${name}`,
      keys: keys && { send: keys.toRuntime, receive: keys.toAgent },
    });
    const link: Link = { ...placed, transport, ready: undefined as never, sinks: new Map(), lost: false };
    this.byConn.set(conn, link);
    link.ready = connectRuntime({
      transport: tapped(transport),
      maxFrameBytes,
      handshakeTimeoutMs: this.settings.timeoutMs,
      decideCause: (reason) => reason ?? `the connection to runtime host ${name} closed`,
      onEvent: (message) => this.route(link, message),
      onLost: (cause) => this.dropped(link, cause),
    }).then((client) => {
      link.client = client;
      return client;
    });
    link.ready.catch((error: unknown) => this.dropped(link, (error as Error)?.message ?? String(error)));
    this.beat(nc, link);
    return link;
  }

  /** Messages for sessions that left still get their exactly-once answer. */
  private route(link: Link, message: RuntimeEventMessage): void {
    const sink = link.sinks.get(message.session);
    if (sink) return sink.onEvent(message);
    if (message.t === 'call') link.client?.post({ t: 'call-result', call: message.call, ok: false, error: `exec cell ${message.cellId} not found` });
  }

  /** Adds a link to its runtime host's heartbeat, starting it for the first link there. */
  private beat(nc: NatsConnection, link: Link): void {
    let beat = this.beats.get(link.runtime);
    if (!beat) {
      beat = { links: new Set(), answeredAt: Date.now(), timer: undefined as never };
      const started = beat;
      started.timer = setInterval(() => this.ping(nc, link.runtime, link.name, started), this.settings.intervalMs);
      started.timer.unref();
      this.beats.set(link.runtime, beat);
    }
    beat.links.add(link);
  }

  /**
   * One heartbeat to a runtime host: a request on its ping subject naming every connection this
   * agent host has there. A host whose process ended has no subscription left, so the server
   * answers "no responders" at once; a host that is stopped or cut off does not answer, and its
   * connections are lost after `heartbeat.timeoutMs`. Either way the loss is detected within
   * `intervalMs + timeoutMs` of the host going silent. Pings do not wait for each other: one sent
   * to a host that died before answering must not hold back the next one, which the server
   * answers at once with "no responders". Silence is judged by the last answer.
   */
  private ping(nc: NatsConnection, runtime: string, name: string, beat: Beat): void {
    const { heartbeatTimeoutMs } = this.settings;
    const loseAll = (cause: string) => {
      for (const link of [...beat.links]) this.lose(link, cause);
    };
    if (Date.now() - beat.answeredAt > heartbeatTimeoutMs) return loseAll(`runtime host ${name} stopped answering (no reply to a heartbeat for ${heartbeatTimeoutMs} ms)`);
    const subject = `${this.names.runtime(runtime, this.settings.agentId, '_')}.ping`;
    const conns = [...beat.links].map((link) => link.conn).join(',');
    // Sealing: the answer must carry the runtime host's signature over this request's nonce.
    const nonce = this.settings.sealing ? randomToken() : undefined;
    nc.request(subject, nonce ? `${conns} ${nonce}` : conns, { timeout: heartbeatTimeoutMs }).then(
      (msg) => {
        const text = this.pingAnswer(runtime, beat, msg.string(), nonce);
        // An answer that is not the runtime host's counts as none (its silence is judged as usual).
        if (text === undefined) return;
        beat.answeredAt = Math.max(beat.answeredAt, Date.now());
        if (text === 'ok') return;
        const unknown = new Set(text.startsWith('unknown ') ? text.slice(8).split(',') : []);
        for (const link of [...beat.links]) {
          if (unknown.has(link.conn) && link.client) this.lose(link, `runtime host ${name} no longer knows this connection`);
        }
      },
      (error: unknown) => {
        if (this.closing || beat.links.size === 0) return;
        const text = describeRequestError(error, subject, heartbeatTimeoutMs);
        if (/no runtime host/.test(text)) loseAll(`runtime host ${name} is gone (its NATS subscription ended)`);
        else if (!/did not answer/.test(text)) loseAll(`heartbeat to runtime host ${name} failed: ${text}`);
      },
    );
  }

  /** A heartbeat's answer ("ok", "unknown a,b"); with a nonce, only when signed by the key a link to `runtime` was placed with. */
  private pingAnswer(runtime: string, beat: Beat, text: string, nonce: string | undefined): string | undefined {
    if (nonce === undefined) return text;
    const bar = text.lastIndexOf('|');
    if (bar < 0) return undefined;
    const answer = text.slice(0, bar);
    const signedText = pingText(this.settings.agentId, runtime, nonce, answer);
    return [...beat.links].some((link) => verified(link.key, signedText, text.slice(bar + 1))) ? answer : undefined;
  }

  /** Ends a link from this side: pending requests answer with `cause`, the sessions on it hear it. */
  private lose(link: Link, cause: string): void {
    if (link.lost) return;
    // The close tells the runtime host why (it stops the link's cells); the client then answers
    // its pending requests with the cause.
    link.transport.end(cause);
    this.dropped(link, cause);
  }

  private dropped(link: Link, cause: string): void {
    const beat = this.beats.get(link.runtime);
    if (beat?.links.delete(link) && beat.links.size === 0) {
      clearInterval(beat.timer);
      this.beats.delete(link.runtime);
    }
    this.byConn.delete(link.conn);
    if (link.lost) return;
    link.lost = true;
    link.cause = cause;
    if (!link.transport.closed) link.transport.end(cause);
    // Before the handshake, sessions are still waiting in acquire(), which rejects with the cause.
    if (link.client) for (const sink of [...link.sinks.values()]) sink.onLost(cause);
    link.sinks.clear();
    if (MISBEHAVIOUR.test(cause)) this.exclude(link, cause);
  }

  /**
   * The link's client as the session's remote runtime uses it: a call the runtime host started past
   * `maxInFlightCalls` (answered with the limit's refusal) drops the runtime host.
   */
  private watchedClient(link: Link, client: RuntimeClient): RuntimeClient {
    link.watched ??= {
      get hello() { return client.hello; },
      request: (message, signal) => client.request(message, signal),
      post: (message, maxBacklogBytes) => {
        if (message.t === 'call-result' && !message.ok && CALL_FLOOD.test(message.error)) this.exclude(link, message.error);
        client.post(message, maxBacklogBytes);
      },
      get backlogBytes() { return client.backlogBytes; },
      sizeOf: (message) => client.sizeOf(message),
      get maxFrameBytes() { return client.maxFrameBytes; },
      get pending() { return client.pending; },
      get ended() { return client.ended; },
      close: (cause) => client.close(cause),
      lose: (cause) => client.lose(cause),
    };
    return link.watched;
  }

  /** Why the runtime host `runtime` (or one signing with `key`) is left out of placement now, if it is. */
  private excludedHost(runtime: string, key: string | undefined): string | undefined {
    const now = Date.now();
    for (const [id, entry] of this.excluded) {
      if (entry.until <= now) this.excluded.delete(id);
      else if (id === runtime || (key !== undefined && entry.key === key)) return entry.cause;
    }
    return undefined;
  }

  /**
   * Leaves the runtime host of `link` out of this agent host's placements for `placement.dropMs`
   * (it misbehaved: `cause`) and reports it once (`runtime-host-dropped`, and a process warning).
   */
  exclude(link: Link, cause: string): void {
    const forMs = this.settings.dropMs;
    if (forMs === 0 || this.excludedHost(link.runtime, link.key) !== undefined) return;
    this.excluded.set(link.runtime, { key: link.key, until: Date.now() + forMs, cause });
    // The connection it misbehaved on ends (after the message being handled): the session's next exec places afresh.
    if (!link.lost) setImmediate(() => this.lose(link, `runtime host ${link.name} was dropped from placement: ${cause}`));
    this.events.emit({ type: 'runtime-host-dropped', runtime: link.runtime, name: link.name, key: link.key, cause, forMs });
    try {
      process.emitWarning(`runtime host ${link.name} (${link.runtime}) was dropped from placement for agent host ${this.settings.agentId} for ${forMs} ms: ${cause}`, {
        type: 'SwitchyardWarning',
        code: 'SWITCHYARD_RUNTIME_HOST_DROPPED',
      });
    } catch {
      // a broken warning listener must not break the agent host
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const link of [...this.byConn.values()]) {
      if (link.client) link.client.close('the exec runtime was shut down');
      this.dropped(link, 'the exec runtime was shut down');
    }
    const nc = this.nc ?? (await this.nc$?.catch(() => undefined));
    this.sub?.unsubscribe();
    await nc?.drain().catch(() => undefined);
  }
}

/**
 * Causes only a misbehaving runtime host produces: a protocol violation (a malformed or oversized
 * frame, a reply nobody asked for: only the holder of the placement's keys can send a frame that
 * opens), and a frame that does not open (with the deployment's permissions, only that runtime host
 * may publish on its connections' subjects). Not one: a sequence gap (NATS drops messages on a
 * reconnect or a slow consumer) and a replayed frame (a copy of ciphertext anyone who could read it
 * can send; the runtime host gains nothing by it).
 */
const MISBEHAVIOUR = /did not open|protocol violation/;

/**
 * Host limits an honest runtime never passes (the runtime host enforces the same limits, capped no
 * higher, inside its isolates): notify texts past `maxOutputBytes` (the agent host's remote runtime
 * reports it as a `cell-limit-exceeded` event), and a cell with more nested calls in flight than
 * `maxInFlightCalls` (the remote runtime answers the extra call with this refusal).
 */
const FLOOD = /^exec notify limit exceeded: /;
const CALL_FLOOD = /^exec nested call limit exceeded: the cell has \d+ nested calls in flight, the limit is \d+ \(maxInFlightCalls\)$/;

/** The session's host, watched: a flood past this host's limits drops the runtime host that sent it. */
function watched(host: CellHost, stick: Stick, agent: Agent): CellHost {
  return {
    invokeTool: (request) => host.invokeTool(request),
    notify: (event) => host.notify(event),
    cellClosed: (cellId) => host.cellClosed(cellId),
    runtimeEvent: (event) => {
      if (event.type === 'cell-limit-exceeded' && FLOOD.test(event.message) && stick.link) agent.exclude(stick.link, event.message);
      host.runtimeEvent?.(event);
    },
  };
}

function describeRequestError(error: unknown, subject: string, timeoutMs: number): string {
  const text = (error as Error)?.message ?? String(error);
  const cause = (error as { cause?: unknown })?.cause;
  const names = [error, cause].map((e) => (e as Error | undefined)?.name ?? '');
  const noResponders = (error as { isNoResponders?: () => boolean })?.isNoResponders?.() || names.includes('NoRespondersError') || /no responders/i.test(text);
  if (noResponders) return `no runtime host is subscribed to ${subject}`;
  if (names.includes('TimeoutError') || /timeout/i.test(text)) return `a runtime host did not answer within ${timeoutMs} ms`;
  return text;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

