import { describe, expect, it } from 'vitest';
import { DEFAULT_OUTPUT_TOKENS, approxTokenCount } from '@switchyard/kit';
import { budgetHookContexts, HOOK_CONTEXT_FLOOR_TOKENS } from './hook-context-budget';

const output = (text: string) => ({ type: 'function_call_output' as const, call_id: 'c1', output: text });

describe('budgetHookContexts', () => {
  it('keeps contexts that fit beside the output, whole and in order', () => {
    expect(budgetHookContexts(['a', 'b'], output('ok'))).toEqual(['a', 'b']);
    expect(budgetHookContexts([], output('ok'))).toEqual([]);
  });

  it('cuts the first context that does not fit and drops the rest with one note', () => {
    const big = 'x'.repeat(DEFAULT_OUTPUT_TOKENS * 4);
    const kept = budgetHookContexts(['first', big, 'third', 'fourth'], output('ok'));
    expect(kept[0]).toBe('first');
    expect(kept[1]).toMatch(/^x+…\d+ tokens truncated…x+$/);
    expect(kept[2]).toBe("[2 more hook contexts of this call omitted: the call's output budget is spent]");
    expect(kept).toHaveLength(3);
    expect(kept.reduce((sum, text) => sum + approxTokenCount(text), 0)).toBeLessThanOrEqual(DEFAULT_OUTPUT_TOKENS + 40);
  });

  it('leaves a tenth of the budget after an output that took it all (content items counted too)', () => {
    const big = 'y'.repeat(DEFAULT_OUTPUT_TOKENS * 4);
    const [onText] = budgetHookContexts([big], output(big));
    const [onItems] = budgetHookContexts([big], { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: big }] });
    for (const kept of [onText, onItems]) expect(approxTokenCount(kept)).toBeLessThanOrEqual(HOOK_CONTEXT_FLOOR_TOKENS + 10);
  });
});
