import { isAbsolute, relative, sep } from 'node:path';
import { ApplyPatchError } from './apply-patch-error';
import { applyChunksWithDiff, type LineEdits } from './apply-chunks';
import { commitFiles, type FileEntry, type Snapshot } from './commit-files';
import { DEFAULT_PATCH_LIMITS, exceedsLines, formatBytes, type PatchLimits } from './limits';
import { parsePatch, type ParsedPatch, type PatchHunk } from './parse-patch';
import { gitFileDiff, gitFileDiffOfReplacements, unifiedDiff, unifiedDiffOfReplacements } from './unified-diff';
import { FileTooLargeError, NotAFileError, WorkspaceFs } from './workspace-fs';
import { lazyProperty } from './lazy-property';
import { describeOsError, isInside, resolveWorkspacePath, resolveWorkspaceRoot, type ResolvedPath, type WorkspaceRoot } from './workspace-path';

/** One file operation of a verified patch, JSON-ready (event data, hook responses, UIs). */
export type FileChange = (
  | { kind: 'add'; path: string; content: string; unifiedDiff: string }
  | { kind: 'delete'; path: string; content: string; unifiedDiff: string }
  | { kind: 'update'; path: string; movePath?: string; newContent: string; unifiedDiff: string }
) & {
  /**
   * `content` / `newContent` is `""`: the apply_patch tool's helper does not send a text past
   * `INLINE_CONTENT_BYTES` (2 MiB) to the host; `unifiedDiff` says what changed.
   */
  contentOmitted?: true;
};

/** A file's content before and after the whole patch (`null`: absent). */
export interface FileState {
  /** Absolute path on disk. */
  path: string;
  /** Path relative to the workspace root with `/` separators (absolute when outside it). */
  displayPath: string;
  before: string | null;
  after: string | null;
  /**
   * Set when the contents were left out (the apply_patch tool's helper does so past
   * `INLINE_CONTENT_BYTES`): `before` and `after` are then `null` and these sha256 hashes (`null`:
   * absent) stand for them; `diff` is always set with it.
   */
  hashes?: { before: string | null; after: string | null };
  /**
   * The git-style diff of `before` → `after` when already computed (the helper process does it, so
   * a turn-diff tracker seeing this file first needs no diff on the host).
   */
  diff?: string;
}

/** Options of {@link verifyPatch} and {@link applyPatch}. */
export interface VerifyPatchOptions {
  /** Workspace root: relative paths resolve against it, and every path must stay inside it. */
  root: string;
  /** Accept paths outside the root (`..`, absolute paths elsewhere, links leaving it). Default false. */
  allowOutsideRoot?: boolean;
  /**
   * Folder (or file) names never written, replaced or deleted, at any depth, compared
   * case-insensitively — also when a link leads into them. Default `['.git']`.
   */
  protectedNames?: readonly string[];
  /** Size and line caps (see {@link PatchLimits}); unset members keep their defaults. */
  limits?: Partial<PatchLimits>;
}

/** Options of {@link applyPatch}. */
export interface ApplyPatchOptions extends VerifyPatchOptions {
  /** Aborting before the writes start refuses the patch (`ABORTED`); writes are never interrupted. */
  signal?: AbortSignal;
}

/** What an applied patch did. */
export interface ApplyPatchResult {
  /** "Success. Updated the following files:\n" then `A`, `M`, `D` lines (paths as written). */
  summary: string;
  added: string[];
  modified: string[];
  deleted: string[];
  /** One entry per hunk, in patch order. */
  changes: FileChange[];
  /** Every file the patch touches, in first-touch order. */
  files: FileState[];
}

