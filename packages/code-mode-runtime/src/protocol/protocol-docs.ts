/**
 * The README's table of the runtime protocol's messages, rendered from the message table
 * (`messages.ts`). `protocol-docs.test.ts` fails when the README differs from what this renders;
 * `pnpm --filter @switchyard/code-mode-runtime run docs:protocol` rewrites the README's part.
 */
import { fileURLToPath } from 'node:url';
import { HOST_MESSAGES, PROTOCOL_KINDS, RUNTIME_MESSAGES, WIRE_ERROR_CODES } from './messages';
import type { MessageKind, Shape } from './schema';
import { currentPart, rewritePart } from '../readme-part';

export const README_FILE = fileURLToPath(new URL('../../README.md', import.meta.url));
export const START_MARKER = '<!-- protocol-table: generated from src/protocol/messages.ts by `run docs:protocol`; do not edit -->';
export const END_MARKER = '<!-- /protocol-table -->';

/** `name`: kind, … (an optional field as `name?`). */
function fields(shape: Shape): string {
  const entries = Object.entries(shape).map(([name, kind]) => `\`${name}${kind.optional ? '?' : ''}\`: ${kind.doc}`);
  return entries.length === 0 ? '—' : entries.join(', ');
}

function messageFields(entry: MessageKind): string {
  const common = fields(entry.shape);
  if (!('ok' in entry)) return common;
  return `${common}<br>\`ok: true\`, ${fields(entry.ok)}<br>\`ok: false\`, ${fields(entry.failed)}`;
}

/** Table cells must not contain a raw line break or an unescaped pipe outside the kinds' own escapes. */
const cell = (text: string) => text.replace(/\n/g, ' ');

function messageTable(title: string, table: Readonly<Record<string, MessageKind>>): string[] {
  const rows = Object.entries(table).map(([t, entry]) => `| \`${t}\` | ${messageFields(entry)} | ${cell(entry.meaning)} |`);
  return [`### ${title}`, '', '| `t` | fields | meaning |', '|---|---|---|', ...rows, ''];
}

function kindTable(): string[] {
  const rows = PROTOCOL_KINDS.map((kind) => {
    const named = kind.named!;
    const variants = named.variants.map((variant) => (variant.when === undefined ? fields(variant.shape) : `\`${variant.when}\`, ${fields(variant.shape)}`));
    return `| \`${named.name}\` | ${variants.join('<br>')} | ${cell(named.meaning)} |`;
  });
  return ['### Kinds used by the messages', '', '| kind | fields | meaning |', '|---|---|---|', ...rows, ''];
}

/** The generated part of the README, markers included. */
export function renderProtocolDocs(): string {
  return [
    START_MARKER,
    '',
    ...messageTable('Host → runtime', HOST_MESSAGES),
    ...messageTable('Runtime → host', RUNTIME_MESSAGES),
    ...kindTable(),
    `Error codes (\`WireError.code\`): ${WIRE_ERROR_CODES.map((code) => `\`${code}\``).join(', ')}.`,
    '',
    END_MARKER,
  ].join('\n');
}

/** The README's generated part as it is now (markers included), or undefined when the markers are missing. */
export const currentProtocolDocs = (readme: string): string | undefined => currentPart(readme, { start: START_MARKER, end: END_MARKER });

if (process.argv[1] === fileURLToPath(import.meta.url)) rewritePart(README_FILE, { start: START_MARKER, end: END_MARKER }, renderProtocolDocs());
