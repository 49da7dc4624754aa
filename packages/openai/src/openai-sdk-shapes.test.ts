// Stream shapes the official `openai` package itself produces and reads (its typed chunks and
// events, the shapes of its own stream tests), replayed from a loopback server. Where the SDK has
// an accumulator that runs on Node 20 (`ChatCompletionStream`, `ResponseStream`), the same bytes
// go through it too, and our items must say what the SDK's final message says.
import { afterEach, describe, expect, it } from 'vitest';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type {
  ResponseFunctionToolCall,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseStreamEvent,
} from 'openai/resources/responses/responses';
import { toWireTools, type ResponseItem } from '@switchyard/protocol';
import { applyPatchSpec } from '../test/tool-specs';
import { makeResponse, ndjson, streamed } from '../test/sdk-responses';
import { closeReplayServers, collect, instantRetries, modelRequest, outputItems, startReplayServer, userMessage } from '../test/replay-server';
import { chatCompletions } from './chat-completions';
import { openaiResponses } from './openai-responses';

afterEach(closeReplayServers);


function chunk(delta: ChatCompletionChunk.Choice.Delta, finish: ChatCompletionChunk.Choice['finish_reason'] = null): ChatCompletionChunk {
  return { id: 'chatcmpl-sdk', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] };
}

async function chatRun(chunks: ChatCompletionChunk[], history: (first: ResponseItem[]) => ResponseItem[] = () => []) {
  const server = await startReplayServer([streamed(chunks), streamed([chunk({ content: 'ok' }, 'stop')])]);
  const { sleep, random } = instantRetries();
  const client = chatCompletions({ baseURL: `${server.url}/v1`, model: 'gpt-4o', sleep, random, maxAttempts: 1 });
  const first = await collect(client.stream(modelRequest(toWireTools([applyPatchSpec]), [userMessage])));
  const next = history(outputItems(first.events));
  if (next.length > 0) await collect(client.stream(modelRequest(toWireTools([applyPatchSpec]), next)));
  const sdk = await ChatCompletionStream.fromReadableStream(ndjson(chunks)).finalChatCompletion();
  return { first, sdkMessage: sdk.choices[0].message, server };
}

