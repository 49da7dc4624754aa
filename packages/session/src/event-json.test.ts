import { describe, expect, it } from 'vitest';
import { SwitchyardError, type ApprovalRequest, type ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createScriptedModel } from './testing';
import { createSession } from './session';
import { eventToJSON } from './event-json';

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

// Forwarding every event to a browser: one listener for all types, and a bounded JSON form.
describe('forwarding events', () => {
  const echo = defineFunctionTool({
    name: 'echo',
    description: 'Echoes.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    handle: ({ args }) => args.text as string,
  });
  const longText = 'y'.repeat(100_000);

  it('onEvent hears every event of a turn, in the order `on` listeners hear them, until unsubscribed', async () => {
    const session = createSession({ tools: [echo] });
    const all: string[] = [];
    const byType: string[] = [];
    const types = ['turn-start', 'step-start', 'model-request', 'model-item', 'tool-call-start', 'tool-call-end', 'tool-output', 'model-response', 'turn-end'] as const;
    for (const type of types) session.on(type, (event) => byType.push(event.type));
    const stop = session.onEvent((event) => all.push(event.type));
    const call: ResponseItem = { type: 'function_call', call_id: 'c1', name: 'echo', arguments: '{"text":"hi"}' };
    const model = createScriptedModel([[call], [{ type: 'message', role: 'assistant', content: 'done' }], [{ type: 'message', role: 'assistant', content: 'again' }]]);
    await session.runTurn({ model, input: 'go' });
    expect(all.filter((type) => (types as readonly string[]).includes(type))).toEqual(byType);
    expect(new Set(all)).toEqual(new Set(types));
    stop();
    const before = all.length;
    await session.runTurn({ model, input: 'more' });
    expect(all.length).toBe(before);
    await session.shutdown();
  });

  it('eventToJSON summarizes plans and requests, bounds strings and arrays, and keeps errors to code and message', async () => {
    const session = createSession({ tools: [echo], instructions: 'be brief' });
    const forwarded: Array<Record<string, unknown>> = [];
    session.onEvent((event) => forwarded.push(JSON.parse(JSON.stringify(eventToJSON(event, { maxStringChars: 100 })))));
    const call: ResponseItem = { type: 'function_call', call_id: 'c1', name: 'echo', arguments: JSON.stringify({ text: longText }) };
    await session.runTurn({ model: createScriptedModel([[call], [{ type: 'message', role: 'assistant', content: 'done' }]]), input: 'go' });
    await session.shutdown();
    const of = (type: string) => forwarded.filter((event) => event.type === type);
    expect(of('step-start')[0]).toEqual({ type: 'step-start', turnId: expect.any(String), stepIndex: 1, plan: { toolMode: 'direct', tools: ['echo'], deferredByBudget: [], warnings: [] } });
    expect(of('model-request')[1]).toMatchObject({ type: 'model-request', stepIndex: 2, attempt: 1, request: { inputItems: 3, tools: 1, parallelToolCalls: true, instructionsChars: 8 } });
    const output = of('tool-output')[0] as { item: { output: string } };
    expect(output.item.output).toBe(`${'y'.repeat(100)}…[99900 characters cut]`);
    expect(of('turn-end')[0]).toMatchObject({ result: { steps: 2, items: 4, finalText: 'done' } });
    for (const event of forwarded) expect(JSON.stringify(event).length).toBeLessThan(2_000);
  });

  it('eventToJSON never walks into functions, signals, class instances or error causes, and redacts credential keys', () => {
    const cause = { request: { headers: { Authorization: 'Bearer sk-live-secret' } } };
    const error = new SwitchyardError('MODEL_ERROR', 'the model failed', { cause });
    const json = eventToJSON({ type: 'turn-end', turnId: 't1', error });
    expect(json).toEqual({ type: 'turn-end', turnId: 't1', error: { name: 'SwitchyardError', code: 'MODEL_ERROR', message: 'the model failed' } });
    const echoed = eventToJSON({ type: 'turn-end', turnId: 't2', error: new Error('401: Incorrect API key provided: sk-live-abcdefgh12345678 (Authorization: Bearer abcdefgh12345678)') });
    expect(echoed.error).toEqual({ name: 'Error', message: '401: Incorrect API key provided: [redacted] (Authorization: [redacted] [redacted])' });
    const notification = eventToJSON({
      type: 'tool-notification',
      callId: 'c1',
      name: 'custom',
      data: { headers: { authorization: 'Bearer abc', 'x-api-key': 'k', accept: 'json' }, apiKey: 'k2', password: 'p', inputTokens: 3 } as never,
    });
    expect(notification).toEqual({
      type: 'tool-notification',
      callId: 'c1',
      name: 'custom',
      data: { headers: { authorization: '[redacted]', 'x-api-key': '[redacted]', accept: 'json' }, apiKey: '[redacted]', password: '[redacted]', inputTokens: 3 },
    });
    const live = eventToJSON({ type: 'future-event', signal: new AbortController().signal, run: () => 1, when: new Map([[1, 2]]), list: Array.from({ length: 500 }, (_, index) => index) } as never);
    expect(live).toEqual({ type: 'future-event', signal: '[AbortSignal]', run: null, when: '[Map]', list: [...Array.from({ length: 50 }, (_, index) => index), '[450 more items omitted]'] });
    expect(JSON.stringify(eventToJSON(live as never))).not.toContain('sk-live');
  });

  it('the whole stays near maxTotalChars however much the event holds', () => {
    const items = Array.from({ length: 40 }, (_, index) => ({ type: 'message', role: 'assistant', content: `${index}`.repeat(5_000) }));
    const json = eventToJSON({ type: 'tool-notification', callId: 'c', name: 'n', data: { items } as never }, { maxStringChars: 5_000, maxTotalChars: 20_000 });
    const text = JSON.stringify(json);
    expect(text.length).toBeGreaterThan(15_000);
    expect(text.length).toBeLessThan(21_000);
    expect(text).toMatch(/more items omitted/);
  });
});

describe('eventToJSON options', () => {
  it('a bad option is a CONFIG error naming it', () => {
    expect(() => eventToJSON({ type: 'turn-start', turnId: 't' }, { maxStringChar: 5 } as never)).toThrow(/eventToJSON: unknown option `maxStringChar`; did you mean `maxStringChars`\?/);
    expect(() => eventToJSON({ type: 'turn-start', turnId: 't' }, { maxArrayItems: -1 })).toThrow(/maxArrayItems/);
  });
});