/** A verified patch: every hunk checked, every new content computed, nothing written yet. */
export interface PatchPlan extends ApplyPatchResult {
  /**
   * Writes the plan all-or-nothing: files atomically (temporary file + rename), deletions last;
   * on a failure the files already written are restored and an `ApplyPatchError`
   * (`WRITE_FAILED`) is thrown. Call at most once.
   */
  commit(options?: { signal?: AbortSignal }): Promise<ApplyPatchResult>;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lossy = new TextDecoder('utf-8', { ignoreBOM: true });

const verificationError = (message: string, cause?: unknown) => new ApplyPatchError('VERIFICATION_FAILED', message, { cause });

/**
 * What is at an entry now: a link (with the content it leads to), a folder, a file, something that
 * is not a file (a named pipe, a socket, a device, or a link to one) or nothing.
 */
async function snapshot(fs: WorkspaceFs, parts: readonly string[], targetParts: readonly string[], maxBytes: number): Promise<Snapshot> {
  try {
    return await readSnapshot(fs, parts, targetParts, maxBytes);
  } catch (error) {
    if (error instanceof NotAFileError) return { kind: 'special', what: error.kind };
    throw error;
  }
}

async function readSnapshot(fs: WorkspaceFs, parts: readonly string[], targetParts: readonly string[], maxBytes: number): Promise<Snapshot> {
  // Most entries are plain files: one open (without following a link) answers; the rest are told apart by lstat.
  const read = await fs.readFile(parts, maxBytes).catch((error: unknown) => {
    if (error instanceof FileTooLargeError || error instanceof NotAFileError) throw error;
    return undefined;
  });
  if (read) return { kind: 'file', bytes: read.bytes, mode: read.mode };
  const stats = await fs.lstat(parts);
  if (!stats) return { kind: 'absent' };
  if (stats.isDirectory()) return { kind: 'directory' };
  if (stats.isSymbolicLink()) {
    // A link to a pipe, a socket or a device is that thing for every hunk; a dangling one reads as empty.
    const bytes = await fs.readFile(targetParts, maxBytes).then(
      (read) => read.bytes,
      (error: unknown) => {
        if (error instanceof NotAFileError) throw error;
        return Buffer.alloc(0);
      },
    );
    return { kind: 'symlink', linkTarget: await fs.readlink(parts), bytes };
  }
  const { bytes, mode } = await fs.readFile(parts, maxBytes);
  return { kind: 'file', bytes, mode };
}

const limitError = (message: string) => new ApplyPatchError('LIMIT_EXCEEDED', message);

/**
 * Parses (if given text) and verifies a patch against the files under `root` without writing
 * anything: paths are resolved and checked, every file is read and every hunk located, in patch
 * order over an in-memory view (so a later hunk sees an earlier one's result). Throws an
 * {@link ApplyPatchError} on the first problem.
 */
export async function verifyPatch(patch: string | ParsedPatch, options: VerifyPatchOptions): Promise<PatchPlan> {
  const limits: PatchLimits = { ...DEFAULT_PATCH_LIMITS, ...options.limits };
  if (typeof patch === 'string') {
    const size = Buffer.byteLength(patch, 'utf8');
    if (size > limits.maxPatchBytes) {
      throw limitError(`the patch is ${formatBytes(size)}; apply_patch accepts patches of at most ${formatBytes(limits.maxPatchBytes)}`);
    }
  }
  const parsed = typeof patch === 'string' ? parsePatch(patch) : patch;
  if (parsed.hunks.length === 0) throw new ApplyPatchError('NO_CHANGES', 'No files were modified.');
  if (parsed.hunks.length > limits.maxFiles) {
    throw limitError(`the patch has ${parsed.hunks.length} file sections; apply_patch changes at most ${limits.maxFiles} files per patch; split it into smaller patches`);
  }
  const allowOutside = options.allowOutsideRoot ?? false;
  const root = await resolveWorkspaceRoot(options.root, { allowOutsideRoot: allowOutside, protectedNames: options.protectedNames });
  try {
    return await verifyWithRoot(parsed, { root, allowOutside, limits, options });
  } finally {
    await root.fs.close();
  }
}

/** What a verification works with: the opened root, and the options as {@link verifyPatch} resolved them. */
interface VerificationScope {
  readonly root: WorkspaceRoot;
  readonly allowOutside: boolean;
  readonly limits: PatchLimits;
  readonly options: VerifyPatchOptions;
}

async function verifyWithRoot(parsed: ParsedPatch, scope: VerificationScope): Promise<PatchPlan> {
  const verification = new PatchVerification(scope);
  // Resolve every path and start every read at once; the walk then runs in patch order.
  const prepared = verification.prepare(parsed.hunks);
  for (const [index, hunk] of parsed.hunks.entries()) {
    const { primary, move } = await prepared[index];
    if (hunk.type === 'add') await verification.add(hunk, primary);
    else if (hunk.type === 'delete') await verification.delete(hunk, primary);
    else await verification.update(hunk, primary, move);
  }
  return patchPlan(verification.result(), verification.entries(), scope);
}

/** A hunk's paths, resolved: the file, and the destination of a move. */
interface PreparedHunk {
  readonly primary: ResolvedPath;
  readonly move: ResolvedPath | undefined;
}

/**
 * The in-memory view a patch is verified against: one entry per directory entry the patch
 * touches (its content on disk, then as the hunks so far leave it), the byte budget, and the
 * changes in patch order.
 */
class PatchVerification {
  private readonly entryMap = new Map<string, FileEntry>();
  private readonly reads = new Map<string, Promise<Snapshot>>();
  private totalBytes = 0;
  private readonly added: string[] = [];
  private readonly modified: string[] = [];
  private readonly deleted: string[] = [];
  private readonly changes: FileChange[] = [];
  /** Entries some hunk changed (content set or removed), and how an entry changed by exactly one in-place Update was edited. */
  private readonly touched = new Set<FileEntry>();
  private readonly edits = new Map<FileEntry, LineEdits>();
  /** The text of contents already decoded (or written from a text), so no content is decoded twice. */
  private readonly texts = new WeakMap<Buffer, string>();

