import { describe, expect, it } from 'vitest';
import type { ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { report } from '../src/profile';
import { callItem } from './helpers';

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
