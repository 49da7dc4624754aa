// The GenAI attributes a traced session records for AI SDK models, read from what the provider's
// recorded stream carried (fixtures/SOURCES.md), through the real provider packages, a real
// session and the OpenTelemetry SDK's in-memory exporter.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { defineFreeformTool, defineFunctionTool } from '@switchyard/kit';
import type { ModelClient, ToolExecutor } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { afterEach, describe, expect, it } from 'vitest';
import { aiSdkModel } from '../src/index';
import { anthropicToolCall, asSse, recordedEvents } from './fixtures';
import { startEventReplayServer } from './replay-server';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A session traced into an in-memory exporter; the host names no provider. */
function traced(tools: ToolExecutor[]) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const session = createSession({ tools, tracer: provider.getTracer('switchyard-ai-sdk-test') });
  cleanups.push(() => provider.shutdown(), () => session.shutdown());
  const spans = (prefix: string): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.name.startsWith(prefix));
  return { session, spans };
}

describe('GenAI attributes of AI SDK models', () => {
  it('Anthropic: provider, response model, raw finish reasons, cache reads; the tool span its type and description', async () => {
    const toolStream = anthropicToolCall('lookup', { city: 'Oslo' });
    const textStream = recordedEvents('anthropic-text.chunks.txt');
    const server = await startEventReplayServer([{ events: asSse(toolStream) }, { events: asSse(textStream) }]);
    cleanups.push(server.close);
    const lookup = defineFunctionTool({
      name: 'lookup',
      description: 'Looks a city up.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      handle: ({ args }) => ({ city: args.city, tempC: 7 }),
    });
    const { session, spans } = traced([lookup]);
    const anthropic = createAnthropic({ baseURL: `${server.url}/v1`, apiKey: 'test-key' });
    const model: ModelClient = aiSdkModel(anthropic('claude-sonnet-4-5'));
    expect(model.provider).toEqual({ name: 'anthropic', streaming: true });

    await session.runTurn({ model, input: 'Weather in Oslo?' });

    const recorded = [toolStream, textStream].map((events) => {
      const start = events.find((event) => event.type === 'message_start')!.message as { model: string; usage: { cache_read_input_tokens: number } };
      const delta = events.find((event) => event.type === 'message_delta')!.delta as { stop_reason: string };
      return { model: start.model, stopReason: delta.stop_reason, cacheRead: start.usage.cache_read_input_tokens };
    });
    expect(recorded.map((entry) => entry.stopReason)).toEqual(['tool_use', 'end_turn']);
    const chats = spans('chat');
    expect(chats).toHaveLength(2);
    for (const [index, chat] of chats.entries()) {
      expect(chat.attributes).toMatchObject({
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-sonnet-4-5',
        'gen_ai.request.stream': true,
        'gen_ai.response.model': recorded[index]!.model,
        'gen_ai.response.finish_reasons': [recorded[index]!.stopReason],
        'gen_ai.usage.cache_read.input_tokens': recorded[index]!.cacheRead,
      });
    }
    const [tool] = spans('execute_tool lookup');
    expect(tool!.attributes).toMatchObject({ 'gen_ai.tool.type': 'function', 'gen_ai.tool.description': 'Looks a city up.' });
    expect(spans('invoke_agent')[0]!.attributes['gen_ai.provider.name']).toBe('anthropic');
  });

  it('OpenAI Responses: the recorded usage details become cached and reasoning token attributes', async () => {
    const recordedStream = recordedEvents('openai-custom-tool.1.chunks.txt');
    const server = await startEventReplayServer([{ events: asSse(recordedStream) }, { events: asSse(recordedEvents('openai-error.1.chunks.txt')) }]);
    cleanups.push(server.close);
    const writeSql = defineFreeformTool({ name: 'write_sql', description: 'Writes SQL.', handle: () => '3 rows' });
    const { session, spans } = traced([writeSql]);
    const openai = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test-key' });
    await session.runTurn({ model: aiSdkModel(openai('gpt-5.2-codex')), input: 'Which users are older than 25?' }).catch(() => undefined);

    const completed = recordedStream.find((event) => event.type === 'response.completed')!.response as {
      id: string;
      model: string;
      usage: { input_tokens: number; output_tokens: number; input_tokens_details: { cached_tokens: number }; output_tokens_details: { reasoning_tokens: number } };
    };
    const [first, second] = spans('chat');
    expect(first!.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.stream': true,
      'gen_ai.response.id': completed.id,
      'gen_ai.response.model': completed.model,
      'gen_ai.usage.input_tokens': completed.usage.input_tokens,
      'gen_ai.usage.output_tokens': completed.usage.output_tokens,
      'gen_ai.usage.cache_read.input_tokens': completed.usage.input_tokens_details.cached_tokens,
      'gen_ai.usage.reasoning.output_tokens': completed.usage.output_tokens_details.reasoning_tokens,
    });
    expect(first!.attributes['gen_ai.response.finish_reasons']).toEqual([expect.any(String)]);
    // the recorded insufficient_quota failure: its span still names the provider
    expect(second!.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'error.type': 'MODEL_ERROR' });
    expect(spans('execute_tool write_sql')[0]!.attributes).toMatchObject({ 'gen_ai.tool.type': 'function', 'gen_ai.tool.description': 'Writes SQL.' });
  });
});
