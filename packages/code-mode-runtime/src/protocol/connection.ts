import { DEFAULT_MAX_FRAME_BYTES, ProtocolError, type StoredPair } from './messages';
import type { RuntimeTransport } from './framing';

/** A connection: one side's batching of messages into frames, its limits, and the parsing of what arrives. */

/** Options of {@link createConnection}. */
export interface ConnectionOptions<In> {
  transport: RuntimeTransport;
  /** Validates one incoming message (throws `ProtocolError`). */
  parse(value: unknown): In;
  /** Called for every valid incoming message, in order. */
  onMessage(message: In): void;
  /** Called once when the connection ended: `cause` says why (a protocol violation, the transport's reason). */
  onClose(cause: string | undefined): void;
}

/** One side of a connection: queues messages and sends each tick's messages as one frame. */
export interface Connection<Out> {
  /**
   * Queues a message for this tick's frame. Throws `ProtocolError` when the message alone is bigger
   * than the peer accepts, and {@link BacklogError} (sending nothing) when `maxBacklogBytes` is given
   * and the message would put more than that many bytes on their way to the peer.
   */
  post(message: Out, maxBacklogBytes?: number): void;
  /** Bytes posted that the peer has not taken yet (this tick's frame and the transport's queue). */
  readonly backlogBytes: number;
  /** Encodes `message` and returns its size in bytes, for senders that must check before posting. */
  sizeOf(message: Out): number;
  /** The biggest frame the peer accepts (bytes); set from its `hello`. */
  peerMaxFrameBytes: number;
  /** Ends the connection with `cause` (a protocol violation); the peer sees the transport close. */
  fail(cause: string): void;
  /** Flushes queued messages and closes the transport. */
  close(): void;
  readonly closed: boolean;
}

/** A message not sent because the bytes on their way to the peer would pass the sender's limit. */
export class BacklogError extends Error {
  constructor(
    readonly bytes: number,
    readonly backlog: number,
    readonly limit: number,
  ) {
    super(`a message of ${bytes} bytes would put ${backlog + bytes} bytes on their way to the runtime, over the limit of ${limit} bytes`);
    this.name = 'BacklogError';
  }
}

/** Two brackets and the separators of a frame's array. */
const FRAME_OVERHEAD = 2;

/** Creates one side of a connection over a transport (see the rules at the top of this module). */
export function createConnection<In, Out>(options: ConnectionOptions<In>): Connection<Out> {
  const { transport } = options;
  const outgoing = new OutgoingFrames(transport);
  let closed = false;
  const end = (cause: string | undefined) => {
    if (closed) return;
    closed = true;
    outgoing.stop();
    options.onClose(cause);
  };
  transport.onFrame((frame) => {
    if (!closed) receiveFrame(frame, options, connection);
  });
  transport.onClose((reason) => end(reason));
  const connection: Connection<Out> = {
    peerMaxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
    post(message, maxBacklogBytes) {
      if (closed) return;
      const text = JSON.stringify(message);
      const bytes = Buffer.byteLength(text, 'utf8') + 1;
      if (bytes + FRAME_OVERHEAD > connection.peerMaxFrameBytes) {
        throw new ProtocolError(`a ${(message as { t: string }).t} message of ${bytes} bytes is over the peer's frame limit of ${connection.peerMaxFrameBytes} bytes`);
      }
      if (maxBacklogBytes !== undefined) {
        const backlog = connection.backlogBytes;
        if (backlog + bytes > maxBacklogBytes) throw new BacklogError(bytes, backlog, maxBacklogBytes);
      }
      outgoing.queue(text, bytes, connection.peerMaxFrameBytes);
    },
    get backlogBytes() {
      return outgoing.queuedBytes + (transport.queuedBytes?.() ?? 0);
    },
    sizeOf(message) {
      return Buffer.byteLength(JSON.stringify(message), 'utf8') + 1 + FRAME_OVERHEAD;
    },
    fail(cause) {
      if (closed) return;
      end(cause);
      transport.close();
    },
    close() {
      if (closed) return;
      outgoing.flush();
      closed = true;
      outgoing.stop();
      transport.close();
      options.onClose(undefined);
    },
    get closed() {
      return closed;
    },
  };
  return connection;
}

/** The messages posted this tick, sent as one frame on the next turn of the event loop (or sooner when the next one would not fit). */
class OutgoingFrames {
  private texts: string[] = [];
  private bytes = FRAME_OVERHEAD;
  private scheduled = false;
  private stopped = false;

  constructor(private readonly transport: RuntimeTransport) {}

  /** Bytes waiting for this tick's frame. */
  get queuedBytes(): number {
    return this.bytes - FRAME_OVERHEAD;
  }

  /** Adds one encoded message of `bytes` bytes (its separator included); sends the queue first when the frame would pass `maxFrameBytes`. */
  queue(text: string, bytes: number, maxFrameBytes: number): void {
    if (this.bytes + bytes > maxFrameBytes) this.flush();
    this.texts.push(text);
    this.bytes += bytes;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    if (this.texts.length === 0 || this.stopped) return;
    const frame = `[${this.texts.join(',')}]`;
    this.texts = [];
    this.bytes = FRAME_OVERHEAD;
    this.transport.send(frame);
  }

  /** The connection ended: what is queued is dropped and nothing more is sent. */
  stop(): void {
    this.stopped = true;
    this.texts = [];
  }
}

/** Hands the messages of one incoming frame to the connection's handler, in order, until one breaks a rule or the connection ends. */
function receiveFrame<In>(frame: string, options: ConnectionOptions<In>, connection: Connection<unknown>): void {
  let messages: unknown;
  try {
    messages = JSON.parse(frame);
  } catch {
    return connection.fail('protocol violation: a frame that is not JSON');
  }
  if (!Array.isArray(messages)) return connection.fail('protocol violation: a frame that is not an array of messages');
  for (const value of messages) {
    if (connection.closed) return;
    const problem = receiveMessage(value, options);
    if (problem !== undefined) return connection.fail(problem);
  }
}

/** Validates and handles one message; returns why the connection must end, if it must. */
function receiveMessage<In>(value: unknown, options: ConnectionOptions<In>): string | undefined {
  let message: In;
  try {
    message = options.parse(value);
  } catch (error) {
    return `protocol violation: ${(error as Error).message}`;
  }
  try {
    options.onMessage(message);
  } catch (error) {
    // A handler that throws must not take its process down: this connection ends instead.
    return `internal error while handling a ${(message as { t?: unknown }).t} message: ${(error as Error)?.message ?? String(error)}`;
  }
  return undefined;
}

/**
 * Splits stored values into parts whose JSON stays under `maxBytes` each (a value bigger than
 * that is its own part; the caller checks single parts with `Connection.sizeOf`).
 */
export function splitStoredPairs(pairs: readonly StoredPair[], maxBytes: number): StoredPair[][] {
  const parts: StoredPair[][] = [];
  let current: StoredPair[] = [];
  let bytes = 0;
  for (const pair of pairs) {
    // Each character is at most 6 bytes of JSON (`\uXXXX`); a cheap bound that never underestimates much for text.
    const size = (pair[0].length + pair[1].length) * 3 + 8;
    if (current.length > 0 && bytes + size > maxBytes) {
      parts.push(current);
      current = [];
      bytes = 0;
    }
    current.push(pair);
    bytes += size;
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

