import type { NatsConnection } from '@nats-io/transport-node';
import { createTransportEnding, type RuntimeTransport } from '@switchyard/code-mode-runtime';

/**
 * One runtime-protocol connection carried by NATS messages. Core NATS delivers at most once and
 * in order per publisher, and never says when a message was dropped (a reconnect, a slow
 * consumer), so every message carries a sequence number: a gap ends the connection with a clear
 * cause instead of leaving a request unanswered or a result unseen. A frame bigger than the
 * server's `max_payload` travels in chunks.
 *
 * Envelope (the message payload, bytes): `F<seq> <body>` a whole frame or its last chunk,
 * `C<seq> <body>` a chunk with more to follow, `X <reason>` (or `X`) the sender closed the connection.
 */

/** Bytes kept free in each message for the envelope header. */
const ENVELOPE_BYTES = 32;
const SPACE = 0x20;
const KIND_FRAME = 0x46; // F
const KIND_CHUNK = 0x43; // C
const KIND_CLOSE = 0x58; // X

export interface NatsTransportOptions {
  nc: NatsConnection;
  /** Where this side's frames go. */
  subject: string;
  /** The biggest frame accepted from the other side (bytes, after reassembly). */
  maxFrameBytes: number;
  /** Who the other side is, for causes ("runtime host h1", "agent host a"). */
  peer: string;
}

/** A transport plus what its router calls: `deliver` for every message addressed to it. */
export interface NatsTransport extends RuntimeTransport {
  deliver(payload: Uint8Array): void;
  /** Ends the connection from outside (a lost heartbeat, a closed NATS connection) with `reason`; sends the peer a close. */
  end(reason: string): void;
  readonly closed: boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function createNatsTransport(options: NatsTransportOptions): NatsTransport {
  const { nc, subject } = options;
  const ending = createTransportEnding('nats-transport');
  const incoming = new IncomingFrames(options.maxFrameBytes, options.peer);
  let onFrame: (frame: string) => void = () => {};
  let sent = 0;
  const finish = (reason: string | undefined) => {
    if (ending.closed) return;
    incoming.clear();
    ending.finish(reason);
  };
  const transport: NatsTransport = {
    send(frame) {
      if (ending.closed) return;
      const body = encoder.encode(frame);
      const room = Math.max(1_024, nc.info?.max_payload ? nc.info.max_payload - ENVELOPE_BYTES : 1_048_576 - ENVELOPE_BYTES);
      for (let start = 0; start < body.length || start === 0; start += room) {
        const end = Math.min(body.length, start + room);
        const kind = end >= body.length ? KIND_FRAME : KIND_CHUNK;
        const failure = publish(nc, subject, envelope(kind, ++sent, body, start, end));
        if (failure !== undefined) return finish(failure);
        if (end >= body.length) break;
      }
    },
    onFrame(listener) {
      onFrame = listener;
    },
    onClose: ending.onClose,
    close() {
      if (ending.closed) return;
      sendClose(nc, subject, '');
      finish(undefined);
    },
    end(reason) {
      if (ending.closed) return;
      sendClose(nc, subject, reason);
      finish(reason);
    },
    deliver(payload) {
      if (ending.closed) return;
      const delivery = incoming.accept(payload);
      if (delivery === undefined) return;
      if (delivery.kind === 'frame') onFrame(delivery.text);
      else if (delivery.kind === 'closed') finish(delivery.reason);
      else transport.end(delivery.reason);
    },
    get closed() {
      return ending.closed;
    },
  };
  return transport;
}

/** Publishes one message; returns why the NATS connection failed, if it did. */
function publish(nc: NatsConnection, subject: string, payload: Uint8Array): string | undefined {
  try {
    nc.publish(subject, payload);
    return undefined;
  } catch (error) {
    return `the NATS connection failed: ${(error as Error)?.message ?? String(error)}`;
  }
}

/** Tells the peer this side closed, with `reason` when there is one (best effort). */
function sendClose(nc: NatsConnection, subject: string, reason: string): void {
  try {
    nc.publish(subject, encoder.encode(reason ? `X ${reason.slice(0, 1_000)}` : 'X'));
  } catch {
    // the peer will notice the silence
  }
}

/** `body[start, end)` behind the header of a message of `kind` with sequence number `seq`. */
function envelope(kind: number, seq: number, body: Uint8Array, start: number, end: number): Uint8Array {
  const head = encoder.encode(`${String.fromCharCode(kind)}${seq} `);
  const out = new Uint8Array(head.length + (end - start));
  out.set(head, 0);
  out.set(body.subarray(start, end), head.length);
  return out;
}

/** What one incoming message amounts to: a whole frame, the peer's close, or a broken rule that ends the connection. */
type Delivery = { kind: 'frame'; text: string } | { kind: 'closed'; reason: string } | { kind: 'violation'; reason: string };

/** The receiving half: checks every message's sequence number and reassembles chunked frames up to `maxFrameBytes`. */
class IncomingFrames {
  private expected = 1;
  private chunks: Uint8Array[] = [];
  private chunkBytes = 0;

  constructor(
    private readonly maxFrameBytes: number,
    private readonly peer: string,
  ) {}

  /** Takes one message; `undefined` while a chunked frame is still incomplete. */
  accept(payload: Uint8Array): Delivery | undefined {
    const kind = payload[0];
    if (kind === KIND_CLOSE) {
      const reason = decoder.decode(payload.subarray(2)).slice(0, 1_000);
      return { kind: 'closed', reason: reason ? `${this.peer} closed the connection: ${reason}` : `${this.peer} closed the connection` };
    }
    const space = payload.indexOf(SPACE);
    const seq = space > 1 && space < 20 ? Number(decoder.decode(payload.subarray(1, space))) : NaN;
    if ((kind !== KIND_FRAME && kind !== KIND_CHUNK) || !Number.isSafeInteger(seq)) {
      return { kind: 'violation', reason: 'protocol violation: a message that is not a frame envelope' };
    }
    if (seq !== this.expected) {
      return { kind: 'violation', reason: `frames lost in transit (expected frame ${this.expected} from ${this.peer}, got ${seq})` };
    }
    this.expected++;
    const body = payload.subarray(space + 1);
    this.chunkBytes += body.length;
    if (this.chunkBytes > this.maxFrameBytes) {
      return { kind: 'violation', reason: `protocol violation: a frame of more than ${this.maxFrameBytes} bytes is over the limit of ${this.maxFrameBytes} bytes` };
    }
    if (kind === KIND_CHUNK) {
      this.chunks.push(body.slice());
      return undefined;
    }
    return { kind: 'frame', text: this.assemble(body) };
  }

  /** Drops a partly received frame (the connection ended). */
  clear(): void {
    this.chunks = [];
  }

  /** The frame the chunks so far and its last part `body` make. */
  private assemble(body: Uint8Array): string {
    let frame: string;
    if (this.chunks.length === 0) frame = decoder.decode(body);
    else {
      this.chunks.push(body);
      const whole = new Uint8Array(this.chunkBytes);
      let offset = 0;
      for (const chunk of this.chunks) {
        whole.set(chunk, offset);
        offset += chunk.length;
      }
      this.chunks = [];
      frame = decoder.decode(whole);
    }
    this.chunkBytes = 0;
    return frame;
  }
}
