import { describe, expect, it } from 'vitest';
import type { ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { report } from '../src/profile';
import { callItem, execItem } from './helpers';

// One host serving sessions must keep each model response's cost to that response: a call id used
// twice, output past the call's budget, a turn diff of huge files, a huge patch, a flood of calls.

const finalAnswer: ResponseItem[] = [{ type: 'message', role: 'assistant', content: 'done' }];

describe('host bounds: one model response', () => {
  it('three calls with the same call_id: the tool runs once, history holds one real output and two refusals with that id', async () => {
    let runs = 0;
    const counted = defineFunctionTool({
      name: 'counted',
      description: 'Counts its runs.',
      parameters: { type: 'object' },
      supportsParallelToolCalls: true,
      handle: () => ({ run: ++runs }),
    });
    const model = createScriptedModel([[callItem('dup', 'counted', {}), callItem('dup', 'counted', {}), callItem('dup', 'counted', {})], finalAnswer]);
    const session = createSession({ tools: [counted] });
    try {
      await session.runTurn({ model, input: 'go' });
      expect(runs).toBe(1);
      const outputs = session.history.filter((item) => item.type === 'function_call_output') as Array<{ call_id: string; output: string }>;
      expect(outputs.map((item) => item.call_id)).toEqual(['dup', 'dup', 'dup']);
      expect(outputs.filter((item) => item.output === '{"run":1}')).toHaveLength(1);
      expect(outputs.slice(1).map((item) => item.output)).toEqual(
        Array(2).fill('duplicate call_id "dup": an earlier call in this response already uses it, so this call was not run; give every call its own call_id'),
      );
      // the next request carries exactly that
      expect(model.requests[1].input.filter((item) => item.type === 'function_call_output')).toHaveLength(3);
      report('host bounds', `3 calls with one call_id: ${runs} run, 1 real output + 2 refusals`);
    } finally {
      await session.shutdown();
    }
  });
});

describe('host bounds: one budget per tool call before anything enters history', () => {
  const requestBytes = (input: readonly ResponseItem[]) => Buffer.byteLength(JSON.stringify(input), 'utf8');

  it('15 × 1M-character notify() items and 15 × 1M-character image() items: the next request stays within the call budget', async () => {
    const notifyCode = `for (let i = 0; i < 15; i++) notify(String(i).repeat(1_000_000));\ntext('notified');`;
    const imageCode = `for (let i = 0; i < 15; i++) image('data:image/png;base64,' + 'A'.repeat(1_000_000));\ntext('drawn');`;
    const model = createScriptedModel([[execItem('notify-flood', notifyCode)], finalAnswer, [execItem('image-flood', imageCode)], finalAnswer]);
    const session = createSession({ toolMode: 'code-mode-only', tools: [], codeMode: { runtimeOptions: { nodeSnapshotCheck: 'ignore' } } });
    try {
      await session.runTurn({ model, input: 'flood with notify' });
      const afterNotify = requestBytes(model.requests[1].input);
      const notified = model.requests[1].input.filter((item) => item.type === 'custom_tool_call_output' && item.call_id === 'notify-flood');
      // the exec's own answer, the first notify cut to the default 10,000-token budget, one note for the dropped 14
      expect(notified).toHaveLength(3);
      const texts = notified.map((item) => JSON.stringify((item as { output: unknown }).output));
      expect(texts.some((text) => text.includes('Warning: truncated output (original token count: 250000)'))).toBe(true);
      expect(texts.some((text) => text.includes("notify() output dropped: this call's output budget of 10000 tokens is used up"))).toBe(true);
      expect(afterNotify).toBeLessThan(100_000);

      await session.runTurn({ model, input: 'flood with images' });
      const afterImages = requestBytes(model.requests[3].input);
      const answer = model.requests[3].input.find((item) => item.type === 'custom_tool_call_output' && item.call_id === 'image-flood') as { output: Array<{ type: string; text?: string }> };
      // an image of 1M characters counts 3,907 tokens: two fit the 10,000-token budget beside the text
      expect(answer.output.filter((part) => part.type === 'input_image')).toHaveLength(2);
      expect(answer.output.map((part) => part.text)).toContain('[omitted 13 image items ...]');
      expect(afterImages - afterNotify).toBeLessThan(10_000 * 256 + 100_000);
      report('host bounds', `15 × 1M-char notify: next request ${afterNotify} bytes; 15 × 1M-char images: next request ${afterImages} bytes (2 images kept, 13 omitted)`);
    } finally {
      await session.shutdown();
    }
  });
});
