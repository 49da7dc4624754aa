// A model's slip — a freeform tool sent as a JSON function call, a function tool sent as a custom
// call — costs one answer, never the turn: the model reads `aborted` and samples again, as the
// Codex binary answers (tools/codex-differential compares the two).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defineFunctionTool } from '@switchyard/kit';
import type { ResponseItem } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { applyPatchTool } from '@switchyard/tool-apply-patch';
import { outputsOf } from '@switchyard/test-helpers';

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

describe('a call of the wrong payload kind', () => {
  it('is answered `aborted` and the turn goes on to the next call and the final answer', async () => {
    const root = mkdtempSync(join(tmpdir(), 'switchyard-wrong-kind-'));
    roots.push(root);
    let echoed = 0;
    const echo = defineFunctionTool({
      name: 'echo',
      description: 'Echo a word.',
      parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
      handle: ({ args }) => {
        echoed += 1;
        return { word: args.word };
      },
    });
    const session = createSession({ toolMode: 'direct', tools: [applyPatchTool({ root }), echo], cwd: root });
    const patch = '*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n';
    const model = createScriptedModel([
      [{ type: 'function_call', call_id: 'call-1', name: 'apply_patch', arguments: JSON.stringify({ input: patch }) }],
      [{ type: 'custom_tool_call', call_id: 'call-2', name: 'echo', input: 'hi' }],
      [{ type: 'custom_tool_call', call_id: 'call-3', name: 'apply_patch', input: patch }, { type: 'function_call', call_id: 'call-4', name: 'echo', arguments: '{"word":"hi"}' }],
      [{ type: 'message', role: 'assistant', content: 'done' }],
    ]);
    try {
      const result = await session.runTurn({ model, input: 'go' });
      expect(outputsOf(result.items, 'call-1')[0]).toEqual({ type: 'function_call_output', call_id: 'call-1', output: 'aborted' });
      expect(outputsOf(result.items, 'call-2')[0]).toEqual({ type: 'custom_tool_call_output', call_id: 'call-2', output: 'aborted' });
      expect(outputsOf(result.items, 'call-4')[0]).toEqual({ type: 'function_call_output', call_id: 'call-4', output: '{"word":"hi"}' });
      expect(result.finalText).toBe('done');
      expect(result.steps).toBe(4);
      // the slipped calls ran nothing; the right ones ran
      expect(echoed).toBe(1);
      expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a\n');
      // each follow-up request carried the `aborted` answer to the model
      expect(model.requests[1]!.input).toContainEqual({ type: 'function_call_output', call_id: 'call-1', output: 'aborted' });
      expect(model.requests[2]!.input).toContainEqual({ type: 'custom_tool_call_output', call_id: 'call-2', output: 'aborted' });
    } finally {
      await session.shutdown();
    }
  });
});
