import type { CellObservation, CellRuntimeEvent, CellToolDescriptor, JsonValue } from '@switchyard/protocol';
import { createEventHub } from '@switchyard/kit';

/**
 * The runtime protocol: how a host (the agent's process) and a runtime (the isolate engine, in a
 * worker process today, on another machine later) speak. Transport-neutral: a transport carries
 * frames, each frame one JSON array of messages; this module defines the messages, the version
 * handshake, validation of everything that arrives, and the framing over a duplex byte stream
 * (stdio pipes, a socket). A message bus that carries whole frames (NATS) implements
 * {@link RuntimeTransport} directly and reuses the rest.
 *
 * Rules:
 * - The host speaks first (`hello`); the runtime answers `hello` with its version, capabilities
 *   and limits, or `fatal` and closes. Versions must be equal.
 * - Every request (a message with an `id`) is answered by exactly one `reply` with that `id`;
 *   every `call` (a nested tool call from a cell) by exactly one `call-result`. A host request
 *   may be cancelled (`cancel`): it is still answered once (with `ABORTED` when the cancel won).
 * - A frame is at most the receiver's `maxFrameBytes` (announced in `hello`); a bigger frame, a
 *   frame that is not a JSON array, or a message that does not validate is a protocol violation
 *   and ends the connection. Senders split batches and stored values across frames; a single
 *   value too large to send fails its own operation, not the connection.
 * - Messages posted in the same tick travel in one frame (nested calls started together, the
 *   results that answer them).
 */

/** The protocol version both sides must speak. */
export const RUNTIME_PROTOCOL_VERSION = 1;

/** Default and smallest frame limits (bytes of one frame's JSON text, UTF-8). */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;
export const MIN_MAX_FRAME_BYTES = 64 * 1024;

/** Per-session engine settings the host sends with `open-session` (the runtime enforces them per cell). */
export interface EngineSessionOptions {
  heapMb: number;
  cpuTimeMs?: number;
  wallTimeMs?: number;
  maxCells: number;
  maxInFlightCalls: number;
  maxInFlightArgumentChars: number;
  maxOutputBytes: number;
  maxOutputItems: number;
  maxTimers: number;
  storedValues: boolean;
  /** Host-side limits (the agent host enforces them; a runtime ignores them). Defaults: see `hostLimits`. */
  maxInFlightResultBytes?: number;
  maxStoredBytes?: number;
  maxStoredKeys?: number;
}

/** A stored value as it travels: `[key, JSON text]`. */
export type StoredPair = [string, string];

/** An error as it travels in a reply: a `SwitchyardError` code and message (and the cell an aborted creation made). */
export interface WireError {
  code: string;
  message: string;
  cellId?: string;
}

/** Messages from the host to the runtime. */
export type HostMessage =
  | { t: 'hello'; version: number; maxFrameBytes: number }
  | { t: 'open-session'; id: number; session: string; options: EngineSessionOptions }
  | { t: 'close-session'; id: number; session: string }
  /** Part of the stored-values snapshot of the cell `cellId` that the next `create-cell` of that id starts with. */
  | { t: 'stored'; session: string; cellId: string; values: StoredPair[] }
  | {
      t: 'create-cell';
      id: number;
      session: string;
      cellId: string;
      source: string;
      tools: CellToolDescriptor[];
      yieldTimeMs: number;
      typescript?: boolean;
      stored: StoredPair[];
      /** The creation's idempotency key: a `create-cell` repeating it (same source) answers with the original cell. */
      key?: string;
    }
  /** `key`: the observation's idempotency key: an `observe` repeating it answers with the same observation. */
  | { t: 'observe'; id: number; session: string; cellId: string; yieldTimeMs: number; key?: string }
  | { t: 'terminate'; id: number; session: string; cellId: string }
  /** Cancels the pending `create-cell` / `observe` request `id` (a dropped observer). */
  | { t: 'cancel'; id: number }
  | { t: 'call-result'; call: number; ok: true; value?: JsonValue }
  | { t: 'call-result'; call: number; ok: false; error: string }
  | { t: 'ping'; id: number };

/** Messages from the runtime to the host. */
export type RuntimeMessage =
  | { t: 'hello'; version: number; maxFrameBytes: number; capabilities: string[]; pid?: number; engine?: string }
  | { t: 'reply'; id: number; ok: true; value?: CellObservation }
  | { t: 'reply'; id: number; ok: false; error: WireError }
  | { t: 'call'; call: number; session: string; cellId: string; runtimeToolCallId: string; tool: string; input?: JsonValue }
  /** The cell no longer waits for call `call` (it completed, failed or was terminated): stop the tool. */
  | { t: 'call-abort'; call: number; session: string }
  | { t: 'notify'; session: string; cellId: string; text: string }
  /** Stored writes of a cell that completed; `more: true` parts are staged until the last part commits them all. */
  | { t: 'commit'; session: string; cellId: string; writes: StoredPair[]; more: boolean }
  | { t: 'cell-closed'; session: string; cellId: string }
  | { t: 'cell-event'; session: string; event: CellRuntimeEvent }
  /** The runtime cannot go on (a version mismatch, a protocol violation it saw); it closes after sending this. */
  | { t: 'fatal'; message: string };

