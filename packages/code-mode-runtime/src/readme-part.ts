import { readFileSync, writeFileSync } from 'node:fs';
import { messageTable } from '@switchyard/kit/internal';

/** A generated part of a README: the text between two marker lines, markers included. */
export interface ReadmePart {
  start: string;
  end: string;
}

/** The README's generated part as it is now (markers included), or undefined when the markers are missing. */
export function currentPart(readme: string, part: ReadmePart): string | undefined {
  return messageTable.generatedPart(readme, part.start, part.end);
}

/** Replaces the generated part of `file` with `rendered` (the `docs:*` scripts). */
export function rewritePart(file: string, part: ReadmePart, rendered: string): void {
  const readme = readFileSync(file, 'utf8');
  const current = currentPart(readme, part);
  if (current === undefined) throw new Error(`${file} has no ${part.start} … ${part.end} part`);
  writeFileSync(file, readme.replace(current, () => rendered));
}
