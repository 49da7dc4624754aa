/**
 * The README's table of the per-cell limits, rendered from the limits table (`cell-limits.ts`).
 * `cell-limits.test.ts` fails when the README differs from what this renders;
 * `pnpm --filter @switchyard/code-mode-runtime run docs:limits` rewrites the README's part.
 */
import { fileURLToPath } from 'node:url';
import { CELL_LIMITS } from './cell-limits';
import { currentPart, rewritePart } from './readme-part';

export const README_FILE = fileURLToPath(new URL('../README.md', import.meta.url));
const PART = { start: '<!-- limits-table: generated from src/cell-limits.ts by `run docs:limits`; do not edit -->', end: '<!-- /limits-table -->' };

/** The generated part of the README, markers included. */
export function renderLimitsDocs(): string {
  const rows = Object.entries(CELL_LIMITS).map(([name, entry]) => `| \`${name}\` | ${entry.defaultText} | ${entry.whenHit} |`);
  return [PART.start, '', '| option | default | when it is hit |', '|---|---|---|', ...rows, '', PART.end].join('\n');
}

/** The README's generated part as it is now (markers included), or undefined when the markers are missing. */
export const currentLimitsDocs = (readme: string): string | undefined => currentPart(readme, PART);

if (process.argv[1] === fileURLToPath(import.meta.url)) rewritePart(README_FILE, PART, renderLimitsDocs());
