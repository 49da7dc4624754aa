import { messageTable } from '@switchyard/kit/internal';
import { withBlobCount, type Direction } from './helper-messages';

/**
 * The codec between apply_patch and its helper process: each message is one line of JSON (the
 * header: the message of `helper-messages.ts`'s table, plus `blobs`, the byte length of each raw
 * blob that follows it). File contents travel as blobs, so neither side parses megabytes of
 * JSON-escaped text. The header (summary, paths, blob sizes) grows with the number of files a
 * patch names, so it has no limit of its own: it counts toward the frame's, which the receiver
 * sizes to what a valid answer can be. A frame that does not match the table is a
 * {@link HelperFrameError}: never an exception of another kind, never a partial message.
 */

/** What was wrong with a frame (stable: tests and hosts switch on it, never on the text). */
export type HelperFrameProblem = 'oversized' | 'header-not-json' | 'no-blob-lengths' | 'unknown-message' | 'invalid-message' | 'truncated';

/** A frame that breaks the helper protocol: its {@link HelperFrameProblem} and a text naming it. */
export class HelperFrameError extends messageTable.ProtocolError {
  constructor(
    readonly problem: HelperFrameProblem,
    message: string,
  ) {
    super(message);
    this.name = 'HelperFrameError';
  }
}

/** A decoded message of the table and its blobs. */
export interface Frame<M> {
  readonly message: M;
  readonly blobs: readonly Buffer[];
}

const lengthsKind = messageTable.arrayOf(messageTable.integer);

/** Encodes a message of the table with its `blobs` (their lengths are added to the header as `blobs`). */
export function encodeFrame(message: { t: string }, blobs: readonly Uint8Array[] = []): Buffer[] {
  const line = Buffer.from(`${JSON.stringify({ ...message, blobs: blobs.map((blob) => blob.byteLength) })}\n`, 'utf8');
  return [line, ...blobs.map((blob) => (Buffer.isBuffer(blob) ? blob : Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength)))];
}

/**
 * Splits a byte stream into the messages of one direction. A frame's header is validated against
 * the table as soon as its line arrived (before its blobs: a bad frame is refused without waiting
 * for megabytes). Its blobs are cut out as their bytes arrive (each chunk's share of the work is
 * done while handling that chunk), never by one copy of the whole frame at its end: a receiver of a
 * frame of megabytes spends a few milliseconds per pipe chunk, not one long task when it completes.
 * After a {@link HelperFrameError} the stream is unusable (the receiver stops its peer).
 */
export class FrameReader<M> {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private header: { message: M; lengths: number[]; blobs: Buffer[] } | undefined;
  /** Bytes of the pending header already searched for its newline (each byte is searched once). */
  private scanned = 0;

  /**
   * @param direction the table the frames' messages must match.
   * @param maxFrameBytes the largest frame (header + blobs) accepted; a long-lived reader may change it between frames.
   */
  constructor(
    private readonly direction: Direction<M>,
    public maxFrameBytes: number,
  ) {}

  /** Adds bytes; returns every frame they complete, in order. Throws {@link HelperFrameError}. */
  push(chunk: Buffer): Array<Frame<M>> {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: Array<Frame<M>> = [];
    for (;;) {
      if (!this.header && !this.readHeader()) return frames;
      const header = this.header as NonNullable<FrameReader<M>['header']>;
      while (header.blobs.length < header.lengths.length && this.buffered >= header.lengths[header.blobs.length]) {
        header.blobs.push(this.take(header.lengths[header.blobs.length]));
      }
      if (header.blobs.length < header.lengths.length) return frames;
      frames.push({ message: header.message, blobs: header.blobs });
      this.header = undefined;
    }
  }

  /** Bytes received after the last complete frame. */
  get pending(): number {
    return this.buffered + (this.header?.blobs.reduce((sum, blob) => sum + blob.length, 0) ?? 0);
  }

  /** The error for a stream that ended now: a frame cut short, or undefined when it ended between frames. */
  ended(): HelperFrameError | undefined {
    const pending = this.pending;
    if (pending === 0) return undefined;
    const expected = this.header ? ` of ${this.header.lengths.reduce((sum, length) => sum + length, 0)} announced blob bytes` : ' (no complete header)';
    return new HelperFrameError('truncated', `helper stream ended inside a frame: ${pending} bytes${expected}`);
  }

  /** Parses and validates the header once its newline arrived; false while it has not. */
  private readHeader(): boolean {
    const end = this.findNewline();
    if (end === -1) {
      if (this.buffered > this.maxFrameBytes) throw this.oversized();
      return false;
    }
    this.scanned = 0;
    const text = this.take(end + 1).subarray(0, end).toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new HelperFrameError('header-not-json', `helper frame header is not JSON (${(error as Error).message.slice(0, 120)})`);
    }
    const lengths = (value as { blobs?: unknown } | null)?.blobs;
    if (typeof value !== 'object' || value === null || lengthsKind.check(lengths) !== undefined) {
      throw new HelperFrameError('no-blob-lengths', 'helper frame header is not an object with blob lengths (`blobs`: integer ≥ 0 each)');
    }
    const total = (lengths as number[]).reduce((sum, length) => sum + length, 0);
    if (total + end > this.maxFrameBytes) throw this.oversized();
    const message = this.validate(value as Record<string, unknown>, (lengths as number[]).length);
    this.header = { message, lengths: lengths as number[], blobs: [] };
    return true;
  }

  /** The header's message, checked against the direction's table (its blob indices against the frame's blobs). */
  private validate(value: Record<string, unknown>, blobCount: number): M {
    // `blobs` stays in the message: the table's shapes keep fields they do not name, unread.
    try {
      return withBlobCount(blobCount, () => this.direction.parse(value));
    } catch (error) {
      if (!Object.hasOwn(this.direction.table, String(value.t))) {
        throw new HelperFrameError('unknown-message', `unknown helper message ${JSON.stringify(String(value.t)).slice(0, 60)}`);
      }
      throw new HelperFrameError('invalid-message', `helper message ${(error as Error).message}`);
    }
  }

  private oversized(): HelperFrameError {
    return new HelperFrameError('oversized', `helper frame larger than ${this.maxFrameBytes} bytes`);
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
