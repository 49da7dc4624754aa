// The GenAI attributes a traced session records for these clients, read from what the stream
// carried: streams in the shapes of the official `openai` package (its typed events and chunks,
// cross-checked against its own accumulators), replayed from a loopback server, through a real
// session and the OpenTelemetry SDK's in-memory exporter.
import { afterEach, describe, expect, it } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ResponseFunctionToolCall } from 'openai/resources/responses/responses';
import type { ModelClient } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession } from '@switchyard/session';
import { closeReplayServers, startReplayServer } from '../test/replay-server';
import { assistantMessage, makeUsage, ndjson, reasoningResponse, streamed } from '../test/sdk-responses';
import { chatCompletions } from './chat-completions';
import { openaiResponses } from './openai-responses';
import { providerInfo } from './streaming-client';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await closeReplayServers();
});

const lookup = defineFunctionTool({
  name: 'lookup',
  description: 'Looks a city up.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  handle: ({ args }) => ({ city: args.city, tempC: 7 }),
});

/** A session on `model` traced into an in-memory exporter, without the host naming the provider. */
function tracedSession(model: ModelClient, tracing: { providerName?: string } = {}) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('switchyard-openai-test');
  const session = createSession({ tools: [lookup], tracer: tracing.providerName ? { tracer, providerName: tracing.providerName } : tracer });
  cleanups.push(() => provider.shutdown(), () => session.shutdown());
  const spans = (prefix: string): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.name.startsWith(prefix));
  return { session, model, spans };
}

const call: ResponseFunctionToolCall = { id: 'fc_1', type: 'function_call', call_id: 'call_lookup', name: 'lookup', arguments: '{"city":"Oslo"}', status: 'completed' };
const message = assistantMessage('msg_1', 'It is 7 °C in Oslo.');

describe('GenAI attributes from the Responses API stream', () => {
  it('chat spans carry provider, server, stream, response model, finish reasons, cached and reasoning tokens; the tool span its type and description', async () => {
    const rounds = [reasoningResponse('resp_1', call, makeUsage(1_200, 1_024, 180, 128)).events, reasoningResponse('resp_2', message, makeUsage(1_420, 1_280, 40, 16)).events];
    const server = await startReplayServer(rounds.map(streamed));
    const client = openaiResponses({ baseURL: `${server.url}/v1`, model: 'gpt-5.1-codex', maxAttempts: 1 });
    const { session, spans } = tracedSession(client);

    const result = await session.runTurn({ model: client, input: 'Weather in Oslo?' });
    expect(result.finalText).toBe('It is 7 °C in Oslo.');

    const sdk = await Promise.all(rounds.map((events) => ResponseStream.fromReadableStream(ndjson(events)).finalResponse()));
    const chats = spans('chat');
    expect(chats).toHaveLength(2);
    const port = Number(new URL(server.url).port);
    for (const [index, chat] of chats.entries()) {
      const response = sdk[index]!;
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-5.1-codex',
        'gen_ai.request.stream': true,
        'server.address': '127.0.0.1',
        'server.port': port,
        'gen_ai.response.id': response.id,
        'gen_ai.response.model': response.model,
        'gen_ai.response.finish_reasons': [response.status],
        'gen_ai.usage.input_tokens': response.usage!.input_tokens,
        'gen_ai.usage.output_tokens': response.usage!.output_tokens,
        'gen_ai.usage.cache_read.input_tokens': response.usage!.input_tokens_details.cached_tokens,
        'gen_ai.usage.reasoning.output_tokens': response.usage!.output_tokens_details.reasoning_tokens,
      });
    }
    expect(chats.map((chat) => chat.attributes['gen_ai.usage.reasoning.output_tokens'])).toEqual([128, 16]);
    expect(chats[0]!.attributes['gen_ai.response.model']).toBe('gpt-5.1-codex-2025-11-13');

    const [turn] = spans('invoke_agent');
    expect(turn!.attributes['gen_ai.provider.name']).toBe('openai');
    const [tool] = spans('execute_tool lookup');
    expect(tool!.attributes).toMatchObject({ 'gen_ai.tool.name': 'lookup', 'gen_ai.tool.call.id': 'call_lookup', 'gen_ai.tool.type': 'function', 'gen_ai.tool.description': 'Looks a city up.' });
  });

  it("a failed request's span still names the provider and the server; the host's providerName wins", async () => {
    const server = await startReplayServer([{ status: 400, fixture: 'responses/bad-request.json' }]);
    const client = openaiResponses({ baseURL: `${server.url}/v1`, model: 'gpt-5.1-codex', maxAttempts: 1 });
    const { session, spans } = tracedSession(client, { providerName: 'azure.ai.openai' });
    await expect(session.runTurn({ model: client, input: 'hi' })).rejects.toThrow(/HTTP 400/);
    const [chat] = spans('chat');
    expect(chat!.attributes).toMatchObject({ 'gen_ai.provider.name': 'azure.ai.openai', 'server.address': '127.0.0.1', 'gen_ai.request.stream': true, 'error.type': 'MODEL_ERROR' });
    expect(chat!.attributes['gen_ai.response.model']).toBeUndefined();
  });
});

