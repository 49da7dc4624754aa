// The define helpers' executors, exercised through the registry's real dispatch (invokeTool):
// the contract package cannot depend on the registry, so these tests live here.
import { describe, expect, it } from 'vitest';
import { FatalToolError, isSwitchyardError, toolName, type ToolExecutor, type ToolPayload } from '@switchyard/protocol';
import { FunctionToolOutput, defineFreeformTool, defineFunctionTool } from '@switchyard/kit';
import { invokeTool } from '../src/testing/index';
import { invoke } from './support';

const functionPayload = (args: string): ToolPayload => ({ kind: 'function', arguments: args });

describe('defineFunctionTool', () => {
  const weather = defineFunctionTool({
    name: 'get_weather',
    namespace: 'weather__',
    description: 'Current weather for a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    outputSchema: { type: 'object', properties: { tempC: { type: 'number' } }, required: ['tempC'] },
    supportsParallelToolCalls: true,
    async handle({ args }) {
      if (args.city === 'text') return 'sunny';
      if (args.city === 'output') return new FunctionToolOutput('custom', false);
      if (args.city === 'throw') throw new Error('station offline');
      if (args.city === 'fatal') throw new FatalToolError('disk gone');
      return { tempC: 21, city: args.city };
    },
  });

  it('builds a plain executor with name, spec and capabilities', () => {
    expect(weather.name).toEqual(toolName('get_weather', 'weather__'));
    expect(weather.spec).toEqual({
      type: 'function',
      name: 'get_weather',
      description: 'Current weather for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      outputSchema: { type: 'object', properties: { tempC: { type: 'number' } }, required: ['tempC'] },
    });
    expect(weather.supportsParallelToolCalls).toBe(true);
  });

  it('a JSON return becomes JSON text for the model and the value for Code Mode', async () => {
    const out = await invoke(weather, functionPayload('{"city":"Oslo"}'));
    expect(out.toResponseItem('call-1', functionPayload(''))).toEqual({ type: 'function_call_output', call_id: 'call-1', output: '{"tempC":21,"city":"Oslo"}' });
    expect(out.codeModeResult(functionPayload(''))).toEqual({ tempC: 21, city: 'Oslo' });
    expect(out.success).toBe(true);
  });

  it('a string return becomes the output text; a ToolOutput is kept as is', async () => {
    const text = await invoke(weather, functionPayload('{"city":"text"}'));
    expect(text.toResponseItem('c', functionPayload(''))).toEqual({ type: 'function_call_output', call_id: 'c', output: 'sunny' });
    expect(text.codeModeResult(functionPayload(''))).toBe('sunny');
    const own = await invoke(weather, functionPayload('{"city":"output"}'));
    expect(own.success).toBe(false);
    expect(own.toResponseItem('c', functionPayload(''))).toEqual({ type: 'function_call_output', call_id: 'c', output: 'custom' });
  });

  it('an ordinary throw becomes a model-visible failure naming the tool; fatal passes through', async () => {
    await expect(invoke(weather, functionPayload('{"city":"throw"}'))).rejects.toMatchObject({ code: 'RESPOND_TO_MODEL', message: 'tool weather__get_weather failed: station offline' });
    const fatal = await invoke(weather, functionPayload('{"city":"fatal"}')).catch((error: unknown) => error);
    expect(isSwitchyardError(fatal) && fatal.code).toBe('FATAL');
  });

  it('blank arguments parse as {}, malformed ones answer the reference text', async () => {
    const echo = defineFunctionTool({ name: 'echo', description: 'e', parameters: { type: 'object' }, handle: ({ args }) => args });
    expect((await invoke(echo, functionPayload('  '))).codeModeResult(functionPayload(''))).toEqual({});
    await expect(invoke(echo, functionPayload('{nope'))).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/^failed to parse function arguments: /) });
    // The registry refuses a custom call to a function tool (fatal INCOMPATIBLE_PAYLOAD); past that check the handler's own guard answers.
    await expect(invoke(echo, { kind: 'custom', input: 'x' })).rejects.toMatchObject({ code: 'INCOMPATIBLE_PAYLOAD' });
    await expect(invoke({ ...echo, payloadKinds: ['function', 'custom'] }, { kind: 'custom', input: 'x' })).rejects.toMatchObject({ message: 'echo handler received unsupported payload' });
  });
});

describe('defineFreeformTool', () => {
  it('hands the raw input to the handler and builds a custom spec', async () => {
    const shout = defineFreeformTool({ name: 'shout', description: 'Upper-cases text.', grammar: { syntax: 'regex', definition: '.*' }, handle: ({ input }) => input.toUpperCase() });
    expect(shout.spec).toEqual({ type: 'custom', name: 'shout', description: 'Upper-cases text.', grammar: { syntax: 'regex', definition: '.*' } });
    const out = await invoke(shout, { kind: 'custom', input: 'hi' });
    expect(out.toResponseItem('c9', { kind: 'custom', input: 'hi' })).toEqual({ type: 'custom_tool_call_output', call_id: 'c9', output: 'HI' });
  });
});
