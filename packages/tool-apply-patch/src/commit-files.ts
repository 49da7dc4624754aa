import { ApplyPatchError } from './apply-patch-error';
import { describeFsError } from './workspace-path';
import type { WorkspaceFs } from './workspace-fs';

/** What was on disk at a path before the patch. */
export type Snapshot =
  | { kind: 'absent' }
  | { kind: 'directory' }
  | { kind: 'file'; bytes: Buffer; mode: number }
  | { kind: 'symlink'; linkTarget: string; bytes: Buffer }
  /** A named pipe, a socket or a device (or a link to one): never read, written or replaced. */
  | { kind: 'special'; what: string };

/** One path a patch touches: its original state and the content it must end with (`null`: absent). */
export interface FileEntry {
  /** Absolute physical path (the entry's key). */
  path: string;
  /** `path` as components below the walker's root: what every file operation walks. */
  parts: readonly string[];
  /** The path as written in the patch, for messages. */
  label: string;
  original: Snapshot;
  current: Buffer | null;
}

function changed(entry: FileEntry): boolean {
  const { original, current } = entry;
  if (current === null) return original.kind === 'file' || original.kind === 'symlink';
  return original.kind !== 'file' || !original.bytes.equals(current);
}

interface Done {
  entry: FileEntry;
  /** False while the write is in flight (only the created folders need undoing then). */
  written: boolean;
  /** The first folder the write created for this entry, if any. */
  createdFolder?: readonly string[];
}

async function restore(fs: WorkspaceFs, entry: FileEntry): Promise<void> {
  const { original, parts } = entry;
  if (original.kind === 'file') {
    await fs.writeFileAtomic(parts, original.bytes, original.mode);
  } else if (original.kind === 'symlink') {
    await fs.unlink(parts).catch(() => undefined);
    await fs.symlink(original.linkTarget, parts);
  } else {
    await fs.unlink(parts).catch((error: { code?: string }) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
}

/**
 * Removes the folders the patch created, deepest first. Every folder on an entry's path from its
 * first created one down was made during the patch, by this write or a concurrent one — which
 * write recorded which folder depends on timing, so they are gathered across all entries; `rmdir`
 * leaves a folder that is not empty (or already gone) alone.
 */
async function removeCreatedFolders(fs: WorkspaceFs, created: readonly Done[]): Promise<void> {
  const folders = new Map<string, readonly string[]>();
  for (const { entry, createdFolder } of created) {
    for (let depth = (createdFolder as readonly string[]).length; depth < entry.parts.length; depth++) {
      const parts = entry.parts.slice(0, depth);
      folders.set(parts.join('/'), parts);
    }
  }
  for (const parts of [...folders.values()].sort((a, b) => b.length - a.length)) await fs.rmdir(parts).catch(() => undefined);
}

/** Undoes `done`: files first, then the folders created for them (deepest first). */
async function rollback(fs: WorkspaceFs, done: Done[]): Promise<string[]> {
  const unrestored: string[] = [];
  for (const { entry, written } of [...done].reverse()) {
    try {
      if (written) await restore(fs, entry);
    } catch {
      unrestored.push(entry.label);
    }
  }
  await removeCreatedFolders(fs, done.filter((record) => record.createdFolder));
  return unrestored;
}

const CONCURRENCY = 8;

/**
 * Runs `task` over `items`, at most {@link CONCURRENCY} at a time. After the first failure no new
 * task starts; resolves once every started task settled, with the first error (or undefined).
 */
async function runPool<T>(items: readonly T[], task: (item: T) => Promise<void>): Promise<{ error: unknown } | undefined> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const item = items[next++];
      try {
        await task(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return failure;
}

/**
 * Brings every entry to its `current` content all-or-nothing, through `fs` (no link followed on
 * the way, temporary files in the target's own folder): writes first (atomically, creating parent
 * folders, keeping the file mode, several at a time), deletions last; on a failure everything
 * already done is undone and an `ApplyPatchError` (`WRITE_FAILED`) is thrown.
 */
export async function commitFiles(fs: WorkspaceFs, entries: readonly FileEntry[], signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) throw new ApplyPatchError('ABORTED', 'apply_patch was aborted before any file was written');
  const pending = entries.filter(changed);
  const done: Done[] = [];
  const write = async (entry: FileEntry) => {
    const record: Done = { entry, written: false };
    done.push(record);
    try {
      if (entry.original.kind === 'symlink') {
        record.written = true;
        await fs.unlink(entry.parts);
      }
      const createdFolder = await fs.writeFileAtomic(entry.parts, entry.current as Buffer, entry.original.kind === 'file' ? entry.original.mode : undefined);
      if (createdFolder) record.createdFolder = createdFolder;
      record.written = true;
    } catch (error) {
      const code = (error as { code?: string }).code;
      const step = code === 'ENOTDIR' || code === 'EEXIST' ? `Failed to create parent directories for ${entry.label}` : `Failed to write file ${entry.label}`;
      throw new StepFailure(step, error);
    }
  };
  const remove = async (entry: FileEntry) => {
    try {
      await fs.unlink(entry.parts);
    } catch (error) {
      throw new StepFailure(`Failed to delete file ${entry.label}`, error);
    }
    done.push({ entry, written: true });
  };
  const failure =
    (await runPool(pending.filter((entry) => entry.current !== null), write)) ??
    (await runPool(pending.filter((entry) => entry.current === null), remove));
  if (!failure) return;
  const { step, error } = failure.error instanceof StepFailure ? failure.error : { step: 'Failed to apply the patch', error: failure.error };
  const unrestored = await rollback(fs, done);
  const outcome = unrestored.length === 0 ? 'No files were changed.' : `Could not restore: ${unrestored.join(', ')}.`;
  throw new ApplyPatchError('WRITE_FAILED', `${step}: ${describeFsError(error)}. ${outcome}`, { unrestoredPaths: unrestored, cause: error });
}

class StepFailure {
  constructor(
    readonly step: string,
    readonly error: unknown,
  ) {}
}