  constructor(private readonly scope: VerificationScope) {}

  /** Resolves every hunk's paths and starts their reads, all at once. */
  prepare(hunks: readonly PatchHunk[]): Promise<PreparedHunk>[] {
    const { root, allowOutside } = this.scope;
    const prepared = hunks.map(async (hunk) => {
      const primary = await resolveWorkspacePath(hunk.path, root, { allowOutsideRoot: allowOutside });
      if (hunk.type === 'delete') this.read(primary.location, primary.locationParts, primary.targetParts);
      else this.read(primary.target, primary.targetParts, primary.targetParts);
      const move = hunk.type === 'update' && hunk.movePath !== undefined ? await resolveWorkspacePath(hunk.movePath, root, { allowOutsideRoot: allowOutside }) : undefined;
      if (move) this.read(move.target, move.targetParts, move.targetParts);
      return { primary, move };
    });
    for (const pending of prepared) pending.catch(() => undefined);
    return prepared;
  }

  async add(hunk: Extract<PatchHunk, { type: 'add' }>, resolved: ResolvedPath): Promise<void> {
    const entry = await this.entryFor(resolved, this.contentKey(resolved));
    this.refuseWriteOver(entry, hunk.path);
    this.setContent(entry, hunk.contents, hunk.path);
    this.changes.push(lazyDiff({ kind: 'add', path: hunk.path, content: hunk.contents }, () => unifiedDiff('', hunk.contents)));
    this.added.push(hunk.path);
  }

  async delete(hunk: Extract<PatchHunk, { type: 'delete' }>, resolved: ResolvedPath): Promise<void> {
    const entry = await this.entryFor(resolved, resolved.location);
    if (entry.current === null) throw verificationError(`Failed to read ${this.shown(hunk.path)}: ${this.missingReason(entry, hunk.path)}`);
    const content = lossy.decode(entry.current);
    this.remove(entry);
    this.changes.push(lazyDiff({ kind: 'delete', path: hunk.path, content }, () => unifiedDiff(content, '')));
    this.deleted.push(hunk.path);
  }

  async update(hunk: Extract<PatchHunk, { type: 'update' }>, resolved: ResolvedPath, move: ResolvedPath | undefined): Promise<void> {
    const sourceKey = this.contentKey(resolved);
    const source = await this.entryFor(resolved, sourceKey);
    const firstTouch = !this.touched.has(source);
    const before = this.textToUpdate(source, hunk.path);
    const { content: after, edits } = applyChunksWithDiff(before, hunk.chunks, this.shown(hunk.path), { withDiff: false });
    const change: FileChange = lazyDiff({ kind: 'update', path: hunk.path, newContent: after }, () =>
      edits ? unifiedDiffOfReplacements(before, after, edits.eol, edits.replacements) : unifiedDiff(before, after),
    );
    if (hunk.movePath === undefined || move === undefined) {
      this.setContent(source, after, hunk.path);
      if (firstTouch && edits && source.original.kind === 'file') this.edits.set(source, edits);
      this.modified.push(hunk.path);
    } else {
      const destination = await this.entryFor(move, this.contentKey(move));
      this.refuseWriteOver(destination, hunk.movePath);
      // A move removes the source's directory entry: a link itself, not the file it points to.
      const removed = sourceKey === resolved.location ? source : await this.entryFor(resolved, resolved.location);
      if (destination !== removed) this.remove(removed);
      this.setContent(destination, after, hunk.movePath);
      change.movePath = hunk.movePath;
      this.modified.push(hunk.movePath);
    }
    this.changes.push(change);
  }

  /** Every entry the patch touched, in first-touch order. */
  entries(): FileEntry[] {
    return [...this.entryMap.values()];
  }

