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

/**
 * Finds `pattern` in `lines` at or after `start` (reference `seek_sequence`), trying four passes
 * in order: exact, trailing whitespace ignored, both ends ignored, Unicode punctuation
 * normalized. With `endOfFile`, only the position where the pattern ends the file is tried.
 * An empty pattern matches at `start`; a pattern longer than the file never matches.
 * Returns the index of the first matching line, or -1.
 */
export function seekSequence(lines: readonly string[], pattern: readonly string[], start: number, endOfFile: boolean): number {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return -1;
  const last = lines.length - pattern.length;
  const from = endOfFile ? last : start;
  for (const normalize of PASSES) {
    const wanted = pattern.map(normalize);
    const cache: Array<string | undefined> = [];
    const line = (index: number) => (cache[index] ??= normalize(lines[index]));
    for (let index = from; index <= last; index++) {
      let matches = true;
      for (let offset = 0; offset < wanted.length; offset++) {
        if (line(index + offset) !== wanted[offset]) {
          matches = false;
          break;
        }
      }
      if (matches) return index;
    }
  }
  return -1;
}
