import { CELL_ID_ALPHABET } from '@switchyard/protocol';

/**
 * Creates a generator of 16-character cell ids from {@link CELL_ID_ALPHABET}, each drawn from 80
 * random bits (`crypto.getRandomValues`), so ids are unique across generators, runtimes, worker
 * restarts and host restarts, and never guessable from one another.
 */
export function createCellIdGenerator(): () => string {
  return () => {
    const bytes = new Uint8Array(10);
    globalThis.crypto.getRandomValues(bytes);
    let id = '';
    // 16 characters × 5 bits = the 80 bits drawn.
    let buffer = 0;
    let bits = 0;
    for (const byte of bytes) {
      buffer = (buffer << 8) | byte;
      bits += 8;
      while (bits >= 5) {
        bits -= 5;
        id += CELL_ID_ALPHABET[(buffer >> bits) & 31];
      }
      buffer &= (1 << bits) - 1;
    }
    return id;
  };
}
