/**
 * The README's table of the apply_patch helper protocol, rendered from its message table
 * (`helper-messages.ts`). `helper-docs.test.ts` fails when the README differs from what this
 * renders; `pnpm --filter @switchyard/tool-apply-patch run docs:protocol` rewrites the README's part.
 */
import { fileURLToPath } from 'node:url';
import { isMain, rewriteGeneratedPart } from '@switchyard/config/embed';
import { messageTable } from '@switchyard/kit/internal';
import { HELPER_ERROR_CODES, HELPER_PROTOCOL_KINDS, HELPER_TO_HOST, HOST_TO_HELPER } from './helper-messages';

export const README_FILE = fileURLToPath(new URL('../README.md', import.meta.url));
const START = '<!-- helper-protocol: generated from src/helper-messages.ts by `run docs:protocol`; do not edit -->';
const END = '<!-- /helper-protocol -->';

/** The generated part of the README, markers included. */
export function renderHelperDocs(): string {
  const directions = [['Host → helper', HOST_TO_HELPER], ['Helper → host', HELPER_TO_HOST]] as const;
  return messageTable.renderProtocolPart({ start: START, end: END, directions, kinds: HELPER_PROTOCOL_KINDS, errorCodes: HELPER_ERROR_CODES, errorField: 'error.code' });
}

/** The README's generated part as it is now, or undefined when its markers are missing. */
export function currentHelperDocs(readme: string): string | undefined {
  return messageTable.generatedPart(readme, START, END);
}

if (isMain(import.meta.url)) rewriteGeneratedPart(README_FILE, START, END, renderHelperDocs());
