import type { RuntimeClient, RuntimeLease, RuntimeSink } from '@switchyard/code-mode-runtime/protocol';
import { SwitchyardError, type CellHost } from '@switchyard/protocol';
import { createEventHub, type EventHub } from '@switchyard/kit/internal';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { newLink, startLink, type Link, type Placed, type Stick } from './agent-link';
import type { NatsRuntimeEvent } from './agent-runtime';
import { connectNats } from './connection';
import { DroppedHosts } from './dropped-hosts';
import { Heartbeats } from './heartbeat';
import type { AgentSettings } from './options';
import { place } from './placement';
import type { PlacementKeys } from './seal';
import { subjects, type Subjects } from './subjects';

let sessionSequence = 0;

/** The agent host's side of NATS: one connection to the server, one link per runtime host. */
export class Agent {
  private readonly settings: AgentSettings;
  private readonly names: Subjects;
  private nc$: Promise<NatsConnection> | undefined;
  private nc: NatsConnection | undefined;
  private sub: Subscription | undefined;
  /** Links by connection id (for routing). */
  private readonly byConn = new Map<string, Link>();
  private readonly heartbeats: Heartbeats;
  private readonly dropped: DroppedHosts;
  readonly events: EventHub<NatsRuntimeEvent> = createEventHub<NatsRuntimeEvent>({ name: 'nats-runtime' });
  private closing = false;

  constructor(settings: AgentSettings) {
    this.settings = settings;
    this.names = subjects(settings.prefix);
    this.heartbeats = new Heartbeats(settings, this.names, { lose: (link, cause) => this.lose(link, cause), closing: () => this.closing });
    this.dropped = new DroppedHosts(settings, this.events, (link, cause) => this.lose(link, cause));
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
      client: this.dropped.watchedClient(link, client),
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
    return place(nc, this.settings, this.names, {
      closing: () => this.closing,
      excludedHost: (runtime, key) => this.dropped.excludedHost(runtime, key),
      open: (connection, placed, keys) => this.link(connection, placed, keys),
    });
  }

  private link(nc: NatsConnection, placed: Placed, keys: PlacementKeys | undefined): Link {
    const link = newLink(nc, this.names, this.settings, placed, keys);
    this.byConn.set(link.conn, link);
    startLink(link, this.settings, (cause) => this.linkEnded(link, cause));
    this.heartbeats.add(nc, link);
    return link;
  }

  /** Ends a link from this side: pending requests answer with `cause`, the sessions on it hear it. */
  private lose(link: Link, cause: string): void {
    if (link.lost) return;
    // The close tells the runtime host why (it stops the link's cells); the client then answers
    // its pending requests with the cause.
    link.transport.end(cause);
    this.linkEnded(link, cause);
  }

  /** A link ended (lost from either side, or its handshake failed): it leaves the heartbeat and routing, its sessions hear `cause`. */
  private linkEnded(link: Link, cause: string): void {
    this.heartbeats.remove(link);
    this.byConn.delete(link.conn);
    if (link.lost) return;
    link.lost = true;
    link.cause = cause;
    if (!link.transport.closed) link.transport.end(cause);
    // Before the handshake, sessions are still waiting in acquire(), which rejects with the cause.
    if (link.client) for (const sink of [...link.sinks.values()]) sink.onLost(cause);
    link.sinks.clear();
    this.dropped.linkLost(link, cause);
  }

  /** The session's host, watched: a flood past this host's limits drops the runtime host that sent it. */
  watchedHost(host: CellHost, stick: Stick): CellHost {
    return this.dropped.watchedHost(host, stick);
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const link of [...this.byConn.values()]) {
      if (link.client) link.client.close('the exec runtime was shut down');
      this.linkEnded(link, 'the exec runtime was shut down');
    }
    const nc = this.nc ?? (await this.nc$?.catch(() => undefined));
    this.sub?.unsubscribe();
    await nc?.drain().catch(() => undefined);
  }
}
