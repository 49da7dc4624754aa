import { randomBytes } from 'node:crypto';
import { rename } from 'node:fs/promises';
import { relative } from 'node:path';
import type { SandboxPolicy } from './policy';
import { MAX_PROTECTED_SCAN_DIRECTORIES, resolveExisting, scanProtectedPathsCoverage, type ProtectedPath } from './protected-paths';

/** What {@link quarantineNewGitMetadata} did. */
export interface GitQuarantine {
  /** `[from, to]` of every new `.git` renamed (absolute paths). */
  readonly renamed: ReadonlyArray<readonly [string, string]>;
  /** New `.git` entries that could not be renamed (absolute paths). */
  readonly failed: readonly string[];
  /**
   * Writable roots the walk could not finish (more than 50,000 directories below): a `.git` created
   * there may remain, and the note says not to run git under them (absolute paths).
   */
  readonly unchecked: readonly string[];
  /** One line per entry for the command's output, or `undefined` when nothing new was found. */
  readonly note: string | undefined;
}

/**
 * A sandboxed command must not leave git metadata the host's own git later trusts: a `.git`
 * created during the command (`git init sub && git -C sub config core.fsmonitor …`) would run its
 * hooks and `core.fsmonitor` unsandboxed at the host user's next `git status` in `sub`. The `.git`
 * entries that existed when the command started are mounted read-only; this finds every other one
 * (the same bounded walk as the protected paths: no links followed, `node_modules` skipped, at
 * most 50,000 directories per root, its reads on the thread pool) and renames it to
 * `.git.untrusted-<6 hex>`, which git never discovers. A root the walk cannot finish is reported as
 * `unchecked`, with a line telling the model not to run git there: the check fails closed rather
 * than claiming a clean tree. Call it when the command's output is taken and when it ends. Never
 * rejects.
 */
export async function quarantineNewGitMetadata(policy: Pick<SandboxPolicy, 'root' | 'writableRoots'>, before: readonly ProtectedPath[]): Promise<GitQuarantine> {
  const known = new Set(before.map((entry) => entry.path));
  let now: ProtectedPath[];
  let unchecked: string[];
  try {
    ({ list: now, unchecked } = await scanProtectedPathsCoverage(policy));
  } catch {
    return { renamed: [], failed: [], unchecked: [], note: undefined };
  }
  const renamed: Array<readonly [string, string]> = [];
  const failed: string[] = [];
  for (const entry of now) {
    // A root's own .git that did not exist is a read-only placeholder mount: nothing can appear there.
    if (!entry.exists || known.has(entry.path)) continue;
    const target = `${entry.path}.untrusted-${randomBytes(3).toString('hex')}`;
    try {
      await rename(entry.path, target);
      renamed.push([entry.path, target]);
    } catch {
      failed.push(entry.path);
    }
  }
  const root = policy.root;
  const lines = [
    ...renamed.map(([from, to]) => `sandbox: new git metadata ${relative(root, from)} was renamed to ${relative(root, to)}: a sandboxed command cannot create a repository whose hooks and config the host's git would run; create repositories with sandbox_permissions "require_escalated"`),
    ...failed.map((path) => `sandbox: new git metadata ${relative(root, path)} could not be renamed; do not run git in it`),
    ...unchecked.map((dir) => {
      const where = dir === resolveExisting(root) ? 'the workspace' : dir;
      return `sandbox: new git metadata could not be checked in ${where}: it holds more than ${MAX_PROTECTED_SCAN_DIRECTORIES.toLocaleString('en-US')} directories, so a .git a sandboxed command created there may remain and run its hooks and config at the next git command; do not run git in ${where} before removing the extra directories`;
    }),
  ];
  return { renamed, failed, unchecked, note: lines.length > 0 ? lines.join('\n') : undefined };
}