  /** The summary, the changes and the before/after of every file. */
  result(): ApplyPatchResult {
    const { added, modified, deleted, changes } = this;
    const files = this.entries().map((entry) => {
      const state = fileState(entry, this.scope.root, this.texts);
      const edits = this.edits.get(entry);
      if (edits) windowedDiffs.set(state, edits);
      return state;
    });
    const summary = ['Success. Updated the following files:', ...added.map((p) => `A ${p}`), ...modified.map((p) => `M ${p}`), ...deleted.map((p) => `D ${p}`)]
      .map((line) => `${line}\n`)
      .join('');
    return { summary, added, modified, deleted, changes, files };
  }

  /**
   * A path as the model reads it in a failure: absolute, the workspace root joined with the path as
   * written (not normalized), as the reference names it.
   */
  private shown(raw: string): string {
    return isAbsolute(raw) ? raw : `${this.scope.root.path.replace(/\/+$/, '')}/${raw}`;
  }

  /**
   * Why a file a hunk reads is not there, in the reference's words; for a named pipe, a socket or a
   * device (which the reference would wait on) the same words and what it is.
   */
  private missingReason(entry: FileEntry, raw: string): string {
    const { original } = entry;
    if (original.kind === 'special') return `path \`${this.shown(raw)}\` is not a file (${original.what})`;
    return original.kind === 'directory' ? `path \`${this.shown(raw)}\` is not a file` : 'No such file or directory (os error 2)';
  }

  /** Refuses to write where a folder, or something else that is not a file, stands (Add File, Move to). */
  private refuseWriteOver(entry: FileEntry, path: string): void {
    if (entry.current !== null) return;
    if (entry.original.kind === 'directory') throw verificationError(`Failed to write file ${path}: Is a directory`);
    if (entry.original.kind === 'special') throw verificationError(`Failed to write file ${path}: ${this.missingReason(entry, path)}`);
  }

  /** The current text of a file an Update edits: it must exist, stay under the line cap and be UTF-8. */
  private textToUpdate(source: FileEntry, path: string): string {
    const limits = this.scope.limits;
    if (source.current === null) throw verificationError(`Failed to read file to update ${this.shown(path)}: ${this.missingReason(source, path)}`);
    if (exceedsLines(source.current, limits.maxFileLines)) {
      throw limitError(`${path} has more than ${limits.maxFileLines} lines; apply_patch edits files of at most ${limits.maxFileLines} lines`);
    }
    const known = this.texts.get(source.current);
    if (known !== undefined) return known;
    try {
      const text = utf8.decode(source.current);
      this.texts.set(source.current, text);
      return text;
    } catch (error) {
      throw verificationError(`Failed to read file to update ${this.shown(path)}: stream did not contain valid UTF-8`, error);
    }
  }

  private account(bytes: number): void {
    const limits = this.scope.limits;
    this.totalBytes += bytes;
    if (this.totalBytes > limits.maxTotalBytes) {
      throw limitError(`the patch reads and writes more than ${formatBytes(limits.maxTotalBytes)} in total; split it into smaller patches`);
    }
  }

  /** The snapshot of `key`, read once however many hunks name it. */
  private read(key: string, parts: readonly string[], targetParts: readonly string[]): Promise<Snapshot> {
    let pending = this.reads.get(key);
    if (!pending) {
      pending = snapshot(this.scope.root.fs, parts, targetParts, this.scope.limits.maxFileBytes);
      pending.catch(() => undefined);
      this.reads.set(key, pending);
    }
    return pending;
  }

  private async entryFor(resolved: ResolvedPath, key: string): Promise<FileEntry> {
    let entry = this.entryMap.get(key);
    if (!entry) {
      const parts = key === resolved.location ? resolved.locationParts : resolved.targetParts;
      let original: Snapshot;
      try {
        original = await this.read(key, parts, resolved.targetParts);
      } catch (error) {
        if (error instanceof FileTooLargeError) {
          throw limitError(`${resolved.raw} is ${formatBytes(error.size)}; apply_patch edits files of at most ${formatBytes(error.limit)}`);
        }
        throw verificationError(`Failed to read ${this.shown(resolved.raw)}: ${describeOsError(error)}`, error);
      }
      const current = original.kind === 'file' || original.kind === 'symlink' ? original.bytes : null;
      if (current) this.account(current.length);
      entry = { path: key, parts, label: resolved.raw, original, current };
      this.entryMap.set(key, entry);
    }
    return entry;
  }

