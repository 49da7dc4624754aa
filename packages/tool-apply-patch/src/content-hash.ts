import { createHash } from 'node:crypto';

/** The sha256 (hex) of a file's text as UTF-8; `null` for an absent file. */
export function contentHash(text: string | null): string | null {
  return text === null ? null : createHash('sha256').update(text, 'utf8').digest('hex');
}
