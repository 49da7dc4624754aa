import { APICallError, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { ModelRequest, ModelStreamEvent, ResponseItem, WireTool } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession } from '@switchyard/session';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { aiSdkModel } from './model';
import { toAiSdkPrompt } from './prompt';
import { toAiSdkTools } from './tool-table';

const usage = { inputTokens: { total: 120, noCache: 120, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 30, text: 30, reasoning: 0 } };
const finish: LanguageModelV4StreamPart = { type: 'finish', usage, finishReason: { unified: 'stop', raw: 'stop' } };
const streaming = (...parts: LanguageModelV4StreamPart[][]) => parts.map((chunks) => ({ stream: convertArrayToReadableStream(chunks) }));
const modelRequestOf = (tools: WireTool[] = [], input: ResponseItem[] = [{ type: 'message', role: 'user', content: 'hi' }], signal = new AbortController().signal): ModelRequest => ({
  tools,
  input,
  parallelToolCalls: true,
  signal,
});
async function eventsOf(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const TOOLS: WireTool[] = [
  { type: 'function', name: 'lookup', description: 'Looks up.', strict: false, parameters: { type: 'object', properties: { id: { type: 'integer' } } } },
  { type: 'namespace', name: 'clock', description: 'Time.', tools: [{ type: 'function', name: 'curr_time', description: 'Now.', strict: true, parameters: { type: 'object', properties: {} } }] },
  { type: 'custom', name: 'exec', description: 'Runs JavaScript.', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } },
  { type: 'custom', name: 'apply_patch', description: 'Patches files.', format: { type: 'text' } },
  { type: 'tool_search', execution: 'client', description: 'Finds tools.', parameters: { type: 'object', properties: {} } },
  { type: 'web_search' },
];

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the tool table an AI SDK model sees', () => {
  it('function form: namespaces flattened, exec takes { code }, other freeform tools { input }, no tool_search or hosted', () => {
    const { tools, targets } = toAiSdkTools(TOOLS, 'function');
    expect(tools).toEqual([
      { type: 'function', name: 'lookup', description: 'Looks up.', inputSchema: { type: 'object', properties: { id: { type: 'integer' } } } },
      { type: 'function', name: 'clock__curr_time', description: 'Now.', inputSchema: { type: 'object', properties: {} }, strict: true },
      {
        type: 'function',
        name: 'exec',
        description: 'Runs JavaScript.',
        inputSchema: {
          type: 'object',
          properties: { code: { type: 'string', description: 'The JavaScript source to run. It must match this lark grammar:\nstart: /.+/' } },
          required: ['code'],
          additionalProperties: false,
        },
      },
      {
        type: 'function',
        name: 'apply_patch',
        description: 'Patches files.',
        inputSchema: { type: 'object', properties: { input: { type: 'string', description: 'The raw input.' } }, required: ['input'], additionalProperties: false },
      },
    ]);
    expect(targets.get('clock__curr_time')).toEqual({ kind: 'function', name: 'curr_time', namespace: 'clock' });
    expect(targets.get('exec')).toEqual({ kind: 'custom', name: 'exec', argument: 'code' });
  });

  it('openai form: freeform tools become openai.custom provider tools with their grammar', () => {
    const { tools } = toAiSdkTools(TOOLS, 'openai');
    expect(tools[2]).toEqual({ type: 'provider', id: 'openai.custom', name: 'exec', args: { description: 'Runs JavaScript.', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } } });
    expect(tools[3]).toEqual({ type: 'provider', id: 'openai.custom', name: 'apply_patch', args: { description: 'Patches files.', format: { type: 'text' } } });
  });
});

