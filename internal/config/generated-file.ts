import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Writes `text` to a generated file (a bundle committed beside its sources) unless the file holds
 * it already, so a build that changes nothing leaves the file, and its timestamp, alone.
 */
export function writeGenerated(file: string, text: string): void {
  let current: string | undefined;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current !== text) writeFileSync(file, text);
}
