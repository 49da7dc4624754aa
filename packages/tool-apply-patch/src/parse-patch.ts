import { ApplyPatchError } from './apply-patch-error';

/** One block of an Update hunk: optional `@@ context`, the lines to find and their replacement. */
export interface UpdateChunk {
  /** The `@@ <context>` line to find first (a class or function header), if any. */
  changeContext?: string;
  /** Lines that must be found (context and `-` lines, in order). */
  oldLines: string[];
  /** Lines that replace them (context and `+` lines, in order). */
  newLines: string[];
  /** `*** End of File` followed: `oldLines` must sit at the end of the file. */
  isEndOfFile: boolean;
}

/** One file operation of a patch. Paths are as written (relative to the root, or absolute). */
export type PatchHunk =
  | { type: 'add'; path: string; contents: string }
  | { type: 'delete'; path: string }
  | { type: 'update'; path: string; movePath?: string; chunks: UpdateChunk[] };

/** The result of {@link parsePatch}. */
export interface ParsedPatch {
  hunks: PatchHunk[];
  /** The patch text without a heredoc wrapper, lines joined with `\n`. */
  patch: string;
}

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const ADD = '*** Add File: ';
const DELETE = '*** Delete File: ';
const UPDATE = '*** Update File: ';
const MOVE = '*** Move to: ';
const EOF_MARKER = '*** End of File';
const CONTEXT = '@@ ';
const EMPTY_CONTEXT = '@@';
const HEREDOC_OPENERS = new Set(['<<EOF', "<<'EOF'", '<<"EOF"']);

const invalidPatch = (message: string) => new ApplyPatchError('INVALID_PATCH', `invalid patch: ${message}`);
const invalidHunk = (message: string, lineNumber: number) =>
  new ApplyPatchError('INVALID_HUNK', `invalid hunk at line ${lineNumber}, ${message}`, { lineNumber });

/** Splits like Rust's `str::lines`: on `\n`, dropping one `\r` before it; `""` has no lines. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (!text.includes('\r')) return lines;
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

function checkBoundaries(lines: string[]): string[] {
  const first = lines.length > 0 ? lines[0].trim() : undefined;
  const last = lines.length > 0 ? lines[lines.length - 1].trim() : undefined;
  if (first === BEGIN && last === END && lines.length >= 2) return lines.slice(1, -1);
  if (first !== undefined && first !== BEGIN) throw invalidPatch("The first line of the patch must be '*** Begin Patch'");
  throw invalidPatch("The last line of the patch must be '*** End Patch'");
}

/** Strict check first; then the heredoc form `<<EOF` / `<<'EOF'` / `<<"EOF"` … `EOF` (≥ 4 lines). */
function checkBoundariesLenient(lines: string[]): { patchLines: string[]; hunkLines: string[] } {
  try {
    return { patchLines: lines, hunkLines: checkBoundaries(lines) };
  } catch (strictError) {
    if (lines.length >= 4 && HEREDOC_OPENERS.has(lines[0]) && lines[lines.length - 1].endsWith('EOF')) {
      const inner = lines.slice(1, -1);
      return { patchLines: inner, hunkLines: checkBoundaries(inner) };
    }
    throw strictError;
  }
}

/**
 * Parses apply_patch text (lenient mode): the whole text is trimmed; the first
 * and last lines must be `*** Begin Patch` / `*** End Patch` (or wrapped in a heredoc); hunk
 * headers are trimmed before matching. Throws an {@link ApplyPatchError} (`INVALID_PATCH` or
 * `INVALID_HUNK` with the 1-based line number) with the reference's texts. Pure.
 */
export function parsePatch(text: string): ParsedPatch {
  const trimmed = text.trim();
  const lines = splitLines(trimmed);
  const { patchLines, hunkLines } = checkBoundariesLenient(lines);
  const hunks: PatchHunk[] = [];
  // Index-based over one array: slicing per hunk or chunk would make big patches quadratic.
  let index = 0;
  while (index < hunkLines.length) {
    const { hunk, consumed } = parseHunk(hunkLines, index, index + 2);
    hunks.push(hunk);
    index += consumed;
  }
  // The lines of a trimmed text without `\r`, joined again, are that text: no second copy of a large patch.
  const patch = patchLines === lines && !trimmed.includes('\r') ? trimmed : patchLines.join('\n');
  return { hunks, patch };
}