describe('the prompt an AI SDK model receives', () => {
  it('maps the Responses history: system first, calls on the assistant, one result per call, later context as user text', () => {
    const history: ResponseItem[] = [
      { type: 'message', role: 'developer', content: 'Be brief.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Look at this' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }], provider_metadata: { anthropic: { signature: 's1' } } } as ResponseItem,
      { type: 'function_call', call_id: 'c1', name: 'curr_time', namespace: 'clock', arguments: '{}' },
      { type: 'custom_tool_call', call_id: 'c2', name: 'exec', input: 'text(1)' },
      { type: 'function_call_output', call_id: 'c1', output: '12:00' },
      { type: 'custom_tool_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'Script completed' }, { type: 'input_image', image_url: 'https://example.com/a.png' }] },
      { type: 'custom_tool_call_output', call_id: 'c2', output: 'a notify() message' },
      { type: 'message', role: 'developer', content: '<hook_context>audited</hook_context>' },
      { type: 'tool_search_call', call_id: 'c3', execution: 'client', arguments: { query: 'x' } },
      { type: 'function_call', call_id: 'c4', name: 'lookup', arguments: '{not json' },
      { type: 'function_call_output', call_id: 'c4', output: 'failed to parse function arguments' },
    ];
    expect(toAiSdkPrompt(history, { instructions: 'You are a host.', customTools: 'function' })).toEqual([
      { role: 'system', content: 'You are a host.' },
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Look at this' }, { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'AAAA' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.', providerOptions: { anthropic: { signature: 's1' } } },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'clock__curr_time', input: {} },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'exec', input: { code: 'text(1)' } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'clock__curr_time', output: { type: 'text', value: '12:00' } },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'exec',
            output: { type: 'content', value: [{ type: 'text', text: 'Script completed' }, { type: 'file', mediaType: 'image', data: { type: 'url', url: new URL('https://example.com/a.png') } }] },
          },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'a notify() message' }] },
      { role: 'user', content: [{ type: 'text', text: '<hook_context>audited</hook_context>' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c4', toolName: 'lookup', input: '{not json' }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c4', toolName: 'lookup', output: { type: 'text', value: 'failed to parse function arguments' } }] },
    ]);
  });

  it('openai form: a freeform call goes back with its raw text', () => {
    const prompt = toAiSdkPrompt([{ type: 'custom_tool_call', call_id: 'c1', name: 'exec', input: 'text(1)' }], { customTools: 'openai' });
    expect(prompt).toEqual([{ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'exec', input: 'text(1)' }] }]);
  });
});

