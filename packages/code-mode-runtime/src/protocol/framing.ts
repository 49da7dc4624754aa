import { createEventHub } from '@switchyard/kit/internal';
import { DEFAULT_MAX_FRAME_BYTES } from './messages';

/**
 * Framing: what carries frames between a host and a runtime (a duplex byte stream here, a message
 * bus elsewhere) and how a frame is delimited on a stream.
 */

/**
 * What carries frames between a host and a runtime: a duplex byte stream with
 * {@link createStreamTransport}, or a message bus that delivers whole frames. `send` must keep the
 * order of frames; after `close` (or a close from the other side) it drops frames silently.
 */
export interface RuntimeTransport {
  /** Sends one frame (the JSON text of an array of messages). */
  send(frame: string): void;
  /** Sets the receiver of incoming frames (one listener). */
  onFrame(listener: (frame: string) => void): void;
  /** Called once when the transport closed, with why when it knows (`ProtocolError` text for an oversized frame). */
  onClose(listener: (reason: string | undefined) => void): void;
  /** Closes the transport; pending outgoing frames are flushed when the transport can. */
  close(): void;
  /** Makes the transport keep (true) or not keep (false) the Node event loop alive; optional. */
  ref?(keepAlive: boolean): void;
  /** Bytes handed to `send` that the peer has not taken yet (a stream's write buffer); optional, 0 when absent. */
  queuedBytes?(): number;
}

/** Frame header: 4 bytes, the body length in bytes as an unsigned 32-bit big-endian integer. */
const HEADER_BYTES = 4;

/** Options of {@link createStreamTransport}. */
export interface StreamTransportOptions {
  /** Where frames arrive. */
  readable: NodeJS.ReadableStream;
  /** Where frames go. */
  writable: NodeJS.WritableStream;
  /** The biggest incoming frame accepted (bytes); a bigger one closes the transport with a protocol error. */
  maxFrameBytes?: number;
}

/**
 * Frames over a duplex byte stream: a 4-byte big-endian length, then that many bytes of UTF-8
 * JSON. The reader never buffers more than one frame of at most `maxFrameBytes`: a header that
 * announces more closes the transport with "frame of N bytes is over the limit of M bytes".
 */
export function createStreamTransport(options: StreamTransportOptions): RuntimeTransport {
  const { readable, writable } = options;
  const reader = new FrameReader(options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES);
  const ending = createTransportEnding('runtime-transport');
  let onFrame: (frame: string) => void = () => {};
  const finish = (reason: string | undefined) => {
    if (ending.closed) return;
    readable.removeListener('data', onData);
    ending.finish(reason);
  };
  function onData(data: Buffer | string): void {
    if (ending.closed) return;
    reader.push(typeof data === 'string' ? Buffer.from(data) : data);
    while (!ending.closed) {
      const next = reader.next();
      if (next === undefined) return;
      if (typeof next !== 'string') return finish(next.violation);
      onFrame(next);
    }
  }
  readable.on('data', onData);
  readable.on('end', () => finish(undefined));
  readable.on('close', () => finish(undefined));
  readable.on('error', (error: Error) => finish(error.message));
  writable.on('error', (error: Error) => finish(error.message));
  return {
    send(frame) {
      if (!ending.closed) writable.write(encodeFrame(frame));
    },
    onFrame(listener) {
      onFrame = listener;
    },
    onClose: ending.onClose,
    close() {
      if (ending.closed) return;
      writable.end();
      finish(undefined);
    },
    ref: (keepAlive) => refStreams([readable, writable], keepAlive),
    queuedBytes: () => (writable as NodeJS.WritableStream & { writableLength?: number }).writableLength ?? 0,
  };
}

/** The event a transport's close listeners receive. */
interface TransportClosed {
  readonly type: 'close';
  readonly reason: string | undefined;
}

/** The close bookkeeping of a transport: closed once, its listeners guarded (see {@link createTransportEnding}). */
export interface TransportEnding {
  readonly closed: boolean;
  /** {@link RuntimeTransport.onClose}: adds a listener called once, when the transport closed. */
  onClose(listener: (reason: string | undefined) => void): void;
  /** Marks the transport closed and tells every listener `reason`, the first time only. */
  finish(reason: string | undefined): void;
}

/**
 * The close half every transport keeps (the stream transport here, a message bus's elsewhere): a
 * `closed` flag set once and the listeners told why. A listener that throws is reported as a
 * `SwitchyardWarning` (the event hub's guard) and never reaches the stream or bus callback that
 * saw the close, nor the listeners after it.
 */
export function createTransportEnding(name: string): TransportEnding {
  const hub = createEventHub<TransportClosed>({ name });
  let closed = false;
  return {
    get closed() {
      return closed;
    },
    onClose(listener) {
      hub.on('close', (event) => listener(event.reason));
    },
    finish(reason) {
      if (closed) return;
      closed = true;
      hub.emit({ type: 'close', reason });
    },
  };
}

/** One frame as it goes on the stream: one buffer (the header and the body), so one write. */
function encodeFrame(frame: string): Buffer {
  const length = Buffer.byteLength(frame, 'utf8');
  const buffer = Buffer.allocUnsafe(HEADER_BYTES + length);
  buffer.writeUInt32BE(length, 0);
  buffer.write(frame, HEADER_BYTES, 'utf8');
  return buffer;
}

/** Makes pipes and sockets keep (or not keep) the event loop alive; other streams have no handle to ref. */
function refStreams(streams: unknown[], keepAlive: boolean): void {
  for (const stream of streams) {
    const handle = stream as { ref?: () => void; unref?: () => void };
    if (keepAlive) handle.ref?.();
    else handle.unref?.();
  }
}

/** Incoming bytes: chunks kept until a whole frame is there, never more than one frame's worth. */
class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** The body length the last header announced; -1 while the next header is awaited. */
  private needed = -1;

  constructor(private readonly maxFrameBytes: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  /** The next whole frame's text; `undefined` until more bytes arrive; a violation for a header over the limit (the reader then holds nothing). */
  next(): string | { violation: string } | undefined {
    if (this.needed < 0) {
      if (this.buffered < HEADER_BYTES) return undefined;
      this.needed = this.take(HEADER_BYTES).readUInt32BE(0);
      if (this.needed > this.maxFrameBytes) {
        this.chunks = [];
        this.buffered = 0;
        return { violation: `protocol violation: a frame of ${this.needed} bytes is over the limit of ${this.maxFrameBytes} bytes` };
      }
    }
    if (this.buffered < this.needed) return undefined;
    const body = this.take(this.needed);
    this.needed = -1;
    return body.toString('utf8');
  }

  private take(bytes: number): Buffer {
    if (bytes === 0) return Buffer.alloc(0);
    // Fast path: the bytes are all in the first chunk (no copy).
    const first = this.chunks[0];
    if (first.length >= bytes) {
      if (first.length === bytes) this.chunks.shift();
      else this.chunks[0] = first.subarray(bytes);
      this.buffered -= bytes;
      return first.subarray(0, bytes);
    }
    const out = Buffer.allocUnsafe(bytes);
    let offset = 0;
    while (offset < bytes) {
      const chunk = this.chunks[0];
      const part = Math.min(chunk.length, bytes - offset);
      chunk.copy(out, offset, 0, part);
      offset += part;
      if (part === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(part);
    }
    this.buffered -= bytes;
    return out;
  }
}