describe('GenAI attributes from the Chat Completions stream', () => {
  function chunk(delta: ChatCompletionChunk.Choice.Delta, finish: ChatCompletionChunk.Choice['finish_reason'] = null): ChatCompletionChunk {
    return { id: 'chatcmpl-r1', object: 'chat.completion.chunk', created: 1, model: 'deepseek-reasoner-0528', choices: [{ index: 0, delta, finish_reason: finish }] };
  }
  const usageChunk = (prompt: number, cached: number, completion: number, reasoning: number): ChatCompletionChunk => ({
    id: 'chatcmpl-r1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'deepseek-reasoner-0528',
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: cached },
      completion_tokens_details: { reasoning_tokens: reasoning },
    },
  });

  it('finish reasons per response, the answering model, cached and reasoning tokens; providerName names a compatible server', async () => {
    const rounds: ChatCompletionChunk[][] = [
      [
        chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_lookup', type: 'function', function: { name: 'lookup', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk(900, 768, 60, 44),
      ],
      [chunk({ role: 'assistant', content: 'Cold: 7 °C.' }), chunk({}, 'stop'), usageChunk(980, 896, 12, 0)],
    ];
    const server = await startReplayServer(rounds.map(streamed));
    const client = chatCompletions({ baseURL: `${server.url}/v1`, model: 'deepseek-reasoner', providerName: 'deepseek', maxAttempts: 1 });
    const { session, spans } = tracedSession(client);
    const result = await session.runTurn({ model: client, input: 'Weather in Oslo?' });
    expect(result.finalText).toBe('Cold: 7 °C.');

    const sdk = await Promise.all(rounds.map((chunks) => ChatCompletionStream.fromReadableStream(ndjson(chunks)).finalChatCompletion()));
    const chats = spans('chat');
    expect(chats).toHaveLength(2);
    for (const [index, chat] of chats.entries()) {
      const completion = sdk[index]!;
      expect(chat.attributes).toMatchObject({
        'gen_ai.provider.name': 'deepseek',
        'gen_ai.request.model': 'deepseek-reasoner',
        'gen_ai.request.stream': true,
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(server.url).port),
        'gen_ai.response.id': completion.id,
        'gen_ai.response.model': completion.model,
        'gen_ai.response.finish_reasons': completion.choices.map((choice) => choice.finish_reason),
        'gen_ai.usage.input_tokens': completion.usage!.prompt_tokens,
        'gen_ai.usage.output_tokens': completion.usage!.completion_tokens,
        'gen_ai.usage.cache_read.input_tokens': completion.usage!.prompt_tokens_details!.cached_tokens,
        'gen_ai.usage.reasoning.output_tokens': completion.usage!.completion_tokens_details!.reasoning_tokens,
      });
    }
    expect(chats.map((chat) => chat.attributes['gen_ai.response.finish_reasons'])).toEqual([['tool_calls'], ['stop']]);
  });

  it('a server that reports no usage details gets no cached or reasoning attributes (never a made-up 0)', async () => {
    const server = await startReplayServer([{ fixture: 'chat/final-message.sse' }]);
    const client = chatCompletions({ baseURL: `${server.url}/v1`, model: 'local', maxAttempts: 1 });
    const { session, spans } = tracedSession(client);
    await session.runTurn({ model: client, input: 'hi' });
    const [chat] = spans('chat');
    expect(chat!.attributes['gen_ai.provider.name']).toBe('openai');
    expect(chat!.attributes).not.toHaveProperty('gen_ai.usage.cache_read.input_tokens');
    expect(chat!.attributes).not.toHaveProperty('gen_ai.usage.reasoning.output_tokens');
  });
});

describe('provider by host', () => {
  it.each([
    ['https://api.openai.com/v1/responses', 'openai', 'api.openai.com', 443],
    ['https://my-resource.openai.azure.com/openai/v1/responses', 'azure.ai.openai', 'my-resource.openai.azure.com', 443],
    ['https://api.deepseek.com/v1/chat/completions', 'deepseek', 'api.deepseek.com', 443],
    ['https://api.groq.com/openai/v1/chat/completions', 'groq', 'api.groq.com', 443],
    ['https://api.x.ai/v1/chat/completions', 'x_ai', 'api.x.ai', 443],
    ['https://api.mistral.ai/v1/chat/completions', 'mistral_ai', 'api.mistral.ai', 443],
    ['https://generativelanguage.googleapis.com/v1beta/openai/chat/completions', 'gcp.gemini', 'generativelanguage.googleapis.com', 443],
    ['http://127.0.0.1:8080/v1/chat/completions', 'openai', '127.0.0.1', 8080],
    ['http://[::1]/v1/chat/completions', 'openai', '::1', 80],
  ])('%s → %s', (url, name, serverAddress, serverPort) => {
    expect(providerInfo(url)).toEqual({ name, serverAddress, serverPort, streaming: true });
  });
});
