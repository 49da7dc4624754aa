/** Default largest MCP message accepted over stdio, in bytes (one JSON-RPC line, newline excluded). */
export const DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** Bytes of an oversized line kept from its start (to find its id and salvage text). */
const HEAD_BYTES = 256 * 1024;
/** Bytes of an oversized line kept from its end (the SDK writes `"id"` last). */
const TAIL_BYTES = 4 * 1024;

/** What is left of a line that was longer than the limit: its size and both ends. */
export interface OversizedLine {
  /** Bytes of the whole line. */
  readonly bytes: number;
  /** Its first bytes (up to 256 KiB), decoded as UTF-8. */
  readonly head: string;
  /** Its last bytes (up to 4 KiB), decoded as UTF-8. */
  readonly tail: string;
}

/** Callbacks of {@link JsonLineReader}. */
export interface JsonLineReaderHandlers {
  /** A complete line within the limit (a trailing `\r` removed; blank lines are skipped). */
  line(text: string): void;
  /** A line over the limit: it was not buffered whole, only its ends were kept. */
  oversized(line: OversizedLine): void;
}

/**
 * Splits a byte stream into newline-delimited lines with a bound on one line's size. Unlike the
 * SDK's `ReadBuffer` (which throws, and its transports then close the connection), a line over the
 * limit is consumed without being held whole and reported through `oversized`, so the connection
 * lives. Chunks are kept in a list and joined once per line (no re-copying per chunk).
 */
export class JsonLineReader {
  private chunks: Buffer[] = [];
  private length = 0;
  private overflow: { bytes: number; head: Buffer[]; headLength: number; tail: Buffer } | undefined;

  constructor(
    private readonly maxLineBytes: number,
    private readonly handlers: JsonLineReaderHandlers,
  ) {}

  /** Feeds one chunk; calls the handlers for every line it completes. */
  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      const end = newline === -1 ? chunk.length : newline;
      if (end > start) this.append(chunk.subarray(start, end));
      if (newline === -1) return;
      this.finishLine();
      start = newline + 1;
    }
  }

  /** Drops a partial line (the stream ended or the transport closed). */
  reset(): void {
    this.chunks = [];
    this.length = 0;
    this.overflow = undefined;
  }

  private append(piece: Buffer): void {
    if (this.overflow) {
      this.keepEnds(piece);
      return;
    }
    this.chunks.push(piece);
    this.length += piece.length;
    if (this.length <= this.maxLineBytes) return;
    // Over the limit: keep only both ends from now on.
    const held = Buffer.concat(this.chunks, this.length);
    this.chunks = [];
    this.length = 0;
    this.overflow = { bytes: 0, head: [], headLength: 0, tail: Buffer.alloc(0) };
    this.keepEnds(held);
  }

  private keepEnds(piece: Buffer): void {
    const overflow = this.overflow!;
    overflow.bytes += piece.length;
    if (overflow.headLength < HEAD_BYTES) {
      const take = piece.subarray(0, HEAD_BYTES - overflow.headLength);
      overflow.head.push(Buffer.from(take));
      overflow.headLength += take.length;
    }
    if (piece.length >= TAIL_BYTES) {
      overflow.tail = Buffer.from(piece.subarray(piece.length - TAIL_BYTES));
    } else {
      const joined = Buffer.concat([overflow.tail, piece]);
      overflow.tail = joined.subarray(Math.max(0, joined.length - TAIL_BYTES));
    }
  }

  private finishLine(): void {
    const overflow = this.overflow;
    if (overflow) {
      this.overflow = undefined;
      this.handlers.oversized({
        bytes: overflow.bytes,
        head: Buffer.concat(overflow.head, overflow.headLength).toString('utf8'),
        tail: overflow.tail.toString('utf8'),
      });
      return;
    }
    if (this.length === 0) return;
    const bytes = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.length);
    this.chunks = [];
    this.length = 0;
    const text = bytes.toString('utf8').replace(/\r$/, '');
    if (text.trim() !== '') this.handlers.line(text);
  }
}

const JSON_STRING = String.raw`"(?:[^"\\]|\\.)*"`;
const ID_VALUE = String.raw`(${JSON_STRING}|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)`;
/** `"id": <value>` as the last member of the top-level object (how the TypeScript SDK serializes). */
const ID_AT_END = new RegExp(String.raw`"id"\s*:\s*${ID_VALUE}\s*\}\s*$`);
/** `"id": <value>` right after `"jsonrpc": "2.0"` or first in the object (Python SDK, most others). */
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID_VALUE}`);

/**
 * The JSON-RPC `id` of a line known only by its ends, when it sits first or last in the object (where
 * every SDK puts it). `undefined` when neither end shows it.
 */
export function recoverMessageId(line: OversizedLine): string | number | undefined {
  const match = ID_AT_END.exec(line.tail) ?? ID_AT_START.exec(line.head);
  if (!match) return undefined;
  try {
    const value: unknown = JSON.parse(match[1]);
    return typeof value === 'string' || typeof value === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The readable start of the first `"text"` string in a truncated JSON text (a `tools/call`
 * result's first text block), decoded; `undefined` when there is none. Stops before an escape
 * sequence cut by the truncation.
 */
export function salvageFirstText(head: string, maxChars: number): string | undefined {
  const start = /"text"\s*:\s*"/.exec(head);
  if (!start) return undefined;
  let index = start.index + start[0].length;
  let raw = '';
  while (index < head.length && raw.length < maxChars) {
    const char = head[index];
    if (char === '"') break;
    if (char === '\\') {
      const next = head[index + 1];
      if (next === undefined) break;
      const length = next === 'u' ? 6 : 2;
      if (index + length > head.length) break;
      raw += head.slice(index, index + length);
      index += length;
      continue;
    }
    raw += char;
    index++;
  }
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}
