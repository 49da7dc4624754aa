import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ApprovalRequest } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession, type Session } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { exec, say, texts } from './helpers';

// A typed tool (a zod schema) that asks before it runs, called directly and from a Code Mode cell.
const sessions: Session[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.shutdown()));
});

describe('typed tools with needsApproval in a session', () => {
  const asked: ApprovalRequest[] = [];
  const refunds: number[] = [];
  const refund = defineFunctionTool({
    name: 'refund',
    namespace: 'billing',
    description: 'Refunds part of an order.',
    parameters: z.object({ order: z.string(), amount: z.number().positive() }),
    needsApproval: (args) => args.amount > 100,
    handle: ({ args }) => {
      refunds.push(args.amount);
      return { refunded: args.amount, order: args.order };
    },
  });
  const approvals = {
    async requestApproval(request: ApprovalRequest) {
      asked.push(request);
      return (request.input as { amount: number }).amount > 1000 ? ('denied' as const) : ('approved' as const);
    },
  };
  const call = (callId: string, args: unknown) => ({ type: 'function_call' as const, call_id: callId, name: 'refund', namespace: 'billing', arguments: JSON.stringify(args) });

  it('direct calls: asked above the threshold, refused when denied, invalid arguments never reach the handler', async () => {
    asked.length = 0;
    refunds.length = 0;
    const session = createSession({ tools: [refund], approvals });
    sessions.push(session);
    const model = createScriptedModel([[call('r1', { order: 'A', amount: 20 }), call('r2', { order: 'B', amount: 500 }), call('r3', { order: 'C', amount: 5000 }), call('r4', { order: 'D', amount: -1 })], [say('done')]]);
    const result = await session.runTurn({ model, input: 'refund them' });
    const outputs = result.items.filter((item) => item.type === 'function_call_output').map((item) => (item as { output: string }).output);
    expect(outputs[0]).toBe('{"refunded":20,"order":"A"}');
    expect(outputs[1]).toBe('{"refunded":500,"order":"B"}');
    expect(outputs[2]).toBe('billing__refund rejected by user');
    expect(outputs[3]).toMatch(/^invalid arguments for billing__refund: /);
    expect(refunds.sort((a, b) => a - b)).toEqual([20, 500]);
    expect(asked.map((request) => [request.kind, request.toolName, (request.input as { amount: number }).amount])).toEqual([
      ['tool', 'billing__refund', 500],
      ['tool', 'billing__refund', 5000],
    ]);
  });

  it('nested calls from a cell ask the same provider; a denial rejects with an Error-like failure', async () => {
    asked.length = 0;
    refunds.length = 0;
    const session = createSession({ toolMode: 'code-mode-only', tools: [refund], approvals });
    sessions.push(session);
    const code = [
      `const ok = await tools.billing__refund({ order: 'A', amount: 500 });`,
      `text('ok ' + ok.refunded);`,
      `try { await tools.billing__refund({ order: 'B', amount: 5000 }); text('ran'); } catch (e) { text('caught: ' + e); }`,
    ].join('\n');
    const model = createScriptedModel([[exec('e1', code)], [say('ok')]]);
    const result = await session.runTurn({ model, input: 'refund' });
    const output = result.items.find((item) => item.type === 'custom_tool_call_output');
    expect(texts(output).slice(1)).toEqual(['ok 500', 'caught: billing__refund rejected by user']);
    expect(refunds).toEqual([500]);
    expect(asked.map((request) => [request.toolName, (request.input as { amount: number }).amount])).toEqual([
      ['billing__refund', 500],
      ['billing__refund', 5000],
    ]);
  });
});
