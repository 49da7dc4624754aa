import { describe, expect, it } from 'vitest';
import { toolName, type ToolExecutor } from '@switchyard/protocol';
import { FunctionToolOutput, defineFreeformTool, defineFunctionTool } from '@switchyard/kit';
import { invokeTool, testExecutor } from './index';

const weather = defineFunctionTool({
  name: 'get_weather',
  namespace: 'forecast',
  description: 'Current weather.',
  supportsParallelToolCalls: true,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  handle: ({ args, invocation }) => ({ city: args.city, tempC: 21, turn: invocation.step.turnId }),
});

const shout = defineFreeformTool({ name: 'shout', description: 'Upper-cases its input.', handle: ({ input }) => FunctionToolOutput.text(input.toUpperCase()) });

describe('invokeTool', () => {
  it('runs a call through the registry: the item keeps the call_id, events and hook inputs are recorded', async () => {
    const result = await invokeTool(weather, { city: 'Oslo' }, { callId: 'c-1', step: { turnId: 'turn-9' } });
    expect(result.item).toEqual({ type: 'function_call_output', call_id: 'c-1', output: '{"city":"Oslo","tempC":21,"turn":"turn-9"}' });
    expect(result.callItem).toEqual({ type: 'function_call', call_id: 'c-1', name: 'get_weather', namespace: 'forecast', arguments: '{"city":"Oslo"}' });
    expect(result.events.map((event) => event.type)).toEqual(['tool-call-start', 'tool-call-end']);
    expect(result.hookInputs.pre.map((request) => [request.toolName, request.toolInput, request.toolUseId])).toEqual([['forecast__get_weather', { city: 'Oslo' }, 'c-1']]);
    expect(result.hookInputs.post.map((request) => request.toolResponse)).toEqual([{ city: 'Oslo', tempC: 21, turn: 'turn-9' }]);
  });

  it('gives malformed and invalid input the registry’s model-visible failures', async () => {
    const malformed = await invokeTool(weather, '{"city":', { callId: 'c-2' });
    expect(malformed.error?.code).toBe('INVALID_INPUT');
    expect(malformed.item).toMatchObject({ call_id: 'c-2', output: expect.stringMatching(/^failed to parse function arguments: /) });
    const invalid = await invokeTool(weather, { city: 7 }, { callId: 'c-3' });
    expect(invalid.item).toEqual({ type: 'function_call_output', call_id: 'c-3', output: 'invalid arguments for forecast__get_weather: arguments.city must be string' });
    expect(invalid.events).toEqual([]);
  });

  it('reads a string as a freeform input and answers an incompatible payload `aborted`', async () => {
    const result = await invokeTool(shout, 'hello', { callId: 'c-4' });
    expect(result.item).toEqual({ type: 'custom_tool_call_output', call_id: 'c-4', output: 'HELLO' });
    // a freeform tool's hooks read its raw input as `{ input }`
    expect(result.hookInputs.pre.map((request) => [request.toolName, request.toolInput])).toEqual([['shout', { input: 'hello' }]]);
    const wrongKind = await invokeTool(shout, { kind: 'function', arguments: '{}' }, { callId: 'c-6' });
    expect(wrongKind.item).toEqual({ type: 'function_call_output', call_id: 'c-6', output: 'aborted' });
    expect(wrongKind.error).toMatchObject({ code: 'INCOMPATIBLE_PAYLOAD', message: 'tool shout invoked with incompatible payload' });
  });

  it('answers aborted for a cancelled turn, runs a hook runner of the test’s own, and reaches sibling tools', async () => {
    const controller = new AbortController();
    controller.abort();
    const aborted = await invokeTool(weather, { city: 'Oslo' }, { callId: 'c-5', signal: controller.signal });
    expect(aborted.item).toEqual({ type: 'function_call_output', call_id: 'c-5', output: 'aborted by user after 0.1s' });

    const blocked = await invokeTool(weather, { city: 'Oslo' }, {
      hooks: { runPreToolUse: async () => ({ blocked: true, reason: 'no weather', additionalContexts: [] }), runPostToolUse: async () => ({ additionalContexts: [] }) },
    });
    expect(blocked.item).toMatchObject({ output: 'Tool call blocked by PreToolUse hook: no weather. Tool: forecast__get_weather' });
    expect(blocked.hookInputs.pre).toHaveLength(1);

    const relay: ToolExecutor = defineFunctionTool({
      name: 'relay',
      description: 'Asks the weather tool.',
      parameters: { type: 'object', properties: {} },
      handle: async ({ invocation }) => {
        const output = await invocation.tools!.call(toolName('get_weather', 'forecast'), { kind: 'function', arguments: '{"city":"Rome"}' });
        return output.codeModeResult({ kind: 'function', arguments: '{}' });
      },
    });
    const relayed = await invokeTool(relay, {}, { tools: [weather] });
    expect(JSON.parse((relayed.item as { output: string }).output)).toMatchObject({ city: 'Rome', tempC: 21 });
    expect(relayed.events.filter((event) => event.type === 'tool-call-end').map((event) => event.toolName)).toEqual(['forecast__get_weather', 'relay']);
  });
});

testExecutor({ executor: weather, sample: { city: 'Oslo' }, invalid: [{ city: 7 }, { town: 'Oslo' }] });
testExecutor({ executor: shout, sample: 'hello', skip: [{ reason: 'any text is a valid input to shout', tests: ['invalid-input'] }] });
