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

/** Splits a byte stream into frames. Throws on a malformed or oversized frame. */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private header: { value: Record<string, unknown>; lengths: number[]; total: number } | undefined;
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
      if (!this.header) {
        const end = this.findNewline();
        if (end === -1) {
          if (this.buffered > this.maxFrameBytes) throw new Error(`helper frame larger than ${this.maxFrameBytes} bytes`);
          return frames;
        }
        const joined = this.flatten();
        this.scanned = 0;
        const value: unknown = JSON.parse(joined.subarray(0, end).toString('utf8'));
        if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('helper frame header is not an object');
        const lengths = (value as { blobs?: unknown }).blobs;
        if (!Array.isArray(lengths) || !lengths.every((length) => Number.isSafeInteger(length) && length >= 0)) throw new Error('helper frame has no blob lengths');
        const total = (lengths as number[]).reduce((sum, length) => sum + length, 0);
        if (total + end > this.maxFrameBytes) throw new Error(`helper frame larger than ${this.maxFrameBytes} bytes`);
        this.header = { value: value as Record<string, unknown>, lengths: lengths as number[], total };
        this.replace(joined.subarray(end + 1));
      }
      if (this.buffered < this.header.total) return frames;
      const joined = this.flatten();
      const blobs: Buffer[] = [];
      let offset = 0;
      for (const length of this.header.lengths) {
        // Copies: the frame's blobs outlive the read buffer.
        blobs.push(Buffer.from(joined.subarray(offset, offset + length)));
        offset += length;
      }
      frames.push({ header: this.header.value, blobs });
      this.header = undefined;
      this.replace(joined.subarray(offset));
    }
  }

  /** Bytes received after the last complete frame. */
  get pending(): number {
    return this.buffered;
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

  private flatten(): Buffer {
    if (this.chunks.length !== 1) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  private replace(rest: Buffer): void {
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
  }
}
