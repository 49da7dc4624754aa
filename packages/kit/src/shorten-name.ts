import { createHash } from 'node:crypto';
import { MAX_WIRE_NAME_LENGTH } from '@switchyard/protocol';

/** Ten hex digits of the SHA-256 of `text`: the stable suffix {@link shortenName} appends. */
export function nameHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 10);
}

/** Options of {@link shortenName}. */
export interface ShortenNameOptions {
  /** Longest result. Default 64 ({@link MAX_WIRE_NAME_LENGTH}); at least 14. */
  maxLength?: number;
  /** Characters of the end of `name` to keep (a namespaced tool's own name). Default 0. */
  keepEnd?: number;
  /** What the hash is taken of. Default `name`; pass a disambiguated key to resolve a clash. */
  hashOf?: string;
}

/**
 * Shortens `name` to at most `maxLength` characters, stably. A name that fits comes back as is
 * (unless `hashOf` differs from it); a longer one keeps its start, then `_` + {@link nameHash} of
 * the whole name, then `_` + its last `keepEnd` characters when asked. One name always gives the
 * same result, and long names sharing a start still differ. Callers that must be collision-free
 * keep their set of used names and resolve a clash with `hashOf`. Throws a `RangeError` for a
 * `maxLength` under 14.
 */
export function shortenName(name: string, options: ShortenNameOptions = {}): string {
  const maxLength = options.maxLength ?? MAX_WIRE_NAME_LENGTH;
  if (maxLength < 14) throw new RangeError(`shortenName: maxLength must be at least 14, got ${maxLength}`);
  const hashOf = options.hashOf ?? name;
  if (name.length <= maxLength && hashOf === name) return name;
  const hash = nameHash(hashOf);
  const room = maxLength - hash.length - 1;
  const end = Math.min(Math.max(0, Math.floor(options.keepEnd ?? 0)), name.length, room - 2);
  if (end === 0) return `${name.slice(0, room)}_${hash}`;
  return `${name.slice(0, room - end - 1)}_${hash}_${name.slice(name.length - end)}`;
}
