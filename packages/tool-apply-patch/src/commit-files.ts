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

async function rollback(done: Done[]): Promise<string[]> {
  const unrestored: string[] = [];
  for (const { entry, createdFolder, written } of [...done].reverse()) {
    try {
      if (written) await restore(entry);
      if (createdFolder) await removeCreatedFolders(entry.path, createdFolder);
    } catch {
      unrestored.push(entry.label);
    }
  }
  return unrestored;
}

/**
 * Brings every entry to its `current` content all-or-nothing: writes first (atomically, creating
 * parent folders, keeping the file mode), deletions last; on a failure everything already done is
 * undone and an `ApplyPatchError` (`WRITE_FAILED`) is thrown.
 */
export async function commitFiles(entries: readonly FileEntry[], signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) throw new ApplyPatchError('ABORTED', 'apply_patch was aborted before any file was written');
  const pending = entries.filter(changed);
  const writes = pending.filter((entry) => entry.current !== null);
  const deletions = pending.filter((entry) => entry.current === null);
  const done: Done[] = [];
  let step = '';
  try {
    for (const entry of writes) {
      step = `Failed to create parent directories for ${entry.label}`;
      const createdFolder = await mkdir(dirname(entry.path), { recursive: true });
      const record: Done = createdFolder ? { entry, createdFolder, written: false } : { entry, written: false };
      step = `Failed to write file ${entry.label}`;
      const mode = entry.original.kind === 'file' ? entry.original.mode : undefined;
      done.push(record);
      if (entry.original.kind === 'symlink') {
        record.written = true;
        await unlink(entry.path);
      }
      await writeFileAtomic(entry.path, entry.current as Buffer, mode);
      record.written = true;
    }
    for (const entry of deletions) {
      step = `Failed to delete file ${entry.label}`;
      await unlink(entry.path);
      done.push({ entry, written: true });
    }
  } catch (error) {
    const unrestored = await rollback(done);
    const outcome = unrestored.length === 0 ? 'No files were changed.' : `Could not restore: ${unrestored.join(', ')}.`;
    throw new ApplyPatchError('WRITE_FAILED', `${step}: ${describeFsError(error)}. ${outcome}`, { unrestoredPaths: unrestored, cause: error });
  }
}
