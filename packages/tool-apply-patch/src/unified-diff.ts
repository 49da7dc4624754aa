import { OMIT_HEADERS, formatPatch, type StructuredPatchHunk } from 'diff';
import { boundedStructuredPatch, DEFAULT_DIFF_BUDGET, type DiffBudget } from './bounded-diff';

/**
 * A unified diff of two texts with hunks only (no `---`/`+++` headers), `context` lines around
 * each change (default 1, as the reference's per-file change list). `""` when equal. Bounded:
 * past `budget` the changed middle is shown as removed and re-added (see `boundedStructuredPatch`).
 */
export function unifiedDiff(before: string, after: string, context = 1, budget: DiffBudget = DEFAULT_DIFF_BUDGET): string {
  if (before === after) return '';
  return formatPatch(boundedStructuredPatch('', '', before, after, context, budget), OMIT_HEADERS);
}

/**
 * A git-style diff of one file (`diff --git a/p b/p`, `new file mode` / `deleted file mode`,
 * `---`/`+++` headers and hunks with 3 lines of context): `before`/`after` `null` mean absent.
 * `""` when nothing changed. `git apply` accepts the output. Bounded like {@link unifiedDiff}.
 */
export function gitFileDiff(path: string, before: string | null, after: string | null, context = 3, budget: DiffBudget = DEFAULT_DIFF_BUDGET): string {
  if (before === after) return '';
  const oldName = before === null ? '/dev/null' : `a/${path}`;
  const newName = after === null ? '/dev/null' : `b/${path}`;
  const patch = boundedStructuredPatch(oldName, newName, before ?? '', after ?? '', context, budget);
  return formatPatch({
    ...patch,
    isGit: true,
    ...(before === null ? { isCreate: true } : {}),
    ...(after === null ? { isDelete: true } : {}),
  });
}

/**
 * {@link gitFileDiff} of a file changed in place by `replacements` (see
 * {@link unifiedDiffOfReplacements}): the same git headers and 3 lines of context, with the diff
 * library run on the changed windows only.
 */
export function gitFileDiffOfReplacements(path: string, before: string, after: string, eol: string, replacements: readonly LineReplacement[]): string {
  const hunks = unifiedDiffOfReplacements(before, after, eol, replacements, 3);
  if (hunks === '') return '';
  return `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n${hunks}`;
}

/** A block of old lines replaced by new lines (old-line coordinates, 0-based). */
export interface LineReplacement {
  start: number;
  oldLength: number;
  newLines: readonly string[];
}

/** Start offsets of the lines of `text` split on `eol`, plus `text.length` as a sentinel. */
function lineOffsets(text: string, eol: string): number[] {
  const offsets = [0];
  for (let at = text.indexOf(eol); at !== -1; at = text.indexOf(eol, at + eol.length)) offsets.push(at + eol.length);
  if (offsets[offsets.length - 1] !== text.length) offsets.push(text.length);
  return offsets;
}

/** Drops the leading and trailing lines a replacement keeps as they are (a chunk's context lines), and no-ops. */
function trimUnchanged(before: string, oldOffsets: readonly number[], eol: string, replacements: readonly LineReplacement[]): LineReplacement[] {
  const oldLine = (index: number) => {
    const text = before.slice(oldOffsets[index], oldOffsets[index + 1]);
    return text.endsWith(eol) ? text.slice(0, -eol.length) : text;
  };
  const trimmed: LineReplacement[] = [];
  for (const { start, oldLength, newLines } of replacements) {
    let head = 0;
    while (head < oldLength && head < newLines.length && oldLine(start + head) === newLines[head]) head += 1;
    let tail = 0;
    while (
      tail < oldLength - head &&
      tail < newLines.length - head &&
      oldLine(start + oldLength - 1 - tail) === newLines[newLines.length - 1 - tail]
    ) {
      tail += 1;
    }
    if (oldLength - head - tail > 0 || newLines.length - head - tail > 0) {
      trimmed.push({ start: start + head, oldLength: oldLength - head - tail, newLines: newLines.slice(head, newLines.length - tail) });
    }
  }
  return trimmed;
}

interface Window {
  readonly from: number;
  readonly to: number;
  readonly newFrom: number;
  readonly newTo: number;
  /** How many replacements the window groups. */
  readonly replacements: number;
  /** Context lines before the first replacement. */
  readonly lead: number;
  /** Old lines the first replacement removes. */
  readonly oldLength: number;
}

/** Lines `from`..`to` of a text (by its line offsets), each without its `\n` (a `\r` stays, as jsdiff keeps it). */
function linesBetween(text: string, offsets: readonly number[], from: number, to: number): string[] {
  const lines: string[] = [];
  for (let index = from; index < to; index++) {
    const line = text.slice(offsets[index], offsets[index + 1]);
    lines.push(line.endsWith('\n') ? line.slice(0, -1) : line);
  }
  return lines;
}