/** Parses the hunk starting at `lines[at]`, whose 1-based patch line number is `lineNumber`. */
function parseHunk(lines: readonly string[], at: number, lineNumber: number): { hunk: PatchHunk; consumed: number } {
  const header = lines[at].trim();
  if (header.startsWith(ADD)) {
    let contents = '';
    let next = at + 1;
    while (next < lines.length && lines[next].startsWith('+')) {
      contents += `${lines[next].slice(1)}\n`;
      next += 1;
    }
    return { hunk: { type: 'add', path: header.slice(ADD.length), contents }, consumed: next - at };
  }
  if (header.startsWith(DELETE)) {
    return { hunk: { type: 'delete', path: header.slice(DELETE.length) }, consumed: 1 };
  }
  if (header.startsWith(UPDATE)) {
    const path = header.slice(UPDATE.length);
    let next = at + 1;
    let movePath: string | undefined;
    if (next < lines.length && lines[next].startsWith(MOVE)) {
      movePath = lines[next].slice(MOVE.length);
      next += 1;
    }
    const chunks: UpdateChunk[] = [];
    while (next < lines.length) {
      const line = lines[next];
      if (line.trim() === '') {
        next += 1;
        continue;
      }
      if (line.startsWith('*')) break;
      const parsed = parseChunk(lines, next, lineNumber + (next - at), chunks.length === 0);
      chunks.push(parsed.chunk);
      next += parsed.consumed;
    }
    if (chunks.length === 0) throw invalidHunk(`Update file hunk for path '${path}' is empty`, lineNumber);
    const hunk: PatchHunk = movePath === undefined ? { type: 'update', path, chunks } : { type: 'update', path, movePath, chunks };
    return { hunk, consumed: next - at };
  }
  throw invalidHunk(
    `'${header}' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'`,
    lineNumber,
  );
}

/** Parses the chunk starting at `lines[at]` (patch line `lineNumber`). */
function parseChunk(
  lines: readonly string[],
  at: number,
  lineNumber: number,
  allowMissingContext: boolean,
): { chunk: UpdateChunk; consumed: number } {
  const first = lines[at];
  let changeContext: string | undefined;
  let start = 0;
  if (first === EMPTY_CONTEXT) {
    start = 1;
  } else if (first.startsWith(CONTEXT)) {
    changeContext = first.slice(CONTEXT.length);
    start = 1;
  } else if (!allowMissingContext) {
    throw invalidHunk(`Expected update hunk to start with a @@ context marker, got: '${first}'`, lineNumber);
  }
  if (at + start >= lines.length) throw invalidHunk('Update hunk does not contain any lines', lineNumber + 1);
  const chunk: UpdateChunk = { oldLines: [], newLines: [], isEndOfFile: false };
  if (changeContext !== undefined) chunk.changeContext = changeContext;
  let parsed = 0;
  for (let index = at + start; index < lines.length; index++) {
    const line = lines[index];
    if (line === EOF_MARKER) {
      if (parsed === 0) throw invalidHunk('Update hunk does not contain any lines', lineNumber + 1);
      chunk.isEndOfFile = true;
      parsed += 1;
      break;
    }
    const marker = line[0];
    if (line === '') {
      chunk.oldLines.push('');
      chunk.newLines.push('');
    } else if (marker === ' ') {
      chunk.oldLines.push(line.slice(1));
      chunk.newLines.push(line.slice(1));
    } else if (marker === '+') {
      chunk.newLines.push(line.slice(1));
    } else if (marker === '-') {
      chunk.oldLines.push(line.slice(1));
    } else {
      if (parsed === 0) {
        throw invalidHunk(
          `Unexpected line found in update hunk: '${line}'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)`,
          lineNumber + 1,
        );
      }
      break;
    }
    parsed += 1;
  }
  return { chunk, consumed: parsed + start };
}
