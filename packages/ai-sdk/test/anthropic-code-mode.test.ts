import { createAnthropic } from '@ai-sdk/anthropic';
import { createHookEngine } from '@switchyard/hooks';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession } from '@switchyard/session';
import { afterEach, describe, expect, it } from 'vitest';
import { tool } from 'ai';
import { z } from 'zod';
import { aiSdkModel, aiSdkTools } from '../src/index';
import { anthropicToolCall, asSse, recordedEvents } from './fixtures';
import { startEventReplayServer } from './replay-server';

const CELL = `const [oslo, lima] = await Promise.all([
  tools.weather__get_weather({ city: 'Oslo' }),
  tools.weather__get_weather({ city: 'Lima' }),
]);
text(oslo.city + ' ' + oslo.tempC + ' / ' + lima.city + ' ' + lima.tempC);
try {
  await tools.delete_everything({});
} catch (error) {
  text('refused: ' + (error?.message ?? String(error)));
}`;

const TEMPERATURES: Record<string, number> = { Oslo: 7, Lima: 19 };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a Code Mode turn driven by @ai-sdk/anthropic (recorded stream replayed on loopback)', () => {
  it('calls exec with { code }, runs the nested calls (an AI SDK tool among them) through the router, and the hook blocks one', async () => {
    const server = await startEventReplayServer([{ events: asSse(anthropicToolCall('exec', { code: CELL })) }, { events: asSse(recordedEvents('anthropic-text.chunks.txt')) }]);
    cleanups.push(server.close);

    const ran: string[] = [];
    // An AI SDK tool (zod schema) turned into a Switchyard executor, next to a plain Switchyard one.
    const weather = await aiSdkTools(
      {
        get_weather: tool({
          description: 'Current temperature of a city.',
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            ran.push(`weather:${city}`);
            return { city, tempC: TEMPERATURES[city] ?? 0 };
          },
        }),
      },
      { namespace: 'weather__' },
    );
    const deleteEverything = defineFunctionTool({
      name: 'delete_everything',
      description: 'Deletes the workspace.',
      parameters: { type: 'object', properties: {} },
      handle: () => {
        ran.push('delete_everything');
        return 'deleted';
      },
    });
    const seen: Array<{ tool: string; caller: unknown }> = [];
    const hooks = createHookEngine({
      functionHooks: [
        {
          event: 'PreToolUse',
          run: (input) => {
            seen.push({ tool: String(input.tool_name), caller: input.caller });
            return input.tool_name === 'delete_everything'
              ? { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'nothing is deleted in this workspace' } }
              : undefined;
          },
        },
      ],
    });
    cleanups.push(() => hooks.close());
    const session = createSession({ toolMode: 'code-mode-only', tools: [...weather, deleteEverything], hooks, provider: { toolSearch: false } });
    cleanups.push(() => session.shutdown());

    const anthropic = createAnthropic({ baseURL: `${server.url}/v1`, apiKey: 'test-key' });
    const result = await session.runTurn({ model: aiSdkModel(anthropic('claude-haiku-4-5')), input: 'How warm is it in Oslo and Lima?' });

    // The request the provider package sent: exec as a function tool taking { code }, and wait.
    const first = server.requests[0]!.body as { tools: Array<{ name: string; input_schema: { properties: Record<string, { type: string }>; required: string[] } }> };
    expect(server.requests[0]!.path).toBe('/v1/messages');
    expect(first.tools.map((tool) => tool.name)).toEqual(['exec', 'wait']);
    expect(first.tools[0]!.input_schema.properties.code!.type).toBe('string');
    expect(first.tools[0]!.input_schema.required).toEqual(['code']);

    // The recorded tool_use became a custom_tool_call with the raw JavaScript and the recorded id.
    const call = result.items.find((item) => item.type === 'custom_tool_call') as { call_id: string; name: string; input: string };
    expect(call).toMatchObject({ call_id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA', name: 'exec', input: CELL });

    // Nested calls went through the same router: the hook saw each one with its cell, and blocked one.
    expect(ran.sort()).toEqual(['weather:Lima', 'weather:Oslo']);
    expect(seen[0]).toEqual({ tool: 'exec', caller: { kind: 'direct' } });
    const nested = seen.slice(1);
    expect(nested.map((entry) => entry.tool).sort()).toEqual(['delete_everything', 'weather__get_weather', 'weather__get_weather']);
    const cellIds = new Set(nested.map((entry) => (entry.caller as { kind: string; cell_id: string }).cell_id));
    expect(cellIds.size).toBe(1);
    expect(nested.every((entry) => (entry.caller as { kind: string }).kind === 'code-mode')).toBe(true);

    const output = result.items.find((item) => item.type === 'custom_tool_call_output') as { call_id: string; output: Array<{ text: string }> };
    expect(output.call_id).toBe('toolu_01KFbKqPYSuAKujiL6mTfzYA');
    const texts = output.output.map((part) => part.text);
    expect(texts[0]).toMatch(/^Script completed\nWall time \d+\.\d seconds\nOutput:\n$/);
    expect(texts.slice(1)).toEqual([
      'Oslo 7 / Lima 19',
      'refused: Tool call blocked by PreToolUse hook: nothing is deleted in this workspace. Tool: delete_everything',
    ]);

    // The follow-up request carried the call and its result back in Anthropic's own shape.
    const second = server.requests[1]!.body as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
    const assistant = second.messages.find((message) => message.role === 'assistant')!;
    expect(assistant.content).toContainEqual(expect.objectContaining({ type: 'text', text: "I'll invoke the JSON response tool." }));
    expect(assistant.content).toContainEqual(expect.objectContaining({ type: 'tool_use', id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA', name: 'exec', input: { code: CELL } }));
    const toolResult = second.messages.at(-1)!.content.find((part) => part.type === 'tool_result') as { tool_use_id: string; content: unknown };
    expect(toolResult.tool_use_id).toBe('toolu_01KFbKqPYSuAKujiL6mTfzYA');
    expect(JSON.stringify(toolResult.content)).toContain('Tool call blocked by PreToolUse hook: nothing is deleted in this workspace. Tool: delete_everything');

    expect(result.steps).toBe(2);
    expect(result.finalText).toBe("Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?");
    expect(server.pending()).toBe(0);
  });
});
