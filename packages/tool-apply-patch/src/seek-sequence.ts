const PUNCTUATION: Record<string, string> = {};
for (const dash of '\u2010\u2011\u2012\u2013\u2014\u2015\u2212') PUNCTUATION[dash] = '-';
for (const quote of '\u2018\u2019\u201A\u201B') PUNCTUATION[quote] = "'";
for (const quote of '\u201C\u201D\u201E\u201F') PUNCTUATION[quote] = '"';
for (const space of '\u00A0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u202F\u205F\u3000') PUNCTUATION[space] = ' ';
const PUNCTUATION_PATTERN = new RegExp(`[${Object.keys(PUNCTUATION).join('')}]`, 'g');

/** Trims and maps typographic dashes, quotes and odd spaces to ASCII (the fourth matching pass). */
export function normalizePunctuation(line: string): string {
  return line.trim().replace(PUNCTUATION_PATTERN, (char) => PUNCTUATION[char]);
}

const PASSES: ReadonlyArray<(line: string) => string> = [
  (line) => line,
  (line) => line.trimEnd(),
  (line) => line.trim(),
  normalizePunctuation,
];

/** One matching pass over a file: every line normalized once and interned as a small integer. */
interface PassIndex {
  readonly ids: Int32Array;
  readonly dictionary: Map<string, number>;
}

/**
 * Locates line sequences in one file, in time linear in the file plus the pattern. Each of the
 * four passes (exact, trailing whitespace ignored, both ends ignored, punctuation normalized)
 * interns the file's normalized lines as integers once, on first use; a search is then
 * Knuth–Morris–Pratt over integers. A pattern line that no file line equals ends a pass at once.
 * So a 30,000-line near-miss against a 60,000-line file costs a few passes over both, not the
 * 1.8 billion line comparisons a position-by-position scan makes.
 */
export class LineMatcher {
  private readonly passes: Array<PassIndex | undefined> = [];

  constructor(private readonly lines: readonly string[]) {}

  /**
   * The index of the first line at or after `start` where `pattern` matches (see
   * {@link seekSequence}), or -1. The first pass with any match wins.
   */
  seek(pattern: readonly string[], start: number, endOfFile: boolean): number {
    const lines = this.lines;
    if (pattern.length === 0) return start;
    if (pattern.length > lines.length) return -1;
    const last = lines.length - pattern.length;
    const from = endOfFile ? last : Math.max(0, start);
    if (from > last) return -1;
    for (let pass = 0; pass < PASSES.length; pass++) {
      if (pass === 0 && this.passes[0] === undefined) {
        // Most hunks match exactly a few lines on: compare in place before interning the file.
        const found = scanExact(lines, pattern, from, last, 2 * lines.length + pattern.length);
        if (found !== undefined) {
          if (found !== -1) return found;
          continue;
        }
      }
      const index = this.index(pass);
      const wanted = new Int32Array(pattern.length);
      let possible = true;
      for (let offset = 0; offset < pattern.length; offset++) {
        const id = index.dictionary.get(PASSES[pass](pattern[offset]));
        if (id === undefined) {
          possible = false;
          break;
        }
        wanted[offset] = id;
      }
      if (!possible) continue;
      const found = endOfFile ? (matchesAt(index.ids, wanted, last) ? last : -1) : kmpSearch(index.ids, wanted, from);
      if (found !== -1) return found;
    }
    return -1;
  }

  private index(pass: number): PassIndex {
    let index = this.passes[pass];
    if (!index) {
      const normalize = PASSES[pass];
      const dictionary = new Map<string, number>();
      const ids = new Int32Array(this.lines.length);
      for (let line = 0; line < this.lines.length; line++) {
        const text = normalize(this.lines[line]);
        let id = dictionary.get(text);
        if (id === undefined) {
          id = dictionary.size;
          dictionary.set(text, id);
        }
        ids[line] = id;
      }
      index = { ids, dictionary };
      this.passes[pass] = index;
    }
    return index;
  }
}

/**
 * The exact pass without an index: the first position in `from..last` where every pattern line
 * equals the file's, or -1 — or `undefined` once `budget` line comparisons are spent (a near-miss
 * repeating the pattern's first lines), so a search never costs more than linear work before the
 * indexed search takes over.
 */
function scanExact(lines: readonly string[], pattern: readonly string[], from: number, last: number, budget: number): number | undefined {
  for (let at = from; at <= last; at++) {
    let offset = 0;
    while (offset < pattern.length && lines[at + offset] === pattern[offset]) offset++;
    if (offset === pattern.length) return at;
    budget -= offset + 1;
    if (budget < 0) return undefined;
  }
  return -1;
}

function matchesAt(ids: Int32Array, wanted: Int32Array, at: number): boolean {
  for (let offset = 0; offset < wanted.length; offset++) if (ids[at + offset] !== wanted[offset]) return false;
  return true;
}

/** The first occurrence of `wanted` in `ids` starting at or after `from`, or -1 (O(n + m)). */
function kmpSearch(ids: Int32Array, wanted: Int32Array, from: number): number {
  const failure = new Int32Array(wanted.length);
  for (let index = 1, matched = 0; index < wanted.length; index++) {
    while (matched > 0 && wanted[index] !== wanted[matched]) matched = failure[matched - 1];
    if (wanted[index] === wanted[matched]) matched++;
    failure[index] = matched;
  }
  for (let index = from, matched = 0; index < ids.length; index++) {
    while (matched > 0 && ids[index] !== wanted[matched]) matched = failure[matched - 1];
    if (ids[index] === wanted[matched]) matched++;
    if (matched === wanted.length) return index - wanted.length + 1;
  }
  return -1;
}

/**
 * Finds `pattern` in `lines` at or after `start` (reference `seek_sequence`), trying four passes
 * in order: exact, trailing whitespace ignored, both ends ignored, Unicode punctuation
 * normalized. With `endOfFile`, only the position where the pattern ends the file is tried.
 * An empty pattern matches at `start`; a pattern longer than the file never matches.
 * Returns the index of the first matching line, or -1. Linear time (see {@link LineMatcher});
 * to search one file many times, keep a `LineMatcher`.
 */
export function seekSequence(lines: readonly string[], pattern: readonly string[], start: number, endOfFile: boolean): number {
  return new LineMatcher(lines).seek(pattern, start, endOfFile);
}
