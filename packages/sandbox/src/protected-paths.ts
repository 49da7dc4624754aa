import { existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, rmdirSync, type Dirent, type Stats } from 'node:fs';
import { lstat as lstatAsync, readdir as readdirAsync } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { checkOptions, optionRules as rule } from '@switchyard/kit/internal';
import { gitWalkExceeded } from './errors';
import type { SandboxPolicy } from './policy';
import { DEFAULT_SANDBOX_LIMITS } from './resource-limits';

/** The name git looks for: a repository directory, or a worktree's / submodule's gitfile. */
export const GIT_DIR_NAME = '.git';

const WALK_BOUND_RULES = { limits: rule.shape<{ gitWalkDirectories?: number }>({ gitWalkDirectories: rule.number({ min: 1, integer: true }) }) };

/**
 * The walk's bound for `policy` (directories per root): `limits.gitWalkDirectories`, else the
 * default. Throws a `CONFIG` error naming `limits.gitWalkDirectories` when it is not an integer ≥ 1.
 */
export function gitWalkBound(policy: Pick<SandboxPolicy, 'limits'>): number {
  const gitWalkDirectories = policy.limits?.gitWalkDirectories;
  checkOptions('sandbox policy', { limits: { gitWalkDirectories } }, WALK_BOUND_RULES);
  return gitWalkDirectories ?? DEFAULT_SANDBOX_LIMITS.gitWalkDirectories;
}

/**
 * Directories the walk does not enter: package managers keep no `.git` in them and git never takes
 * one for a submodule, while they hold most directories of a typical workspace.
 */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['node_modules']);

/** A path sandboxed writes may never touch, and why it is on the list. */
export interface ProtectedPath {
  /** Absolute, with symbolic links resolved. */
  readonly path: string;
  /** `root-git`: `<writable root>/.git` (protected whether or not it exists); `nested-git`: a `.git` found inside. */
  readonly kind: 'root-git' | 'nested-git';
  /** The writable root it was found under (absolute, links resolved). */
  readonly root: string;
  /** False for a root `.git` that does not exist yet (the sandbox mounts a read-only placeholder there). */
  readonly exists: boolean;
}

/**
 * Resolves symbolic links of `path`, or of its nearest existing ancestor (the rest appended).
 * Synchronous: a `realpath` of one path (a few for a path that does not exist yet).
 */
export function resolveExisting(path: string): string {
  const absolute = resolve(path);
  let head = absolute;
  const tail: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(head), ...tail.reverse());
    } catch {
      const parent = dirname(head);
      if (parent === head) return absolute;
      tail.push(head.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
      head = parent;
    }
  }
}

