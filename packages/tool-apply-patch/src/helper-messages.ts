import { messageTable } from '@switchyard/kit/internal';
import type { ApplyPatchErrorCode } from './apply-patch-error';

/**
 * The apply_patch helper protocol's messages, one table per direction: name (`t`) → meaning and
 * fields. The message types, the validation of every frame that arrives (both sides) and the
 * README's table derive from it. A file's text never travels in a header: a field of kind
 * `blob index` names one of the raw blobs that follow the frame's header (see `helper-frames.ts`).
 */

const { arrayOf, boolean, compileTable, integer, literal, message, object, optional, string, variants, Refusal } = messageTable;
type Field<T> = messageTable.Field<T>;
type Infer<F> = messageTable.Infer<F>;
type MessagesOf<Table> = messageTable.MessagesOf<Table>;

/**
 * The blob count of the frame being validated. Validation is synchronous and one frame at a
 * time, so the codec sets it just before validating a frame's header and {@link blobIndex} reads it:
 * a field naming a blob the frame does not carry is refused by the table like any other.
 */
let frameBlobCount = 0;

/** Runs `validate` for a frame carrying `count` blobs (see {@link frameBlobCount}). */
export function withBlobCount<T>(count: number, validate: () => T): T {
  frameBlobCount = count;
  try {
    return validate();
  } finally {
    frameBlobCount = 0;
  }
}

/** The index of one of the frame's blobs (a file's text, a diff, the patch). */
const blobIndex: Field<number> = {
  doc: 'blob index',
  check: (value) => integer.check(value) ?? ((value as number) < frameBlobCount ? undefined : new Refusal(`is not one of the frame's ${frameBlobCount} blobs`)),
};

/** A kind that may also be `null`. */
function nullable<T>(field: Field<T>): Field<T | null> {
  return { doc: `${field.doc} \\| null`, check: (value) => (value === null ? undefined : field.check(value)) };
}

/** A sha256 hash in hex. */
const sha256: Field<string> = {
  doc: 'sha256 hex',
  check: (value) => (typeof value === 'string' && /^[0-9a-f]{64}$/.test(value) ? undefined : new Refusal('is not a sha256 hash (64 hex digits)')),
};

/** Every {@link ApplyPatchErrorCode} (a code missing here fails to compile, below). */
export const HELPER_ERROR_CODES = [
  'INVALID_PATCH', 'INVALID_HUNK', 'VERIFICATION_FAILED', 'PATH_OUTSIDE_ROOT', 'PROTECTED_PATH', 'LIMIT_EXCEEDED', 'HELPER_FAILED', 'NO_CHANGES', 'WRITE_FAILED', 'ABORTED',
] as const satisfies readonly ApplyPatchErrorCode[];
type MissingCodes = Exclude<ApplyPatchErrorCode, (typeof HELPER_ERROR_CODES)[number]>;
const everyCode: [MissingCodes] extends [never] ? true : MissingCodes = true;
void everyCode;

// ---- the nested kinds ----------------------------------------------------------------------

const PATCH_LIMITS = object('PatchLimits', 'The host\'s `limits` option, as it set them (the helper fills the rest with the defaults).', {
  maxFileBytes: optional(integer),
  maxFileLines: optional(integer),
  maxPatchBytes: optional(integer),
  maxTotalBytes: optional(integer),
  maxFiles: optional(integer),
});

const SEED = variants('Seed', 'A baseline the host seeds a helper\'s turn with: the file\'s text (`null`: absent), or its hash once it was too large to keep.', 'kind', {
  text: { path: string, text: nullable(blobIndex) },
  hash: { path: string, hash: nullable(sha256) },
});

const TURN = object('Turn', 'The turn a patch belongs to: its token, and the baselines for a token the helper has not seen.', {
  token: string,
  seed: optional(arrayOf(SEED)),
});

const CHANGE = variants('Change', 'One file the patch changes (`contentOmitted`: the text is past the inline limit and its blob is empty).', 'kind', {
  add: { path: string, content: blobIndex, unifiedDiff: blobIndex, contentOmitted: optional(boolean) },
  delete: { path: string, content: blobIndex, unifiedDiff: blobIndex, contentOmitted: optional(boolean) },
  update: { path: string, movePath: optional(string), newContent: blobIndex, unifiedDiff: blobIndex, contentOmitted: optional(boolean) },
});

