import { close as closeFd, closeSync, constants, existsSync, openSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { isAbsolute, join, relative, sep } from 'node:path';
import type { Stats } from 'node:fs';
import { attempt, workspaceIo, type WorkspaceIo } from './workspace-io';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY } = constants;
/** Absent on Windows, where no named pipe sits in a folder. */
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/**
 * Linux's `O_PATH` (Node does not export it): a descriptor that names an inode without opening it
 * for reading — no side effect on a FIFO or a device swapped in, no permission needed. Its value is
 * the generic one, which x86-64 and arm64 use; elsewhere replaced files are not held (see
 * {@link WorkspaceFs.writeFileAtomic}).
 */
const O_PATH = process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64') ? 0o10000000 : undefined;

/** Replaced files held open at most per walker (each is one descriptor until the walker closes). */
const MAX_HELD_REPLACED = 256;

/** Symbolic links followed while resolving one path, at most (the kernel's own limit is 40). */
const MAX_LINK_HOPS = 40;

/** Thrown when a path leaves the walk's root, or a link inside it cannot be followed safely. */
export class OutsideRootError extends Error {
  constructor(readonly how: 'lexical' | 'link' | 'dangling') {
    super(how);
  }
}

/** Thrown when a component expected to be a plain folder turned out to be a link (a swap raced us). */
export class LinkInPathError extends Error {
  constructor(readonly path: string) {
    super(`${path} is a symbolic link`);
  }
}

/** A path resolved beneath the root: physical components (no link in them), and whether it exists. */
export interface PhysicalPath {
  /** Components below the root, every one a real folder except possibly the last. */
  readonly components: readonly string[];
  /** False when some component (the last, or a folder before it) does not exist yet. */
  readonly exists: boolean;
  /** True when the last component is a symbolic link left unfollowed (`followFinal: false`). */
  readonly finalLink?: boolean;
}

/**
 * File access confined beneath one root folder, without ever letting the kernel follow a symbolic
 * link. Every operation walks from an open descriptor of the root one name at a time: each folder
 * is opened with `O_DIRECTORY | O_NOFOLLOW` relative to its parent's descriptor (through
 * `/proc/self/fd/<fd>/<name>`, Linux's stand-in for `openat`), so swapping a folder for a link
 * while we walk makes the open fail instead of leading elsewhere. Links are followed only by
 * {@link resolve}, which reads them and continues the walk itself, refusing any that leaves the
 * root. Temporary files are created with `O_CREAT | O_EXCL | O_NOFOLLOW` in the target's own
 * folder (by descriptor) and renamed over the target; rename and unlink never follow a link.
 *
 * Without `/proc` (macOS, Windows, a container without it) each folder is checked with `lstat`
 * just before use and files are opened with `O_NOFOLLOW`: a swap between a check and its use can
 * still redirect one operation there (see the package README for the residual risk).
 */
export class WorkspaceFs {
  /**
   * Folders opened so far (below the root, by their components joined with `/`), each opened once
   * per walker: a patch naming 100 files in one folder opens it once, not 600 times. A held
   * descriptor keeps naming the folder it opened even if that folder is then renamed or swapped
   * for a link, so later operations still land in a real folder reached without following a link
   * (the folder-moved residual risk of the README spans the walker's life, one phase of a patch).
   */
  private readonly folders = new Map<string, Promise<number>>();
  /** `O_PATH` descriptors of files replaced by {@link writeFileAtomic}, closed by {@link close} without waiting. */
  private readonly replaced: number[] = [];

  private constructor(
    /** The root as the kernel knows it (links resolved). */
    readonly realRoot: string,
    private readonly rootFd: number | undefined,
    /** The file-system calls, synchronous or not (see `useWorkspaceIo`): the same walk either way. */
    private readonly io: WorkspaceIo,
  ) {}

  /** Opens `root` (its links resolved once: the host chose it). Throws the fs error when it cannot. */
  static async open(root: string): Promise<WorkspaceFs> {
    const io = workspaceIo();
    const realRoot = await io.realpath(root);
    const rootFd = procFdUsable() ? await io.open(realRoot, O_RDONLY | O_DIRECTORY) : undefined;
    return new WorkspaceFs(realRoot, rootFd, io);
  }

  /** True when operations go through descriptors (race-free); false on the lstat fallback. */
  get descriptorBased(): boolean {
    return this.rootFd !== undefined;
  }

  /** Closes the root descriptor. The object must not be used afterwards. */
  async close(): Promise<void> {
    const folders = [...this.folders.values()];
    this.folders.clear();
    for (const pending of folders) await pending.then((fd) => this.io.close(fd)).catch(() => undefined);
    if (this.rootFd !== undefined) await this.io.close(this.rootFd);
    // The last reference to each replaced file goes on the thread pool, unawaited: freeing its
    // blocks happens off the patch's path.
    for (const fd of this.replaced.splice(0)) closeFd(fd, () => undefined);
  }

