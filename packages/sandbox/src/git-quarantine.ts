import { randomBytes } from 'node:crypto';
import { rename } from 'node:fs/promises';
import { relative } from 'node:path';
import { gitWalkExceeded } from './errors';
import type { SandboxPolicy } from './policy';
import { gitWalkBound, scanProtectedPathsCoverage, uncheckedPlaces, type ProtectedPath } from './protected-paths';

/** What {@link quarantineNewGitMetadata} did. */
export interface GitQuarantine {
  /** `[from, to]` of every new `.git` renamed (absolute paths). */
  readonly renamed: ReadonlyArray<readonly [string, string]>;
  /** New `.git` entries that could not be renamed (absolute paths). */
  readonly failed: readonly string[];
  /** One line per entry for the command's output, or `undefined` when nothing new was found. */
  readonly note: string | undefined;
}

/**
 * A sandboxed command must not leave git metadata the host's own git later trusts: a `.git`
 * created during the command (`git init sub && git -C sub config core.fsmonitor …`) would run its
 * hooks and `core.fsmonitor` unsandboxed at the host user's next `git status` in `sub`. The `.git`
 * entries that existed when the command started are mounted read-only; this finds every other one
 * (the same walk as the protected paths: no links followed, `node_modules` skipped, its reads on
 * the thread pool) and renames it to `.git.untrusted-<6 hex>`, which git never discovers. Call it
 * when the command's output is taken and when it ends.
 *
 * Fails closed: when a writable root holds more directories than the walk's bound
 * (`SandboxLimits.gitWalkDirectories`), it still renames what it found, then rejects with a
 * `LIMIT_EXCEEDED` `RespondToModelError` saying the check could not finish and what to do (the
 * caller withholds the command's result and ends it); it also rejects when the walk itself fails.
 */
export async function quarantineNewGitMetadata(policy: Pick<SandboxPolicy, 'root' | 'writableRoots' | 'limits'>, before: readonly ProtectedPath[]): Promise<GitQuarantine> {
  const known = new Set(before.map((entry) => entry.path));
  const { list: now, unchecked } = await scanProtectedPathsCoverage(policy);
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
  ];
  if (unchecked.length > 0) {
    const failure = gitWalkExceeded(uncheckedPlaces(policy, unchecked), gitWalkBound(policy), 'after');
    if (lines.length > 0) failure.message = `${failure.message}\n${lines.join('\n')}`;
    throw failure;
  }
  return { renamed, failed, note: lines.length > 0 ? lines.join('\n') : undefined };
}
