/**
 * quickstart: direct tools. A scripted model asks the clock, checks its context budget and edits a
 * file with apply_patch in a temporary workspace, then answers. Asserts the wire outputs and the
 * file on disk, prints a short story and exits 0.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedTimeProvider, type FunctionCallOutputItem, type CustomToolCallOutputItem, type ResponseItem } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { clockTool } from '@switchyard/tool-clock';
import { contextRemainingTool } from '@switchyard/tool-context-remaining';
import { applyPatchTool } from '@switchyard/tool-apply-patch';

const root = mkdtempSync(join(tmpdir(), 'switchyard-quickstart-'));
const session = createSession({
  toolMode: 'direct',
  tools: [clockTool(), contextRemainingTool(), applyPatchTool({ root })],
  cwd: root,
  model: { contextWindow: 10_000, name: 'scripted' },
  time: fixedTimeProvider('2025-03-04T05:06:07Z'),
});

const isCallOutput = (item: ResponseItem): item is FunctionCallOutputItem | CustomToolCallOutputItem =>
  item.type === 'function_call_output' || item.type === 'custom_tool_call_output';

/** The text get_context_remaining gives the model. */
const budget = (tokens: number) => `You have ${tokens} tokens left in this context window.`;

try {
  writeFileSync(join(root, 'todo.md'), '- [ ] write the quickstart\n- [ ] ship it\n');
  const patch = ['*** Begin Patch', '*** Update File: todo.md', '@@', '-- [ ] write the quickstart', '+- [x] write the quickstart', '*** End Patch'].join('\n');

  // The model's side of the conversation: three calls in one response, a budget check after the
  // first response's usage is known, then an answer. Every response reports 1 500 tokens used.
  const model = createScriptedModel(
    [
      [
        { type: 'function_call', call_id: 'call-clock', namespace: 'clock', name: 'curr_time', arguments: '{}' },
        { type: 'function_call', call_id: 'call-budget', name: 'get_context_remaining', arguments: '{}' },
        { type: 'custom_tool_call', call_id: 'call-patch', name: 'apply_patch', input: patch },
      ],
      [{ type: 'function_call', call_id: 'call-budget-2', name: 'get_context_remaining', arguments: '{}' }],
      [{ type: 'message', role: 'assistant', content: 'Ticked off the quickstart item.' }],
    ],
    { usage: () => ({ inputTokens: 1_200, outputTokens: 300, totalTokens: 1_500 }) },
  );

  const result = await session.runTurn({ model, input: 'Tick off the first item in todo.md and tell me the time.' });

  // What the model saw: the three tools, as Responses-API JSON.
  const firstRequest = model.requests[0];
  assert.deepEqual(
    firstRequest.tools.map((tool) => `${tool.type}:${(tool as { name: string }).name}`),
    ['namespace:clock', 'function:get_context_remaining', 'custom:apply_patch'],
  );

  // The outputs, in call order, exactly as the next request carries them.
  const outputs = result.items.filter(isCallOutput);
  assert.deepEqual(outputs[0], { type: 'function_call_output', call_id: 'call-clock', output: 'It is 2025-03-04 05:06:07 UTC.' });
  // Nothing used yet: 95% of the 10 000-token window.
  assert.deepEqual(outputs[1], { type: 'function_call_output', call_id: 'call-budget', output: budget(9_500) });
  assert.equal(outputs[2]?.type, 'custom_tool_call_output');
  assert.equal(outputs[2]?.call_id, 'call-patch');
  // the patch summary inside the shell-output frame, as the reference answers
  assert.match(String((outputs[2] as { output: unknown }).output), /^Exit code: 0\nWall time: \d+ seconds\nOutput:\nSuccess\. Updated the following files:\nM todo\.md\n$/);
  // The first response reported 1 500 tokens: the next step's budget shrinks by that much.
  assert.deepEqual(outputs[3], { type: 'function_call_output', call_id: 'call-budget-2', output: budget(8_000) });
  assert.equal(outputs.length, 4);
  const secondRequest = model.requests[1];
  for (const output of outputs.slice(0, 3)) assert.ok(secondRequest.input.includes(output), `the follow-up request carries ${output.call_id}`);

  // The file on disk.
  assert.equal(readFileSync(join(root, 'todo.md'), 'utf8'), '- [x] write the quickstart\n- [ ] ship it\n');
  assert.equal(result.finalText, 'Ticked off the quickstart item.');
  assert.equal(result.steps, 3);

  console.log('quickstart: a direct-tools turn with a scripted model');
  console.log(`  tools the model sees: ${firstRequest.tools.map((tool) => (tool as { name: string }).name).join(', ')}`);
  for (const output of outputs) console.log(`  ${output.call_id} → ${JSON.stringify(output.output)}`);
  console.log(`  todo.md now: ${JSON.stringify(readFileSync(join(root, 'todo.md'), 'utf8'))}`);
  console.log(`  model: ${result.finalText} (${result.steps} sampling steps)`);
  console.log('quickstart: ok');
} finally {
  await session.shutdown();
  rmSync(root, { recursive: true, force: true });
}