describe('aiSdkModel: the stream as Switchyard events', () => {
  it('yields text deltas, then complete items: message, reasoning, function and freeform calls, and usage', async () => {
    const model = new MockLanguageModelV4({
      provider: 'anthropic.messages',
      modelId: 'claude-test',
      doStream: streaming([
        { type: 'stream-start', warnings: [] },
        { type: 'response-metadata', id: 'msg_1' },
        { type: 'reasoning-start', id: 'r', providerMetadata: { anthropic: { signature: 'sig' } } },
        { type: 'reasoning-delta', id: 'r', delta: 'think' },
        { type: 'reasoning-end', id: 'r' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hel' },
        { type: 'text-delta', id: 't', delta: 'lo' },
        { type: 'text-end', id: 't' },
        { type: 'tool-input-start', id: 'c1', toolName: 'clock__curr_time' },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'clock__curr_time', input: '{}' },
        { type: 'tool-call', toolCallId: 'c2', toolName: 'exec', input: '{"code":"text(1)"}', providerMetadata: { google: { thoughtSignature: 'ts' } } },
        { type: 'tool-call', toolCallId: 'c3', toolName: 'exec', input: '{"source":"text(1)"}' },
        { type: 'tool-call', toolCallId: 'c4', toolName: 'made_up', input: '{}' },
        { type: 'tool-call', toolCallId: 'c5', toolName: 'web_search', input: '{}', providerExecuted: true },
        finish,
      ]),
    });
    const client = aiSdkModel(model, { contextWindow: 200_000 });
    expect(client.capabilities).toEqual({ name: 'claude-test', parallelToolCalls: true, contextWindow: 200_000 });
    const events = await eventsOf(client.stream(modelRequestOf(TOOLS)));
    expect(events).toEqual([
      { type: 'output-item', item: { type: 'reasoning', summary: [{ type: 'summary_text', text: 'think' }], provider_metadata: { anthropic: { signature: 'sig' } } } },
      { type: 'text-delta', delta: 'Hel' },
      { type: 'text-delta', delta: 'lo' },
      { type: 'output-item', item: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello' }] } },
      { type: 'output-item', item: { type: 'function_call', call_id: 'c1', name: 'curr_time', namespace: 'clock', arguments: '{}' } },
      { type: 'output-item', item: { type: 'custom_tool_call', call_id: 'c2', name: 'exec', input: 'text(1)', provider_metadata: { google: { thoughtSignature: 'ts' } } } },
      // Not { code: string }: the raw arguments are the cell's source, and exec answers with its own error.
      { type: 'output-item', item: { type: 'custom_tool_call', call_id: 'c3', name: 'exec', input: '{"source":"text(1)"}' } },
      { type: 'output-item', item: { type: 'function_call', call_id: 'c4', name: 'made_up', arguments: '{}' } },
      { type: 'completed', usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150, cacheReadInputTokens: 0, reasoningOutputTokens: 0 }, responseId: 'msg_1', finishReasons: ['stop'] },
    ]);
    const sent = model.doStreamCalls[0]!;
    expect(sent.tools!.map((tool) => tool.name)).toEqual(['lookup', 'clock__curr_time', 'exec', 'apply_patch']);
    expect(sent.toolChoice).toEqual({ type: 'auto' });
    expect(sent.prompt).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });

  it('passes callOptions and the abort signal; sends no tools when the plan has none', async () => {
    const model = new MockLanguageModelV4({ doStream: streaming([finish]) });
    const controller = new AbortController();
    await eventsOf(aiSdkModel(model, { callOptions: { maxOutputTokens: 99, temperature: 0 } }).stream({ ...modelRequestOf(), instructions: 'Be nice.', signal: controller.signal }));
    const sent = model.doStreamCalls[0]!;
    expect(sent.maxOutputTokens).toBe(99);
    expect(sent.temperature).toBe(0);
    expect(sent.abortSignal).toBe(controller.signal);
    expect(sent.tools).toBeUndefined();
    expect(sent.prompt[0]).toEqual({ role: 'system', content: 'Be nice.' });
  });

  it('provider failures become ModelRequestErrors: retryable and status from APICallError', async () => {
    const overloaded = new APICallError({ message: 'Overloaded', url: 'http://x', requestBodyValues: {}, statusCode: 529, isRetryable: true });
    const thrown = new MockLanguageModelV4({
      doStream: async () => {
        throw overloaded;
      },
    });
    await expect(eventsOf(aiSdkModel(thrown).stream(modelRequestOf()))).rejects.toMatchObject({ code: 'MODEL_ERROR', retryable: true, status: 529, message: 'model request failed (HTTP 529): Overloaded' });

    const inStream = new MockLanguageModelV4({ doStream: streaming([{ type: 'text-start', id: 't' }, { type: 'error', error: { message: 'invalid_request_error: bad tool' } }]) });
    await expect(eventsOf(aiSdkModel(inStream).stream(modelRequestOf()))).rejects.toMatchObject({ code: 'MODEL_ERROR', retryable: false, message: 'model request failed: invalid_request_error: bad tool' });

    const cut = new MockLanguageModelV4({ doStream: streaming([{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'par' }]) });
    await expect(eventsOf(aiSdkModel(cut).stream(modelRequestOf()))).rejects.toMatchObject({ code: 'MODEL_ERROR', retryable: true, message: 'model stream ended before the response finished' });
  });

  it('an abort rethrows the signal reason and cancels the provider stream', async () => {
    let cancelled = false;
    const controller = new AbortController();
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(c) {
            c.enqueue({ type: 'text-start', id: 't' });
            c.enqueue({ type: 'text-delta', id: 't', delta: 'a' });
          },
          cancel() {
            cancelled = true;
          },
        }),
      }),
    });
    const seen: ModelStreamEvent[] = [];
    const reason = new Error('user pressed stop');
    const run = (async () => {
      for await (const event of aiSdkModel(model).stream(modelRequestOf([], undefined, controller.signal))) {
        seen.push(event);
        controller.abort(reason);
        throw controller.signal.reason;
      }
    })();
    await expect(run).rejects.toBe(reason);
    expect(seen).toEqual([{ type: 'text-delta', delta: 'a' }]);
    expect(cancelled).toBe(true);
  });

  it('refuses what is not a v4 language model with a CONFIG error', () => {
    expect(() => aiSdkModel('anthropic/claude-sonnet-4.5' as never)).toThrow(expect.objectContaining({ code: 'CONFIG', message: expect.stringContaining('the string "anthropic/claude-sonnet-4.5"') }));
    expect(() => aiSdkModel({ specificationVersion: 'v3', doStream() {} } as never)).toThrow(expect.objectContaining({ code: 'CONFIG', message: expect.stringContaining('specification v3') }));
  });

  it('explains the common mistakes: a forgotten await, the provider instead of a model, a misspelled option', () => {
    const prefix = 'aiSdkModel: model must be an AI SDK language model of specification v4 (ai 7 providers); ';
    expect(() => aiSdkModel(Promise.resolve({}) as never)).toThrow(expect.objectContaining({ code: 'CONFIG', message: `${prefix}got a Promise; did you forget \`await\`?` }));
    const provider = Object.assign(() => ({}), { languageModel: () => ({}) });
    expect(() => aiSdkModel(provider as never)).toThrow(expect.objectContaining({ code: 'CONFIG', message: `${prefix}got a provider, not a model; call it with a model id, e.g. \`openai('gpt-5')\` instead of \`openai\`` }));
    const model = { specificationVersion: 'v4', provider: 'test', modelId: 'm', doStream() {} };
    expect(() => aiSdkModel(model as never, { contextWindows: 1000 } as never)).toThrow(
      expect.objectContaining({ code: 'CONFIG', message: 'aiSdkModel: unknown option `contextWindows`; did you mean `contextWindow`?' }),
    );
    expect(() => aiSdkModel(model as never, { customTools: 'responses' } as never)).toThrow(expect.objectContaining({ code: 'CONFIG', message: expect.stringContaining('option `customTools` must be one of "function", "openai"') }));
  });
});