/** What the runtime supports beside the core messages. */
export const RUNTIME_CAPABILITIES = ['typescript', 'stored-values', 'cancel', 'heap-limit', 'cpu-limit', 'wall-limit', 'output-limits'];

/** A malformed frame or message, or a broken rule of this protocol. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

// ---- transports -----------------------------------------------------------------------

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

// ---- a connection: batching, limits, parsing ------------------------------------------

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

// ---- validation -------------------------------------------------------------------------

type Checked = Record<string, unknown>;

function fail(message: string): never {
  throw new ProtocolError(message);
}

function object(value: unknown, what: string): Checked {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(`${what} is not an object`);
  return value as Checked;
}

function string(message: Checked, key: string, type: unknown): string {
  const value = message[key];
  if (typeof value !== 'string') fail(`${String(type)}.${key} is not a string`);
  return value;
}

function integer(message: Checked, key: string, type: unknown): number {
  const value = message[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) fail(`${String(type)}.${key} is not a non-negative integer`);
  return value;
}

function boolean(message: Checked, key: string, type: unknown): boolean {
  const value = message[key];
  if (typeof value !== 'boolean') fail(`${String(type)}.${key} is not a boolean`);
  return value;
}

function pairs(message: Checked, key: string, type: unknown): StoredPair[] {
  const value = message[key];
  if (!Array.isArray(value)) fail(`${String(type)}.${key} is not an array`);
  for (const pair of value) {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
      fail(`${String(type)}.${key} holds an entry that is not [string, string]`);
    }
  }
  return value as StoredPair[];
}

const CONTENT_KINDS = new Set(['yielded', 'completed', 'terminated']);
const IMAGE_DETAILS = new Set(['auto', 'low', 'high', 'original']);

function observation(value: unknown): CellObservation {
  const checked = object(value, 'reply.value');
  if (!CONTENT_KINDS.has(checked.kind as string)) fail('reply.value.kind is not yielded, completed or terminated');
  string(checked, 'cellId', 'reply.value');
  if (typeof checked.wallTimeMs !== 'number' || !Number.isFinite(checked.wallTimeMs)) fail('reply.value.wallTimeMs is not a number');
  if (checked.error !== undefined && (checked.kind !== 'completed' || typeof checked.error !== 'string')) fail('reply.value.error is not a string of a completed cell');
  if (!Array.isArray(checked.items)) fail('reply.value.items is not an array');
  for (const item of checked.items) {
    const part = object(item, 'an output item');
    if (part.type === 'input_text' && typeof part.text === 'string') continue;
    if (part.type === 'input_image' && typeof part.image_url === 'string' && (part.detail === undefined || IMAGE_DETAILS.has(part.detail as string))) continue;
    fail('an output item is neither input_text nor input_image');
  }
  return checked as unknown as CellObservation;
}

function cellEvent(value: unknown): CellRuntimeEvent {
  const event = object(value, 'cell-event.event');
  if (event.type === 'cell-limit-exceeded') {
    string(event, 'cellId', 'cell-limit-exceeded');
    string(event, 'message', 'cell-limit-exceeded');
    return { type: 'cell-limit-exceeded', cellId: event.cellId as string, message: event.message as string };
  }
  return fail('cell-event.event.type is not cell-limit-exceeded');
}

/** Validates a message from the runtime (the host side calls this on everything that arrives). */
export function parseRuntimeMessage(value: unknown): RuntimeMessage {
  const message = object(value, 'a message');
  const t = message.t;
  switch (t) {
    case 'hello': {
      integer(message, 'version', t);
      integer(message, 'maxFrameBytes', t);
      if (!Array.isArray(message.capabilities) || !message.capabilities.every((c) => typeof c === 'string')) fail('hello.capabilities is not an array of strings');
      return message as unknown as RuntimeMessage;
    }
    case 'reply': {
      integer(message, 'id', t);
      if (boolean(message, 'ok', t)) {
        if (message.value !== undefined) observation(message.value);
      } else {
        const error = object(message.error, 'reply.error');
        string(error, 'code', 'reply.error');
        string(error, 'message', 'reply.error');
        if (error.cellId !== undefined) string(error, 'cellId', 'reply.error');
      }
      return message as unknown as RuntimeMessage;
    }
    case 'call':
      integer(message, 'call', t);
      string(message, 'session', t);
      string(message, 'cellId', t);
      string(message, 'runtimeToolCallId', t);
      string(message, 'tool', t);
      return message as unknown as RuntimeMessage;
    case 'call-abort':
      integer(message, 'call', t);
      string(message, 'session', t);
      return message as unknown as RuntimeMessage;
    case 'notify':
      string(message, 'session', t);
      string(message, 'cellId', t);
      string(message, 'text', t);
      return message as unknown as RuntimeMessage;
    case 'commit':
      string(message, 'session', t);
      string(message, 'cellId', t);
      pairs(message, 'writes', t);
      boolean(message, 'more', t);
      return message as unknown as RuntimeMessage;
    case 'cell-closed':
      string(message, 'session', t);
      string(message, 'cellId', t);
      return message as unknown as RuntimeMessage;
    case 'cell-event':
      string(message, 'session', t);
      return { t, session: message.session as string, event: cellEvent(message.event) };
    case 'fatal':
      string(message, 'message', t);
      return message as unknown as RuntimeMessage;
    default:
      return fail(`unknown message type ${JSON.stringify(String(t)).slice(0, 40)}`);
  }
}

