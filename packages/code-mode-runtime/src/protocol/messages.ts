import type { CellObservation, CellRuntimeEvent, CellToolDescriptor, JsonValue } from '@switchyard/protocol';

/**
 * The runtime protocol's messages: what a host and a runtime say to each other, the version both
 * must speak, and the validation of everything that arrives (both sides validate after parsing).
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
  /** `json`: the result's JSON text (a blob); `value`: the result inline (older hosts). Neither: no value. */
  | { t: 'call-result'; call: number; ok: true; json?: string; value?: JsonValue }
  | { t: 'call-result'; call: number; ok: false; error: string }
  | { t: 'ping'; id: number };

/** Messages from the runtime to the host. */
export type RuntimeMessage =
  | { t: 'hello'; version: number; maxFrameBytes: number; capabilities: string[]; pid?: number; engine?: string }
  | { t: 'reply'; id: number; ok: true; value?: CellObservation }
  | { t: 'reply'; id: number; ok: false; error: WireError }
  /** `inputJson`: the arguments' JSON text as the cell produced it (a blob); `input`: the arguments inline (older runtimes). */
  | { t: 'call'; call: number; session: string; cellId: string; runtimeToolCallId: string; tool: string; inputJson?: string; input?: JsonValue }
  /** The cell no longer waits for call `call` (it completed, failed or was terminated): stop the tool. */
  | { t: 'call-abort'; call: number; session: string }
  | { t: 'notify'; session: string; cellId: string; text: string }
  /** Stored writes of a cell that completed; `more: true` parts are staged until the last part commits them all. */
  | { t: 'commit'; session: string; cellId: string; writes: StoredPair[]; more: boolean }
  | { t: 'cell-closed'; session: string; cellId: string }
  | { t: 'cell-event'; session: string; event: CellRuntimeEvent }
  /** The runtime cannot go on (a version mismatch, a protocol violation it saw); it closes after sending this. */
  | { t: 'fatal'; message: string };

/**
 * The fields carried as blobs: texts that travel after the frame's JSON header as they are, never
 * JSON-escaped or parsed on the way (message type → its blob fields; each holds a string once the
 * frame is read). On the wire such a field holds the blob's length instead (UTF-16 code units),
 * and the blobs follow the header in the order of the messages and of their fields here (see
 * `connection.ts`); a sender may also put the text inline as a JSON string.
 */
export const BLOB_FIELDS: Readonly<Record<string, readonly string[]>> = {
  call: ['inputJson'],
  'call-result': ['json'],
  notify: ['text'],
};

/**
 * The fields holding stored pairs (`[key, JSON text]`) whose JSON texts are carried as blobs, the
 * same way (on the wire each pair holds its text's length instead): a stored value of many
 * megabytes is never JSON-escaped into a frame nor parsed out of one.
 */
export const PAIR_BLOB_FIELDS: Readonly<Record<string, readonly string[]>> = {
  commit: ['writes'],
  stored: ['values'],
  'create-cell': ['stored'],
};

/** What the runtime supports beside the core messages. */
export const RUNTIME_CAPABILITIES = ['typescript', 'stored-values', 'cancel', 'heap-limit', 'cpu-limit', 'wall-limit', 'output-limits'];

/** A malformed frame or message, or a broken rule of this protocol. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
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
      if (message.inputJson !== undefined) string(message, 'inputJson', t);
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
      else if (message.json !== undefined) string(message, 'json', t);
      return message as unknown as HostMessage;
    default:
      return fail(`unknown message type ${JSON.stringify(String(t)).slice(0, 40)}`);
  }
}
