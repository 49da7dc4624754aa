import type { NatsConnection } from '@nats-io/transport-node';
import { createTransportEnding, type RuntimeTransport } from '@switchyard/code-mode-runtime/protocol';
import { open, seal, SEAL_OVERHEAD } from './seal';

/**
 * One runtime-protocol connection carried by NATS messages. Core NATS delivers at most once and
 * in order per publisher, and never says when a message was dropped (a reconnect, a slow
 * consumer), so every message carries a sequence number: a gap ends the connection with a clear
 * cause instead of leaving a request unanswered or a result unseen. A frame bigger than the
 * server's `max_payload` travels in chunks.
 *
 * Envelope (the message payload, bytes): `F<seq> <body>` a whole frame or its last chunk,
 * `C<seq> <body>` a chunk with more to follow, `X <reason>` (or `X`) the sender closed the connection.
 * A sealed connection (`keys`) carries the same kind, sequence number and body inside an AEAD
 * seal (see seal.ts); its closes are sealed and numbered too, so nobody else can end it.
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
  /** Shared by connections: bytes of partly received frames held by all of them, and the most allowed. */
  reassembly?: ReassemblyBudget;
  /** The placement's keys: `send` seals this side's messages, `receive` opens the peer's. Absent: clear envelopes. */
  keys?: { send: Buffer; receive: Buffer };
}

/** Bytes of partly received frames held by a set of connections, and the most they may hold together. */
export interface ReassemblyBudget {
  used: number;
  max: number;
}

