import type { SwitchyardErrorCode } from '@switchyard/protocol';
import { messageTable } from '@switchyard/kit/internal';
import { AGENT_HELD_LIMITS, CELL_LIMIT_WIRE_SHAPE } from '../cell-limits';

type Infer<F> = messageTable.Infer<F>;
type MessagesOf<Table> = messageTable.MessagesOf<Table>;
const { arrayOf, blob, blobFieldsOf, blobPairs, boolean, compileTable, finite, integer, json, literal, message, object, optional, outcome, string, variants } = messageTable;

/** A malformed frame or message, or a broken rule of this protocol. */
export const ProtocolError = messageTable.ProtocolError;
export type ProtocolError = messageTable.ProtocolError;

/**
 * The runtime protocol's messages: what a host and a runtime say to each other, the version both
 * must speak, and the validation of everything that arrives (both sides validate after parsing).
 */

/** The protocol version both sides must speak (2: durable cells — `resume-cell`, `journal`, seeds). */
export const RUNTIME_PROTOCOL_VERSION = 2;

/** Default and smallest frame limits (bytes of one frame's JSON text, UTF-8). */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;
export const MIN_MAX_FRAME_BYTES = 64 * 1024;

/**
 * The error codes a runtime may send in `reply.error.code`: every `SwitchyardErrorCode` (checked
 * below at compile time), one list for the validation and the documentation. A reply with another
 * code is a protocol violation, like any other field out of its kind: both sides speak the same
 * protocol version, so a new code is a new version.
 */
export const WIRE_ERROR_CODES = [
  'RESPOND_TO_MODEL', 'TOOL_NOT_FOUND', 'INVALID_INPUT', 'HOOK_BLOCKED', 'ABORTED', 'FATAL', 'INCOMPATIBLE_PAYLOAD',
  'CELL_NOT_FOUND', 'LIMIT_EXCEEDED', 'SANDBOX_UNAVAILABLE', 'APPROVAL_DENIED', 'SHUTTING_DOWN', 'CONFIG', 'MODEL_ERROR', 'INTERNAL',
  'INVALID_JOURNAL',
  'BUSY', 'LEASE_HELD', 'STORE_CORRUPT', 'STORE_VERSION', 'STORE_FAILED',
] as const satisfies readonly SwitchyardErrorCode[];

/** Fails to compile when `SwitchyardErrorCode` gains a code this list lacks. */
type MissingWireCodes = Exclude<SwitchyardErrorCode, (typeof WIRE_ERROR_CODES)[number]>;
const everyCodeOnTheWire: [MissingWireCodes] extends [never] ? true : MissingWireCodes = true;
void everyCodeOnTheWire;

// ---- the nested kinds ----------------------------------------------------------------------

const ENGINE_SESSION_OPTIONS = object(
  'EngineSessionOptions',
  `Per-session engine settings: the per-cell limits of \`CELL_LIMITS\` (the runtime enforces them per cell; ${AGENT_HELD_LIMITS.map((name) => `\`${name}\``).join(', ')} are the agent host's, and a runtime ignores them) and \`storedValues\`.`,
  { ...CELL_LIMIT_WIRE_SHAPE, storedValues: boolean },
);

const CELL_TOOL_DESCRIPTOR = object('CellToolDescriptor', 'A tool a cell may call (`tools.<name>`); `declaration` is its TypeScript declaration (absent: the runtime renders an untyped one).', {
  name: string,
  description: string,
  kind: literal('function', 'freeform'),
  declaration: optional(string),
  idempotent: optional(boolean),
});

const JOURNAL_CALL = object('JournalCall', 'A nested call of a cell\'s journal: its id (`tool-N`), the tool and the hash of its arguments\' JSON text (first 16 hex digits of the SHA-256).', {
  id: string,
  tool: string,
  hash: string,
});

const JOURNAL_OBSERVED = object('JournalObserved', 'What the host already handed out of a cell: output items and notify texts, each with the chained SHA-256 of them (a replay drops them and compares).', {
  items: integer,
  itemsHash: string,
  notifies: integer,
  notifiesHash: string,
});

const CONTENT_ITEM = variants('ContentItem', 'One output item of a cell.', 'type', {
  input_text: { text: string },
  input_image: { image_url: string, detail: optional(literal('auto', 'low', 'high', 'original')) },
});

