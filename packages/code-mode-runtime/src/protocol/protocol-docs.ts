/**
 * The README's table of the runtime protocol's messages, rendered from the message table
 * (`messages.ts`). `protocol-docs.test.ts` fails when the README differs from what this renders;
 * `pnpm --filter @switchyard/code-mode-runtime run docs:protocol` rewrites the README's part.
 */
import { fileURLToPath } from 'node:url';
import { HOST_MESSAGES, PROTOCOL_KINDS, RUNTIME_MESSAGES, WIRE_ERROR_CODES } from './messages';
import { messageTable } from '@switchyard/kit/internal';
import { currentPart, rewritePart } from '../readme-part';

export const README_FILE = fileURLToPath(new URL('../../README.md', import.meta.url));
export const START_MARKER = '<!-- protocol-table: generated from src/protocol/messages.ts by `run docs:protocol`; do not edit -->';
export const END_MARKER = '<!-- /protocol-table -->';

/** The generated part of the README, markers included. */
export function renderProtocolDocs(): string {
  return [
    START_MARKER,
    '',
    ...messageTable.renderMessageTable('Host → runtime', HOST_MESSAGES),
    ...messageTable.renderMessageTable('Runtime → host', RUNTIME_MESSAGES),
    ...messageTable.renderKindTable(PROTOCOL_KINDS),
    `Error codes (\`WireError.code\`): ${WIRE_ERROR_CODES.map((code) => `\`${code}\``).join(', ')}.`,
    '',
    END_MARKER,
  ].join('\n');
}

/** The README's generated part as it is now (markers included), or undefined when the markers are missing. */
export const currentProtocolDocs = (readme: string): string | undefined => currentPart(readme, { start: START_MARKER, end: END_MARKER });

if (process.argv[1] === fileURLToPath(import.meta.url)) rewritePart(README_FILE, { start: START_MARKER, end: END_MARKER }, renderProtocolDocs());
