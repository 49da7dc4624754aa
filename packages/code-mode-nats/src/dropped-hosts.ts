import type { RuntimeClient } from '@switchyard/code-mode-runtime/protocol';
import type { CellHost } from '@switchyard/protocol';
import type { EventHub } from '@switchyard/kit/internal';
import type { Link, Stick } from './agent-link';
import type { NatsRuntimeEvent } from './agent-runtime';
import type { AgentSettings } from './options';

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

/** The runtime hosts that misbehaved towards one agent host, left out of its placements for a while. */
export class DroppedHosts {
  private readonly settings: AgentSettings;
  private readonly events: EventHub<NatsRuntimeEvent>;
  private readonly lose: (link: Link, cause: string) => void;
  /** Runtime hosts left out of placement: by id, with the key they signed with and until when. */
  private readonly excluded = new Map<string, { key?: string; until: number; cause: string }>();

  /** `lose` ends a link from the agent host's side; `events` hears `runtime-host-dropped`. */
  constructor(settings: AgentSettings, events: EventHub<NatsRuntimeEvent>, lose: (link: Link, cause: string) => void) {
    this.settings = settings;
    this.events = events;
    this.lose = lose;
  }

  /** Why the runtime host `runtime` (or one signing with `key`) is left out of placement now, if it is. */
  excludedHost(runtime: string, key: string | undefined): string | undefined {
    const now = Date.now();
    for (const [id, entry] of this.excluded) {
      if (entry.until <= now) this.excluded.delete(id);
      else if (id === runtime || (key !== undefined && entry.key === key)) return entry.cause;
    }
    return undefined;
  }

  /** A link ended with `cause`: its runtime host is dropped when only a misbehaving one causes that. */
  linkLost(link: Link, cause: string): void {
    if (MISBEHAVIOUR.test(cause)) this.exclude(link, cause);
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

  /**
   * The link's client as the session's remote runtime uses it: a call the runtime host started past
   * `maxInFlightCalls` (answered with the limit's refusal) drops the runtime host.
   */
  watchedClient(link: Link, client: RuntimeClient): RuntimeClient {
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

  /** The session's host, watched: a flood past this host's limits drops the runtime host that sent it. */
  watchedHost(host: CellHost, stick: Stick): CellHost {
    return {
      invokeTool: (request) => host.invokeTool(request),
      notify: (event) => host.notify(event),
      cellClosed: (cellId) => host.cellClosed(cellId),
      runtimeEvent: (event) => {
        if (event.type === 'cell-limit-exceeded' && FLOOD.test(event.message) && stick.link) this.exclude(stick.link, event.message);
        host.runtimeEvent?.(event);
      },
    };
  }
}