const CELL_OBSERVATION = variants('CellObservation', 'What a cell produced since the last observation, and whether it still runs.', 'kind', {
  yielded: { cellId: string, items: arrayOf(CONTENT_ITEM), wallTimeMs: finite },
  completed: { cellId: string, items: arrayOf(CONTENT_ITEM), error: optional(string), wallTimeMs: finite },
  terminated: { cellId: string, items: arrayOf(CONTENT_ITEM), wallTimeMs: finite },
});

const WIRE_ERROR = object('WireError', 'A failed request: a `SwitchyardError` code (one of `WIRE_ERROR_CODES`) and message, and the cell a cancelled creation made.', {
  code: { ...literal(...WIRE_ERROR_CODES), doc: 'error code (below)' },
  message: string,
  cellId: optional(string),
});

const CELL_EVENT = variants('CellEvent', 'What a runtime reports about a cell beside observations.', 'type', {
  'cell-limit-exceeded': { cellId: string, message: string },
});

// ---- the message table ---------------------------------------------------------------------

/** Messages from the host to the runtime: name (`t`) → meaning and fields. */
export const HOST_MESSAGES = {
  hello: message('Opens the connection: the protocol version the host speaks and the biggest frame it accepts (bytes).', { version: integer, maxFrameBytes: integer }),
  'open-session': message('Opens session `session` with its engine settings.', { id: integer, session: string, options: ENGINE_SESSION_OPTIONS }),
  'close-session': message('Terminates the session\'s cells and forgets it.', { id: integer, session: string }),
  stored: message('Part of the stored-values snapshot of cell `cellId` that the next `create-cell` of that id starts with (a snapshot too big for one frame).', {
    session: string,
    cellId: string,
    values: blobPairs,
  }),
  'create-cell': message('Starts cell `cellId` and answers its first observation. `key`: the idempotency key (a repeat with the same source answers with the original cell).', {
    id: integer,
    session: string,
    cellId: string,
    source: string,
    tools: arrayOf(CELL_TOOL_DESCRIPTOR),
    yieldTimeMs: integer,
    typescript: optional(boolean),
    stored: blobPairs,
    key: optional(string),
    seed: optional(string),
  }),
  'resume-cell': message(
    'Re-runs cell `cellId` from its journal in a fresh isolate (a replay): `entries` in order, the journaled `calls` checked and not sent again, `results` (`[id, "+" JSON text | "-" error]`) of the delivered ones, output in `observed` not emitted again; past the journal the cell is live. With `yieldTimeMs` the reply is the cell\'s observation, else empty once it started. A journal that cannot be read fails with `INVALID_JOURNAL`.',
    {
      id: integer,
      session: string,
      cellId: string,
      source: string,
      tools: arrayOf(CELL_TOOL_DESCRIPTOR),
      typescript: optional(boolean),
      stored: blobPairs,
      seed: string,
      entries: blob,
      calls: arrayOf(JOURNAL_CALL),
      results: blobPairs,
      observed: JOURNAL_OBSERVED,
      committed: boolean,
      yieldTimeMs: optional(integer),
    },
  ),
  observe: message('Answers the cell\'s next observation (`wait`). `key`: the idempotency key (a repeat answers with the same observation).', {
    id: integer,
    session: string,
    cellId: string,
    yieldTimeMs: integer,
    key: optional(string),
  }),
  terminate: message('Terminates the cell; answers its last observation.', { id: integer, session: string, cellId: string }),
  cancel: message('Cancels the pending `create-cell` / `observe` request `id` (still answered once: `ABORTED` when the cancel won).', { id: integer }),
  'call-result': outcome(
    'Answers nested call `call`: its result as JSON text (`json`) or inline (`value`; neither: no value), or the text the cell\'s promise rejects with.',
    { call: integer },
    { json: optional(blob), value: optional(json) },
    { error: string },
  ),
  ping: message('Asks for an empty reply (liveness).', { id: integer }),
} as const;