const HASHES = object('Hashes', 'The sha256 hashes of a file\'s contents before and after (`null`: absent).', {
  before: nullable(sha256),
  after: nullable(sha256),
});

const FILE = object('File', 'A file\'s state before and after the patch (`null`: absent); past the inline limit only its `hashes`, `before`/`after` then `null`.', {
  path: string,
  displayPath: string,
  before: nullable(blobIndex),
  after: nullable(blobIndex),
  diff: optional(blobIndex),
  hashes: optional(HASHES),
});

const BASELINE = variants('Baseline', 'A file\'s baseline in the turn, when the helper\'s changed: its text (`null`: absent), or its hash.', 'kind', {
  text: { text: nullable(blobIndex) },
  hash: { hash: nullable(sha256) },
});

const TURN_FILE = object('TurnFile', 'One file\'s part of the turn diff: `sequence`: `diff` follows the file\'s earlier diffs, else it replaces them; `changed: false`: back to its baseline.', {
  path: string,
  displayPath: string,
  diff: blobIndex,
  sequence: boolean,
  changed: boolean,
  baseline: optional(BASELINE),
});

// ---- the message table ---------------------------------------------------------------------

/** Messages from the host to the helper. */
export const HOST_TO_HELPER = {
  apply: message('Verifies blob `patch` under `root` and answers `verified` or `error`; writes nothing.', {
    patch: blobIndex,
    root: string,
    allowOutsideRoot: boolean,
    protectedNames: optional(arrayOf(string)),
    limits: optional(PATCH_LIMITS),
    turn: optional(TURN),
  }),
  commit: message('Writes the verified patch; answered by `committed` or `error`.', {}),
  abort: message('Drops the verified patch: nothing is written, no answer.', {}),
} as const;

/** Messages from the helper to the host. */
export const HELPER_TO_HOST = {
  verified: message('Every hunk verified, nothing written yet: the summary, the changes and each file\'s texts (`files` is empty when the request named a turn: `turnFiles` stands for it).', {
    summary: string,
    added: arrayOf(string),
    modified: arrayOf(string),
    deleted: arrayOf(string),
    changes: arrayOf(CHANGE),
    files: arrayOf(FILE),
    turnFiles: optional(arrayOf(TURN_FILE)),
  }),
  committed: message('The verified patch is written.', {}),
  error: message('A refusal or failure, as an `ApplyPatchError`.', {
    code: { ...literal(...HELPER_ERROR_CODES), doc: 'ApplyPatchErrorCode' },
    message: string,
    unrestoredPaths: optional(arrayOf(string)),
  }),
} as const;

/** A message from the host (derived from {@link HOST_TO_HELPER}). */
export type HostToHelper = MessagesOf<typeof HOST_TO_HELPER>;
/** A message from the helper (derived from {@link HELPER_TO_HOST}). */
export type HelperToHost = MessagesOf<typeof HELPER_TO_HOST>;
export type WireSeed = Infer<typeof SEED>;
export type WireChange = Infer<typeof CHANGE>;
export type WireFile = Infer<typeof FILE>;
export type WireTurnFile = Infer<typeof TURN_FILE>;

/** The named kinds the tables use, for the documentation. */
export const HELPER_PROTOCOL_KINDS = [PATCH_LIMITS, TURN, SEED, CHANGE, FILE, HASHES, TURN_FILE, BASELINE];

/** One direction of the protocol: its table (for the names it knows) and its compiled validation (throws `ProtocolError`). */
export interface Direction<M> {
  readonly table: Readonly<Record<string, unknown>>;
  readonly parse: (value: unknown) => M;
}

/** What the helper reads: the host's messages. */
export const FROM_HOST: Direction<HostToHelper> = { table: HOST_TO_HELPER, parse: compileTable(HOST_TO_HELPER) };
/** What the host reads: the helper's messages. */
export const FROM_HELPER: Direction<HelperToHost> = { table: HELPER_TO_HOST, parse: compileTable(HELPER_TO_HOST) };
