import { describe, expect, it } from 'vitest';
import { IMAGE_TOKENS, approxTokenCount, contentItemTokens, countLines, truncateContentItems, truncateMiddle, truncateTextOutput } from './truncate';
import type { ContentItem } from '@switchyard/protocol';

describe('truncation', () => {
  it('estimates tokens as ceil(bytes / 4) and counts lines like str::lines', () => {
    expect(approxTokenCount('')).toBe(0);
    expect(approxTokenCount('abcde')).toBe(2);
    expect(approxTokenCount('é')).toBe(1);
    expect(countLines('')).toBe(0);
    expect(countLines('a\nb\n')).toBe(2);
    expect(countLines('a\nb')).toBe(2);
  });

  it('keeps text within budget and cuts the middle otherwise', () => {
    expect(truncateMiddle('abcd', 1)).toEqual({ text: 'abcd', truncated: false });
    // 20 bytes, budget 2 tokens = 8 bytes: head 4, tail 4, removed ceil(12/4) = 3
    expect(truncateMiddle('0123456789abcdefghij', 2).text).toBe('0123\u20263 tokens truncated\u2026ghij');
    // a budget of 0 leaves only the marker
    expect(truncateMiddle('abcdefgh', 0).text).toBe('\u20262 tokens truncated\u2026');
  });

  it('cuts at UTF-8 character boundaries', () => {
    // 'é' is 2 bytes: 5 of them = 10 bytes; budget 1 token = 4 bytes → head 2 bytes (1 char), tail 2 bytes (1 char)
    expect(truncateMiddle('ééééé', 1).text).toBe('é\u20262 tokens truncated\u2026é');
    // 3-byte chars: head budget 2 bytes holds none; tail starts at a boundary
    expect(truncateMiddle('€€€€', 1).text).toBe('\u20262 tokens truncated\u2026');
  });

  it('formats case A with the warning and line count', () => {
    const text = 'line one\nline two\nline three\n';
    const result = truncateTextOutput(text, 2);
    expect(result.truncated).toBe(true);
    expect(result.text).toBe(`Warning: truncated output (original token count: 8)\nTotal output lines: 3\n\nline\u20266 tokens truncated\u2026ree\n`);
  });

  it('returns all-text items unchanged within budget, one item when over', () => {
    const items: ContentItem[] = [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }];
    expect(truncateContentItems(items, 10)).toEqual(items);
    const long: ContentItem[] = [{ type: 'input_text', text: 'x'.repeat(40) }, { type: 'input_text', text: 'y'.repeat(40) }];
    const out = truncateContentItems(long, 5);
    expect(out).toHaveLength(1);
    expect((out[0] as { text: string }).text).toMatch(/^Warning: truncated output \(original token count: 21\)\nTotal output lines: 2\n\nx{10}\u202616 tokens truncated\u2026y{10}$/);
  });

  it('with images: every item takes from one budget; cuts the first text that does not fit, omits the rest', () => {
    const image: ContentItem = { type: 'input_image', image_url: 'data:image/png;base64,AA' };
    const items: ContentItem[] = [
      { type: 'input_text', text: 'abcd' },
      image,
      { type: 'input_text', text: '' },
      { type: 'input_text', text: '0123456789abcdef' },
      { type: 'input_text', text: 'later' },
      { type: 'input_text', text: 'later too' },
    ];
    // 'abcd' (1) + the image (765) leave 2 tokens of the 768: the next text is cut to 8 bytes
    expect(truncateContentItems(items, 768)).toEqual([
      { type: 'input_text', text: 'abcd' },
      image,
      { type: 'input_text', text: '0123\u20262 tokens truncated\u2026cdef' },
      { type: 'input_text', text: '[omitted 2 text items ...]' },
    ]);
  });

  it('an image costs IMAGE_TOKENS, or one token per 256 bytes of its URL when more; one that does not fit is omitted and counted', () => {
    const small: ContentItem = { type: 'input_image', image_url: 'data:image/png;base64,AA' };
    const big: ContentItem = { type: 'input_image', image_url: `data:image/png;base64,${'A'.repeat(1024 * 1024)}` };
    expect(contentItemTokens(small)).toBe(IMAGE_TOKENS);
    expect(contentItemTokens(big)).toBe(Math.ceil((1024 * 1024 + 22) / 256));
    const items: ContentItem[] = [{ type: 'input_text', text: 'seen' }, ...Array(15).fill(big), small];
    const out = truncateContentItems(items, 10_000);
    // two 4,097-token images fit 10,000 tokens beside the text, then the small one; 13 are omitted
    expect(out).toEqual([{ type: 'input_text', text: 'seen' }, big, big, small, { type: 'input_text', text: '[omitted 13 image items ...]' }]);
    expect(JSON.stringify(out).length).toBeLessThan(10_000 * 256 + 1000);
  });
});
