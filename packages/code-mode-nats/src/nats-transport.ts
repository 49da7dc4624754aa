import type { NatsConnection } from '@nats-io/transport-node';
import type { RuntimeTransport } from '@switchyard/code-mode-runtime';

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
  const { nc, subject, maxFrameBytes, peer } = options;
  let onFrame: (frame: string) => void = () => {};
  const closeListeners: Array<(reason: string | undefined) => void> = [];
  let closed = false;
  let sent = 0;
  let expected = 1;
  let chunks: Uint8Array[] = [];
  let chunkBytes = 0;

  const finish = (reason: string | undefined) => {
    if (closed) return;
    closed = true;
    chunks = [];
    for (const listener of closeListeners) listener(reason);
  };
  const publish = (payload: Uint8Array): boolean => {
    try {
      nc.publish(subject, payload);
      return true;
    } catch (error) {
      finish(`the NATS connection failed: ${(error as Error)?.message ?? String(error)}`);
      return false;
    }
  };
  const sendClose = (reason: string) => {
    try {
      nc.publish(subject, encoder.encode(reason ? `X ${reason.slice(0, 1_000)}` : 'X'));
    } catch {
      // the peer will notice the silence
    }
  };
  const envelope = (kind: number, seq: number, body: Uint8Array, start: number, end: number): Uint8Array => {
    const head = encoder.encode(`${String.fromCharCode(kind)}${seq} `);
    const out = new Uint8Array(head.length + (end - start));
    out.set(head, 0);
    out.set(body.subarray(start, end), head.length);
    return out;
  };

  const transport: NatsTransport = {
    send(frame) {
      if (closed) return;
      const body = encoder.encode(frame);
      const room = Math.max(1_024, nc.info?.max_payload ? nc.info.max_payload - ENVELOPE_BYTES : 1_048_576 - ENVELOPE_BYTES);
      for (let start = 0; start < body.length || start === 0; start += room) {
        const end = Math.min(body.length, start + room);
        const kind = end >= body.length ? KIND_FRAME : KIND_CHUNK;
        if (!publish(envelope(kind, ++sent, body, start, end))) return;
        if (end >= body.length) break;
      }
    },
    onFrame(listener) {
      onFrame = listener;
    },
    onClose(listener) {
      closeListeners.push(listener);
    },
    close() {
      if (closed) return;
      sendClose('');
      finish(undefined);
    },
    end(reason) {
      if (closed) return;
      sendClose(reason);
      finish(reason);
    },
    deliver(payload) {
      if (closed) return;
      const kind = payload[0];
      if (kind === KIND_CLOSE) {
        const reason = decoder.decode(payload.subarray(2)).slice(0, 1_000);
        finish(reason ? `${peer} closed the connection: ${reason}` : `${peer} closed the connection`);
        return;
      }
      const space = payload.indexOf(SPACE);
      const seq = space > 1 && space < 20 ? Number(decoder.decode(payload.subarray(1, space))) : NaN;
      if ((kind !== KIND_FRAME && kind !== KIND_CHUNK) || !Number.isSafeInteger(seq)) {
        transport.end('protocol violation: a message that is not a frame envelope');
        return;
      }
      if (seq !== expected) {
        transport.end(`frames lost in transit (expected frame ${expected} from ${peer}, got ${seq})`);
        return;
      }
      expected++;
      const body = payload.subarray(space + 1);
      chunkBytes += body.length;
      if (chunkBytes > maxFrameBytes) {
        transport.end(`protocol violation: a frame of more than ${maxFrameBytes} bytes is over the limit of ${maxFrameBytes} bytes`);
        return;
      }
      if (kind === KIND_CHUNK) {
        chunks.push(body.slice());
        return;
      }
      let frame: string;
      if (chunks.length === 0) frame = decoder.decode(body);
      else {
        chunks.push(body);
        const whole = new Uint8Array(chunkBytes);
        let offset = 0;
        for (const chunk of chunks) {
          whole.set(chunk, offset);
          offset += chunk.length;
        }
        chunks = [];
        frame = decoder.decode(whole);
      }
      chunkBytes = 0;
      onFrame(frame);
    },
    get closed() {
      return closed;
    },
  };
  return transport;
}
