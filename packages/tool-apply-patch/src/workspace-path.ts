import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ApplyPatchError } from './apply-patch-error';

/** The workspace root, lexically and with symbolic links resolved. */
export interface WorkspaceRoot {
  readonly path: string;
  readonly realPath: string;
}

/** A patch path resolved against the root. */
export interface ResolvedPath {
  /** The path as written in the patch (used in messages and the summary). */
  readonly raw: string;
  /** The lexical absolute path, as joined onto the root (links not followed). */
  readonly absolute: string;
  /**
   * `absolute` with its parent folder's symbolic links resolved, plus the base name: the directory
   * entry itself (what a delete removes: a link, not its target). Every path that names the same
   * directory entry (e.g. through a symlinked root) has the same `location`.
   */
  readonly location: string;
  /**
   * Where content is read and written: `absolute` with every symbolic link followed. Equals
   * `location` unless the path itself is a symbolic link.
   */
  readonly target: string;
}

/** True when `path` is `root` or inside it. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** Resolves the root once per patch. Throws `VERIFICATION_FAILED` when it does not exist. */
export async function resolveWorkspaceRoot(root: string): Promise<WorkspaceRoot> {
  const path = resolve(root);
  try {
    return { path, realPath: await realpath(path) };
  } catch (error) {
    throw new ApplyPatchError('VERIFICATION_FAILED', `workspace root ${path} is not accessible: ${describeFsError(error)}`, { cause: error });
  }
}

const outside = (raw: string, how = '') =>
  new ApplyPatchError('PATH_OUTSIDE_ROOT', `path '${raw}' resolves outside the workspace root${how}`);

const hasCode = (error: unknown, ...codes: string[]) =>
  typeof error === 'object' && error !== null && codes.includes((error as { code?: string }).code ?? '');

/**
 * Resolves a patch path (relative to the root, or absolute) and, unless `allowOutsideRoot`,
 * refuses one that lands outside the root lexically (`..`, an absolute path elsewhere) or through
 * a symbolic link (`PATH_OUTSIDE_ROOT`). A dangling link cannot be checked and is refused too.
 */
export async function resolveWorkspacePath(raw: string, root: WorkspaceRoot, allowOutsideRoot: boolean): Promise<ResolvedPath> {
  const absolute = resolve(root.path, raw);
  // Inside the root as given, or inside its resolved form (an absolute path spelled either way).
  if (!allowOutsideRoot && !isInside(root.path, absolute) && !isInside(root.realPath, absolute)) throw outside(raw);
  const location = absolute === root.path || absolute === root.realPath ? root.realPath : await resolveLocation(absolute);
  if (!allowOutsideRoot && !isInside(root.realPath, location)) throw outside(raw, ' through a symbolic link');
  let target: string;
  try {
    target = await realpath(absolute);
  } catch (error) {
    if (!hasCode(error, 'ENOENT')) return { raw, absolute, location, target: location };
    const dangling = await lstat(absolute).then((stats) => stats.isSymbolicLink(), () => false);
    if (dangling) {
      if (!allowOutsideRoot) throw outside(raw, ' (it is a dangling symbolic link)');
      return { raw, absolute, location, target: location };
    }
    target = location;
  }
  if (!allowOutsideRoot && !isInside(root.realPath, target)) throw outside(raw, ' through a symbolic link');
  return { raw, absolute, location, target };
}

/** The directory entry `absolute` names: its parent folder with links resolved, plus the base name. */
async function resolveLocation(absolute: string): Promise<string> {
  const parent = dirname(absolute);
  if (parent === absolute) return absolute;
  return join(await resolveMissing(parent), basename(absolute));
}

/** A path that may not exist: its deepest existing folder with links resolved, plus the rest. */
async function resolveMissing(absolute: string): Promise<string> {
  let folder = absolute;
  for (;;) {
    try {
      return join(await realpath(folder), relative(folder, absolute));
    } catch {
      const parent = dirname(folder);
      if (parent === folder) return absolute;
      folder = parent;
    }
  }
}

const MESSAGES: Record<string, string> = {
  ENOENT: 'No such file or directory',
  EISDIR: 'Is a directory',
  ENOTDIR: 'Not a directory',
  EACCES: 'Permission denied',
  EPERM: 'Operation not permitted',
  EEXIST: 'File exists',
  ENOSPC: 'No space left on device',
  EROFS: 'Read-only file system',
  ENOTEMPTY: 'Directory not empty',
};

/** A short, path-free reason for a file-system error ("No such file or directory"). */
export function describeFsError(error: unknown): string {
  const code = (error as { code?: string } | null)?.code;
  if (code && MESSAGES[code]) return MESSAGES[code];
  return error instanceof Error ? error.message : String(error);
}