/** True when no two of `lines` are equal (a pairwise scan for the few lines of a typical window). */
function allDistinct(lines: readonly string[]): boolean {
  if (lines.length > 16) return new Set(lines).size === lines.length;
  for (let index = 1; index < lines.length; index++) {
    for (let other = 0; other < index; other++) if (lines[index] === lines[other]) return false;
  }
  return true;
}

/**
 * The hunk of a window holding one replacement whose removed lines, added lines and context lines
 * are pairwise distinct: its longest common subsequence is then exactly the context, so every
 * minimal diff is "context, removed lines, added lines, context" — what jsdiff prints (removals
 * first) — and no diff needs to run. `undefined` when the lines overlap (jsdiff decides then).
 */
function disjointHunk(before: string, oldOffsets: readonly number[], after: string, newOffsets: readonly number[], window: Window): StructuredPatchHunk | undefined {
  const { from, to, newFrom, newTo, lead, oldLength } = window;
  const old = linesBetween(before, oldOffsets, from, to);
  const next = linesBetween(after, newOffsets, newFrom, newTo);
  const trail = old.length - lead - oldLength;
  const added = next.slice(lead, next.length - trail);
  const removed = old.slice(lead, lead + oldLength);
  const all = [...old.slice(0, lead), ...old.slice(lead + oldLength), ...removed, ...added];
  if (!allDistinct(all)) return undefined;
  const lines = [...old.slice(0, lead).map((line) => ` ${line}`), ...removed.map((line) => `-${line}`), ...added.map((line) => `+${line}`), ...old.slice(lead + oldLength).map((line) => ` ${line}`)];
  return { oldStart: from + 1, oldLines: old.length, newStart: newFrom + 1, newLines: next.length, lines };
}

/**
 * The same hunks-only diff as {@link unifiedDiff} of `before` → `after`, but the diff library
 * only runs on windows around `replacements` (sorted, non-overlapping, in `before`'s line
 * coordinates): the lines between them are equal by construction, so a 20-hunk edit of a long
 * file costs 20 small diffs instead of one diff of the whole file. Falls back to the whole-file
 * diff whenever the texts do not line up with the replacements (e.g. a final newline was added).
 */
export function unifiedDiffOfReplacements(
  before: string,
  after: string,
  eol: string,
  replacements: readonly LineReplacement[],
  context = 1,
): string {
  if (before === after) return '';
  // Without a final newline the last line changes too (it gains one): rare, use the whole file.
  if (before !== '' && !before.endsWith(eol)) return unifiedDiff(before, after, context);
  const oldOffsets = lineOffsets(before, eol);
  const newOffsets = lineOffsets(after, eol);
  const oldCount = oldOffsets.length - 1;
  const newCount = newOffsets.length - 1;
  replacements = trimUnchanged(before, oldOffsets, eol, replacements);
  const windows: Window[] = [];
  let delta = 0;
  for (let index = 0; index < replacements.length; ) {
    // Group replacements whose gaps are too small for their hunks to stay apart.
    let last = index;
    let groupDelta = replacements[index].newLines.length - replacements[index].oldLength;
    while (last + 1 < replacements.length) {
      const gap = replacements[last + 1].start - (replacements[last].start + replacements[last].oldLength);
      if (gap > 2 * context) break;
      last += 1;
      groupDelta += replacements[last].newLines.length - replacements[last].oldLength;
    }
    const from = Math.max(0, replacements[index].start - context);
    const to = Math.min(oldCount, replacements[last].start + replacements[last].oldLength + context);
    const start = replacements[index].start;
    windows.push({ from, to, newFrom: from + delta, newTo: to + delta + groupDelta, replacements: last - index + 1, lead: start - from, oldLength: replacements[index].oldLength });
    delta += groupDelta;
    index = last + 1;
  }
  const tail = windows.length > 0 ? windows[windows.length - 1] : undefined;
  if (
    !tail ||
    tail.newTo > newCount ||
    windows.some((window) => window.newFrom < 0 || window.newTo < window.newFrom) ||
    // The end differs beyond the replacements (a final newline added, a final empty line folded).
    before.slice(oldOffsets[tail.to]) !== after.slice(newOffsets[tail.newTo])
  ) {
    return unifiedDiff(before, after, context);
  }
  const hunks: StructuredPatchHunk[] = [];
  for (const window of windows) {
    const { from, to, newFrom, newTo } = window;
    const direct = window.replacements === 1 ? disjointHunk(before, oldOffsets, after, newOffsets, window) : undefined;
    if (direct) {
      hunks.push(direct);
      continue;
    }
    const oldText = before.slice(oldOffsets[from], oldOffsets[to]);
    const newText = after.slice(newOffsets[newFrom], newOffsets[newTo]);
    const patch = boundedStructuredPatch('', '', oldText, newText, context);
    for (const hunk of patch.hunks) hunks.push({ ...hunk, oldStart: hunk.oldStart + from, newStart: hunk.newStart + newFrom });
  }
  if (hunks.length === 0) return '';
  return formatPatch({ oldFileName: '', newFileName: '', oldHeader: undefined, newHeader: undefined, hunks }, OMIT_HEADERS);
}
