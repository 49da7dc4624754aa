import { afterEach, describe, expect, it } from 'vitest';
import {
  ModelRequestError,
  toWireTools,
  type ModelRequest,
  type ModelStreamEvent,
  type ResponseItem,
  type ToolSpec,
} from '@switchyard/protocol';
import { applyPatchSpec, clockSpec, execSpec, toolSearchSpec } from '../test/tool-specs';
import { closeReplayServers, collect, modelRequest, outputItems, replayClient, requestsOffering, startReplayServer, userMessage, type ReplayStep } from '../test/replay-server';
import { openaiResponses, type OpenAIResponsesOptions } from './openai-responses';

const specs: ToolSpec[] = [
  execSpec,
  applyPatchSpec,
  clockSpec,
  toolSearchSpec,
  { type: 'hosted', json: { type: 'web_search', search_context_size: 'low' } },
];

/** The `tools` array the request must carry, written out by hand. */
const expectedTools = [
  { type: 'custom', name: 'exec', description: 'Run JavaScript in a Code Mode cell.', format: { type: 'text' } },
  {
    type: 'custom',
    name: 'apply_patch',
    description: 'Edit files with a patch.',
    format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' },
  },
  {
    type: 'namespace',
    name: 'clock',
    description: 'Time tools.',
    tools: [{ type: 'function', name: 'curr_time', description: 'Current time.', strict: false, parameters: { type: 'object', properties: {} } }],
  },
  {
    type: 'tool_search',
    execution: 'client',
    description: '# Tool discovery',
    parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'number' } }, required: ['query'], additionalProperties: false },
  },
  { type: 'web_search', search_context_size: 'low' },
];

afterEach(closeReplayServers);

const request = requestsOffering(specs);

const replayResponses = (steps: ReplayStep[], options: Partial<OpenAIResponsesOptions> = {}) =>
  replayClient(steps, (url, retries) => openaiResponses({ apiKey: 'sk-test', baseURL: `${url}/v1/`, model: 'gpt-5.1-codex', ...retries, ...options }));

