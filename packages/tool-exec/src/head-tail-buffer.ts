import { StringDecoder } from 'node:string_decoder';

/** The retained-output cap of one process: 1 MiB. */
export const DEFAULT_MAX_RETAINED_BYTES = 1024 * 1024;

/**
 * Output a process produced and nobody has read yet, capped at `capacity` bytes: the first half
 * and the last half are kept, the middle is dropped (and counted). Draining decodes UTF-8 across
 * calls, so a character split between two reads is not mangled.
 */
export class HeadTailBuffer {
  private readonly headCapacity: number;
  private readonly tailCapacity: number;
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private dropped = 0;
  private readonly decoder = new StringDecoder('utf8');

  constructor(capacity = DEFAULT_MAX_RETAINED_BYTES) {
    const total = Math.max(2, Math.floor(capacity));
    this.headCapacity = Math.floor(total / 2);
    this.tailCapacity = total - this.headCapacity;
  }

  /** Bytes currently retained. */
  get size(): number {
    return this.headBytes + this.tailBytes;
  }

  /** Bytes dropped from the middle since the last {@link drain}. */
  get droppedBytes(): number {
    return this.dropped;
  }

  push(chunk: Buffer | string): void {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (bytes.length === 0) return;
    const headRoom = this.headCapacity - this.headBytes;
    if (headRoom > 0) {
      const part = bytes.subarray(0, headRoom);
      this.head.push(part);
      this.headBytes += part.length;
      bytes = bytes.subarray(part.length);
      if (bytes.length === 0) return;
    }
    this.tail.push(bytes);
    this.tailBytes += bytes.length;
    while (this.tailBytes > this.tailCapacity) {
      const excess = this.tailBytes - this.tailCapacity;
      const first = this.tail[0];
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
        this.dropped += first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
        this.dropped += excess;
      }
    }
  }

  /** Returns everything retained as text and empties the buffer. */
  drain(): string {
    const bytes = Buffer.concat([...this.head, ...this.tail]);
    this.head = [];
    this.tail = [];
    this.headBytes = 0;
    this.tailBytes = 0;
    this.dropped = 0;
    return this.decoder.write(bytes);
  }
}
