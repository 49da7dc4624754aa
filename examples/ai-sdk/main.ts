/**
 * ai-sdk: a host that lives on the AI SDK. Its tools are AI SDK `tool({...})` definitions with zod
 * schemas; a hook policy guards them. Two ways in, both through Switchyard's one router:
 *   1. `generateText` keeps the loop and gets Code Mode as two AI SDK tools (`codeModeTool`);
 *   2. the Switchyard loop is driven by an AI SDK model (`aiSdkModel`).
 * The model is `ai/test`'s MockLanguageModelV4 (scripted, no network), so the story is repeatable.
 * Asserts its own outcome and exits 0.
 */
import assert from 'node:assert/strict';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { aiSdkModel, aiSdkTools, codeModeTool } from '@switchyard/ai-sdk';
import { createHookEngine } from '@switchyard/hooks';
import { createSession } from '@switchyard/session';
import { generateText, stepCountIs, tool } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';

const STOCK: Record<string, number> = { apples: 12, pears: 0, plums: 7 };
const tools = await aiSdkTools({
  stock: tool({ description: 'Units in stock of a fruit.', inputSchema: z.object({ fruit: z.string() }), execute: async ({ fruit }) => ({ fruit, units: STOCK[fruit] ?? 0 }) }),
  reorder: tool({ description: 'Orders more of a fruit.', inputSchema: z.object({ fruit: z.string(), units: z.number().int().positive() }), execute: async ({ fruit, units }) => `ordered ${units} ${fruit}` }),
});
// The policy: nobody reorders plums today.
const hooks = createHookEngine({
  functionHooks: [
    {
      event: 'PreToolUse',
      matcher: 'reorder',
      run: (input) => ((input.tool_input as { fruit?: string }).fruit === 'plums' ? { decision: 'block', reason: 'plum orders are frozen' } : undefined),
    },
  ],
});
const session = createSession({ toolMode: 'code-mode-only', tools, hooks, provider: { toolSearch: false } });
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

const CELL = `const fruits = ['apples', 'pears', 'plums'];
const counts = await Promise.all(fruits.map((fruit) => tools.stock({ fruit })));
for (const { fruit, units } of counts.filter((c) => c.units < 10)) {
  try { text(await tools.reorder({ fruit, units: 10 - units })); }
  catch (error) { text('could not reorder ' + fruit + ': ' + (error?.message ?? error)); }
}`;

try {
  // 1. generateText + codeModeTool.
  const model = new MockLanguageModelV4({
    doGenerate: [
      { content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'exec', input: JSON.stringify({ code: CELL }) }], finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage, warnings: [] },
      { content: [{ type: 'text', text: 'Pears reordered; plums are frozen.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
    ],
  });
  const result = await generateText({ model, tools: await codeModeTool({ session }), prompt: 'Top up anything below 10 units.', stopWhen: stepCountIs(3) });
  const seen = (model.doGenerateCalls[1]!.prompt.find((message) => message.role === 'tool')!.content[0] as { output: { value: string } }).output.value;
  assert.match(seen, /^Script completed\n/);
  assert.ok(seen.includes('ordered 10 pears'));
  assert.ok(seen.includes('could not reorder plums: Tool call blocked by PreToolUse hook: plum orders are frozen. Tool: reorder'));
  assert.equal(result.text, 'Pears reordered; plums are frozen.');
  console.log('ai-sdk: generateText with codeModeTool');
  console.log(`  the model read: ${seen.split('\n').slice(3).filter(Boolean).join(' | ')}`);

  // 2. The Switchyard loop driven by an AI SDK model (streaming).
  const stream = (parts: LanguageModelV4StreamPart[]) => ({ stream: convertArrayToReadableStream(parts) });
  const finish: LanguageModelV4StreamPart = { type: 'finish', usage, finishReason: { unified: 'stop', raw: 'stop' } };
  const driver = new MockLanguageModelV4({
    doStream: [
      stream([{ type: 'tool-call', toolCallId: 'call-2', toolName: 'exec', input: JSON.stringify({ code: "text(JSON.stringify(await tools.stock({ fruit: 'apples' })))" }) }, finish]),
      stream([{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: '12 apples.' }, { type: 'text-end', id: 't' }, finish]),
    ],
  });
  const turn = await session.runTurn({ model: aiSdkModel(driver), input: 'How many apples?' });
  const offered = driver.doStreamCalls[0]!.tools!.map((t) => t.name);
  assert.deepEqual(offered, ['exec', 'wait']);
  const output = turn.items.find((item) => item.type === 'custom_tool_call_output') as { output: Array<{ text: string }> };
  assert.deepEqual(output.output.slice(1), [{ type: 'input_text', text: '{"fruit":"apples","units":12}' }]);
  assert.equal(turn.finalText, '12 apples.');
  console.log('ai-sdk: aiSdkModel drives session.runTurn');
  console.log(`  tools offered: ${offered.join(', ')}; cell output: ${output.output[1]!.text}; answer: ${turn.finalText}`);
  console.log('ai-sdk: ok');
} finally {
  await session.shutdown();
  await hooks.close();
}
