/**
 * The README's table of the per-cell limits, rendered from the limits table (`cell-limits.ts`).
 * `cell-limits.test.ts` fails when the README differs from what this renders;
 * `pnpm --filter @switchyard/code-mode-runtime run docs:limits` rewrites the README's part.
 */
import { fileURLToPath } from 'node:url';
import { isMain, rewriteGeneratedPart } from '@switchyard/config/embed';
import { messageTable } from '@switchyard/kit/internal';
import { CELL_LIMITS } from './cell-limits';

export const README_FILE = fileURLToPath(new URL('../README.md', import.meta.url));
const START = '<!-- limits-table: generated from src/cell-limits.ts by `run docs:limits`; do not edit -->';
const END = '<!-- /limits-table -->';

/** The generated part of the README, markers included. */
export function renderLimitsDocs(): string {
  const rows = Object.entries(CELL_LIMITS).map(([name, entry]) => `| \`${name}\` | ${entry.defaultText} | ${entry.whenHit} |`);
  return [START, '', '| option | default | when it is hit |', '|---|---|---|', ...rows, '', END].join('\n');
}

/** The README's generated part as it is now (markers included), or undefined when the markers are missing. */
export const currentLimitsDocs = (readme: string): string | undefined => messageTable.generatedPart(readme, START, END);

if (isMain(import.meta.url)) rewriteGeneratedPart(README_FILE, START, END, renderLimitsDocs());
