import { connectRuntime, type RuntimeClient, type RuntimeEventMessage, type RuntimeSink, type RuntimeTransport } from '@switchyard/code-mode-runtime/protocol';
import type { NatsConnection } from '@nats-io/transport-node';
import { createNatsTransport, type NatsTransport } from './nats-transport';
import type { AgentSettings } from './options';
import type { PlacementKeys } from './seal';
import type { Subjects } from './subjects';

/** One placed session's connection to its runtime host. */
export interface Link {
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

/** What a placement decided: the runtime host and the connection id. */
export type Placed = Pick<Link, 'runtime' | 'name' | 'key' | 'conn'>;

/** Where one session's cells go: the connection it was placed on, while it lives. */
export interface Stick {
  link?: Link;
}

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

/** A link to the placed runtime host over its own (sealed, with `keys`) transport; not started yet (see {@link startLink}). */
export function newLink(nc: NatsConnection, names: Subjects, settings: AgentSettings, placed: Placed, keys: PlacementKeys | undefined): Link {
  const { runtime, name, conn } = placed;
  const { agentId, maxFrameBytes } = settings;
  const transport = createNatsTransport({
    nc,
    subject: names.runtime(runtime, agentId, conn),
    maxFrameBytes,
    peer: `runtime host ${name}`,
    keys: keys && { send: keys.toRuntime, receive: keys.toAgent },
  });
  return { ...placed, transport, ready: undefined as never, sinks: new Map(), lost: false };
}

/** Starts the runtime protocol's handshake on `link`; `onLost` hears why it ended (a failed handshake too). */
export function startLink(link: Link, settings: AgentSettings, onLost: (cause: string) => void): void {
  const { maxFrameBytes, timeoutMs } = settings;
  link.ready = connectRuntime({
    transport: tapped(link.transport),
    maxFrameBytes,
    handshakeTimeoutMs: timeoutMs,
    decideCause: (reason) => reason ?? `the connection to runtime host ${link.name} closed`,
    onEvent: (message) => route(link, message),
    onLost,
  }).then((client) => {
    link.client = client;
    return client;
  });
  link.ready.catch((error: unknown) => onLost((error as Error)?.message ?? String(error)));
}

/** Messages for sessions that left still get their exactly-once answer. */
function route(link: Link, message: RuntimeEventMessage): void {
  const sink = link.sinks.get(message.session);
  if (sink) return sink.onEvent(message);
  if (message.t === 'call') link.client?.post({ t: 'call-result', call: message.call, ok: false, error: `exec cell ${message.cellId} not found` });
}