/** A transport plus what its router calls: `deliver` for every message addressed to it. */
export interface NatsTransport extends RuntimeTransport {
  deliver(payload: Uint8Array): void;
  /** Ends the connection from outside (a lost heartbeat, a closed NATS connection) with `reason`; sends the peer a close. */
  end(reason: string): void;
  readonly closed: boolean;
  /** Messages that did not open under the placement's key (forged, corrupted, or sealed for another connection). */
  readonly dropped: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function createNatsTransport(options: NatsTransportOptions): NatsTransport {
  const { nc, subject, keys } = options;
  const ending = createTransportEnding('nats-transport');
  const incoming = new IncomingFrames(options.maxFrameBytes, options.peer, options.reassembly ?? { used: 0, max: Number.POSITIVE_INFINITY });
  let onFrame: (frame: string) => void = () => {};
  let sent = 0;
  let dropped = 0;
  const wrap = (kind: number, body: Uint8Array, start: number, end: number, room: number) =>
    keys ? seal(keys.send, kind, ++sent, body.subarray(start, end), room) : envelope(kind, ++sent, body, start, end);
  const finish = (reason: string | undefined) => {
    if (ending.closed) return;
    incoming.clear();
    ending.finish(reason);
  };
  const sendClose = (reason: string) => {
    const text = encoder.encode(reason.slice(0, 1_000));
    // Best effort: a peer that misses it notices the silence.
    publish(nc, subject, keys ? seal(keys.send, KIND_CLOSE, ++sent, text) : text.length ? concat(CLOSE_HEAD, text) : CLOSE_BARE);
  };
  const transport: NatsTransport = {
    send(frame) {
      if (ending.closed) return;
      const body = encoder.encode(frame);
      const reserve = ENVELOPE_BYTES + (keys ? SEAL_OVERHEAD : 0);
      const room = Math.max(1_024, (nc.info?.max_payload ?? 1_048_576) - reserve);
      for (let start = 0; start < body.length || start === 0; start += room) {
        const end = Math.min(body.length, start + room);
        const kind = end >= body.length ? KIND_FRAME : KIND_CHUNK;
        const failure = publish(nc, subject, wrap(kind, body, start, end, room));
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
      sendClose('');
      finish(undefined);
    },
    end(reason) {
      if (ending.closed) return;
      sendClose(reason);
      finish(reason);
    },
    deliver(payload) {
      if (ending.closed) return;
      const opened = keys ? open(keys.receive, payload) : clearEnvelope(payload);
      if (opened === undefined) {
        if (keys) dropped++;
        const reason = keys
          ? `a frame from ${options.peer} did not open (forged, corrupted or sealed for another placement); ${dropped} dropped`
          : 'protocol violation: a message that is not a frame envelope';
        return transport.end(reason);
      }
      const delivery = incoming.accept(opened);
      if (delivery === undefined) return;
      if (delivery.kind === 'frame') onFrame(delivery.text);
      else if (delivery.kind === 'closed') finish(delivery.reason);
      else transport.end(delivery.reason);
    },
    get closed() {
      return ending.closed;
    },
    get dropped() {
      return dropped;
    },
  };
  return transport;
}

const CLOSE_HEAD = encoder.encode('X ');
const CLOSE_BARE = encoder.encode('X');

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** A clear envelope's kind, sequence number (0 for a close) and body; `undefined` when it is not one. */
function clearEnvelope(payload: Uint8Array): Message | undefined {
  const kind = payload[0];
  if (kind === KIND_CLOSE) return { kind, seq: 0, body: payload.subarray(2) };
  const space = payload.indexOf(SPACE);
  const seq = space > 1 && space < 20 ? Number(decoder.decode(payload.subarray(1, space))) : NaN;
  if ((kind !== KIND_FRAME && kind !== KIND_CHUNK) || !Number.isSafeInteger(seq)) return undefined;
  return { kind, seq, body: payload.subarray(space + 1) };
}

/** One message, opened: its kind, sequence number and body. */
interface Message {
  kind: number;
  seq: number;
  body: Uint8Array;
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
    private readonly budget: ReassemblyBudget,
  ) {}

  /** Takes one message; `undefined` while a chunked frame is still incomplete. */
  accept({ kind, seq, body }: Message): Delivery | undefined {
    // A clear close carries no sequence number; a sealed one is numbered like any frame.
    if (kind === KIND_CLOSE && seq === 0) return this.closed(body);
    if (seq !== this.expected) {
      const reason =
        seq < this.expected
          ? `a frame from ${this.peer} was replayed (expected frame ${this.expected}, got ${seq})`
          : `frames lost in transit (expected frame ${this.expected} from ${this.peer}, got ${seq})`;
      return { kind: 'violation', reason };
    }
    this.expected++;
    if (kind === KIND_CLOSE) return this.closed(body);
    if (kind !== KIND_FRAME && kind !== KIND_CHUNK) return { kind: 'violation', reason: 'protocol violation: a message that is not a frame envelope' };
    this.chunkBytes += body.length;
    if (this.chunkBytes > this.maxFrameBytes) {
      return { kind: 'violation', reason: `protocol violation: a frame of more than ${this.maxFrameBytes} bytes is over the limit of ${this.maxFrameBytes} bytes` };
    }
    if (kind === KIND_CHUNK) {
      if (this.budget.used + body.length > this.budget.max) {
        return { kind: 'violation', reason: `protocol violation: partly received frames would hold more than this host's ${this.budget.max} bytes` };
      }
      this.budget.used += body.length;
      this.chunks.push(body.slice());
      return undefined;
    }
    return { kind: 'frame', text: this.assemble(body) };
  }

  private closed(body: Uint8Array): Delivery {
    const reason = decoder.decode(body).slice(0, 1_000);
    return { kind: 'closed', reason: reason ? `${this.peer} closed the connection: ${reason}` : `${this.peer} closed the connection` };
  }

  /** Drops a partly received frame (the connection ended). */
  clear(): void {
    this.release();
  }

  /** Gives the chunks' bytes back to the shared budget and drops them. */
  private release(): void {
    for (const chunk of this.chunks) this.budget.used -= chunk.length;
    this.chunks = [];
    this.chunkBytes = 0;
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
      this.chunks.pop();
      this.release();
      frame = decoder.decode(whole);
    }
    this.chunkBytes = 0;
    return frame;
  }
}
