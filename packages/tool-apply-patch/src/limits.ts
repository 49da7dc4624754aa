/** Caps on the work one patch may ask for; past any of them the patch is refused (`LIMIT_EXCEEDED`). */
export interface PatchLimits {
  /** Largest file read or written, in bytes. Default 64 MiB. A larger file is refused, never split. */
  readonly maxFileBytes: number;
  /** Most lines in a file an Update hunk edits. Default 2,000,000. */
  readonly maxFileLines: number;
  /** Largest patch text, in bytes (UTF-8). Default 64 MiB. */
  readonly maxPatchBytes: number;
  /** Most bytes one patch reads and writes together. Default 256 MiB. */
  readonly maxTotalBytes: number;
  /** Most file sections (`*** Add/Delete/Update File`) in one patch. Default 20,000. */
  readonly maxFiles: number;
}

const MiB = 1024 * 1024;

/** The default {@link PatchLimits}. */
export const DEFAULT_PATCH_LIMITS: PatchLimits = Object.freeze({
  maxFileBytes: 64 * MiB,
  maxFileLines: 2_000_000,
  maxPatchBytes: 64 * MiB,
  maxTotalBytes: 256 * MiB,
  maxFiles: 20_000,
});

/**
 * What the host lets the helper's answer header take for a patch of `patchBytes` bytes: the header
 * holds the summary, the path lists and a size per blob, so it grows with the files the patch
 * names. Each path in it is one the patch spells (so at most the patch's bytes, 6× for JSON's
 * `\uXXXX` escapes, in at most 8 places) or a resolved absolute path (at most PATH_MAX, 4,096
 * bytes, twice per file section); plus 1 MiB. No answer to a patch within the limits reaches it.
 */
export function maxAnswerHeaderBytes(patchBytes: number, limits: PatchLimits): number {
  return MiB + 48 * patchBytes + limits.maxFiles * (2 * 6 * 4096 + 512);
}

/**
 * Past this many bytes (before and after together), a file's contents never travel from the
 * helper to the host: the host gets their sha256 hashes and the patch's git diff of the file, and
 * the turn diff keeps those instead of the texts, so five one-line patches to five 60 MB files
 * hold kilobytes on the host, not 600 MB. 2 MiB.
 */
export const INLINE_CONTENT_BYTES = 2 * MiB;

/** `bytes` as a short human size for messages: `64 MiB`, `140.2 MiB`, `512 KiB`, `12 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= MiB) return `${Number((bytes / MiB).toFixed(1))} MiB`;
  if (bytes >= 1024) return `${Number((bytes / 1024).toFixed(1))} KiB`;
  return `${bytes} bytes`;
}

/**
 * True when `bytes` holds more than `limit` newline characters. Stops counting at `limit + 1`,
 * so the cost is bounded by the cap, not by the file.
 */
export function exceedsLines(bytes: Uint8Array, limit: number): boolean {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let count = 0;
  for (let at = buffer.indexOf(10); at !== -1; at = buffer.indexOf(10, at + 1)) {
    if (++count > limit) return true;
  }
  return false;
}
