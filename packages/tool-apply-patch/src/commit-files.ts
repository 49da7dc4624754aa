import { chmod, mkdir, rename, rmdir, symlink, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { ApplyPatchError } from './apply-patch-error';
import { describeFsError } from './workspace-path';

/** What was on disk at a path before the patch. */
export type Snapshot =
  | { kind: 'absent' }
  | { kind: 'directory' }
  | { kind: 'file'; bytes: Buffer; mode: number }
  | { kind: 'symlink'; linkTarget: string; bytes: Buffer };

/** One path a patch touches: its original state and the content it must end with (`null`: absent). */
export interface FileEntry {
  path: string;
  /** The path as written in the patch, for messages. */
  label: string;
  original: Snapshot;
  current: Buffer | null;
}

/** Writes `bytes` to a temporary file beside `path`, then renames it over `path`. */
export async function writeFileAtomic(path: string, bytes: Uint8Array, mode?: number): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.apply-patch.tmp`);
  try {
    await writeFile(temporary, bytes, { flag: 'wx' });
    if (mode !== undefined) await chmod(temporary, mode);
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
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
  /** The first folder `mkdir` created for this entry, if any. */
  createdFolder?: string;
}

async function restore(entry: FileEntry): Promise<void> {
  const { original, path } = entry;
  if (original.kind === 'file') {
    await writeFileAtomic(path, original.bytes, original.mode);
  } else if (original.kind === 'symlink') {
    await unlink(path).catch(() => undefined);
    await symlink(original.linkTarget, path);
  } else {
    await unlink(path).catch((error: { code?: string }) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
}

/** Removes the folders created for `path`, deepest first, stopping at the first non-empty one. */
async function removeCreatedFolders(path: string, createdFolder: string): Promise<void> {
  for (let folder = dirname(path); ; folder = dirname(folder)) {
    try {
      await rmdir(folder);
    } catch {
      return;
    }
    if (folder === createdFolder || dirname(folder) === folder) return;
  }
}

/** Undoes `done`: files first, then the folders created for them (deepest first). */
async function rollback(done: Done[]): Promise<string[]> {
  const unrestored: string[] = [];
  for (const { entry, written } of [...done].reverse()) {
    try {
      if (written) await restore(entry);
    } catch {
      unrestored.push(entry.label);
    }
  }
  const created = done.filter((record) => record.createdFolder).sort((a, b) => b.entry.path.length - a.entry.path.length);
  for (const { entry, createdFolder } of created) await removeCreatedFolders(entry.path, createdFolder as string);
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
 * Brings every entry to its `current` content all-or-nothing: writes first (atomically, creating
 * parent folders, keeping the file mode, several at a time), deletions last; on a failure
 * everything already done is undone and an `ApplyPatchError` (`WRITE_FAILED`) is thrown.
 */
export async function commitFiles(entries: readonly FileEntry[], signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) throw new ApplyPatchError('ABORTED', 'apply_patch was aborted before any file was written');
  const pending = entries.filter(changed);
  const done: Done[] = [];
  const write = async (entry: FileEntry) => {
    let step = `Failed to create parent directories for ${entry.label}`;
    try {
      // A file that exists already has its folder; only new files may need one.
      const createdFolder = entry.original.kind === 'file' ? undefined : await mkdir(dirname(entry.path), { recursive: true });
      const record: Done = createdFolder ? { entry, createdFolder, written: false } : { entry, written: false };
      done.push(record);
      step = `Failed to write file ${entry.label}`;
      if (entry.original.kind === 'symlink') {
        record.written = true;
        await unlink(entry.path);
      }
      await writeFileAtomic(entry.path, entry.current as Buffer, entry.original.kind === 'file' ? entry.original.mode : undefined);
      record.written = true;
    } catch (error) {
      throw new StepFailure(step, error);
    }
  };
  const remove = async (entry: FileEntry) => {
    try {
      await unlink(entry.path);
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
  const unrestored = await rollback(done);
  const outcome = unrestored.length === 0 ? 'No files were changed.' : `Could not restore: ${unrestored.join(', ')}.`;
  throw new ApplyPatchError('WRITE_FAILED', `${step}: ${describeFsError(error)}. ${outcome}`, { unrestoredPaths: unrestored, cause: error });
}

class StepFailure {
  constructor(
    readonly step: string,
    readonly error: unknown,
  ) {}
}