describe('Chat Completions shapes of the openai SDK', () => {
  it('delta.refusal: an assistant message with the refusal (what the SDK reports as message.refusal), sent back as refusal', async () => {
    const chunks = [chunk({ role: 'assistant', refusal: '' }), chunk({ refusal: "I'm sorry, " }), chunk({ refusal: 'I cannot help with that.' }), chunk({}, 'stop')];
    const { first, sdkMessage, server } = await chatRun(chunks, (items) => [userMessage, ...items, { type: 'message', role: 'user', content: 'Why?' }]);
    expect(first.error).toBeUndefined();
    expect(sdkMessage.refusal).toBe("I'm sorry, I cannot help with that.");
    expect(outputItems(first.events)).toEqual([{ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: sdkMessage.refusal }] }]);
    const sent = JSON.parse(server.requests[1].body) as { messages: unknown[] };
    expect(sent.messages[1]).toEqual({ role: 'assistant', content: null, refusal: "I'm sorry, I cannot help with that." });
  });

  it('type "custom" tool-call deltas become one custom_tool_call with the input the SDK assembles', async () => {
    const chunks = [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_patch', type: 'custom', custom: { name: 'apply_patch', input: '' } }] }),
      chunk({ tool_calls: [{ index: 0, custom: { input: '*** Begin Patch\n*** Add File: a.txt\n' } }] }),
      chunk({ tool_calls: [{ index: 0, custom: { input: '+hi\n*** End Patch' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const { first, sdkMessage } = await chatRun(chunks);
    expect(first.error).toBeUndefined();
    const sdkCall = sdkMessage.tool_calls?.[0];
    expect(sdkCall?.type).toBe('custom');
    const input = sdkCall?.type === 'custom' ? sdkCall.custom.input : undefined;
    expect(input).toBe('*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch');
    expect(outputItems(first.events)).toEqual([{ type: 'custom_tool_call', call_id: 'call_patch', name: 'apply_patch', input }]);
  });
});

async function responsesRun(events: ResponseStreamEvent[], options: { store?: boolean } = {}, second?: (items: ResponseItem[]) => ResponseItem[]) {
  const server = await startReplayServer([streamed(events), streamed(events)]);
  const { sleep, random } = instantRetries();
  const client = openaiResponses({ baseURL: `${server.url}/v1`, model: 'gpt-5', sleep, random, maxAttempts: 1, ...options });
  const first = await collect(client.stream(modelRequest([], [userMessage])));
  if (second) await collect(client.stream(modelRequest([], second(outputItems(first.events)))));
  const sdk = await ResponseStream.fromReadableStream(ndjson(events)).finalResponse();
  return { first, sdk, server };
}

describe('Responses shapes of the openai SDK', () => {
  it('items that never got output_item.done are read from response.completed (the SDK fixture shape)', async () => {
    const message: ResponseOutputMessage = { id: 'msg_123', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', annotations: [], text: 'Hello world' }] };
    const events: ResponseStreamEvent[] = [
      { type: 'response.created', sequence_number: 0, response: makeResponse() },
      { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { ...message, status: 'in_progress', content: [] } },
      { type: 'response.content_part.added', sequence_number: 2, item_id: 'msg_123', output_index: 0, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } },
      { type: 'response.output_text.delta', sequence_number: 3, item_id: 'msg_123', output_index: 0, content_index: 0, delta: 'Hello world', logprobs: [] },
      { type: 'response.completed', sequence_number: 4, response: makeResponse({ status: 'completed', output_text: 'Hello world', output: [message] }) },
    ];
    const { first, sdk } = await responsesRun(events);
    expect(first.error).toBeUndefined();
    expect(sdk.output).toHaveLength(1);
    expect(outputItems(first.events)).toEqual([message]);
    expect(sdk.output).toMatchObject([message]);
    expect(first.events.map((event) => event.type)).toEqual(['text-delta', 'output-item', 'completed']);
  });

  it('an item that did get output_item.done is not yielded twice', async () => {
    const call: ResponseFunctionToolCall = { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}', status: 'completed' };
    const message: ResponseOutputMessage = { id: 'msg_2', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', annotations: [], text: 'Done' }] };
    const events: ResponseStreamEvent[] = [
      { type: 'response.created', sequence_number: 0, response: makeResponse() },
      { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { ...call, status: 'in_progress' } },
      { type: 'response.output_item.done', sequence_number: 2, output_index: 0, item: call },
      { type: 'response.completed', sequence_number: 3, response: makeResponse({ status: 'completed', output: [call, message] }) },
    ];
    const { first, sdk } = await responsesRun(events);
    expect(outputItems(first.events)).toEqual([call, message]);
    expect(sdk.output).toMatchObject([call, message]);
  });

  it('store: false asks for encrypted reasoning and sends reasoning back with it, never by id alone', async () => {
    const reasoning: ResponseReasoningItem = { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'gAAAAB-encrypted' };
    const stale: ResponseItem = { id: 'rs_old', type: 'reasoning', summary: [] };
    const message: ResponseOutputMessage = { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', annotations: [], text: 'Hi' }] };
    const events: ResponseStreamEvent[] = [
      { type: 'response.created', sequence_number: 0, response: makeResponse() },
      { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: reasoning },
      { type: 'response.output_item.done', sequence_number: 2, output_index: 0, item: reasoning },
      { type: 'response.output_item.added', sequence_number: 3, output_index: 1, item: message },
      { type: 'response.output_item.done', sequence_number: 4, output_index: 1, item: message },
      { type: 'response.completed', sequence_number: 5, response: makeResponse({ status: 'completed', output: [reasoning, message] }) },
    ];
    const { first, server, sdk } = await responsesRun(events, {}, (items) => [userMessage, stale, ...items, { type: 'message', role: 'user', content: 'Again' }]);
    expect(outputItems(first.events)).toEqual([reasoning, message]);
    expect(sdk.output).toMatchObject([reasoning, message]);
    const [request1, request2] = server.requests.map((request) => JSON.parse(request.body) as { store: boolean; include: string[]; input: Array<Record<string, unknown>> });
    expect(request1).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
    expect(request2.input.filter((item) => item.type === 'reasoning')).toEqual([reasoning]);
  });

  it('store: true asks for nothing extra and keeps reasoning items by id', async () => {
    const stale: ResponseItem = { id: 'rs_old', type: 'reasoning', summary: [] };
    const events: ResponseStreamEvent[] = [
      { type: 'response.created', sequence_number: 0, response: makeResponse() },
      { type: 'response.completed', sequence_number: 1, response: makeResponse({ status: 'completed' }) },
    ];
    const { server } = await responsesRun(events, { store: true }, () => [userMessage, stale]);
    const [request1, request2] = server.requests.map((request) => JSON.parse(request.body) as { include: string[]; input: unknown[] });
    expect(request1.include).toEqual([]);
    expect(request2.input).toContainEqual(stale);
  });
});
