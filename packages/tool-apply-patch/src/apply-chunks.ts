import { ApplyPatchError } from './apply-patch-error';
import type { UpdateChunk } from './parse-patch';
import { LineMatcher } from './seek-sequence';
import { unifiedDiff, unifiedDiffOfReplacements, type LineReplacement } from './unified-diff';

/** True when every `\n` of `text` is part of a `\r\n` (and there is at least one). */
export function usesCrlf(text: string): boolean {
  let newlines = 0;
  let crlf = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) {
    newlines += 1;
    if (index > 0 && text.charCodeAt(index - 1) === 13) crlf += 1;
  }
  return newlines > 0 && crlf === newlines;
}

function computeReplacements(lines: readonly string[], chunks: readonly UpdateChunk[], displayPath: string): LineReplacement[] {
  const replacements: LineReplacement[] = [];
  // One matcher per file: each pass interns the file's lines once, whatever the number of chunks.
  const matcher = new LineMatcher(lines);
  const seekSequence = (pattern: readonly string[], start: number, endOfFile: boolean) => matcher.seek(pattern, start, endOfFile);
  let position = 0;
  for (const chunk of chunks) {
    if (chunk.changeContext !== undefined) {
      const found = seekSequence([chunk.changeContext], position, false);
      if (found === -1) {
        throw new ApplyPatchError('VERIFICATION_FAILED', `Failed to find context '${chunk.changeContext}' in ${displayPath}`);
      }
      position = found + 1;
    }
    if (chunk.oldLines.length === 0) {
      // A pure addition goes at the end of the file (before a final empty line, if any).
      const at = lines.length > 0 && lines[lines.length - 1] === '' ? lines.length - 1 : lines.length;
      replacements.push({ start: at, oldLength: 0, newLines: chunk.newLines });
      continue;
    }
    let pattern: readonly string[] = chunk.oldLines;
    let replacement: readonly string[] = chunk.newLines;
    let found = seekSequence(pattern, position, chunk.isEndOfFile);
    if (found === -1 && pattern[pattern.length - 1] === '') {
      // The trailing empty line stands for the file's final newline: retry without it.
      pattern = pattern.slice(0, -1);
      if (replacement[replacement.length - 1] === '') replacement = replacement.slice(0, -1);
      found = seekSequence(pattern, position, chunk.isEndOfFile);
    }
    if (found === -1) {
      throw new ApplyPatchError('VERIFICATION_FAILED', `Failed to find expected lines in ${displayPath}:\n${chunk.oldLines.join('\n')}`);
    }
    replacements.push({ start: found, oldLength: pattern.length, newLines: replacement });
    position = found + pattern.length;
  }
  return replacements.sort((a, b) => a.start - b.start);
}

/**
 * Applies an Update hunk's chunks to a file's text and returns the new text.
 * Chunks are located in order, then replaced bottom-up; the result always ends with a newline
 * (an emptied file stays empty); a file whose every line ends in CRLF keeps CRLF. Throws an
 * `ApplyPatchError` (`VERIFICATION_FAILED`) naming `displayPath` when a chunk does not match. Pure.
 */
export function applyChunks(original: string, chunks: readonly UpdateChunk[], displayPath: string): string {
  return applyChunksWithDiff(original, chunks, displayPath, { withDiff: false }).content;
}

/** {@link applyChunks} plus the hunks-only unified diff (context 1) of the change. */
export function applyChunksWithDiff(
  original: string,
  chunks: readonly UpdateChunk[],
  displayPath: string,
  { withDiff = true }: { withDiff?: boolean } = {},
): { content: string; unifiedDiff: string; edits?: LineEdits } {
  const crlf = usesCrlf(original);
  if (!crlf && original.includes('\r\n')) {
    const content = applyToMixedEndings(original, chunks, displayPath);
    return { content, unifiedDiff: withDiff ? unifiedDiff(original, content) : '' };
  }
  const eol = crlf ? '\r\n' : '\n';
  const lines = original.split(eol);
  if (lines[lines.length - 1] === '') lines.pop();
  const replacements = computeReplacements(lines, chunks, displayPath);
  for (let index = replacements.length - 1; index >= 0; index--) {
    const { start, oldLength, newLines } = replacements[index];
    lines.splice(start, oldLength, ...newLines);
  }
  if (lines[lines.length - 1] !== '') lines.push('');
  const content = lines.join(eol);
  return { content, unifiedDiff: withDiff ? unifiedDiffOfReplacements(original, content, eol, replacements) : '', edits: { eol, replacements } };
}

/** Where an update changed a file with one line ending throughout: enough to diff it on the changed windows only. */
export interface LineEdits {
  readonly eol: string;
  readonly replacements: readonly LineReplacement[];
}

/**
 * A file mixing CRLF and LF lines: every line is matched without its ending and keeps its own
 * ending unless the patch replaces it. Each replacement first gives back the lines it leaves as
 * they are — the common trailing lines, then the common leading ones (a chunk's context) — so
 * only the lines it really changes or inserts are new; those take the file's preferred ending,
 * that of its first line break. A last line without one gets it too (the result always ends
 * with a line break, as for any updated file).
 */
function applyToMixedEndings(original: string, chunks: readonly UpdateChunk[], displayPath: string): string {
  const texts: string[] = [];
  const endings: string[] = [];
  let start = 0;
  for (let at = original.indexOf('\n'); at !== -1; at = original.indexOf('\n', start)) {
    const crlf = at > start && original.charCodeAt(at - 1) === 13;
    texts.push(original.slice(start, crlf ? at - 1 : at));
    endings.push(crlf ? '\r\n' : '\n');
    start = at + 1;
  }
  if (start < original.length) {
    texts.push(original.slice(start));
    endings.push('');
  }
  const preferred = endings[0] === '' ? '\n' : endings[0];
  const parts: string[] = [];
  const keep = (from: number, to: number) => {
    for (let index = from; index < to; index++) parts.push(texts[index], endings[index] || preferred);
  };
  let next = 0;
  for (const { start: at, oldLength, newLines } of computeReplacements(texts, chunks, displayPath)) {
    keep(next, at);
    let tail = 0;
    while (tail < oldLength && tail < newLines.length && texts[at + oldLength - 1 - tail] === newLines[newLines.length - 1 - tail]) tail += 1;
    let head = 0;
    while (head < oldLength - tail && head < newLines.length - tail && texts[at + head] === newLines[head]) head += 1;
    keep(at, at + head);
    for (const line of newLines.slice(head, newLines.length - tail)) parts.push(line, preferred);
    keep(at + oldLength - tail, at + oldLength);
    next = at + oldLength;
  }
  keep(next, texts.length);
  return parts.join('');
}
