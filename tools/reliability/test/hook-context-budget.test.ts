/**
 * Hook contexts are model input like tool outputs (issue 47, row 9): a PostToolUse hook that quotes
 * each call's input, on 12 parallel calls with 400,000-character arguments, put 12 `<hook_context>`
 * messages of 4.8 M characters into the next request. A call's hook contexts share its output
 * budget (10,000 tokens, the default per call): what its output leaves, and never less than a
 * tenth of it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MessageItem, ResponseItem } from '@switchyard/protocol';
import { DEFAULT_OUTPUT_TOKENS, approxTokenCount, defineFunctionTool } from '@switchyard/kit';
import { createHookEngine } from '@switchyard/hooks';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { callItem, texts } from './helpers';
import { report } from '../src/profile';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `save_note` answers "saved"; `read_note` answers `size` characters (whatever its `note`). */
const tools = [
  defineFunctionTool({
    name: 'save_note',
    description: 'Saves a note.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    supportsParallelToolCalls: true,
    handle: () => 'saved',
  }),
  defineFunctionTool({
    name: 'read_note',
    description: 'Reads a note.',
    parameters: { type: 'object', properties: { size: { type: 'number' }, note: { type: 'string' } }, required: ['size'] },
    supportsParallelToolCalls: true,
    handle: ({ args }) => 'n'.repeat(args.size as number),
  }),
];

/** A PostToolUse hook that quotes the call's input back to the model. */
function quotingHook() {
  const hooks = createHookEngine({
    functionHooks: [
      {
        event: 'PostToolUse',
        run: (input) => ({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: `The call's input was ${JSON.stringify(input.tool_input)}` } }),
      },
    ],
  });
  cleanups.push(() => hooks.close());
  return hooks;
}

/** One step of `calls`, then an answer; the hook-context messages of the second request. */
async function contextsAfter(calls: ResponseItem[]): Promise<{ contexts: string[]; outputs: string[] }> {
  const session = createSession({ tools, hooks: quotingHook() });
  cleanups.push(() => session.shutdown());
  const model = createScriptedModel([calls, [{ type: 'message', role: 'assistant', content: 'ok' }]]);
  await session.runTurn({ model, input: 'go' });
  const second = model.requests[1].input;
  const contexts = second
    .filter((item): item is MessageItem => item.type === 'message' && item.role === 'developer' && String(item.content).startsWith('<hook_context>'))
    .map((item) => String(item.content));
  const outputs = second.filter((item) => item.type === 'function_call_output').map((item) => texts(item).join(''));
  return { contexts, outputs };
}

/** The slack of the `<hook_context>` tags and the truncation note. */
const SLACK_TOKENS = 40;

describe('hook contexts share the per-call output budget (issue 47, row 9)', () => {
  it('12 parallel calls with 400,000-character inputs quoted by a PostToolUse hook: each context within the budget', async () => {
    const big = 'q'.repeat(400_000);
    const { contexts, outputs } = await contextsAfter(Array.from({ length: 12 }, (_, index) => callItem(`c${index}`, 'save_note', { text: big })));
    expect(outputs).toEqual(Array(12).fill('saved'));
    expect(contexts).toHaveLength(12);
    for (const context of contexts) {
      expect(context.startsWith("<hook_context>The call's input was {\"text\":\"qqq")).toBe(true);
      expect(approxTokenCount(context)).toBeLessThanOrEqual(DEFAULT_OUTPUT_TOKENS - approxTokenCount('saved') + SLACK_TOKENS);
    }
    const total = contexts.reduce((sum, context) => sum + context.length, 0);
    expect(total).toBeLessThan(12 * 4 * (DEFAULT_OUTPUT_TOKENS + SLACK_TOKENS));

    // A call whose output took 9,500 tokens leaves its contexts the floor: a tenth of the budget.
    const shared = await contextsAfter([callItem('r1', 'read_note', { size: 38_000, note: big })]);
    expect(shared.outputs[0].length).toBe(38_000);
    expect(approxTokenCount(shared.contexts[0])).toBeLessThanOrEqual(DEFAULT_OUTPUT_TOKENS / 10 + SLACK_TOKENS);

    // Control: a context within the budget reaches the model whole (the measurement reads real deliveries).
    const small = await contextsAfter([callItem('s1', 'save_note', { text: 'short' })]);
    expect(small.contexts).toEqual([`<hook_context>The call's input was {"text":"short"}</hook_context>`]);
    report('hook contexts', `12 parallel calls quoting 400,000-character inputs: ${contexts.length} contexts, ${total.toLocaleString('en-US')} characters in the next request (was 4.8 M); a 9,500-token output leaves its context ${approxTokenCount(shared.contexts[0])} tokens; a short context arrives whole (control)`);
  });
});
