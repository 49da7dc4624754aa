import type { ApplyPatchErrorCode } from './apply-patch-error';
import { contentHash } from './content-hash';
import { lazyProperty } from './lazy-property';
import { tooLarge, type Baseline, type TurnFileDiff } from './helper-turn';
import type { PatchLimits } from './limits';
import { fileGitDiff, type ApplyPatchResult, type FileChange, type FileState } from './verify-patch';

/** What the host asks the helper to verify (the patch text travels as blob 0). */
export interface HelperApplyRequest {
  type: 'apply';
  root: string;
  allowOutsideRoot: boolean;
  protectedNames?: readonly string[];
  limits?: Partial<PatchLimits>;
  /**
   * The turn this patch belongs to: the helper answers each file's part of the turn diff from the
   * baselines it keeps (`turnFiles`) instead of the files' texts. `seed` (first use of a token)
   * gives it the host's baselines; a text baseline travels as a blob after the patch.
   */
  turn?: { token: string; seed?: WireSeed[] };
}

/** One baseline the host seeds a helper's turn with. */
export type WireSeed = { path: string; text: BlobRef | null } | { path: string; hash: string | null };

type BlobRef = number;

/** A {@link FileChange} with its texts replaced by blob indices. */
export type WireChange = (
  | { kind: 'add'; path: string; content: BlobRef; unifiedDiff: BlobRef }
  | { kind: 'delete'; path: string; content: BlobRef; unifiedDiff: BlobRef }
  | { kind: 'update'; path: string; movePath?: string; newContent: BlobRef; unifiedDiff: BlobRef }
) & { contentOmitted?: true };

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

/** A {@link TurnFileDiff} with its diff and baseline text replaced by blob indices. */
export type WireTurnFile = Omit<TurnFileDiff<BlobRef>, 'diff'> & { diff: BlobRef };

/** The helper's answer once every hunk is verified (nothing written yet). */
export interface HelperVerified {
  type: 'verified';
  summary: string;
  added: string[];
  modified: string[];
  deleted: string[];
  changes: WireChange[];
  /** Empty when the request named a turn: `turnFiles` then stands for the files. */
  files: WireFile[];
  turnFiles?: WireTurnFile[];
}

/** What the host decodes from a verified answer: the result, and the turn-diff parts when it named a turn (its `files` are then empty). */
export type VerifiedAnswer = ApplyPatchResult & { turnFiles?: TurnFileDiff<Buffer>[] };

/** A refusal or failure, as an `ApplyPatchError`. */
export type HelperError = {
  type: 'error';
  code: ApplyPatchErrorCode;
  message: string;
  unrestoredPaths?: readonly string[];
};

/**
 * Packs a verified result as a header plus blobs (each file's git diff computed here, off the
 * host). Given `turnFiles` (the request named a turn), the files' texts are not sent at all: the
 * host needs only their turn-diff parts.
 */
