/**
 * The README's table of the apply_patch helper protocol, rendered from its message table
 * (`helper-messages.ts`). `helper-docs.test.ts` fails when the README differs from what this
 * renders; `pnpm --filter @switchyard/tool-apply-patch run docs:protocol` rewrites the README's part.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { messageTable } from '@switchyard/kit/internal';
import { HELPER_ERROR_CODES, HELPER_PROTOCOL_KINDS, HELPER_TO_HOST, HOST_TO_HELPER } from './helper-messages';

export const README_FILE = fileURLToPath(new URL('../README.md', import.meta.url));
const START = '<!-- helper-protocol: generated from src/helper-messages.ts by `run docs:protocol`; do not edit -->';
const END = '<!-- /helper-protocol -->';

/** The generated part of the README, markers included. */
export function renderHelperDocs(): string {
  return [
    START,
    '',
    ...messageTable.renderMessageTable('Host → helper', HOST_TO_HELPER),
    ...messageTable.renderMessageTable('Helper → host', HELPER_TO_HOST),
    ...messageTable.renderKindTable(HELPER_PROTOCOL_KINDS),
    `Error codes (\`error.code\`): ${HELPER_ERROR_CODES.map((code) => `\`${code}\``).join(', ')}.`,
    '',
    END,
  ].join('\n');
}

/** The README's generated part as it is now, or undefined when its markers are missing. */
export function currentHelperDocs(readme: string): string | undefined {
  return messageTable.generatedPart(readme, START, END);
}

// Synchronous reads and writes: the `docs:protocol` script, run on its own, never in a host.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const readme = readFileSync(README_FILE, 'utf8');
  const current = currentHelperDocs(readme);
  if (current === undefined) throw new Error(`${README_FILE} has no ${START} … ${END} part`);
  writeFileSync(README_FILE, readme.replace(current, () => renderHelperDocs()));
}