  /** The absolute path of physical components (for messages and keys). */
  absolute(components: readonly string[]): string {
    return components.length === 0 ? this.realRoot : join(this.realRoot, ...components);
  }

  /**
   * Resolves `components` (already lexically inside the root: no `..` escaping it) physically:
   * every symbolic link among the folders — and the last component too with `followFinal` — is
   * read and followed by this walk, never by the kernel, and must stay beneath the root (absolute
   * link targets must start with the root, as given in `aliases` or as its real path). Throws
   * {@link OutsideRootError}: `link` for a link leading out, `dangling` for a followed link whose
   * target does not exist, `lexical` for `..` above the root.
   */
  async resolve(components: readonly string[], { followFinal, aliases = [] }: { followFinal: boolean; aliases?: readonly string[] }): Promise<PhysicalPath> {
    const queue = [...components];
    const stack: string[] = [];
    let hops = 0;
    let viaLink = false;
    /** Set once the last component was a followed link: its target must exist. */
    let targetMustExist = false;
    while (queue.length > 0) {
      const name = queue.shift() as string;
      if (name === '' || name === '.') continue;
      if (name === '..') {
        if (stack.length === 0) throw new OutsideRootError(viaLink ? 'link' : 'lexical');
        stack.pop();
        continue;
      }
      const last = queue.length === 0;
      const stats = await this.lstat([...stack, name]);
      if (stats?.isSymbolicLink() && (!last || followFinal)) {
        if (++hops > MAX_LINK_HOPS) throw Object.assign(new Error('Too many levels of symbolic links'), { code: 'ELOOP' });
        const target = await this.readlink([...stack, name]);
        viaLink = true;
        if (last) targetMustExist = true;
        if (isAbsolute(target)) {
          const inside = [this.realRoot, ...aliases].map((base) => relative(base, target)).find(isBelow);
          if (inside === undefined) throw new OutsideRootError(targetMustExist && !(await exists(target)) ? 'dangling' : 'link');
          stack.length = 0;
          queue.unshift(...splitPath(inside));
        } else {
          queue.unshift(...splitPath(target));
        }
        continue;
      }
      stack.push(name);
      if (last && stats?.isSymbolicLink()) return { components: stack, exists: true, finalLink: true };
      if (!stats) {
        // Missing: nothing below it exists, so nothing below it is a link; `..` there cannot resolve.
        if (targetMustExist) throw new OutsideRootError('dangling');
        if (queue.includes('..')) throw Object.assign(new Error('No such file or directory'), { code: 'ENOENT' });
        stack.push(...queue.filter((part) => part !== '' && part !== '.'));
        return { components: stack, exists: false };
      }
    }
    return { components: stack, exists: true };
  }

