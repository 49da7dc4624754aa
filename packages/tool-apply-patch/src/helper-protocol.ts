import { contentHash } from './content-hash';
import { lazyProperty } from './lazy-property';
import { tooLarge, type Baseline, type TurnFileDiff } from './helper-turn';
import type { HelperToHost, WireChange, WireFile, WireSeed, WireTurnFile } from './helper-messages';
import { fileGitDiff, type ApplyPatchResult, type FileChange, type FileState } from './verify-patch';

/** What the host decodes from a verified answer: the result, and the turn-diff parts when it named a turn (its `files` are then empty). */
export type VerifiedAnswer = ApplyPatchResult & { turnFiles?: TurnFileDiff<Buffer>[] };

type Verified = Extract<HelperToHost, { t: 'verified' }>;

/**
 * Packs a verified result as a header plus blobs (each file's git diff computed here, off the
 * host). Given `turnFiles` (the request named a turn), the files' texts are not sent at all: the
 * host needs only their turn-diff parts.
 */
export function encodeVerified(result: ApplyPatchResult, turnFiles?: readonly TurnFileDiff[]): { message: Verified; blobs: Buffer[] } {
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
  const { summary, added, modified, deleted } = result;
  if (turnFiles) {
    const wire = turnFiles.map(({ baseline, ...file }): WireTurnFile => {
      const sent = baseline === undefined ? {} : { baseline: 'text' in baseline ? { kind: 'text' as const, text: baseline.text === null ? null : blob(baseline.text) } : { kind: 'hash' as const, hash: baseline.hash } };
      return { ...file, diff: blob(file.diff), ...sent };
    });
    return { message: { t: 'verified', summary, added, modified, deleted, changes, files: [], turnFiles: wire }, blobs };
  }
  const files = result.files.map((file): WireFile => {
    const diff = blob(fileGitDiff(file));
    if (tooLarge(file.before, file.after)) {
      return { path: file.path, displayPath: file.displayPath, before: null, after: null, diff, hashes: { before: contentHash(file.before), after: contentHash(file.after) } };
    }
    return { path: file.path, displayPath: file.displayPath, before: file.before === null ? null : blob(file.before), after: file.after === null ? null : blob(file.after), diff };
  });
  return { message: { t: 'verified', summary, added, modified, deleted, changes, files }, blobs };
}

/**
 * Unpacks {@link encodeVerified}. The message was validated against the table as it arrived
 * (every blob index names a blob of its frame), so this only maps it.
 */
export function decodeVerified(message: Verified, blobs: readonly Buffer[]): VerifiedAnswer {
  const decoded = new Map<number, string>();
  const text = (ref: number): string => {
    let value = decoded.get(ref);
    if (value === undefined) {
      value = blobs[ref].toString('utf8');
      decoded.set(ref, value);
    }
    return value;
  };
  // A change's texts are decoded when first read (the events' listeners read them, if any).
  const lazyText = <T extends object, K extends string>(target: T, key: K, ref: number) => lazyProperty(target, key, () => text(ref));
  const changes = message.changes.map((change): FileChange => {
    const extra = change.contentOmitted === true ? { contentOmitted: true as const } : {};
    if (change.kind === 'update') {
      const update = { kind: 'update' as const, path: change.path, ...(change.movePath !== undefined ? { movePath: change.movePath } : {}), ...extra };
      return lazyText(lazyText(update, 'newContent', change.newContent), 'unifiedDiff', change.unifiedDiff);
    }
    return lazyText(lazyText({ kind: change.kind, path: change.path, ...extra }, 'content', change.content), 'unifiedDiff', change.unifiedDiff);
  });
  const files = message.files.map((file): FileState => ({
    path: file.path,
    displayPath: file.displayPath,
    before: file.before === null ? null : text(file.before),
    after: file.after === null ? null : text(file.after),
    ...(file.diff !== undefined ? { diff: text(file.diff) } : {}),
    ...(file.hashes !== undefined ? { hashes: file.hashes } : {}),
  }));
  const { summary, added, modified, deleted } = message;
  const result = { summary, added, modified, deleted, changes, files };
  if (message.turnFiles === undefined) return result;
  return { ...result, turnFiles: message.turnFiles.map((file) => turnFileOf(file, text, blobs)) };
}

/** Decodes one wire turn file's diff; a baseline text stays bytes (the host only keeps it). */
function turnFileOf(file: WireTurnFile, text: (ref: number) => string, blobs: readonly Buffer[]): TurnFileDiff<Buffer> {
  const decoded: TurnFileDiff<Buffer> = { path: file.path, displayPath: file.displayPath, diff: text(file.diff), sequence: file.sequence, changed: file.changed };
  const baseline = file.baseline;
  if (baseline === undefined) return decoded;
  if (baseline.kind === 'hash') return { ...decoded, baseline: { hash: baseline.hash } };
  return { ...decoded, baseline: { text: baseline.text === null ? null : blobs[baseline.text] } };
}

/** Encodes the host's baselines of a turn for a helper's request: seeds and their blobs, the first blob at index `firstBlob`. */
export function encodeSeed(baselines: ReadonlyMap<string, { text: Buffer | null } | { hash: string | null }>, firstBlob: number): { seed: WireSeed[]; blobs: Buffer[] } {
  const blobs: Buffer[] = [];
  const seed = [...baselines].map(([path, baseline]): WireSeed => {
    if ('hash' in baseline) return { kind: 'hash', path, hash: baseline.hash };
    if (baseline.text === null) return { kind: 'text', path, text: null };
    return { kind: 'text', path, text: firstBlob + blobs.push(baseline.text) - 1 };
  });
  return { seed, blobs };
}

/** Decodes a request's seed (in the helper; validated with the request). */
export function decodeSeed(seed: readonly WireSeed[], blobs: readonly Buffer[]): Map<string, Baseline> {
  const baselines = new Map<string, Baseline>();
  for (const entry of seed) {
    if (entry.kind === 'hash') baselines.set(entry.path, { hash: entry.hash });
    else baselines.set(entry.path, { text: entry.text === null ? null : blobs[entry.text].toString('utf8') });
  }
  return baselines;
}
