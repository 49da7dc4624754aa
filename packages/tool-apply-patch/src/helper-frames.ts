/**
 * The framing between apply_patch and its helper process: each message is one line of JSON (the
 * header) naming the byte length of the blobs that follow it raw. File contents travel as blobs,
 * so neither side parses megabytes of JSON-escaped text. The header (summary, paths, blob sizes)
 * grows with the number of files a patch names, so it has no limit of its own: it counts toward
 * the frame's, which the receiver sizes to what a valid answer can be.
 */

/** A decoded message: the header object and its blobs. */
export interface Frame {
  readonly header: Record<string, unknown>;
  readonly blobs: readonly Buffer[];
}

/** Encodes a message: `header` plus `blobs` (their lengths are added to the header as `blobs`). */
export function encodeFrame(header: Record<string, unknown>, blobs: readonly Uint8Array[] = []): Buffer[] {
  const line = Buffer.from(`${JSON.stringify({ ...header, blobs: blobs.map((blob) => blob.byteLength) })}\n`, 'utf8');
  return [line, ...blobs.map((blob) => (Buffer.isBuffer(blob) ? blob : Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength)))];
}

/**
 * Splits a byte stream into frames. Throws on a malformed or oversized frame. A frame's blobs are
 * cut out as their bytes arrive (each chunk's share of the work is done while handling that
 * chunk), never by one copy of the whole frame at its end: a receiver of a frame of megabytes
 * spends a few milliseconds per pipe chunk, not one long task when the frame completes.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private header: { value: Record<string, unknown>; lengths: number[]; blobs: Buffer[] } | undefined;
  /** Bytes of the pending header already searched for its newline (each byte is searched once). */
  private scanned = 0;

  /** @param maxFrameBytes the largest frame (header + blobs) accepted; a long-lived reader may change it between frames. */
  constructor(public maxFrameBytes: number) {}

  /** Adds bytes; returns every frame they complete, in order. */
  push(chunk: Buffer): Frame[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: Frame[] = [];
    for (;;) {
      if (!this.header && !this.readHeader()) return frames;
      const header = this.header as NonNullable<FrameReader['header']>;
      while (header.blobs.length < header.lengths.length && this.buffered >= header.lengths[header.blobs.length]) {
        header.blobs.push(this.take(header.lengths[header.blobs.length]));
      }
      if (header.blobs.length < header.lengths.length) return frames;
      frames.push({ header: header.value, blobs: header.blobs });
      this.header = undefined;
    }
  }

  /** Bytes received after the last complete frame. */
  get pending(): number {
    return this.buffered + (this.header?.blobs.reduce((sum, blob) => sum + blob.length, 0) ?? 0);
  }

  /** Parses the header once its newline arrived; false while it has not. */
  private readHeader(): boolean {
    const end = this.findNewline();
    if (end === -1) {
      if (this.buffered > this.maxFrameBytes) throw new Error(`helper frame larger than ${this.maxFrameBytes} bytes`);
      return false;
    }
    this.scanned = 0;
    const line = this.take(end + 1);
    const value: unknown = JSON.parse(line.subarray(0, end).toString('utf8'));
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('helper frame header is not an object');
    const lengths = (value as { blobs?: unknown }).blobs;
    if (!Array.isArray(lengths) || !lengths.every((length) => Number.isSafeInteger(length) && length >= 0)) throw new Error('helper frame has no blob lengths');
    const total = (lengths as number[]).reduce((sum, length) => sum + length, 0);
    if (total + end > this.maxFrameBytes) throw new Error(`helper frame larger than ${this.maxFrameBytes} bytes`);
    this.header = { value: value as Record<string, unknown>, lengths: lengths as number[], blobs: [] };
    return true;
  }

  /** The offset of the first newline in the buffered bytes, or -1; searches only bytes not searched before. */
  private findNewline(): number {
    let offset = 0;
    for (const chunk of this.chunks) {
      if (offset + chunk.length > this.scanned) {
        const from = Math.max(0, this.scanned - offset);
        const at = chunk.indexOf(10, from);
        if (at !== -1) return offset + at;
      }
      offset += chunk.length;
    }
    this.scanned = offset;
    return -1;
  }

  /**
   * Removes the first `length` buffered bytes (there are at least that many) and returns them: a
   * view of the chunk holding them all (chunks are the stream's own, never reused), else one copy.
   */
  private take(length: number): Buffer {
    this.buffered -= length;
    const first = this.chunks[0];
    if (first !== undefined && first.length >= length) {
      if (first.length === length) this.chunks.shift();
      else this.chunks[0] = first.subarray(length);
      return first.subarray(0, length);
    }
    const out = Buffer.allocUnsafe(length);
    let filled = 0;
    while (filled < length) {
      const chunk = this.chunks[0] as Buffer;
      const part = Math.min(chunk.length, length - filled);
      chunk.copy(out, filled, 0, part);
      filled += part;
      if (part === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(part);
    }
    return out;
  }
}
