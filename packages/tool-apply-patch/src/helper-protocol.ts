import type { ApplyPatchErrorCode } from './apply-patch-error';
import { contentHash } from './content-hash';
import { INLINE_CONTENT_BYTES, type PatchLimits } from './limits';
import { fileGitDiff, type ApplyPatchResult, type FileChange, type FileState } from './verify-patch';

/** What the host asks the helper to verify (the patch text travels as blob 0). */
export interface HelperApplyRequest {
  type: 'apply';
  root: string;
  allowOutsideRoot: boolean;
  protectedNames?: readonly string[];
  limits?: Partial<PatchLimits>;
}

type BlobRef = number;

/** A {@link FileChange} with its texts replaced by blob indices. */
export type WireChange = (
  | { kind: 'add'; path: string; content: BlobRef; unifiedDiff: BlobRef }
  | { kind: 'delete'; path: string; content: BlobRef; unifiedDiff: BlobRef }
  | { kind: 'update'; path: string; movePath?: string; newContent: BlobRef; unifiedDiff: BlobRef }
) & { contentOmitted?: true };

/** True when a text is past {@link INLINE_CONTENT_BYTES} (checked by length first: no UTF-8 pass over a small text). */
function tooLarge(...texts: Array<string | null>): boolean {
  const length = texts.reduce((sum, text) => sum + (text?.length ?? 0), 0);
  if (length > INLINE_CONTENT_BYTES) return true;
  return length * 3 > INLINE_CONTENT_BYTES && texts.reduce((sum, text) => sum + Buffer.byteLength(text ?? '', 'utf8'), 0) > INLINE_CONTENT_BYTES;
}

/** A {@link FileState} with its texts replaced by blob indices (`null`: absent). */
export interface WireFile {
  path: string;
  displayPath: string;
  before: BlobRef | null;
  after: BlobRef | null;
  diff?: BlobRef;
  /** Contents left out (past `INLINE_CONTENT_BYTES`): their sha256 hashes; `before`/`after` are `null`. */
  hashes?: { before: string | null; after: string | null };
}

/** The helper's answer once every hunk is verified (nothing written yet). */
export interface HelperVerified {
  type: 'verified';
  summary: string;
  added: string[];
  modified: string[];
  deleted: string[];
  changes: WireChange[];
  files: WireFile[];
}

/** A refusal or failure, as an `ApplyPatchError`. */
export type HelperError = {
  type: 'error';
  code: ApplyPatchErrorCode;
  message: string;
  unrestoredPaths?: readonly string[];
};

/** Packs a verified result as a header plus blobs (each file's git diff computed here, off the host). */
export function encodeVerified(result: ApplyPatchResult): { header: HelperVerified; blobs: Buffer[] } {
  const blobs: Buffer[] = [];
  // A text sent once however often it appears (an updated file's new content is also its `after`).
  const sent = new Map<string, number>();
  const blob = (text: string) => {
    let index = sent.get(text);
    if (index === undefined) {
      index = blobs.push(Buffer.from(text, 'utf8')) - 1;
      sent.set(text, index);
    }
    return index;
  };
  const changes = result.changes.map((change): WireChange => {
    const text = change.kind === 'update' ? change.newContent : change.content;
    const omitted = tooLarge(text);
    const content = blob(omitted ? '' : text);
    const extra = omitted ? { contentOmitted: true as const } : {};
    if (change.kind === 'update') {
      return { kind: 'update', path: change.path, ...(change.movePath !== undefined ? { movePath: change.movePath } : {}), newContent: content, unifiedDiff: blob(change.unifiedDiff), ...extra };
    }
    return { kind: change.kind, path: change.path, content, unifiedDiff: blob(change.unifiedDiff), ...extra };
  });
  const files = result.files.map((file): WireFile => {
    const diff = blob(fileGitDiff(file));
    if (tooLarge(file.before, file.after)) {
      return { path: file.path, displayPath: file.displayPath, before: null, after: null, diff, hashes: { before: contentHash(file.before), after: contentHash(file.after) } };
    }
    return { path: file.path, displayPath: file.displayPath, before: file.before === null ? null : blob(file.before), after: file.after === null ? null : blob(file.after), diff };
  });
  const { summary, added, modified, deleted } = result;
  return { header: { type: 'verified', summary, added, modified, deleted, changes, files }, blobs };
}

/** Unpacks {@link encodeVerified}. Throws on a malformed header. */
export function decodeVerified(header: Record<string, unknown>, blobs: readonly Buffer[]): ApplyPatchResult {
  const decoded = new Map<number, string>();
  const text = (ref: unknown): string => {
    if (typeof ref !== 'number' || !blobs[ref]) throw new Error('helper answer refers to a missing blob');
    let value = decoded.get(ref);
    if (value === undefined) {
      value = blobs[ref].toString('utf8');
      decoded.set(ref, value);
    }
    return value;
  };
  const strings = (value: unknown): string[] => {
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw new Error('helper answer has a malformed list');
    return value as string[];
  };
  if (typeof header.summary !== 'string' || !Array.isArray(header.changes) || !Array.isArray(header.files)) throw new Error('helper answer is malformed');
  const changes = (header.changes as WireChange[]).map((change): FileChange => {
    const extra = change.contentOmitted === true ? { contentOmitted: true as const } : {};
    if (change.kind === 'update') {
      return { kind: 'update', path: change.path, ...(change.movePath !== undefined ? { movePath: change.movePath } : {}), newContent: text(change.newContent), unifiedDiff: text(change.unifiedDiff), ...extra };
    }
    return { kind: change.kind, path: change.path, content: text(change.content), unifiedDiff: text(change.unifiedDiff), ...extra };
  });
  const files = (header.files as WireFile[]).map((file): FileState => ({
    path: file.path,
    displayPath: file.displayPath,
    before: file.before === null ? null : text(file.before),
    after: file.after === null ? null : text(file.after),
    ...(file.diff !== undefined ? { diff: text(file.diff) } : {}),
    ...(file.hashes !== undefined ? { hashes: hashesOf(file.hashes) } : {}),
  }));
  return { summary: header.summary, added: strings(header.added), modified: strings(header.modified), deleted: strings(header.deleted), changes, files };
}

/** Checks a wire file's `hashes` (64 hex characters or `null` each). */
function hashesOf(value: unknown): { before: string | null; after: string | null } {
  const valid = (hash: unknown) => hash === null || (typeof hash === 'string' && /^[0-9a-f]{64}$/.test(hash));
  const hashes = value as { before?: unknown; after?: unknown } | null;
  if (typeof hashes !== 'object' || hashes === null || !valid(hashes.before) || !valid(hashes.after)) throw new Error('helper answer has malformed hashes');
  return { before: hashes.before as string | null, after: hashes.after as string | null };
}
