import { BLOB_FIELDS, DEFAULT_MAX_FRAME_BYTES, PAIR_BLOB_FIELDS, ProtocolError, type StoredPair } from './messages';
import type { RuntimeTransport } from './framing';

/**
 * A connection: one side's batching of messages into frames, its limits, and the parsing of what
 * arrives.
 *
 * A frame is the JSON text of an array of messages, or, when its messages carry blobs (the texts
 * of `BLOB_FIELDS`: nested-call arguments and results, notify texts; and the JSON texts of the
 * stored pairs of `PAIR_BLOB_FIELDS`),
 * `#<header length>\n<header><blob><blob>…`: the header is the JSON array of messages, each blob
 * field in it holds its text's length (UTF-16 code units), and the texts follow the header in the
 * order of the messages and of their fields. A text is thus sent as it is, never JSON-escaped,
 * and read back by one slice: the JSON a cell produced for a call's arguments reaches the one
 * place that parses it unchanged. Lengths count UTF-16 code units because they survive every
 * transport's UTF-8 round trip (a lone surrogate becomes U+FFFD, one unit as well).
 */

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

/** Two brackets and the separators of a frame's array, and room for a blob header (`#`, 10 digits, a newline). */
const FRAME_OVERHEAD = 2 + 12;

/** The blob fields of each message type (a map: a message's `t` is never looked up on a prototype). */
const BLOB_FIELD_MAP: ReadonlyMap<unknown, readonly string[]> = new Map(Object.entries(BLOB_FIELDS));
const PAIR_BLOB_FIELD_MAP: ReadonlyMap<unknown, readonly string[]> = new Map(Object.entries(PAIR_BLOB_FIELDS));

/** A message as it goes into a frame: its header text, its blobs, and its bytes (separator included). */
interface EncodedMessage {
  text: string;
  blobs: string[] | undefined;
  bytes: number;
}

