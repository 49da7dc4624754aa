import { structuredPatch, type StructuredPatch, type StructuredPatchHunk } from 'diff';

/** How much work one diff may take before it falls back to a coarse (still exact) one. */
export interface DiffBudget {
  /** Most insertions + deletions jsdiff explores (its `maxEditLength`). */
  readonly maxEditLength: number;
  /**
   * Work cap: jsdiff's cost grows with lines × edits, so `maxEditLength` is lowered to
   * `maxWork / lines` for long texts. Deterministic (no clock): the same texts always give the
   * same diff, whatever the machine's load.
   */
  readonly maxWork: number;
  /** Above this many characters (both sides together) jsdiff is not tried at all. */
  readonly maxChars: number;
}

/** Generous for real edits (a few thousand changed lines), short enough to never stall for long. */
export const DEFAULT_DIFF_BUDGET: DiffBudget = Object.freeze({ maxEditLength: 4_000, maxWork: 40_000_000, maxChars: 16 * 1024 * 1024 });

const NO_NEWLINE = '\\ No newline at end of file';

/**
 * `structuredPatch` of jsdiff, bounded: past the budget (too many edits, too long, or texts too
 * large to tokenize quickly) the diff keeps the common leading and trailing lines and shows
 * everything between them as removed and added. Both forms are exact (applying either to
 * `before` gives `after`); the fallback is just not minimal. `context` lines surround changes.
 */
export function boundedStructuredPatch(
  oldName: string,
  newName: string,
  before: string,
  after: string,
  context: number,
  budget: DiffBudget = DEFAULT_DIFF_BUDGET,
): StructuredPatch {
  if (before.length + after.length <= budget.maxChars) {
    const lines = countLines(before) + countLines(after);
    const maxEditLength = Math.max(1, Math.min(budget.maxEditLength, Math.floor(budget.maxWork / lines)));
    const patch = structuredPatch(oldName, newName, before, after, undefined, undefined, { context, maxEditLength });
    if (patch) return patch;
  }
  return { oldFileName: oldName, newFileName: newName, oldHeader: undefined, newHeader: undefined, hunks: replacementHunks(before, after, context) };
}

function countLines(text: string): number {
  let count = 1;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

/** Lines with their terminators (the last one may have none), as jsdiff tokenizes them. */
function linesOf(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', start)) {
    lines.push(text.slice(start, at + 1));
    start = at + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** One hunk: common prefix and suffix lines kept (as `context`), the middle removed then added. */
function replacementHunks(before: string, after: string, context: number): StructuredPatchHunk[] {
  if (before === after) return [];
  const old = linesOf(before);
  const next = linesOf(after);
  let prefix = 0;
  while (prefix < old.length && prefix < next.length && old[prefix] === next[prefix]) prefix++;
  let suffix = 0;
  while (suffix < old.length - prefix && suffix < next.length - prefix && old[old.length - 1 - suffix] === next[next.length - 1 - suffix]) suffix++;
  const lead = Math.min(context, prefix);
  const trail = Math.min(context, suffix);
  const from = prefix - lead;
  const lines: string[] = [];
  const push = (marker: string, line: string) => {
    if (line.endsWith('\n')) lines.push(marker + line.slice(0, -1));
    else lines.push(marker + line, NO_NEWLINE);
  };
  for (let index = from; index < prefix; index++) push(' ', old[index]);
  for (let index = prefix; index < old.length - suffix; index++) push('-', old[index]);
  for (let index = prefix; index < next.length - suffix; index++) push('+', next[index]);
  for (let index = old.length - suffix; index < old.length - suffix + trail; index++) push(' ', old[index]);
  const oldLines = old.length - suffix + trail - from;
  const newLines = next.length - suffix + trail - from;
  return [{ oldStart: from + 1, oldLines, newStart: from + 1, newLines, lines }];
}