  /** `lstat` of a physical path (`undefined` when it, or a folder on the way, does not exist). */
  async lstat(components: readonly string[]): Promise<Stats | undefined> {
    if (components.length === 0) return this.io.lstat(this.realRoot);
    return this.withParent(components, false, async (at) => this.io.lstat(at)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
      throw error;
    });
  }

  /** The target text of a link. */
  async readlink(components: readonly string[]): Promise<string> {
    return this.withParent(components, false, async (at) => this.io.readlink(at));
  }

  /**
   * Reads a regular file without following a link at any component. Throws `EISDIR` for a folder,
   * `ELOOP` for a link, a {@link NotAFileError} for a named pipe, a socket or a device (at once:
   * it never waits in `open`), and a {@link FileTooLargeError} when it holds more than `maxBytes`.
   */
  async readFile(components: readonly string[], maxBytes: number): Promise<{ bytes: Buffer; mode: number }> {
    const io = this.io;
    return this.withParent(components, false, async (at) => {
      // Non-blocking: a named pipe opens at once (its type is then read from the descriptor, not
      // from the name, so nothing swapped in between is trusted); a socket refuses the open.
      const fd = await attempt(() => io.open(at, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)).catch(async (error: NodeJS.ErrnoException) => {
        const kind = specialKind(await attempt(() => io.lstat(at)).catch(() => undefined));
        throw kind ? new NotAFileError(kind) : error;
      });
      try {
        const stats = await io.fstat(fd);
        if (stats.isDirectory()) throw Object.assign(new Error('Is a directory'), { code: 'EISDIR' });
        if (!stats.isFile()) throw new NotAFileError(specialKind(stats) ?? 'not a regular file');
        if (stats.size > maxBytes) throw new FileTooLargeError(stats.size, maxBytes);
        // Read one byte more than allowed: a file growing past the cap meanwhile is refused too.
        const buffer = Buffer.allocUnsafe(Math.min(stats.size, maxBytes) + 1);
        let length = 0;
        for (;;) {
          const bytesRead = await io.read(fd, buffer, length, buffer.length - length, length);
          if (bytesRead === 0) break;
          length += bytesRead;
          if (length > maxBytes) throw new FileTooLargeError(length, maxBytes);
          if (length === buffer.length) break;
        }
        return { bytes: buffer.subarray(0, length), mode: stats.mode & 0o7777 };
      } finally {
        await io.close(fd);
      }
    });
  }

  /**
   * Writes `bytes` to a temporary file created exclusively in the target's own folder, then
   * renames it over the target (atomic; a link at the target is replaced, never followed).
   * Missing parent folders are created, each opened without following links; returns the
   * components of the first folder it created (for rollback), if any.
   */
  async writeFileAtomic(components: readonly string[], bytes: Uint8Array, mode?: number): Promise<readonly string[] | undefined> {
    let created: readonly string[] | undefined;
    await this.withParent(components, true, async (at, name, folder) => {
      const temporary = folder(`.${name}.${randomBytes(6).toString('hex')}.apply-patch.tmp`);
      // 0o666 less the umask, like any new file; an existing file's mode is copied below.
      const io = this.io;
      const fd = await io.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
      try {
        try {
          await io.writeAll(fd, bytes);
          if (mode !== undefined) await io.fchmod(fd, mode);
        } finally {
          await io.close(fd);
        }
        if (mode !== undefined) await this.holdReplaced(at);
        await io.rename(temporary, at);
      } catch (error) {
        await attempt(() => io.unlink(temporary)).catch(() => undefined);
        throw error;
      }
    }, (first) => {
      created = first;
    });
    return created;
  }

  /**
   * Holds the file about to be replaced at `at` by an `O_PATH` descriptor (never following a
   * link), so the rename over it only drops a name: the kernel frees the replaced file's blocks
   * when the last reference goes, which is then {@link close}'s unawaited close instead of the
   * rename. Measured on ext4 (mounted with `discard`): renaming over 100 files of 12 KB took
   * 9–35 ms; holding them first, 6–10 ms, and the frees ran after. Best effort: a failure (the
   * file is gone, too many held) leaves the rename to free it.
   */
  private async holdReplaced(at: string): Promise<void> {
    if (O_PATH === undefined || this.replaced.length >= MAX_HELD_REPLACED) return;
    try {
      this.replaced.push(await this.io.open(at, O_PATH | O_NOFOLLOW));
    } catch {
      // nothing to hold: the rename frees whatever it replaces
    }
  }

  /** Removes a file or link (never what a link points to). */
  async unlink(components: readonly string[]): Promise<void> {
    await this.withParent(components, false, async (at) => this.io.unlink(at));
  }

  /** Creates a symbolic link (rollback of a deleted link). */
  async symlink(target: string, components: readonly string[]): Promise<void> {
    await this.withParent(components, false, async (at) => this.io.symlink(target, at));
  }

  /** Removes an empty folder. */
  async rmdir(components: readonly string[]): Promise<void> {
    await this.withParent(components, false, async (at) => this.io.rmdir(at));
    // A removed folder's descriptor (and those below it) must not be reused.
    const key = components.join('/');
    for (const [cached, pending] of this.folders) {
      if (cached === key || cached.startsWith(`${key}/`)) {
        this.folders.delete(cached);
        void pending.then((fd) => this.io.close(fd)).catch(() => undefined);
      }
    }
  }

  /**
   * Opens the parent folder of `components` (creating missing folders when `create`) and runs
   * `action` with a path naming the last component relative to that open folder. The path is
   * only ever resolved one name below a descriptor, so no link on the way is followed.
   */
  private async withParent<T>(
    components: readonly string[],
    create: boolean,
    action: (at: string, name: string, folder: (child: string) => string) => Promise<T>,
    onCreated?: (first: readonly string[]) => void,
  ): Promise<T> {
    const name = components[components.length - 1];
    const folders = components.slice(0, -1);
    if (this.rootFd === undefined) return this.withParentByPath(folders, name, create, action, onCreated);
    let fd = this.rootFd;
    for (const [index, folder] of folders.entries()) {
      const soFar = folders.slice(0, index + 1);
      const key = soFar.join('/');
      const open = () => {
        const pending = openChildFolder(this.io, parent, folder, create, soFar, (first) => {
          onCreated?.(first);
          onCreated = undefined;
        });
        this.folders.set(key, pending);
        // A failed open is not remembered: the folder may be created by a later write.
        pending.catch(() => {
          if (this.folders.get(key) === pending) this.folders.delete(key);
        });
        return pending;
      };
      const parent = fd;
      const cached = this.folders.get(key);
      // A write creates the folder a concurrent read found missing.
      fd = await (cached ? cached.catch((error: unknown) => (create ? open() : Promise.reject(error))) : open());
    }
    const base = fd;
    const folderPath = (child: string) => `/proc/self/fd/${base}/${child}`;
    return action(folderPath(name), name, folderPath);
  }

  /** The fallback without `/proc`: each folder is checked with lstat right before use. */
  private async withParentByPath<T>(
    folders: readonly string[],
    name: string,
    create: boolean,
    action: (at: string, name: string, folder: (child: string) => string) => Promise<T>,
    onCreated?: (first: readonly string[]) => void,
  ): Promise<T> {
    let current = this.realRoot;
    for (const [index, folder] of folders.entries()) {
      current = join(current, folder);
      const stats = await attempt(() => this.io.lstat(current)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' && create) return undefined;
        throw error;
      });
      if (stats?.isSymbolicLink()) throw new LinkInPathError(join(...folders.slice(0, index + 1)));
      if (stats && !stats.isDirectory()) throw create ? Object.assign(new Error('File exists'), { code: 'EEXIST' }) : Object.assign(new Error('Not a directory'), { code: 'ENOTDIR' });
      if (!stats) {
        await attempt(() => this.io.mkdir(current)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
        });
        onCreated?.(folders.slice(0, index + 1));
        onCreated = undefined;
      }
    }
    // Re-check that the folder we reached is still beneath the root, then act.
    const reached = await this.io.realpath(current);
    if (reached !== current) throw new LinkInPathError(join(...folders));
    const base = current;
    return action(join(base, name), name, (child) => join(base, child));
  }
}

