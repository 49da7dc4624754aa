import { createHash, randomUUID } from 'node:crypto';

/** The alphabet of cell ids (Crockford-like base32 without i, l, o, u). */
export const CELL_ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * Creates a generator of 16-character cell ids derived from SHA-256(random runtime UUID ‖ sequence),
 * so ids are unique across runtimes and never guessable from one another.
 */
export function createCellIdGenerator(): () => string {
  const runtimeId = randomUUID();
  let sequence = 0;
  return () => {
    sequence += 1;
    const digest = createHash('sha256').update(`${runtimeId}:${sequence}`).digest();
    let id = '';
    // 16 characters × 5 bits = the first 80 bits of the digest.
    let buffer = 0;
    let bits = 0;
    let index = 0;
    while (id.length < 16) {
      buffer = (buffer << 8) | digest[index++];
      bits += 8;
      while (bits >= 5 && id.length < 16) {
        bits -= 5;
        id += CELL_ID_ALPHABET[(buffer >> bits) & 31];
      }
      buffer &= (1 << bits) - 1;
    }
    return id;
  };
}
