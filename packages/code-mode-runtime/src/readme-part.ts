import { readFileSync, writeFileSync } from 'node:fs';

/** A generated part of a README: the text between two marker lines, markers included. */
export interface ReadmePart {
  start: string;
  end: string;
}

/** The README's generated part as it is now (markers included), or undefined when the markers are missing. */
export function currentPart(readme: string, part: ReadmePart): string | undefined {
  const start = readme.indexOf(part.start);
  const end = readme.indexOf(part.end);
  if (start < 0 || end < start) return undefined;
  return readme.slice(start, end + part.end.length);
}

/** Replaces the generated part of `file` with `rendered` (the `docs:*` scripts). */
export function rewritePart(file: string, part: ReadmePart, rendered: string): void {
  const readme = readFileSync(file, 'utf8');
  const current = currentPart(readme, part);
  if (current === undefined) throw new Error(`${file} has no ${part.start} … ${part.end} part`);
  writeFileSync(file, readme.replace(current, () => rendered));
}
