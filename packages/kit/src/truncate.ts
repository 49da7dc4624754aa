import type { ContentItem, InputTextItem } from '@switchyard/protocol';

/**
 * Output budgets shared by Code Mode responses (`exec` / `wait`) and exec_command output, so both
 * truncate the same way. Token counts are estimates:
 * `ceil(utf8 bytes / 4)`; a budget of N tokens is a byte budget of 4·N.
 */

/**
 * The output budget, in tokens, of a tool result when the call and the host name none: Code Mode's
 * `exec` / `wait` responses, exec_command output and MCP results. The model-visible descriptions
 * of those tools say "default 10000"; they must change together with this value.
 */
export const DEFAULT_OUTPUT_TOKENS = 10_000;

/** Estimated tokens of a string: `ceil(utf8 bytes / 4)`. */
export function approxTokenCount(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
}

/** Lines as Rust's `str::lines` counts them (a trailing newline adds no line; `""` has 0). */
export function countLines(text: string): number {
  if (text === '') return 0;
  const parts = text.split('\n');
  return text.endsWith('\n') ? parts.length - 1 : parts.length;
}

/**
 * Cuts the middle out of `text` to fit `maxTokens`: head = floor(B/2) bytes and tail = B − head
 * bytes at character boundaries, joined by `…{K} tokens truncated…` with K = ceil((bytes − B)/4).
 * Returns the text unchanged when it fits.
 */
export function truncateMiddle(text: string, maxTokens: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  const budget = Math.max(0, Math.floor(maxTokens)) * 4;
  if (bytes.length <= budget) return { text, truncated: false };
  const headBytes = Math.floor(budget / 2);
  const tailBytes = budget - headBytes;
  const head = bytes.subarray(0, charBoundaryAtOrBefore(bytes, headBytes)).toString('utf8');
  const tail = bytes.subarray(charBoundaryAtOrAfter(bytes, bytes.length - tailBytes)).toString('utf8');
  const removed = Math.ceil((bytes.length - budget) / 4);
  return { text: `${head}\u2026${removed} tokens truncated\u2026${tail}`, truncated: true };
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

function charBoundaryAtOrBefore(bytes: Buffer, index: number): number {
  let i = Math.min(index, bytes.length);
  while (i > 0 && i < bytes.length && isContinuation(bytes[i])) i--;
  return i;
}

function charBoundaryAtOrAfter(bytes: Buffer, index: number): number {
  let i = Math.max(0, index);
  while (i < bytes.length && isContinuation(bytes[i])) i++;
  return i;
}

/**
 * Truncates one text the way a text-only response is truncated (case A): unchanged when it fits,
 * else `"Warning: truncated output (original token count: T)\nTotal output lines: L\n\n" + middle-cut`.
 */
export function truncateTextOutput(text: string, maxTokens: number): { text: string; truncated: boolean; originalTokens: number } {
  const originalTokens = approxTokenCount(text);
  const cut = truncateMiddle(text, maxTokens);
  if (!cut.truncated) return { text, truncated: false, originalTokens };
  return {
    text: `Warning: truncated output (original token count: ${originalTokens})\nTotal output lines: ${countLines(text)}\n\n${cut.text}`,
    truncated: true,
    originalTokens,
  };
}

/**
 * What an image counts against an output budget: {@link IMAGE_TOKENS}, or one token per
 * {@link IMAGE_URL_BYTES_PER_TOKEN} bytes of its URL when that is more. The floor is what a
 * 1024×1024 high-detail image costs the OpenAI models; the byte rate bounds the request too, so a
 * 10,000-token budget carries at most ~2.5 MB of image data however the images are drawn.
 */
export const IMAGE_TOKENS = 765;
/** Bytes of an image URL (a `data:` URL is the image itself) per budget token; see {@link IMAGE_TOKENS}. */
export const IMAGE_URL_BYTES_PER_TOKEN = 256;

/** Budget tokens of one content item: a text's estimate, an image's documented cost ({@link IMAGE_TOKENS}). */
export function contentItemTokens(item: ContentItem): number {
  if (item.type === 'input_text') return approxTokenCount(item.text);
  return Math.max(IMAGE_TOKENS, Math.ceil(Buffer.byteLength(item.image_url, 'utf8') / IMAGE_URL_BYTES_PER_TOKEN));
}

/**
 * Truncates content items to `maxTokens`:
 * - all text: joined with `\n`; unchanged (still separate items) when within budget, else one item
 *   from {@link truncateTextOutput};
 * - with images: every item, text or image, takes from the same budget in order. Texts are kept
 *   while they fit, the first that does not is middle-cut to what is left, later texts omitted and
 *   counted (`[omitted N text items ...]`), empty texts skipped. An image is kept when its cost
 *   ({@link contentItemTokens}) fits what is left, else omitted and counted
 *   (`[omitted N image items ...]`). (The reference keeps every image whatever its size; counting
 *   them is what keeps one call's output bounded.)
 */
export function truncateContentItems(items: readonly ContentItem[], maxTokens: number): ContentItem[] {
  if (items.every((item) => item.type === 'input_text')) {
    const texts = items as readonly InputTextItem[];
    const joined = texts.map((item) => item.text).join('\n');
    const result = truncateTextOutput(joined, maxTokens);
    return result.truncated ? [{ type: 'input_text', text: result.text }] : [...items];
  }
  let remaining = Math.max(0, Math.floor(maxTokens));
  let exhausted = false;
  let omitted = 0;
  let omittedImages = 0;
  const out: ContentItem[] = [];
  for (const item of items) {
    if (item.type !== 'input_text') {
      const cost = contentItemTokens(item);
      if (cost <= remaining) {
        out.push(item);
        remaining -= cost;
      } else omittedImages++;
      continue;
    }
    if (item.text === '') continue;
    if (exhausted) {
      omitted++;
      continue;
    }
    const cost = approxTokenCount(item.text);
    if (cost <= remaining) {
      out.push(item);
      remaining -= cost;
      continue;
    }
    const cut = truncateMiddle(item.text, remaining);
    remaining = 0;
    exhausted = true;
    if (cut.text === '') omitted++;
    else out.push({ type: 'input_text', text: cut.text });
  }
  if (omitted > 0) out.push({ type: 'input_text', text: `[omitted ${omitted} text items ...]` });
  if (omittedImages > 0) out.push({ type: 'input_text', text: `[omitted ${omittedImages} image items ...]` });
  return out;
}
