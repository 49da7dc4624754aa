import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ApplyPatchError } from './apply-patch-error';
import { OutsideRootError, WorkspaceFs, splitPath } from './workspace-fs';

/** Folder names apply_patch never writes in or replaces, at any depth (compared case-insensitively). */
export const DEFAULT_PROTECTED_NAMES: readonly string[] = Object.freeze(['.git']);

/** The workspace root, lexically and with symbolic links resolved, and the walker every access goes through. */
export interface WorkspaceRoot {
  readonly path: string;
  readonly realPath: string;
  /** Confined to `realPath`, or to `/` when paths outside the root are allowed. */
  readonly fs: WorkspaceFs;
  /** Lower-cased protected names. */
  readonly protectedNames: ReadonlySet<string>;
}

/** A patch path resolved against the root. */
export interface ResolvedPath {
  /** The path as written in the patch (used in messages and the summary). */
  readonly raw: string;
  /** The lexical absolute path, as joined onto the root (links not followed). */
  readonly absolute: string;
  /**
   * The directory entry itself, as an absolute physical path: the parent folder with its links
   * resolved, plus the base name (what a delete removes: a link, not its target). Every spelling
   * of the same entry (e.g. through a symlinked root) has the same `location`.
   */
  readonly location: string;
  /** Where content is read and written: the path with every link followed (inside the root). */
  readonly target: string;
  /** `location` as components below the walker's root. */
  readonly locationParts: readonly string[];
  /** `target` as components below the walker's root. */
  readonly targetParts: readonly string[];
}

/** True when `path` is `root` or inside it. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Opens the root once per patch. Throws `VERIFICATION_FAILED` when it does not exist. With
 * `allowOutsideRoot` the walker is confined to `/` instead (links are still followed by the walk,
 * never by the kernel). Call `root.fs.close()` when done.
 */
export async function resolveWorkspaceRoot(root: string, options: { allowOutsideRoot?: boolean; protectedNames?: readonly string[] } = {}): Promise<WorkspaceRoot> {
  const path = resolve(root);
  let fs: WorkspaceFs;
  try {
    fs = await WorkspaceFs.open(options.allowOutsideRoot ? '/' : path);
  } catch (error) {
    throw new ApplyPatchError('VERIFICATION_FAILED', `workspace root ${path} is not accessible: ${describeFsError(error)}`, { cause: error });
  }
  let realPath = fs.realRoot;
  if (options.allowOutsideRoot) {
    try {
      realPath = await WorkspaceFs.open(path).then(async (rooted) => {
        await rooted.close();
        return rooted.realRoot;
      });
    } catch (error) {
      await fs.close();
      throw new ApplyPatchError('VERIFICATION_FAILED', `workspace root ${path} is not accessible: ${describeFsError(error)}`, { cause: error });
    }
  }
  const protectedNames = new Set((options.protectedNames ?? DEFAULT_PROTECTED_NAMES).map((name) => name.toLowerCase()));
  return { path, realPath, fs, protectedNames };
}

const outside = (raw: string, how = '') =>
  new ApplyPatchError('PATH_OUTSIDE_ROOT', `path '${raw}' resolves outside the workspace root${how}`);

const HOW: Record<OutsideRootError['how'], string> = {
  lexical: '',
  link: ' through a symbolic link',
  dangling: ' (it is a dangling symbolic link)',
};

/**
 * Resolves a patch path (relative to the root, or absolute) without letting the kernel follow a
 * link (see {@link WorkspaceFs.resolve}). Unless `allowOutsideRoot`, refuses one that lands
 * outside the root lexically (`..`, an absolute path elsewhere) or through a symbolic link
 * (`PATH_OUTSIDE_ROOT`); a dangling link cannot be checked and is refused too. A path in or
 * through a protected folder (`.git` at any depth) is refused with `PROTECTED_PATH`.
 */
export async function resolveWorkspacePath(raw: string, root: WorkspaceRoot, { allowOutsideRoot }: { allowOutsideRoot: boolean }): Promise<ResolvedPath> {
  const absolute = resolve(root.path, raw);
  let components: string[];
  if (allowOutsideRoot) {
    components = splitPath(absolute);
  } else {
    // Inside the root as given, or inside its resolved form (an absolute path spelled either way).
    const base = [root.path, root.realPath].find((candidate) => isInside(candidate, absolute));
    if (base === undefined) throw outside(raw);
    components = splitPath(relative(base, absolute));
  }
  refuseProtected(raw, components, root, { resolved: false });
  const aliases = [root.path];
  let location;
  let target;
  try {
    location = await root.fs.resolve(components, { followFinal: false, aliases });
    try {
      // Following the final component only differs from not following it when it is a link.
      target = location.finalLink === true ? await root.fs.resolve(components, { followFinal: true, aliases }) : location;
    } catch (error) {
      // With outside paths allowed, a dangling link is written as a plain file in its place.
      if (!(allowOutsideRoot && error instanceof OutsideRootError && error.how === 'dangling')) throw error;
      target = location;
    }
  } catch (error) {
    if (error instanceof OutsideRootError) throw outside(raw, HOW[error.how]);
    throw new ApplyPatchError('VERIFICATION_FAILED', `Failed to resolve ${raw}: ${describeFsError(error)}`, { cause: error });
  }
  refuseProtected(raw, location.components, root, { resolved: true });
  refuseProtected(raw, target.components, root, { resolved: true });
  return {
    raw,
    absolute,
    location: root.fs.absolute(location.components),
    target: root.fs.absolute(target.components),
    locationParts: location.components,
    targetParts: target.components,
  };
}

/** Throws `PROTECTED_PATH` when a component (below the workspace root) is a protected name. */
function refuseProtected(raw: string, components: readonly string[], root: WorkspaceRoot, { resolved }: { resolved: boolean }): void {
  let below = components;
  if (root.fs.realRoot !== root.realPath) {
    // The walker is rooted at `/`: only what lies below the workspace root counts, when inside it.
    const absolute = root.fs.absolute(components);
    if (isInside(root.realPath, absolute)) below = splitPath(relative(root.realPath, absolute));
  }
  const hit = below.find((component) => root.protectedNames.has(component.toLowerCase()));
  if (hit === undefined) return;
  const how = resolved ? 'leads into' : 'is inside';
  throw new ApplyPatchError('PROTECTED_PATH', `path '${raw}' ${how} ${hit}, which apply_patch does not change`);
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
  ELOOP: 'Too many levels of symbolic links',
};

/** Linux's numbers of the errors above, for {@link describeOsError}. */
const ERRNO: Record<string, number> = { ENOENT: 2, EISDIR: 21, ENOTDIR: 20, EACCES: 13, EPERM: 1, EEXIST: 17, ENOSPC: 28, EROFS: 30, ENOTEMPTY: 39, ELOOP: 40 };

/**
 * {@link describeFsError} as the reference's Rust prints an OS error when it reads a file the patch
 * names: `No such file or directory (os error 2)`.
 */
export function describeOsError(error: unknown): string {
  const code = (error as { code?: string } | null)?.code;
  const text = describeFsError(error);
  return code && ERRNO[code] !== undefined ? `${text} (os error ${ERRNO[code]})` : text;
}

/** A short, path-free reason for a file-system error ("No such file or directory"). */
export function describeFsError(error: unknown): string {
  const code = (error as { code?: string } | null)?.code;
  if (code && MESSAGES[code]) return MESSAGES[code];
  return error instanceof Error ? error.message : String(error);
}
