import { describe, expect, it } from 'vitest';
import { formatObservation } from './response';

describe('formatObservation', () => {
  it('puts the completed header first, items after, success true', () => {
    const out = formatObservation({ kind: 'completed', cellId: 'c', items: [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }] }, { maxTokens: 100, wallTimeMs: 1234 });
    expect(out.success).toBe(true);
    expect(out.items).toEqual([
      { type: 'input_text', text: 'Script completed\nWall time 1.2 seconds\nOutput:\n' },
      { type: 'input_text', text: 'a' },
      { type: 'input_text', text: 'b' },
    ]);
    expect((out.items[0] as { text: string }).text).toMatch(/^Script completed\nWall time \d+\.\d seconds\nOutput:\n$/);
  });

  it('appends the script error before truncation and fails', () => {
    const out = formatObservation({ kind: 'completed', cellId: 'c', items: [], error: 'Error: boom' }, { maxTokens: 100, wallTimeMs: 0 });
    expect(out.success).toBe(false);
    expect(out.items).toEqual([
      { type: 'input_text', text: 'Script failed\nWall time 0.0 seconds\nOutput:\n' },
      { type: 'input_text', text: 'Script error:\nError: boom' },
    ]);
  });

  it('yielded and terminated headers succeed; an empty yield is the header alone', () => {
    expect(formatObservation({ kind: 'yielded', cellId: 'abc', items: [] }, { maxTokens: 10, wallTimeMs: 100 })).toEqual({
      items: [{ type: 'input_text', text: 'Script running with cell ID abc\nWall time 0.1 seconds\nOutput:\n' }],
      success: true,
    });
    expect(formatObservation({ kind: 'terminated', cellId: 'abc', items: [] }, { maxTokens: 10, wallTimeMs: 0 }).items[0]).toEqual({
      type: 'input_text',
      text: 'Script terminated\nWall time 0.0 seconds\nOutput:\n',
    });
  });

  it('truncates the body but never the header, counting the error', () => {
    const out = formatObservation({ kind: 'completed', cellId: 'c', items: [{ type: 'input_text', text: 'x'.repeat(100) }], error: 'E' }, { maxTokens: 4, wallTimeMs: 0 });
    expect(out.items).toHaveLength(2);
    expect((out.items[1] as { text: string }).text).toMatch(/^Warning: truncated output \(original token count: 29\)\nTotal output lines: 3\n\nx{8}\u202625 tokens truncated\u2026error:\nE$/);
  });

  it('defaults image detail to high and drops original unless the model takes it', () => {
    const items = [
      { type: 'input_image' as const, image_url: 'data:image/png;base64,AA' },
      { type: 'input_image' as const, image_url: 'data:image/png;base64,BB', detail: 'original' as const },
    ];
    expect(formatObservation({ kind: 'completed', cellId: 'c', items }, { maxTokens: 10_000, wallTimeMs: 0 }).items.slice(1)).toEqual([
      { type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'high' },
      { type: 'input_image', image_url: 'data:image/png;base64,BB' },
    ]);
    expect(formatObservation({ kind: 'completed', cellId: 'c', items }, { maxTokens: 10_000, wallTimeMs: 0, originalImageDetail: true }).items[2]).toEqual({
      type: 'input_image',
      image_url: 'data:image/png;base64,BB',
      detail: 'original',
    });
  });
});
