import { createHash, randomBytes } from 'node:crypto';
import type { ContentItem } from '@switchyard/protocol';

/**
 * The hashes of a cell journal. A nested call is identified by the first 16 hex digits of the
 * SHA-256 of its arguments' JSON text, as the cell produced it (never re-encoded). What a host
 * handed out of a cell (output items, `notify()` texts) is a chain: each item's hash covers the
 * previous one, so one value of 64 hex digits stands for the whole prefix and can be extended
 * after a restore.
 */

/** The hash of a nested call's arguments (`undefined`: none) as a journal records it. */
export function argumentsHash(json: string | undefined): string {
  return createHash('sha256')
    .update(json ?? '')
    .digest('hex')
    .slice(0, 16);
}

/** The chain `previous` extended by one output item. */
export function chainItem(previous: string, item: ContentItem): string {
  const hash = createHash('sha256').update(previous).update('\n');
  if (item.type === 'input_text') hash.update('text\n').update(item.text);
  else hash.update(`image ${item.detail ?? ''}\n`).update(item.image_url);
  return hash.digest('hex');
}

/** The chain `previous` extended by one `notify()` text. */
export function chainText(previous: string, text: string): string {
  return createHash('sha256').update(previous).update('\nnotify\n').update(text).digest('hex');
}

/** A fresh random seed for a cell's `Math.random` (32 hex digits). */
export function newSeed(): string {
  return randomBytes(16).toString('hex');
}
