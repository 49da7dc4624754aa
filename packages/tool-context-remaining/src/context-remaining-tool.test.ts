import { describe, expect, it } from 'vitest';
import {
  toWireTool,
  type ContextWindowStatus,
  type StepContext,
  type ToolExecutor,
  type ToolPayload,
} from '@switchyard/protocol';
import { invokeTool, testExecutor } from '@switchyard/registry/testing';
import { contextRemainingTool, effectiveContextWindow, tokensLeft } from './context-remaining-tool';
import { modelText } from '@switchyard/test-helpers';

const noArgs: ToolPayload = { kind: 'function', arguments: '{}' };

/** One call through the registry, resolving with its output (failures are outputs, as the model sees them). */
async function remainingOutput(executor: ToolExecutor, step: Partial<StepContext>, payload: ToolPayload = noArgs) {
  return (await invokeTool(executor, payload, { callId: 'call-7', step })).output;
}

testExecutor({
  executor: contextRemainingTool(),
  sample: {},
  invalid: [{ window: 1 }],
  options: { step: { contextWindow: { windowTokens: 10_000, usedTokens: 2_500 } } },
});

const withWindow = (contextWindow?: ContextWindowStatus): Partial<StepContext> => ({ contextWindow });

describe('contextRemainingTool', () => {
  it('has the exact reference spec and output schema', () => {
    const tool = contextRemainingTool();
    expect(tool.name).toEqual({ name: 'get_context_remaining' });
    expect(toWireTool(tool.spec)).toEqual({
      type: 'function',
      name: 'get_context_remaining',
      description: 'Get the remaining tokens in the current context window.',
      strict: false,
      parameters: { type: 'object', properties: {}, additionalProperties: false },
    });
    expect(tool.spec.type === 'function' && tool.spec.outputSchema).toEqual({
      type: 'object',
      properties: { tokens_left: { type: ['integer', 'null'] } },
      required: ['tokens_left'],
      additionalProperties: false,
    });
  });

  it('window 10000 with 2500 used leaves 7000 of the effective window', async () => {
    const output = await remainingOutput(contextRemainingTool(), withWindow({ windowTokens: 10_000, usedTokens: 2_500 }));
    expect(output.success).toBe(true);
    expect(output.toResponseItem('call-7', noArgs)).toEqual({
      type: 'function_call_output',
      call_id: 'call-7',
      output: 'You have 7000 tokens left in this context window.',
    });
    expect(output.codeModeResult(noArgs)).toEqual({ tokens_left: 7000 });
  });

  it('says unknown and null when no limit is known', async () => {
    for (const step of [withWindow(undefined), withWindow({ windowTokens: null, usedTokens: 1234 })]) {
      const output = await remainingOutput(contextRemainingTool(), step);
      expect(output.toResponseItem('call-7', noArgs)).toMatchObject({
        output: 'You have unknown tokens left in this context window.',
      });
      expect(output.codeModeResult(noArgs)).toEqual({ tokens_left: null });
    }
  });

  it('reads an injected status provider instead of the step', async () => {
    const seen: StepContext[] = [];
    const tool = contextRemainingTool({
      statusProvider: {
        async status({ step }) {
          seen.push(step);
          return { windowTokens: 200_000, usedTokens: 90_000 };
        },
      },
    });
    const step = withWindow({ windowTokens: 10_000, usedTokens: 0 });
    const output = await remainingOutput(tool, step);
    expect(output.codeModeResult(noArgs)).toEqual({ tokens_left: 100_000 });
    expect(seen).toEqual([expect.objectContaining(step)]);
  });

  it('honours another effective-window share', async () => {
    const output = await remainingOutput(contextRemainingTool({ effectiveWindowPercent: 100 }), withWindow({ windowTokens: 10_000, usedTokens: 2_500 }));
    expect(output.codeModeResult(noArgs)).toEqual({ tokens_left: 7500 });
    expect(() => contextRemainingTool({ effectiveWindowPercent: 0 })).toThrow('effectiveWindowPercent must be in (0, 100], got 0');
  });

  it('a failing provider becomes a model-visible failure naming the tool', async () => {
    const tool = contextRemainingTool({ statusProvider: { status: () => { throw new Error('usage unavailable'); } } });
    const result = await invokeTool(tool, {}, { step: withWindow() });
    expect(result.error).toMatchObject({ code: 'RESPOND_TO_MODEL', message: 'tool get_context_remaining failed: usage unavailable' });
    expect(result.item).toMatchObject({ output: 'tool get_context_remaining failed: usage unavailable' });
  });

  it('refuses a non-function payload with the reference text', async () => {
    // The registry stops a custom call before the handler (fatal INCOMPATIBLE_PAYLOAD, checked by
    // testExecutor); an executor that also declares custom payloads reaches the handler's own guard.
    const widened = { ...contextRemainingTool(), payloadKinds: ['function', 'custom'] } as const;
    const output = await remainingOutput(widened, withWindow(), { kind: 'custom', input: '' });
    expect(output.success).toBe(false);
    expect(modelText(output)).toBe('get_context_remaining handler received unsupported payload');
  });
});

describe('tokensLeft', () => {
  it('counts up to the auto-compact limit, capped by the effective window', () => {
    expect(tokensLeft({ windowTokens: 10_000, usedTokens: 2_500, autoCompactTokens: 8_000 })).toBe(5_500);
    expect(tokensLeft({ windowTokens: 10_000, usedTokens: 2_500, autoCompactTokens: 50_000 })).toBe(7_000);
    expect(tokensLeft({ windowTokens: null, usedTokens: 2_500, autoCompactTokens: 8_000 })).toBe(5_500);
  });

  it('floors at zero', () => {
    expect(tokensLeft({ windowTokens: 10_000, usedTokens: 12_000 })).toBe(0);
  });

  it('rounds the effective window down', () => {
    expect(effectiveContextWindow(333)).toBe(316);
    expect(effectiveContextWindow(null)).toBeNull();
  });
});