describe('aiSdkModel in a session', () => {
  it('malformed and unknown calls from the model are answered with their call ids; the loop goes on', async () => {
    const seen: unknown[] = [];
    const lookup = defineFunctionTool<{ id: number }>({
      name: 'lookup',
      description: 'Looks up.',
      parameters: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
      handle: ({ args }) => {
        seen.push(args);
        return { id: args.id, name: 'seven' };
      },
    });
    const model = new MockLanguageModelV4({
      doStream: streaming(
        [
          { type: 'tool-call', toolCallId: 'good', toolName: 'lookup', input: '{"id":7}' },
          { type: 'tool-call', toolCallId: 'broken', toolName: 'lookup', input: '{"id":' },
          { type: 'tool-call', toolCallId: 'unknown', toolName: 'nope', input: '{}' },
          { ...finish, finishReason: { unified: 'tool-calls', raw: 'tool_use' } },
        ],
        [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Seven.' }, { type: 'text-end', id: 't' }, finish],
      ),
    });
    const session = createSession({ tools: [lookup] });
    cleanups.push(() => session.shutdown());
    const result = await session.runTurn({ model: aiSdkModel(model), input: 'Who is 7?' });
    expect(seen).toEqual([{ id: 7 }]);
    const toolMessage = model.doStreamCalls[1]!.prompt.find((message) => message.role === 'tool')!;
    const outputs = toolMessage.content.map((part) => [(part as { toolCallId: string }).toolCallId, (part as { output: { value: string } }).output.value]);
    expect(outputs[0]).toEqual(['good', '{"id":7,"name":"seven"}']);
    expect(outputs[1]![0]).toBe('broken');
    expect(outputs[1]![1]).toMatch(/^failed to parse function arguments/);
    expect(outputs[2]).toEqual(['unknown', 'unsupported call: nope']);
    expect(result.finalText).toBe('Seven.');
  });
});