function engineOptions(value: unknown): EngineSessionOptions {
  const options = object(value, 'open-session.options');
  for (const key of ['heapMb', 'maxCells', 'maxInFlightCalls', 'maxInFlightArgumentChars', 'maxOutputBytes', 'maxOutputItems', 'maxTimers']) {
    integer(options, key, 'open-session.options');
  }
  for (const key of ['cpuTimeMs', 'wallTimeMs']) if (options[key] !== undefined) integer(options, key, 'open-session.options');
  boolean(options, 'storedValues', 'open-session.options');
  return options as unknown as EngineSessionOptions;
}

function tools(message: Checked): CellToolDescriptor[] {
  const value = message.tools;
  if (!Array.isArray(value)) fail('create-cell.tools is not an array');
  for (const tool of value) {
    const checked = object(tool, 'a create-cell tool');
    string(checked, 'name', 'create-cell.tools[]');
    string(checked, 'description', 'create-cell.tools[]');
    if (checked.kind !== 'function' && checked.kind !== 'freeform') fail('create-cell.tools[].kind is not function or freeform');
    // the TypeScript declaration a cell reads as ALL_TOOLS[i].declaration (absent: the runtime renders an untyped one)
    if (checked.declaration !== undefined) string(checked, 'declaration', 'create-cell.tools[]');
  }
  return value as CellToolDescriptor[];
}

/** Validates a message from the host (the runtime side calls this on everything that arrives). */
export function parseHostMessage(value: unknown): HostMessage {
  const message = object(value, 'a message');
  const t = message.t;
  switch (t) {
    case 'hello':
      integer(message, 'version', t);
      integer(message, 'maxFrameBytes', t);
      return message as unknown as HostMessage;
    case 'open-session':
      integer(message, 'id', t);
      string(message, 'session', t);
      engineOptions(message.options);
      return message as unknown as HostMessage;
    case 'close-session':
      integer(message, 'id', t);
      string(message, 'session', t);
      return message as unknown as HostMessage;
    case 'stored':
      string(message, 'session', t);
      string(message, 'cellId', t);
      pairs(message, 'values', t);
      return message as unknown as HostMessage;
    case 'create-cell':
      integer(message, 'id', t);
      string(message, 'session', t);
      string(message, 'cellId', t);
      string(message, 'source', t);
      tools(message);
      integer(message, 'yieldTimeMs', t);
      if (message.typescript !== undefined) boolean(message, 'typescript', t);
      pairs(message, 'stored', t);
      if (message.key !== undefined) string(message, 'key', t);
      return message as unknown as HostMessage;
    case 'observe':
      integer(message, 'id', t);
      string(message, 'session', t);
      string(message, 'cellId', t);
      integer(message, 'yieldTimeMs', t);
      if (message.key !== undefined) string(message, 'key', t);
      return message as unknown as HostMessage;
    case 'terminate':
      integer(message, 'id', t);
      string(message, 'session', t);
      string(message, 'cellId', t);
      return message as unknown as HostMessage;
    case 'cancel':
    case 'ping':
      integer(message, 'id', t);
      return message as unknown as HostMessage;
    case 'call-result':
      integer(message, 'call', t);
      if (!boolean(message, 'ok', t)) string(message, 'error', t);
      return message as unknown as HostMessage;
    default:
      return fail(`unknown message type ${JSON.stringify(String(t)).slice(0, 40)}`);
  }
}