  private setContent(entry: FileEntry, content: string, raw: string): void {
    const bytes = Buffer.from(content, 'utf8');
    const maxFileBytes = this.scope.limits.maxFileBytes;
    if (bytes.length > maxFileBytes) {
      throw limitError(`${raw} would be ${formatBytes(bytes.length)}; apply_patch writes files of at most ${formatBytes(maxFileBytes)}`);
    }
    this.account(bytes.length);
    entry.current = bytes;
    this.texts.set(bytes, content);
    this.touch(entry);
  }

  private remove(entry: FileEntry): void {
    entry.current = null;
    this.touch(entry);
  }

  /** A second change of an entry makes its single-edit record stale. */
  private touch(entry: FileEntry): void {
    if (this.touched.has(entry)) this.edits.delete(entry);
    this.touched.add(entry);
  }

  /**
   * Entries are keyed by directory entry (`location`: resolved parent folder + base name), so
   * every spelling of a path (e.g. through a symlinked root) lands on one entry. Content goes
   * through a symbolic link (`target`) while the link exists in the patch's view; once a Delete
   * removed the link, later hunks on that path name the plain path again.
   */
  private contentKey(resolved: ResolvedPath): string {
    return this.entryMap.has(resolved.location) ? resolved.location : resolved.target;
  }
}

/** The verified plan: `result`, and a commit that writes `entries` under a freshly opened root. */
function patchPlan(result: ApplyPatchResult, entries: readonly FileEntry[], { allowOutside, options }: VerificationScope): PatchPlan {
  let committed = false;
  return {
    ...result,
    async commit(commitOptions = {}) {
      if (committed) throw new Error('this patch plan was already committed');
      committed = true;
      if (commitOptions.signal?.aborted) throw new ApplyPatchError('ABORTED', 'apply_patch was aborted before any file was written');
      // The root is opened again: the plan holds physical paths, not descriptors.
      const commitRoot = await resolveWorkspaceRoot(options.root, { allowOutsideRoot: allowOutside, protectedNames: options.protectedNames });
      try {
        await commitFiles(commitRoot.fs, [...entries], commitOptions.signal);
      } finally {
        await commitRoot.fs.close();
      }
      return result;
    },
  };
}

/** A change with its `unifiedDiff` computed on first read (a library `applyPatch` that only writes never pays for it). */
function lazyDiff<T extends Record<string, unknown>>(change: T, compute: () => string): T & { unifiedDiff: string } {
  return lazyProperty(change, 'unifiedDiff', compute);
}

/** How files changed by one in-place Update were edited, so their git diff runs on the changed windows only (see {@link fileGitDiff}). */
const windowedDiffs = new WeakMap<FileState, LineEdits>();

/**
 * The git-style diff of a file's before → after (`gitFileDiff`), computed on the changed windows
 * when this process verified the patch and one in-place Update changed the file (most files of
 * most patches), else over the whole texts.
 */
export function fileGitDiff(file: FileState): string {
  if (file.diff !== undefined) return file.diff;
  const edits = windowedDiffs.get(file);
  if (edits && file.before !== null && file.after !== null) return gitFileDiffOfReplacements(file.displayPath, file.before, file.after, edits.eol, edits.replacements);
  return gitFileDiff(file.displayPath, file.before, file.after);
}

function fileState(entry: FileEntry, root: WorkspaceRoot, texts: WeakMap<Buffer, string>): FileState {
  const text = (bytes: Buffer) => texts.get(bytes) ?? lossy.decode(bytes);
  const before = entry.original.kind === 'file' || entry.original.kind === 'symlink' ? text(entry.original.bytes) : null;
  const after = entry.current === null ? null : text(entry.current);
  const base = isInside(root.realPath, entry.path) ? root.realPath : isInside(root.path, entry.path) ? root.path : undefined;
  const displayPath = base === undefined ? entry.path : relative(base, entry.path).split(sep).join('/');
  return { path: entry.path, displayPath, before, after };
}

/**
 * Parses, verifies and writes a patch all-or-nothing (see {@link verifyPatch} and
 * {@link PatchPlan.commit}). Resolves with the summary and the changes; throws an
 * {@link ApplyPatchError}, in which case no file was changed.
 */
export async function applyPatch(patch: string | ParsedPatch, options: ApplyPatchOptions): Promise<ApplyPatchResult> {
  const plan = await verifyPatch(patch, options);
  return plan.commit({ signal: options.signal });
}
