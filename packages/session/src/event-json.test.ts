import { describe, expect, it } from 'vitest';
import type { ApprovalRequest, ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createScriptedModel } from './testing';
import { createSession } from './session';

// What a host logs must read cleanly: an approval request without `"signal":{}`, durations without
// float noise. Both are asserted on the JSON text a host would write.
describe('what a host logs', () => {
  it('an approval request serializes without its signal, which is still there to honour', async () => {
    const deploy = defineFunctionTool({
      name: 'deploy',
      description: 'Deploys.',
      parameters: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
      needsApproval: true,
      handle: ({ args }) => `deployed to ${args.env as string}`,
    });
    const logged: string[] = [];
    const signals: unknown[] = [];
    const session = createSession({
      tools: [deploy],
      approvals: {
        async requestApproval(request: ApprovalRequest) {
          logged.push(JSON.stringify(request));
          signals.push(request.signal);
          return 'approved';
        },
      },
    });
    const call: ResponseItem = { type: 'function_call', call_id: 'c1', name: 'deploy', arguments: '{"env":"prod"}' };
    const result = await session.runTurn({ model: createScriptedModel([[call], [{ type: 'message', role: 'assistant', content: 'done' }]]), input: 'go' });
    await session.shutdown();
    expect(logged).toEqual(['{"kind":"tool","toolName":"deploy","callId":"c1","input":{"env":"prod"}}']);
    expect(signals[0]).toBeInstanceOf(AbortSignal);
    expect(result.items).toContainEqual({ type: 'function_call_output', call_id: 'c1', output: 'deployed to prod' });
  });

  it('tool-call-end durations have at most three decimals', async () => {
    const slow = defineFunctionTool({
      name: 'slow',
      description: 'Waits a little.',
      parameters: { type: 'object', properties: {} },
      handle: async () => {
        await new Promise((resolve) => setTimeout(resolve, 3 + Math.random() * 5));
        return 'ok';
      },
    });
    const session = createSession({ tools: [slow] });
    const ends: string[] = [];
    session.on('tool-call-end', (event) => ends.push(JSON.stringify({ durationMs: event.durationMs })));
    const calls: ResponseItem[] = Array.from({ length: 20 }, (_, index) => ({ type: 'function_call', call_id: `c${index}`, name: 'slow', arguments: '{}' }));
    await session.runTurn({ model: createScriptedModel([calls, [{ type: 'message', role: 'assistant', content: 'done' }]]), input: 'go' });
    await session.shutdown();
    expect(ends).toHaveLength(20);
    for (const text of ends) expect(text).toMatch(/^\{"durationMs":\d+(\.\d{1,3})?\}$/);
  });
});