describe('openaiResponses', () => {
  it('streams a turn with parallel function calls and sends the exact request body', async () => {
    const { client, server } = await replayResponses([{ fixture: 'responses/parallel-function-calls.sse' }]);
    const { events, error } = await collect(
      client.stream(request([userMessage], { instructions: 'You are a helpful agent.' })),
    );
    expect(error).toBeUndefined();

    expect(server.requests).toHaveLength(1);
    const [sent] = server.requests;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/responses');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.headers.accept).toBe('text/event-stream');
    expect(sent.body).toBe(
      JSON.stringify({
        model: 'gpt-5.1-codex',
        instructions: 'You are a helpful agent.',
        input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Lisbon and the time?' }] }],
        tools: expectedTools,
        tool_choice: 'auto',
        parallel_tool_calls: true,
        store: false,
        stream: true,
        include: ['reasoning.encrypted_content'],
      }),
    );

    expect(events).toEqual([
      { type: 'text-delta', delta: 'Checking the weather' },
      { type: 'text-delta', delta: ' and the time.' },
      {
        type: 'output-item',
        item: {
          id: 'msg_01',
          type: 'message',
          status: 'completed',
          content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Checking the weather and the time.' }],
          role: 'assistant',
        },
      },
      {
        type: 'output-item',
        item: { id: 'fc_01', type: 'function_call', status: 'completed', arguments: '{"city":"Lisbon"}', call_id: 'call_weather', name: 'get_weather', namespace: 'weather__' },
      },
      {
        type: 'output-item',
        item: { id: 'fc_02', type: 'function_call', status: 'completed', arguments: '{}', call_id: 'call_clock', name: 'curr_time', namespace: 'clock' },
      },
      {
        type: 'completed',
        usage: { inputTokens: 1830, outputTokens: 64, totalTokens: 1894, cacheReadInputTokens: 1024, reasoningOutputTokens: 0 },
        responseId: 'resp_parallel_01',
        model: 'gpt-5.1-codex',
        finishReasons: ['completed'],
      },
    ]);
  });

  it('yields each output item before the response completes (calls can start early)', async () => {
    const { client, server } = await replayResponses([{ fixture: 'responses/stream-cut.sse', hang: true }]);
    const iterator = client.stream(request([userMessage]))[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toMatchObject({ type: 'output-item', item: { call_id: 'call_first' } });
    await iterator.return?.();
    await server.clientClosed;
  });

  it('sends parallel_tool_calls false when the model cannot emit several calls', async () => {
    const { client, server } = await replayResponses([{ fixture: 'responses/final-message.sse' }], { parallelToolCalls: false });
    expect(client.capabilities).toEqual({ name: 'gpt-5.1-codex', parallelToolCalls: false, contextWindow: undefined });
    await collect(client.stream(request([userMessage], { tools: [] })));
    expect(JSON.parse(server.requests[0].body)).toMatchObject({ tools: [], parallel_tool_calls: false });
  });

  it('round-trips a custom exec call, its output and a notify injection', async () => {
    const { client, server } = await replayResponses(
      [{ fixture: 'responses/custom-exec.sse' }, { fixture: 'responses/final-message.sse' }],
      { reasoning: { effort: 'medium', summary: 'auto' }, promptCacheKey: 'session-1' },
    );
    const first = await collect(client.stream(request([userMessage])));
    expect(first.error).toBeUndefined();
    const emitted = outputItems(first.events);
    expect(emitted).toEqual([
      { id: 'rs_01', type: 'reasoning', summary: [], encrypted_content: 'gAAAAABpZ3JlYXNvbmluZw==' },
      {
        id: 'ctc_01',
        type: 'custom_tool_call',
        status: 'completed',
        call_id: 'call_exec',
        input: '// @exec: {"yield_time_ms": 1000}\nconst now = await tools.clock__curr_time({});\nnotify(`started at ${now}`);\ntext(now);',
        name: 'exec',
      },
    ]);
    expect(first.events.at(-1)).toEqual({
      type: 'completed',
      usage: { inputTokens: 2400, outputTokens: 120, totalTokens: 2520, cacheReadInputTokens: 0, reasoningOutputTokens: 48 },
      responseId: 'resp_exec_01',
      model: 'gpt-5.1-codex',
      finishReasons: ['completed'],
    });

    const history: ResponseItem[] = [
      userMessage,
      ...emitted,
      { type: 'custom_tool_call_output', call_id: 'call_exec', output: 'Script running with cell ID 1' },
      { type: 'custom_tool_call_output', call_id: 'call_exec', output: [{ type: 'input_text', text: 'started at 2025-11-29T12:00:00Z' }] },
    ];
    const second = await collect(client.stream(request(history)));
    expect(outputItems(second.events)).toEqual([
      { id: 'msg_final', type: 'message', status: 'completed', content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Done.' }], role: 'assistant' },
    ]);
    expect(server.requests[1].body).toBe(
      JSON.stringify({
        model: 'gpt-5.1-codex',
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Lisbon and the time?' }] },
          // The input types require a reasoning item's id, and a custom_tool_call has no status.
          { id: 'rs_01', type: 'reasoning', summary: [], encrypted_content: 'gAAAAABpZ3JlYXNvbmluZw==' },
          {
            type: 'custom_tool_call',
            call_id: 'call_exec',
            input: '// @exec: {"yield_time_ms": 1000}\nconst now = await tools.clock__curr_time({});\nnotify(`started at ${now}`);\ntext(now);',
            name: 'exec',
          },
          { type: 'custom_tool_call_output', call_id: 'call_exec', output: 'Script running with cell ID 1' },
          { type: 'custom_tool_call_output', call_id: 'call_exec', output: [{ type: 'input_text', text: 'started at 2025-11-29T12:00:00Z' }] },
        ],
        tools: expectedTools,
        tool_choice: 'auto',
        parallel_tool_calls: true,
        reasoning: { effort: 'medium', summary: 'auto' },
        store: false,
        stream: true,
        include: ['reasoning.encrypted_content'],
        prompt_cache_key: 'session-1',
      }),
    );
  });

  it('round-trips a client tool_search call and its tool_search_output', async () => {
    const { client, server } = await replayResponses([
      { fixture: 'responses/tool-search-call.sse' },
      { fixture: 'responses/tool-search-follow-up.sse' },
    ]);
    const first = await collect(client.stream(request([userMessage])));
    const [searchCall] = outputItems(first.events);
    expect(searchCall).toEqual({
      id: 'tsc_01',
      type: 'tool_search_call',
      status: 'completed',
      call_id: 'call_search',
      execution: 'client',
      arguments: { query: 'weather forecast', limit: 2 },
    });

    const searchOutput: ResponseItem = {
      type: 'tool_search_output',
      call_id: 'call_search',
      status: 'completed',
      execution: 'client',
      tools: [
        {
          type: 'namespace',
          name: 'weather__',
          description: 'Weather tools.',
          tools: [
            { type: 'function', name: 'get_weather', description: 'Current weather for a city.', strict: false, defer_loading: true, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
          ],
        },
      ],
    };
    const second = await collect(client.stream(request([userMessage, searchCall, searchOutput])));
    expect(outputItems(second.events)).toEqual([
      { id: 'fc_10', type: 'function_call', status: 'completed', arguments: '{"city":"Porto"}', call_id: 'call_forecast', name: 'get_weather', namespace: 'weather__' },
    ]);
    expect(JSON.parse(server.requests[1].body).input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Lisbon and the time?' }] },
      { type: 'tool_search_call', status: 'completed', call_id: 'call_search', execution: 'client', arguments: { query: 'weather forecast', limit: 2 } },
      // the output item goes back to the API as it came: field for field, the loaded namespace included
      searchOutput,
    ]);
  });

  it('retries a 429 and a 503 with backoff and jitter, resending the same body', async () => {
    const { client, server, sleeps } = await replayResponses([
      { status: 429, fixture: 'responses/rate-limited.json', headers: { 'retry-after': '2' } },
      { status: 503, body: 'upstream connect error' },
      { fixture: 'responses/final-message.sse' },
    ]);
    const { events, error } = await collect(client.stream(request([userMessage])));
    expect(error).toBeUndefined();
    expect(outputItems(events)).toHaveLength(1);
    expect(server.requests).toHaveLength(3);
    expect(server.requests[1].body).toBe(server.requests[0].body);
    expect(server.requests[2].body).toBe(server.requests[0].body);
    // retry-after: 2 s wins over the backoff; then 500 ms * 2 with a jitter factor of 1.0 (random 0.5).
    expect(sleeps).toEqual([2000, 1000]);
  });

  it('applies ±25 % jitter to the backoff', async () => {
    const low = await replayResponses([{ status: 500, body: '' }, { fixture: 'responses/final-message.sse' }], { random: () => 0 });
    await collect(low.client.stream(request([userMessage])));
    expect(low.sleeps).toEqual([375]);
  });

  it('gives up after maxAttempts and throws the last retryable error', async () => {
    const { client, server } = await replayResponses(
      [
        { status: 429, fixture: 'responses/rate-limited.json' },
        { status: 429, fixture: 'responses/rate-limited.json' },
      ],
      { maxAttempts: 2 },
    );
    const { events, error } = await collect(client.stream(request([userMessage])));
    expect(events).toEqual([]);
    expect(server.requests).toHaveLength(2);
    expect(error).toBeInstanceOf(ModelRequestError);
    expect(error).toMatchObject({
      code: 'MODEL_ERROR',
      retryable: true,
      status: 429,
      message:
        'model request failed (HTTP 429): Rate limit reached for gpt-5.1-codex in organization org-test on tokens per min (TPM): Limit 30000, Used 29800, Requested 1894. Please try again in 2s.',
    });
  });

  it('ends the turn on a 400 with the server message, without retrying', async () => {
    const { client, server, sleeps } = await replayResponses([{ status: 400, fixture: 'responses/bad-request.json' }]);
    const { events, error } = await collect(client.stream(request([userMessage])));
    expect(events).toEqual([]);
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(error).toMatchObject({
      code: 'MODEL_ERROR',
      retryable: false,
      status: 400,
      message:
        "model request failed (HTTP 400): Invalid schema for function 'weather__get_weather': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'city'.",
    });
  });

  it('throws a retryable error when the stream is cut after items were yielded, without replaying', async () => {
    const { client, server } = await replayResponses([{ fixture: 'responses/stream-cut.sse', cut: true }, { fixture: 'responses/final-message.sse' }]);
    const { events, error } = await collect(client.stream(request([userMessage])));
    expect(outputItems(events)).toEqual([
      { id: 'fc_20', type: 'function_call', status: 'completed', arguments: '{"city":"Faro"}', call_id: 'call_first', name: 'get_weather', namespace: 'weather__' },
    ]);
    expect(events.some((event) => event.type === 'completed')).toBe(false);
    expect(server.requests).toHaveLength(1);
    expect(error).toBeInstanceOf(ModelRequestError);
    expect(error).toMatchObject({ retryable: true, message: 'model stream interrupted: terminated' });
  });

  it('retries a stream that closed before anything was yielded', async () => {
    const { client, server, sleeps } = await replayResponses([{ fixture: 'responses/created-only.sse' }, { fixture: 'responses/final-message.sse' }]);
    const { events, error } = await collect(client.stream(request([userMessage])));
    expect(error).toBeUndefined();
    expect(outputItems(events)).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([500]);
  });

  it('reports a stream that closed before response.completed when retries are exhausted', async () => {
    const { client } = await replayResponses([{ fixture: 'responses/created-only.sse' }], { maxAttempts: 1 });
    const { error } = await collect(client.stream(request([userMessage])));
    expect(error).toMatchObject({ retryable: true, message: 'model stream closed before response.completed' });
  });

  it('retries an error event with a server_error code', async () => {
    const { client, server } = await replayResponses([{ fixture: 'responses/error-event-server.sse' }, { fixture: 'responses/final-message.sse' }]);
    const { error } = await collect(client.stream(request([userMessage])));
    expect(error).toBeUndefined();
    expect(server.requests).toHaveLength(2);
  });

  it('ends the turn on response.failed with context_length_exceeded', async () => {
    const { client, server } = await replayResponses([{ fixture: 'responses/failed-context-length.sse' }]);
    const { error } = await collect(client.stream(request([userMessage])));
    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({
      retryable: false,
      message:
        'model response failed (context_length_exceeded): Your input exceeds the context window of this model. Please adjust your input and try again.',
    });
  });

  it('retries a refused connection and reports it once attempts run out', async () => {
    const closed = await startReplayServer([]);
    await closed.close();
    const sleeps: number[] = [];
    const client = openaiResponses({
      baseURL: closed.url,
      model: 'gpt-5.1-codex',
      maxAttempts: 3,
      sleep: async (milliseconds) => void sleeps.push(milliseconds),
      random: () => 0.5,
    });
    const { error } = await collect(client.stream(request([userMessage])));
    expect(sleeps).toEqual([500, 1000]);
    expect(error).toMatchObject({ retryable: true });
    expect((error as Error).message).toMatch(/^model request failed: fetch failed \(.*ECONNREFUSED.*\)$/);
  });

  it('stops and closes the connection when the signal aborts mid-stream', async () => {
    const { client, server } = await replayResponses([{ fixture: 'responses/stream-cut.sse', hang: true }]);
    const controller = new AbortController();
    const seen: ModelStreamEvent[] = [];
    const run = (async () => {
      for await (const event of client.stream(request([userMessage], { signal: controller.signal }))) {
        seen.push(event);
        controller.abort();
      }
    })();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(1);
    await server.clientClosed;
    expect(server.requests).toHaveLength(1);
  });

  it('refuses a missing model name', () => {
    expect(() => openaiResponses({ model: '' })).toThrow(expect.objectContaining({ code: 'CONFIG' }));
  });
});
