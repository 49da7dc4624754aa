import { OMIT_HEADERS, formatPatch, structuredPatch } from 'diff';

/**
 * A unified diff of two texts with hunks only (no `---`/`+++` headers), `context` lines around
 * each change (default 1, as the reference's per-file change list). `""` when equal.
 */
export function unifiedDiff(before: string, after: string, context = 1): string {
  if (before === after) return '';
  return formatPatch(structuredPatch('', '', before, after, undefined, undefined, { context }), OMIT_HEADERS);
}

/**
 * A git-style diff of one file (`diff --git a/p b/p`, `new file mode` / `deleted file mode`,
 * `---`/`+++` headers and hunks with 3 lines of context): `before`/`after` `null` mean absent.
 * `""` when nothing changed. `git apply` accepts the output.
 */
export function gitFileDiff(path: string, before: string | null, after: string | null, context = 3): string {
  if (before === after) return '';
  const oldName = before === null ? '/dev/null' : `a/${path}`;
  const newName = after === null ? '/dev/null' : `b/${path}`;
  const patch = structuredPatch(oldName, newName, before ?? '', after ?? '', undefined, undefined, { context });
  return formatPatch({
    ...patch,
    isGit: true,
    ...(before === null ? { isCreate: true } : {}),
    ...(after === null ? { isDelete: true } : {}),
  });
}
