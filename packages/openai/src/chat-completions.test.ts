import { afterEach, describe, expect, it } from 'vitest';
import { toWireTools, type ModelRequest, type ModelStreamEvent, type ResponseItem, type ToolSpec } from '@switchyard/protocol';
import { applyPatchSpec, clockSpec, execSpec, toolSearchSpec } from '../test/tool-specs';
import { closeReplayServers, collect, modelRequest, outputItems, replayClient, requestsOffering, userMessage, type ReplayStep } from '../test/replay-server';
import { chatCompletions, type ChatCompletionsOptions } from './chat-completions';

const specs: ToolSpec[] = [
  execSpec,
  applyPatchSpec,
  clockSpec,
  {
    type: 'namespace',
    name: 'weather__',
    description: 'Weather tools.',
    tools: [
      {
        type: 'function',
        name: 'get_weather',
        description: 'Current weather for a city.',
        strict: true,
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      },
    ],
  },
  { type: 'function', name: 'read-file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  toolSearchSpec,
  { type: 'hosted', json: { type: 'web_search' } },
];

/** The Chat Completions `tools` the request must carry, written out by hand. */
const expectedTools = [
  {
    type: 'function',
    function: {
      name: 'exec',
      description: 'Run JavaScript in a Code Mode cell.',
      parameters: { type: 'object', properties: { input: { type: 'string', description: 'The raw input.' } }, required: ['input'], additionalProperties: false },
    },
  },
  {
    type: 'function',
    function: {
      name: 'apply_patch',
      description: 'Edit files with a patch.',
      parameters: {
        type: 'object',
        properties: { input: { type: 'string', description: 'The raw input. It must match this lark grammar:\nstart: begin_patch hunk+ end_patch' } },
        required: ['input'],
        additionalProperties: false,
      },
    },
  },
  { type: 'function', function: { name: 'clock__curr_time', description: 'Current time.', parameters: { type: 'object', properties: {} } } },
  {
    type: 'function',
    function: {
      name: 'weather__get_weather',
      description: 'Current weather for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      strict: true,
    },
  },
  { type: 'function', function: { name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];

afterEach(closeReplayServers);

const request = requestsOffering(specs);

const replayChat = (steps: ReplayStep[], options: Partial<ChatCompletionsOptions> = {}) =>
  replayClient(steps, (url, retries) => chatCompletions({ baseURL: `${url}/v1`, model: 'qwen2.5-coder-7b-instruct', ...retries, ...options }));

describe('chatCompletions', () => {
  it('assembles parallel tool-call deltas into namespaced function calls and sends the exact body', async () => {
    const { client, server } = await replayChat([{ fixture: 'chat/parallel-tool-calls.sse' }]);
    const { events, error } = await collect(client.stream(request([userMessage], { instructions: 'You are a helpful agent.' })));
    expect(error).toBeUndefined();
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].path).toBe('/v1/chat/completions');
    expect(server.requests[0].headers.authorization).toBeUndefined();
    expect(server.requests[0].body).toBe(
      JSON.stringify({
        model: 'qwen2.5-coder-7b-instruct',
        messages: [
          { role: 'system', content: 'You are a helpful agent.' },
          { role: 'user', content: 'Weather in Lisbon and the time?' },
        ],
        tools: expectedTools,
        tool_choice: 'auto',
        parallel_tool_calls: true,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(events).toEqual([
      { type: 'output-item', item: { type: 'function_call', call_id: 'call_weather', name: 'get_weather', arguments: '{"city":"Lisbon"}', namespace: 'weather__' } },
      { type: 'output-item', item: { type: 'function_call', call_id: 'call_clock', name: 'curr_time', arguments: '{}', namespace: 'clock' } },
      { type: 'completed', usage: { inputTokens: 412, outputTokens: 38, totalTokens: 450 }, responseId: 'chatcmpl-parallel01', model: 'qwen2.5-coder-7b-instruct', finishReasons: ['tool_calls'] },
    ]);
  });

  it('maps a custom exec call back to a custom_tool_call and streams the text first', async () => {
    const { client } = await replayChat([{ fixture: 'chat/custom-exec.sse' }]);
    const { events, error } = await collect(client.stream(request([userMessage])));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text-delta', delta: 'Let me ' },
      { type: 'text-delta', delta: 'run that.' },
      { type: 'output-item', item: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me run that.' }] } },
      { type: 'output-item', item: { type: 'custom_tool_call', call_id: 'call_exec', name: 'exec', input: 'const now = await tools.clock__curr_time({});\ntext(now);' } },
      { type: 'completed', usage: { inputTokens: 980, outputTokens: 41, totalTokens: 1021 }, responseId: 'chatcmpl-exec01', model: 'qwen2.5-coder-7b-instruct', finishReasons: ['tool_calls'] },
    ]);
  });

  it('sends the history as chat messages: tool calls, outputs, notify injections and images', async () => {
    const { client, server } = await replayChat([{ fixture: 'chat/final-message.sse' }], { apiKey: 'local-key', extraBody: { temperature: 0 } });
    const history: ResponseItem[] = [
      { type: 'message', role: 'developer', content: 'Prefer metric units.' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is in this picture?' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'original' },
        ],
      },
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me run that.' }], id: 'msg_1' },
      { type: 'custom_tool_call', call_id: 'call_exec', name: 'exec', input: 'text(1)' },
      { type: 'function_call', call_id: 'call_clock', name: 'curr_time', namespace: 'clock', arguments: '{}' },
      { type: 'custom_tool_call_output', call_id: 'call_exec', output: 'Script running with cell ID 1' },
      { type: 'function_call_output', call_id: 'call_clock', output: [{ type: 'input_text', text: '12:00' }, { type: 'input_image', image_url: 'https://example.test/clock.png', detail: 'low' }] },
      { type: 'custom_tool_call_output', call_id: 'call_exec', output: [{ type: 'input_text', text: 'started at 12:00' }] },
      { type: 'tool_search_call', call_id: 'call_search', execution: 'client', arguments: { query: 'x' } },
      { type: 'tool_search_output', call_id: 'call_search', status: 'completed', execution: 'client', tools: [] },
    ];
    const { events, error } = await collect(client.stream(request(history, { tools: [], parallelToolCalls: false })));
    expect(error).toBeUndefined();
    expect(outputItems(events)).toEqual([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] }]);
    expect(server.requests[0].headers.authorization).toBe('Bearer local-key');
    expect(server.requests[0].body).toBe(
      JSON.stringify({
        model: 'qwen2.5-coder-7b-instruct',
        messages: [
          { role: 'system', content: 'Prefer metric units.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in this picture?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            ],
          },
          {
            role: 'assistant',
            content: 'Let me run that.',
            tool_calls: [
              { id: 'call_exec', type: 'function', function: { name: 'exec', arguments: '{"input":"text(1)"}' } },
              { id: 'call_clock', type: 'function', function: { name: 'clock__curr_time', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_exec', content: 'Script running with cell ID 1' },
          { role: 'tool', tool_call_id: 'call_clock', content: '12:00' },
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'https://example.test/clock.png', detail: 'low' } },
              { type: 'text', text: 'started at 12:00' },
            ],
          },
        ],
        stream: true,
        stream_options: { include_usage: true },
        temperature: 0,
      }),
    );
  });

  it('yields a call as soon as the next one starts', async () => {
    const { client, server } = await replayChat([{ fixture: 'chat/stream-cut.sse', hang: true }]);
    const iterator = client.stream(request([userMessage]))[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toEqual({
      type: 'output-item',
      item: { type: 'function_call', call_id: 'call_first', name: 'get_weather', arguments: '{"city":"Faro"}', namespace: 'weather__' },
    });
    await iterator.return?.();
    await server.clientClosed;
  });

  it('throws a retryable error when the stream is cut after a call was yielded, without replaying', async () => {
    const { client, server } = await replayChat([{ fixture: 'chat/stream-cut.sse', cut: true }, { fixture: 'chat/final-message.sse' }]);
    const { events, error } = await collect(client.stream(request([userMessage])));
    expect(outputItems(events)).toHaveLength(1);
    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({ code: 'MODEL_ERROR', retryable: true, message: 'model stream interrupted: terminated' });
  });

  it('retries a 429 and a 503 with the same body, then succeeds', async () => {
    const { client, server, sleeps } = await replayChat([
      { status: 429, body: '{"error":{"message":"Too many requests","type":"rate_limit_error"}}', headers: { 'retry-after-ms': '250' } },
      { status: 503, fixture: 'chat/overloaded.json' },
      { fixture: 'chat/final-message.sse' },
    ]);
    const { events, error } = await collect(client.stream(request([userMessage])));
    expect(error).toBeUndefined();
    expect(outputItems(events)).toHaveLength(1);
    expect(server.requests.map((entry) => entry.body)).toEqual([server.requests[0].body, server.requests[0].body, server.requests[0].body]);
    expect(sleeps).toEqual([250, 1000]);
  });

  it('ends the turn on a 400 with the server message', async () => {
    const { client, server } = await replayChat([{ status: 400, fixture: 'chat/context-exceeded.json' }]);
    const { events, error } = await collect(client.stream(request([userMessage])));
    expect(events).toEqual([]);
    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({
      retryable: false,
      status: 400,
      message: 'model request failed (HTTP 400): the request exceeds the available context size, try increasing it',
    });
  });

  it('ends the turn on an error chunk with a 4xx code', async () => {
    const { client, server } = await replayChat([{ fixture: 'chat/error-chunk.sse' }]);
    const { error } = await collect(client.stream(request([userMessage])));
    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({
      retryable: false,
      message: "model stream error (BadRequestError): This model's maximum context length is 32768 tokens. However, you requested 40123 tokens.",
    });
  });

  it('completes a stream that ends after a finish reason without [DONE]; raw custom arguments pass through', async () => {
    const { client } = await replayChat([{ fixture: 'chat/no-done.sse' }]);
    const { events, error } = await collect(client.stream(request([userMessage])));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'output-item', item: { type: 'custom_tool_call', call_id: 'call_a', name: 'exec', input: 'text(1)' } },
      { type: 'completed', usage: undefined, responseId: 'chatcmpl-nodone01', model: 'local', finishReasons: ['tool_calls'] },
    ]);
  });

  it('reads "error": null in every chunk as no error and skips a null tool-call entry', async () => {
    const { client } = await replayChat([{ fixture: 'chat/null-error.sse' }]);
    const { events, error } = await collect(client.stream(request([userMessage])));
    expect(error).toBeUndefined();
    expect(events.filter((event) => event.type === 'output-item')).toEqual([
      { type: 'output-item', item: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] } },
    ]);
  });

  it('refuses a baseURL that is not http(s)', () => {
    expect(() => chatCompletions({ baseURL: 'localhost:8080', model: 'm' })).toThrow(expect.objectContaining({ code: 'CONFIG' }));
  });
});