/** Opens `name` below the folder `parentFd` as a folder, refusing a link; creates it if asked. */
async function openChildFolder(
  io: WorkspaceIo,
  parentFd: number,
  name: string,
  create: boolean,
  soFar: readonly string[],
  onCreated: (first: readonly string[]) => void,
): Promise<number> {
  const at = `/proc/self/fd/${parentFd}/${name}`;
  for (let round = 0; ; round++) {
    try {
      return await io.open(at, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR' || code === 'ELOOP') {
        const stats = await attempt(() => io.lstat(at)).catch(() => undefined);
        if (stats?.isSymbolicLink()) throw new LinkInPathError(join(...soFar));
        // A file where a folder must be created: what `mkdir -p` reports.
        if (create) throw Object.assign(new Error('File exists'), { code: 'EEXIST' });
        throw error;
      }
      if (code !== 'ENOENT' || !create || round > 0) throw error;
      try {
        await io.mkdir(at);
        onCreated(soFar);
      } catch (mkdirError) {
        // Someone else created it meanwhile: open whatever is there now (still without following).
        if ((mkdirError as NodeJS.ErrnoException).code !== 'EEXIST') throw mkdirError;
      }
    }
  }
}

/** True for a relative path that stays at or below its base. */
function isBelow(rel: string): boolean {
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** A file larger than the cap (`size` may be a lower bound when it grew while read). */
export class FileTooLargeError extends Error {
  readonly code = 'EFBIG';
  constructor(
    readonly size: number,
    readonly limit: number,
  ) {
    super(`file is larger than ${limit} bytes`);
  }
}

/** A named pipe, a socket or a device where a file was expected: apply_patch edits regular files only. */
export class NotAFileError extends Error {
  readonly code = 'ENOTFILE';
  /** What is there instead, for the model: `a named pipe`, `a socket`, `a character device`, `a block device`. */
  constructor(readonly kind: string) {
    super(`not a file: it is ${kind}`);
  }
}

/** What a non-regular, non-directory entry is (`undefined` for a file, a folder, a link or nothing). */
export function specialKind(stats: Stats | undefined): string | undefined {
  if (!stats) return undefined;
  if (stats.isFIFO()) return 'a named pipe';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return undefined;
}

/** Splits a link target or relative path into components (either separator on Windows). */
export function splitPath(path: string): string[] {
  return path.split(sep === '\\' ? /[\\/]/ : '/').filter((part) => part !== '');
}

/** True when `path` exists, links followed (an `access` on the thread pool). */
async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

let procChecked: boolean | undefined;

/** True when `/proc/self/fd/<fd>/<name>` reaches below an open folder (Linux with /proc mounted); synchronous, once per process. */
function procFdUsable(): boolean {
  if (procChecked !== undefined) return procChecked;
  procChecked = false;
  if (process.platform !== 'linux') return false;
  let fd: number | undefined;
  try {
    fd = openSync('/', O_RDONLY | O_DIRECTORY);
    procChecked = existsSync(`/proc/self/fd/${fd}/.`);
  } catch {
    procChecked = false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return procChecked;
}

export type { Stats };
