import { describe, expect, it } from 'vitest';
import type { ResponseItem } from '@switchyard/protocol';
import { assistantText } from './message-text';

describe('assistantText', () => {
  it('reads output_text and refusal parts (a refusal is the final text of a turn that declined)', () => {
    const refusal = { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] } as unknown as ResponseItem;
    expect(assistantText(refusal)).toBe('I cannot help with that.');
    expect(assistantText({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi' }] })).toBe('Hi');
    expect(assistantText({ type: 'message', role: 'user', content: 'Hi' })).toBeUndefined();
  });
});