/** Messages from the runtime to the host: name (`t`) → meaning and fields. */
export const RUNTIME_MESSAGES = {
  hello: message('Answers the host\'s `hello`: the runtime\'s version, biggest frame, capabilities, process id and engine.', {
    version: integer,
    maxFrameBytes: integer,
    capabilities: arrayOf(string),
    pid: optional(integer),
    engine: optional(string),
  }),
  reply: outcome('Answers request `id` (once): an observation (none for `open-session`, `close-session`, `ping`), or an error.', { id: integer }, { value: optional(CELL_OBSERVATION) }, { error: WIRE_ERROR }),
  call: message('A nested tool call of cell `cellId` (`await tools.<tool>(input)`), answered by one `call-result`.', {
    call: integer,
    session: string,
    cellId: string,
    runtimeToolCallId: string,
    tool: string,
    inputJson: optional(blob),
    input: optional(json),
  }),
  'call-abort': message('The cell no longer waits for call `call` (it completed, failed or was terminated): stop the tool.', { call: integer, session: string }),
  notify: message('`notify(text)` from a cell: the host injects the text into the active turn.', { session: string, cellId: string, text: blob }),
  commit: message('Stored writes of a cell that completed; `more: true` parts are staged until the last part commits them all.', {
    session: string,
    cellId: string,
    writes: blobPairs,
    more: boolean,
  }),
  'cell-closed': message('Cell `cellId` is gone (its output observed, or terminated).', { session: string, cellId: string }),
  'cell-event': message('A report about a cell beside its observations (a limit it broke).', { session: string, event: CELL_EVENT }),
  journal: message('Journal entries of cell `cellId` (what entered it, in order: `CellJournalRecord.entries`), sent before any message that could depend on them.', {
    session: string,
    cellId: string,
    entries: blob,
  }),
  fatal: message('The runtime cannot go on (a version mismatch, a protocol violation it saw); it closes after sending this.', { message: string }),
} as const;

/** Messages from the host to the runtime (derived from {@link HOST_MESSAGES}). */
export type HostMessage = MessagesOf<typeof HOST_MESSAGES>;

/** Messages from the runtime to the host (derived from {@link RUNTIME_MESSAGES}). */
export type RuntimeMessage = MessagesOf<typeof RUNTIME_MESSAGES>;

/** Per-session engine settings the host sends with `open-session` (the runtime enforces them per cell). */
export type EngineSessionOptions = Infer<typeof ENGINE_SESSION_OPTIONS>;

/** A stored value as it travels: `[key, JSON text]`. */
export type StoredPair = [string, string];

/** An error as it travels in a reply: a code of {@link WIRE_ERROR_CODES}, a message, and the cell an aborted creation made. */
export type WireError = Infer<typeof WIRE_ERROR>;

/** The named kinds the tables use, for the documentation (in the order they are documented). */
export const PROTOCOL_KINDS = [ENGINE_SESSION_OPTIONS, CELL_TOOL_DESCRIPTOR, JOURNAL_CALL, JOURNAL_OBSERVED, CELL_OBSERVATION, CONTENT_ITEM, WIRE_ERROR, CELL_EVENT];

/**
 * The fields carried as blobs: texts that travel after the frame's JSON header as they are, never
 * JSON-escaped or parsed on the way (message type → its blob fields; each holds a string once the
 * frame is read). On the wire such a field holds the blob's length instead (UTF-16 code units),
 * and the blobs follow the header in the order of the messages and of their fields here (see
 * `connection.ts`); a sender may also put the text inline as a JSON string.
 */
export const BLOB_FIELDS: Readonly<Record<string, readonly string[]>> = { ...blobFieldsOf(HOST_MESSAGES, 'text'), ...blobFieldsOf(RUNTIME_MESSAGES, 'text') };

/**
 * The fields holding stored pairs (`[key, JSON text]`) whose JSON texts are carried as blobs, the
 * same way (on the wire each pair holds its text's length instead): a stored value of many
 * megabytes is never JSON-escaped into a frame nor parsed out of one.
 */
export const PAIR_BLOB_FIELDS: Readonly<Record<string, readonly string[]>> = { ...blobFieldsOf(HOST_MESSAGES, 'pairs'), ...blobFieldsOf(RUNTIME_MESSAGES, 'pairs') };

/** What the runtime supports beside the core messages. */
export const RUNTIME_CAPABILITIES = ['typescript', 'stored-values', 'cancel', 'heap-limit', 'cpu-limit', 'wall-limit', 'output-limits'];

/**
 * The capability of a runtime that journals its cells and resumes them (`journal`, `resume-cell`):
 * a runtime serving its own engine says it; one that relays sessions elsewhere says it only when
 * its relay passes both on. The agent host resumes only cells of a runtime that says it.
 */
export const DURABLE_CELLS_CAPABILITY = 'durable-cells';

/** Validates a message from the runtime (the host side calls this on everything that arrives, after parsing). */
export const parseRuntimeMessage: (value: unknown) => RuntimeMessage = compileTable(RUNTIME_MESSAGES);

/** Validates a message from the host (the runtime side calls this on everything that arrives, after parsing). */
export const parseHostMessage: (value: unknown) => HostMessage = compileTable(HOST_MESSAGES);
