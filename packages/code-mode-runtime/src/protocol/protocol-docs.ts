/**
 * The README's table of the runtime protocol's messages, rendered from the message table
 * (`messages.ts`). `protocol-docs.test.ts` fails when the README differs from what this renders;
 * `pnpm --filter @switchyard/code-mode-runtime run docs:protocol` rewrites the README's part.
 */
import { fileURLToPath } from 'node:url';
import { isMain, rewriteGeneratedPart } from '@switchyard/config/embed';
import { messageTable } from '@switchyard/kit/internal';
import { HOST_MESSAGES, PROTOCOL_KINDS, RUNTIME_MESSAGES, WIRE_ERROR_CODES } from './messages';

export const README_FILE = fileURLToPath(new URL('../../README.md', import.meta.url));
export const START_MARKER = '<!-- protocol-table: generated from src/protocol/messages.ts by `run docs:protocol`; do not edit -->';
export const END_MARKER = '<!-- /protocol-table -->';

/** The generated part of the README, markers included. */
export function renderProtocolDocs(): string {
  const directions = [['Host → runtime', HOST_MESSAGES], ['Runtime → host', RUNTIME_MESSAGES]] as const;
  return messageTable.renderProtocolPart({ start: START_MARKER, end: END_MARKER, directions, kinds: PROTOCOL_KINDS, errorCodes: WIRE_ERROR_CODES, errorField: 'WireError.code' });
}

/** The README's generated part as it is now (markers included), or undefined when the markers are missing. */
export const currentProtocolDocs = (readme: string): string | undefined => messageTable.generatedPart(readme, START_MARKER, END_MARKER);

if (isMain(import.meta.url)) rewriteGeneratedPart(README_FILE, START_MARKER, END_MARKER, renderProtocolDocs());