/** Encodes one message: its blob fields' texts are taken out (the header holds their lengths), the rest is JSON. */
function encodeMessage(message: unknown): EncodedMessage {
  let header = message as Record<string, unknown>;
  let blobs: string[] | undefined;
  let bytes = 1;
  for (const field of BLOB_FIELD_MAP.get(header.t) ?? []) {
    const value = header[field];
    if (typeof value !== 'string') continue;
    if (blobs === undefined) {
      blobs = [];
      header = { ...header };
    }
    header[field] = value.length;
    blobs.push(value);
    bytes += Buffer.byteLength(value, 'utf8');
  }
  for (const field of PAIR_BLOB_FIELD_MAP.get(header.t) ?? []) {
    const pairs = header[field];
    if (!Array.isArray(pairs) || pairs.length === 0) continue;
    if (blobs === undefined) {
      blobs = [];
      header = { ...header };
    }
    header[field] = pairs.map((pair: [string, string]) => [pair[0], pair[1].length]);
    for (const pair of pairs as Array<[string, string]>) {
      blobs.push(pair[1]);
      bytes += Buffer.byteLength(pair[1], 'utf8');
    }
  }
  const text = JSON.stringify(header);
  return { text, blobs, bytes: bytes + Buffer.byteLength(text, 'utf8') };
}

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
      const { text, blobs, bytes } = encodeMessage(message);
      if (bytes + FRAME_OVERHEAD > connection.peerMaxFrameBytes) {
        throw new ProtocolError(`a ${(message as { t: string }).t} message of ${bytes} bytes is over the peer's frame limit of ${connection.peerMaxFrameBytes} bytes`);
      }
      if (maxBacklogBytes !== undefined) {
        const backlog = connection.backlogBytes;
        if (backlog + bytes > maxBacklogBytes) throw new BacklogError(bytes, backlog, maxBacklogBytes);
      }
      outgoing.queue(text, blobs, bytes, connection.peerMaxFrameBytes);
    },
    get backlogBytes() {
      return outgoing.queuedBytes + (transport.queuedBytes?.() ?? 0);
    },
    sizeOf(message) {
      return encodeMessage(message).bytes + FRAME_OVERHEAD;
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

/**
 * The messages posted this tick, sent as one frame once the tick's promise callbacks have run (or
 * sooner when the next one would not fit). Not on the next turn of the event loop: on a worker's
 * nested call that turn costs each side a wait of 8–15 µs (the frame then waits behind the loop's
 * poll phase). The flush runs in a `process.nextTick` queued from a microtask, which Node runs only
 * after the microtask queue is empty: results whose promises settle in the same tick still share
 * one frame. A `setImmediate` flushes too, whichever comes first: code that isolated-vm calls back
 * (a cell's `post`) runs outside Node's callback scope, where the tick queue may wait.
 */
class OutgoingFrames {
  private texts: string[] = [];
  private blobs: string[] = [];
  private bytes = FRAME_OVERHEAD;
  private scheduled = false;
  /** Counts scheduled flushes: a flush scheduled for an earlier frame never sends a later one early. */
  private round = 0;
  private stopped = false;

  constructor(private readonly transport: RuntimeTransport) {}

  /** Bytes waiting for this tick's frame. */
  get queuedBytes(): number {
    return this.bytes - FRAME_OVERHEAD;
  }

  /** Adds one encoded message of `bytes` bytes (its separator and blobs included); sends the queue first when the frame would pass `maxFrameBytes`. */
  queue(text: string, blobs: string[] | undefined, bytes: number, maxFrameBytes: number): void {
    if (this.bytes + bytes > maxFrameBytes) this.flush();
    this.texts.push(text);
    if (blobs !== undefined) for (const blob of blobs) this.blobs.push(blob);
    this.bytes += bytes;
    if (!this.scheduled) {
      this.scheduled = true;
      const round = ++this.round;
      const flushRound = () => {
        if (this.scheduled && this.round === round) this.flush();
      };
      queueMicrotask(() => process.nextTick(flushRound));
      setImmediate(flushRound);
    }
  }

  flush(): void {
    this.scheduled = false;
    if (this.texts.length === 0 || this.stopped) return;
    const frame = joinFrame(this.texts, this.blobs);
    this.texts = [];
    this.blobs = [];
    this.bytes = FRAME_OVERHEAD;
    this.transport.send(frame);
  }

  /** The connection ended: what is queued is dropped and nothing more is sent. */
  stop(): void {
    this.stopped = true;
    this.texts = [];
    this.blobs = [];
  }
}

/** Hands the messages of one incoming frame to the connection's handler, in order, until one breaks a rule or the connection ends. */
function receiveFrame<In>(frame: string, options: ConnectionOptions<In>, connection: Connection<unknown>): void {
  const messages = readFrame(frame);
  if (typeof messages === 'string') return connection.fail(`protocol violation: ${messages}`);
  for (const value of messages) {
    if (connection.closed) return;
    const problem = receiveMessage(value, options);
    if (problem !== undefined) return connection.fail(problem);
  }
}

/**
 * The messages of one frame's text, their blob fields holding their texts (for transports and
 * tests that look into frames). Throws `ProtocolError` for a malformed frame; the messages are
 * not validated.
 */
export function parseFrame(frame: string): unknown[] {
  const messages = readFrame(frame);
  if (typeof messages === 'string') throw new ProtocolError(messages);
  return messages;
}

/** The text of one frame holding `messages`, their blob fields carried as blobs (the inverse of {@link parseFrame}). */
export function formatFrame(messages: readonly unknown[]): string {
  const texts: string[] = [];
  const blobs: string[] = [];
  for (const message of messages) {
    const encoded = encodeMessage(message);
    texts.push(encoded.text);
    if (encoded.blobs !== undefined) blobs.push(...encoded.blobs);
  }
  return joinFrame(texts, blobs);
}

/** A frame's text: the header (the array of message texts), then the blobs. */
function joinFrame(texts: readonly string[], blobs: readonly string[]): string {
  const header = `[${texts.join(',')}]`;
  return blobs.length === 0 ? header : `#${header.length}\n${header}${blobs.join('')}`;
}

/** The messages of a frame, their blob fields holding their texts; or why the frame is malformed. */
function readFrame(frame: string): unknown[] | string {
  let header = frame;
  let blobsAt = -1;
  if (frame.charCodeAt(0) === 0x23 /* # */) {
    const newline = frame.indexOf('\n');
    const length = newline > 1 && newline <= 12 ? Number(frame.slice(1, newline)) : Number.NaN;
    if (!Number.isSafeInteger(length) || length < 0 || newline + 1 + length > frame.length) return 'a frame whose blob header is malformed';
    header = frame.slice(newline + 1, newline + 1 + length);
    blobsAt = newline + 1 + length;
  }
  let messages: unknown;
  try {
    messages = JSON.parse(header);
  } catch {
    return 'a frame that is not JSON';
  }
  if (!Array.isArray(messages)) return 'a frame that is not an array of messages';
  return blobsAt < 0 ? messages : (attachBlobs(messages, frame, blobsAt) ?? messages);
}

/** Puts each blob's text into the field that references it (by its length, in order); returns why that failed, if it did. */
function attachBlobs(messages: unknown[], frame: string, at: number): string | undefined {
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue; // validation names it
    const record = message as Record<string, unknown>;
    for (const field of BLOB_FIELD_MAP.get(record.t) ?? []) {
      const length = record[field];
      if (typeof length !== 'number') continue; // absent or inline: validation checks it
      if (!Number.isSafeInteger(length) || length < 0 || at + length > frame.length) return 'a blob that passes the end of its frame';
      record[field] = frame.slice(at, at + length);
      at += length;
    }
    const taken = attachPairBlobs(record, frame, at);
    if (typeof taken === 'string') return taken;
    at = taken;
  }
  return at === frame.length ? undefined : 'a frame with text after its blobs';
}

/** The stored pairs of one message whose texts are blobs (`[key, length]`) get their texts; returns where the next blob starts, or why that failed. */
function attachPairBlobs(record: Record<string, unknown>, frame: string, at: number): number | string {
  for (const field of PAIR_BLOB_FIELD_MAP.get(record.t) ?? []) {
    const pairs = record[field];
    if (!Array.isArray(pairs)) continue; // validation names it
    for (const pair of pairs) {
      if (!Array.isArray(pair) || typeof pair[1] !== 'number') continue; // inline, or malformed: validation checks it
      const length = pair[1];
      if (!Number.isSafeInteger(length) || length < 0 || at + length > frame.length) return 'a blob that passes the end of its frame';
      pair[1] = frame.slice(at, at + length);
      at += length;
    }
  }
  return at;
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