export function encodeVerified(result: ApplyPatchResult, turnFiles?: readonly TurnFileDiff[]): { header: HelperVerified; blobs: Buffer[] } {
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
  if (turnFiles) {
    const { summary, added, modified, deleted } = result;
    const wire = turnFiles.map(({ baseline, ...file }): WireTurnFile => {
      const sent = baseline === undefined ? {} : { baseline: 'text' in baseline ? { text: baseline.text === null ? null : blob(baseline.text) } : baseline };
      return { ...file, diff: blob(file.diff), ...sent };
    });
    return { header: { type: 'verified', summary, added, modified, deleted, changes, files: [], turnFiles: wire }, blobs };
  }
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
export function decodeVerified(header: Record<string, unknown>, blobs: readonly Buffer[]): VerifiedAnswer {
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
  // A change's texts are decoded when first read (the events' listeners read them, if any);
  // their blob indices are checked now, so a malformed answer still fails here.
  const lazyText = <T extends object, K extends string>(target: T, key: K, ref: unknown) => {
    if (typeof ref !== 'number' || !blobs[ref]) throw new Error('helper answer refers to a missing blob');
    return lazyProperty(target, key, () => text(ref));
  };
  const changes = (header.changes as WireChange[]).map((change): FileChange => {
    const extra = change.contentOmitted === true ? { contentOmitted: true as const } : {};
    if (change.kind === 'update') {
      const update = { kind: 'update' as const, path: change.path, ...(change.movePath !== undefined ? { movePath: change.movePath } : {}), ...extra };
      return lazyText(lazyText(update, 'newContent', change.newContent), 'unifiedDiff', change.unifiedDiff);
    }
    return lazyText(lazyText({ kind: change.kind, path: change.path, ...extra }, 'content', change.content), 'unifiedDiff', change.unifiedDiff);
  });
  const files = (header.files as WireFile[]).map((file): FileState => ({
    path: file.path,
    displayPath: file.displayPath,
    before: file.before === null ? null : text(file.before),
    after: file.after === null ? null : text(file.after),
    ...(file.diff !== undefined ? { diff: text(file.diff) } : {}),
    ...(file.hashes !== undefined ? { hashes: hashesOf(file.hashes) } : {}),
  }));
  const result = { summary: header.summary, added: strings(header.added), modified: strings(header.modified), deleted: strings(header.deleted), changes, files };
  if (header.turnFiles === undefined) return result;
  if (!Array.isArray(header.turnFiles)) throw new Error('helper answer has malformed turn files');
  return { ...result, turnFiles: (header.turnFiles as unknown[]).map((file) => turnFileOf(file, text, blobs)) };
}

/** Checks one wire turn file (strings, flags, blobs) and decodes its diff; a baseline text stays bytes (the host only keeps it). */
function turnFileOf(value: unknown, text: (ref: unknown) => string, blobs: readonly Buffer[]): TurnFileDiff<Buffer> {
  const file = value as Partial<Record<keyof WireTurnFile, unknown>> | null;
  const flags = file !== null && typeof file === 'object' && typeof file.sequence === 'boolean' && typeof file.changed === 'boolean';
  if (!flags || typeof file.path !== 'string' || typeof file.displayPath !== 'string') throw new Error('helper answer has a malformed turn file');
  const decoded: TurnFileDiff<Buffer> = { path: file.path, displayPath: file.displayPath, diff: text(file.diff), sequence: file.sequence as boolean, changed: file.changed as boolean };
  if (file.baseline === undefined) return decoded;
  const baseline = file.baseline as { text?: unknown; hash?: unknown } | null;
  if (baseline !== null && typeof baseline === 'object' && 'text' in baseline) {
    if (baseline.text !== null && (typeof baseline.text !== 'number' || !blobs[baseline.text])) throw new Error('helper answer refers to a missing blob');
    return { ...decoded, baseline: { text: baseline.text === null ? null : blobs[baseline.text] } };
  }
  return { ...decoded, baseline: { hash: hashesOf({ before: baseline?.hash, after: null }).before } };
}

/** Encodes the host's baselines of a turn for a helper's request: seeds and their blobs, the first blob at index `firstBlob`. */
export function encodeSeed(baselines: ReadonlyMap<string, { text: Buffer | null } | { hash: string | null }>, firstBlob: number): { seed: WireSeed[]; blobs: Buffer[] } {
  const blobs: Buffer[] = [];
  const seed = [...baselines].map(([path, baseline]): WireSeed => {
    if ('hash' in baseline) return { path, hash: baseline.hash };
    if (baseline.text === null) return { path, text: null };
    return { path, text: firstBlob + blobs.push(baseline.text) - 1 };
  });
  return { seed, blobs };
}

/** Decodes a request's seed (in the helper). Throws on a malformed one. */
export function decodeSeed(value: unknown, blobs: readonly Buffer[]): Map<string, Baseline> {
  if (!Array.isArray(value)) throw new Error('apply request has a malformed turn seed');
  const baselines = new Map<string, Baseline>();
  for (const entry of value as Array<Record<string, unknown>>) {
    if (typeof entry?.path !== 'string') throw new Error('apply request has a malformed turn seed');
    if ('hash' in entry) baselines.set(entry.path, { hash: hashesOf({ before: entry.hash, after: null }).before });
    else if (entry.text === null) baselines.set(entry.path, { text: null });
    else if (typeof entry.text === 'number' && blobs[entry.text]) baselines.set(entry.path, { text: blobs[entry.text].toString('utf8') });
    else throw new Error('apply request has a malformed turn seed');
  }
  return baselines;
}

/** Checks a wire file's `hashes` (64 hex characters or `null` each). */
function hashesOf(value: unknown): { before: string | null; after: string | null } {
  const valid = (hash: unknown) => hash === null || (typeof hash === 'string' && /^[0-9a-f]{64}$/.test(hash));
  const hashes = value as { before?: unknown; after?: unknown } | null;
  if (typeof hashes !== 'object' || hashes === null || !valid(hashes.before) || !valid(hashes.after)) throw new Error('helper answer has malformed hashes');
  return { before: hashes.before as string | null, after: hashes.after as string | null };
}