/** True when `path` is `base` or inside it (both absolute and normalized). */
export function isWithin(base: string, path: string): boolean {
  const rel = relative(base, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The writable roots of a policy (the workspace root first), absolute with links resolved. */
export function writableRoots(policy: Pick<SandboxPolicy, 'root' | 'writableRoots'>): string[] {
  const roots = [policy.root, ...(policy.writableRoots ?? [])].map(resolveExisting);
  return roots.filter((root, index) => roots.indexOf(root) === index);
}

/** What `path` is (not following a link): one synchronous `lstat`, per root and command. */
function isDirectoryEntry(path: string): 'dir' | 'file' | undefined {
  try {
    const stat = lstatSync(path);
    if (stat.isDirectory()) return 'dir';
    if (stat.isFile()) return 'file';
  } catch {
    // absent
  }
  return undefined;
}

/** What the walk learned about one directory, valid while its identity and change time stay the same. */
interface DirectoryRecord {
  readonly dev: number;
  readonly ino: number;
  readonly ctimeMs: number;
  readonly mtimeMs: number;
  /** Names of the subdirectories the walk enters (not `.git`, not skipped ones, no links). */
  readonly subdirectories: readonly string[];
  /** A `.git` directory or gitfile is in it. */
  readonly git: boolean;
  /** False when it changed too close to the walk that read it for its change time to tell a later change apart. */
  readonly settled: boolean;
}

/**
 * How long before a walk a directory's last change must lie for its record to be reused: the
 * kernel stamps change times from a coarse clock (one tick late at most) and some file systems
 * round them (to 1 s, FAT's to 2 s), so a directory changed within that span of the walk that read
 * it could change again and keep its stamp. Two seconds cover every tick and rounding.
 */
const SETTLED_MS = 2_000;

/**
 * The records of the last walk of each root, for the next walk of the same root: 8 roots and
 * {@link MAX_CACHED_RECORDS} records at most in all (the oldest roots are dropped first; a walk
 * that read more keeps nothing, and its root's next walk reads every directory again).
 */
const walkCache = new Map<string, Map<string, DirectoryRecord>>();
const MAX_CACHED_ROOTS = 8;
/**
 * The most directory records the walk cache holds, over every root: one walk at the default bound
 * (250,000) fits. A record is its path, a few numbers and its subdirectories' names: about 340
 * bytes of heap each as measured (tools/bench `git-walk.ts`), so about 85 MB at most.
 */
const MAX_CACHED_RECORDS = 250_000;

/** Keeps `records` as the last walk of `root`, dropping the oldest roots past the cache's bounds. */
function cacheWalk(root: string, records: Map<string, DirectoryRecord> | undefined): void {
  walkCache.delete(root);
  if (!records) return;
  walkCache.set(root, records);
  let total = 0;
  for (const kept of walkCache.values()) total += kept.size;
  for (const [oldest, kept] of walkCache) {
    if (walkCache.size <= MAX_CACHED_ROOTS && total <= MAX_CACHED_RECORDS) break;
    walkCache.delete(oldest);
    total -= kept.size;
  }
}

/** What a directory's entries say: its subdirectories to enter and whether a `.git` is in it. */
function recordOf(entries: readonly Dirent[], stat: Stats, walkStarted: number): DirectoryRecord {
  const subdirectories: string[] = [];
  let git = false;
  for (const entry of entries) {
    if (entry.name === GIT_DIR_NAME) {
      git ||= entry.isDirectory() || entry.isFile();
      continue; // never descend into a repository's own directory
    }
    if (entry.isDirectory() && !SKIPPED_DIRECTORIES.has(entry.name)) subdirectories.push(entry.name);
  }
  const settled = Math.max(stat.ctimeMs, stat.mtimeMs) < walkStarted - SETTLED_MS;
  return { dev: stat.dev, ino: stat.ino, ctimeMs: stat.ctimeMs, mtimeMs: stat.mtimeMs, subdirectories, git, settled };
}

/** The last walk's record of a directory, when its identity and change time say nothing changed since. */
function unchanged(known: DirectoryRecord | undefined, stat: Stats): DirectoryRecord | undefined {
  const same = known !== undefined && known.settled && known.dev === stat.dev && known.ino === stat.ino && known.ctimeMs === stat.ctimeMs && known.mtimeMs === stat.mtimeMs;
  return same ? known : undefined;
}

/** What one walk of a root found: the nested `.git` entries, and whether every directory was visited. */
interface WalkResult {
  readonly root: string;
  readonly nested: readonly string[];
  readonly complete: boolean;
}

/** Processed entries the walk's queue keeps before it drops them (the queue holds only what is left to visit). */
const QUEUE_COMPACT_AT = 4_096;

/** One walk of a root: the queue (breadth first), the records read, what was found. */
class Walk {
  readonly started = Date.now();
  readonly previous: Map<string, DirectoryRecord> | undefined;
  /** This walk's records for the next one; `undefined` once more than the cache holds were read. */
  private records: Map<string, DirectoryRecord> | undefined = new Map();
  readonly found: string[] = [];
  private queue: string[];
  private head = 0;
  private visited = 0;

  constructor(
    readonly root: string,
    /** The most directories it visits ({@link gitWalkBound}). */
    private readonly bound: number,
  ) {
    this.previous = walkCache.get(root);
    this.queue = [root];
  }

  get pending(): boolean {
    return this.head < this.queue.length && this.visited < this.bound;
  }

  /** The next directories to visit, at most `count` (and none past the bound). */
  nextBatch(count: number): string[] {
    const size = Math.min(count, this.bound - this.visited, this.queue.length - this.head);
    const batch = this.queue.slice(this.head, this.head + size);
    this.head += size;
    this.visited += size;
    if (this.head >= QUEUE_COMPACT_AT && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return batch;
  }

  /** Takes a directory's record (or `undefined`: gone, not a directory, unreadable) into the walk. */
  take(dir: string, record: DirectoryRecord | undefined): void {
    if (!record) return;
    this.records?.set(dir, record);
    if (this.records && this.records.size > MAX_CACHED_RECORDS) this.records = undefined;
    if (record.git && dir !== this.root) this.found.push(join(dir, GIT_DIR_NAME));
    for (const name of record.subdirectories) this.queue.push(join(dir, name));
  }

  /**
   * Keeps this walk's records for the next walk of the root and says what it found; `complete`
   * is false when it stopped at its bound with directories left unvisited.
   */
  finish(): WalkResult {
    cacheWalk(this.root, this.records);
    return { root: this.root, nested: this.found, complete: this.head >= this.queue.length };
  }
}

/**
 * Every `.git` below `root` (not `root/.git` itself), breadth first, links not followed, bounded.
 *
 * A directory's list of entries changes only together with its change time (`ctime`, which the
 * kernel sets and no process can set back: `touch -d` moves `mtime` and stamps a new `ctime`), so
 * a directory whose device, inode and change time match the last walk's record, settled
 * ({@link SETTLED_MS}), is not read again: one `lstat` instead of a `readdir`. Every directory is
 * still visited, so a `.git` created anywhere (or a tree renamed in) is found by the next walk.
 * Synchronous: for callers of the synchronous API that did not scan first ({@link scanProtectedPaths}).
 */
function nestedGitEntries(root: string, bound: number): WalkResult {
  const walk = new Walk(root, bound);
  while (walk.pending) {
    const [dir] = walk.nextBatch(1);
    const stat = lstatSync(dir, { throwIfNoEntry: false });
    if (!stat?.isDirectory()) continue; // gone, or replaced by a link or a file since it was listed
    let record = unchanged(walk.previous?.get(dir), stat);
    if (!record) {
      try {
        record = recordOf(readdirSync(dir, { withFileTypes: true }), stat, walk.started);
      } catch {
        continue; // unreadable or gone
      }
    }
    walk.take(dir, record);
  }
  return walk.finish();
}

/** Directories of one walk read at the same time by {@link nestedGitEntriesAsync}. */
const WALK_BATCH = 32;

/** {@link nestedGitEntries} without blocking the event loop: the same walk, same order, same records, in batches on the thread pool. */
async function nestedGitEntriesAsync(root: string, bound: number): Promise<WalkResult> {
  const walk = new Walk(root, bound);
  while (walk.pending) {
    const batch = walk.nextBatch(WALK_BATCH);
    const records = await Promise.all(batch.map((dir) => readRecord(walk, dir)));
    batch.forEach((dir, index) => walk.take(dir, records[index]));
  }
  return walk.finish();
}

async function readRecord(walk: Walk, dir: string): Promise<DirectoryRecord | undefined> {
  try {
    const stat = await lstatAsync(dir);
    if (!stat.isDirectory()) return undefined;
    return unchanged(walk.previous?.get(dir), stat) ?? recordOf(await readdirAsync(dir, { withFileTypes: true }), stat, walk.started);
  } catch {
    return undefined; // gone or unreadable
  }
}

/** The parts of a policy the walk reads: its roots and its bound. */
type WalkPolicy = Pick<SandboxPolicy, 'root' | 'writableRoots' | 'limits'>;

/**
 * The paths that stay read-only for sandboxed commands and must not be written by sandboxed tools
 * (apply_patch): for each writable root (the workspace root and `writableRoots`), `<root>/.git`
 * whether or not it exists yet, and every `.git` directory or gitfile inside it at this moment
 * (walked breadth first without following links or entering `node_modules`, at most
 * {@link gitWalkBound} directories per root). A planted `.git/hooks/*`, `.git/config` (`core.fsmonitor`,
 * `core.hooksPath`) or a submodule's config would run unsandboxed at the user's next git command.
 * `read-only` and `danger-full-access` policies get the same list (it describes the workspace).
 * Throws the `LIMIT_EXCEEDED` refusal when a root holds more directories than the bound: a list
 * that may miss a `.git` is never returned. Synchronous: for callers that did not scan first.
 */
export function protectedPaths(policy: WalkPolicy): ProtectedPath[] {
  return completeList(policy, protectedList(writableRoots(policy).map((root) => nestedGitEntries(root, gitWalkBound(policy)))));
}

/**
 * {@link protectedPaths} without blocking the event loop on the walk (the same bounded walk, its
 * reads on the thread pool): what `sandboxCommand` takes as `protectedPaths`, so a host serving many
 * sessions never walks a workspace on its main thread. Rejects with the same refusal.
 */
export async function scanProtectedPaths(policy: WalkPolicy): Promise<ProtectedPath[]> {
  return completeList(policy, await scanProtectedPathsCoverage(policy));
}

/** The list, or the `LIMIT_EXCEEDED` refusal when a root could not be walked whole. */
function completeList(policy: WalkPolicy, scanned: { list: ProtectedPath[]; unchecked: string[] }): ProtectedPath[] {
  if (scanned.unchecked.length > 0) throw gitWalkExceeded(uncheckedPlaces(policy, scanned.unchecked), gitWalkBound(policy), 'before');
  return scanned.list;
}

/** How a refusal names the roots a walk could not finish: `the workspace` for the policy's root, else the path. */
export function uncheckedPlaces(policy: Pick<SandboxPolicy, 'root'>, unchecked: readonly string[]): string[] {
  const workspace = resolveExisting(policy.root);
  return unchecked.map((root) => (root === workspace ? 'the workspace' : root));
}

/**
 * {@link scanProtectedPaths} with the writable roots whose walk stopped at its bound before
 * visiting every directory (`unchecked`, instead of a rejection): a `.git` below one of them may
 * be missing from the list.
 */
export async function scanProtectedPathsCoverage(policy: WalkPolicy): Promise<{ list: ProtectedPath[]; unchecked: string[] }> {
  const bound = gitWalkBound(policy);
  return protectedList(await Promise.all(writableRoots(policy).map((root) => nestedGitEntriesAsync(root, bound))));
}

/** The list of each root's `.git` (protected whether or not it exists) and the nested ones found, without duplicates; the roots whose walk did not finish. */
function protectedList(scans: readonly WalkResult[]): { list: ProtectedPath[]; unchecked: string[] } {
  const list: ProtectedPath[] = [];
  const unchecked: string[] = [];
  const seen = new Set<string>();
  const add = ({ path, kind, root, exists }: ProtectedPath) => {
    // a nested entry's path is real already (below a resolved root, no link followed, itself no link)
    const real = kind === 'root-git' && exists ? resolveExisting(path) : path;
    if (seen.has(real)) return;
    seen.add(real);
    list.push({ path: real, kind, root, exists });
  };
  for (const { root, nested, complete } of scans) {
    const rootGit = join(root, GIT_DIR_NAME);
    // A placeholder of a running command is still "absent": it goes away when that command ends.
    // Synchronous: an `lstat` (an `access` for a dangling link) of one path per root and command.
    const exists = !placeholders.has(rootGit) && (isDirectoryEntry(rootGit) !== undefined || existsSync(rootGit));
    add({ path: rootGit, kind: 'root-git', root, exists });
    for (const path of nested) add({ path, kind: 'nested-git', root, exists: true });
    if (!complete) unchecked.push(root);
  }
  return { list, unchecked };
}

/**
 * True when a write to `path` would touch a protected path: the path is (or is inside) an entry of
 * `list`, or — below a writable root — one of its components is named `.git` (a repository a
 * write would create). Links of the existing part of `path` are resolved first.
 */
export function isProtectedPath(path: string, list: readonly ProtectedPath[]): boolean {
  const real = resolveExisting(path);
  if (list.some((entry) => isWithin(entry.path, real))) return true;
  const roots = [...new Set(list.map((entry) => entry.root))];
  return roots.some((root) => isWithin(root, real) && relative(root, real).split(sep).includes(GIT_DIR_NAME));
}

/** Placeholders this host made, by path, with the number of commands still using each. */
const placeholders = new Map<string, number>();

/**
 * Creates `<root>/.git` as an empty directory when absent (one synchronous `mkdir`: the mount that
 * covers it is built right after, in the same call), so a read-only mount can cover it (one
 * directory shared by the commands running at once; {@link releaseGitPlaceholder} removes it after
 * the last of them).
 */
export function ensureGitPlaceholder(entry: ProtectedPath): void {
  if (entry.kind !== 'root-git' || entry.exists) return;
  try {
    mkdirSync(entry.path, { mode: 0o755 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  placeholders.set(entry.path, (placeholders.get(entry.path) ?? 0) + 1);
  if (placeholderExitHook) return;
  placeholderExitHook = true;
  process.once('exit', () => placeholders.forEach((_users, path) => removeEmptyDirectory(path)));
}

let placeholderExitHook = false;

/** One synchronous `rmdir`: the host's `exit` handler, which cannot wait, calls it. */
function removeEmptyDirectory(path: string): void {
  try {
    rmdirSync(path);
  } catch {
    // not empty or already gone
  }
}

/**
 * A command that used `entry`'s placeholder ended: after the last one, the empty directory is
 * removed, so a workspace that is not a repository keeps no trace. Never throws (a placeholder
 * that is no longer empty stays).
 */
export function releaseGitPlaceholder(entry: ProtectedPath): void {
  const users = placeholders.get(entry.path);
  if (entry.kind !== 'root-git' || entry.exists || users === undefined) return;
  if (users > 1) return void placeholders.set(entry.path, users - 1);
  placeholders.delete(entry.path);
  removeEmptyDirectory(entry.path);
}
