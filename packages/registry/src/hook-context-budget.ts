import type { ToolOutputItem } from '@switchyard/protocol';
import { DEFAULT_OUTPUT_TOKENS, approxTokenCount, truncateMiddle } from '@switchyard/kit';
import { contentItemTokens } from '@switchyard/kit/internal';

/** The least a call's hook contexts keep, whatever its output took: a tenth of the output budget. */
export const HOOK_CONTEXT_FLOOR_TOKENS = DEFAULT_OUTPUT_TOKENS / 10;

/** Budget tokens of a call's output item (its text, or its content items as truncation counts them). */
function outputTokens(item: ToolOutputItem): number {
  const output = (item as { output?: unknown }).output;
  if (typeof output === 'string') return approxTokenCount(output);
  if (Array.isArray(output)) return output.reduce((sum: number, part) => sum + contentItemTokens(part), 0);
  return 0;
}

/**
 * A call's hook contexts, cut to share its output budget: together they take what the output left
 * of `DEFAULT_OUTPUT_TOKENS`, and never less than {@link HOOK_CONTEXT_FLOOR_TOKENS}. Contexts are
 * kept in order while they fit; the first that does not is middle-cut to what is left, and any
 * after it are dropped with one note saying how many. A hook quoting a call's input (or a huge
 * output) costs the next request no more than the call itself may.
 */
export function budgetHookContexts(contexts: readonly string[], item: ToolOutputItem): string[] {
  if (contexts.length === 0) return [];
  let left = Math.max(HOOK_CONTEXT_FLOOR_TOKENS, DEFAULT_OUTPUT_TOKENS - outputTokens(item));
  const kept: string[] = [];
  for (const [index, context] of contexts.entries()) {
    if (left <= 0) {
      const rest = contexts.length - index;
      kept.push(`[${rest} more hook ${rest === 1 ? 'context' : 'contexts'} of this call omitted: the call's output budget is spent]`);
      break;
    }
    const cost = approxTokenCount(context);
    kept.push(cost <= left ? context : truncateMiddle(context, left).text);
    left -= cost;
  }
  return kept;
}
