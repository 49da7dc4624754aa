// Streams recorded from real providers (test/fixtures/third-party, sources in its README), replayed
// from a loopback server; every request body sent here is type-checked against the official types.
import { afterEach, describe, expect, it } from 'vitest';
import { toWireTools, type JsonSchema, type ModelStreamEvent, type ResponseItem, type ToolSpec, type WireTool } from '@switchyard/protocol';
import { closeReplayServers, collect, instantRetries, modelRequest, outputItems, startReplayServer, userMessage, type ReplayStep } from '../test/replay-server';
import { chatCompletions } from './chat-completions';
import { openaiResponses } from './openai-responses';

afterEach(closeReplayServers);

const fnSpec = (name: string, properties: Record<string, JsonSchema> = {}): ToolSpec => ({
  type: 'function',
  name,
  description: `The ${name} tool.`,
  parameters: { type: 'object', properties, required: Object.keys(properties), additionalProperties: false },
});
const specs: ToolSpec[] = [
  fnSpec('get_weather', { location: { type: 'string' } }),
  fnSpec('weather', { location: { type: 'string' } }),
  fnSpec('check_flight', { flight: { type: 'string' } }),
  fnSpec('read', { filePath: { type: 'string' } }),
  fnSpec('read_file', { path: { type: 'string' } }),
  fnSpec('webSearchTool', { query: { type: 'string' } }),
];
const third = (name: string): ReplayStep => ({ fixture: `third-party/${name}` });
const final: ReplayStep = { fixture: 'chat/final-message.sse' };

async function chat(steps: ReplayStep[], tools: ToolSpec[] = specs) {
  const server = await startReplayServer(steps);
  const { sleep, random } = instantRetries();
  const client = chatCompletions({ baseURL: `${server.url}/v1`, model: 'third-party-model', sleep, random, maxAttempts: 1 });
  const run = (input: ResponseItem[]) => collect(client.stream(modelRequest(toWireTools(tools), input)));
  return { server, run };
}

const functionCalls = (events: ModelStreamEvent[]) => outputItems(events).filter((item) => item.type === 'function_call');
const sentMessages = (body: string) => (JSON.parse(body) as { messages: Array<Record<string, unknown>> }).messages;

describe('recorded Chat Completions streams', () => {
  it('Gemini declaring two calls before their arguments: both calls keep their arguments, and the signature goes back', async () => {
    const { server, run } = await chat([third('ai-sdk-gemini-parallel-declared-first.sse'), final]);
    const first = await run([userMessage]);
    expect(first.error).toBeUndefined();
    expect(functionCalls(first.events)).toEqual([
      { type: 'function_call', call_id: 'call-paris', name: 'get_weather', arguments: '{"location":"Paris"}', extra_content: { google: { thought_signature: '<Signature A>' } } },
      { type: 'function_call', call_id: 'call-london', name: 'get_weather', arguments: '{"location":"London"}' },
    ]);
    const history: ResponseItem[] = [
      userMessage,
      ...outputItems(first.events),
      { type: 'function_call_output', call_id: 'call-paris', output: '18°C' },
      { type: 'function_call_output', call_id: 'call-london', output: '12°C' },
    ];
    expect((await run(history)).error).toBeUndefined();
    expect(sentMessages(server.requests[1].body).slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call-paris', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' }, extra_content: { google: { thought_signature: '<Signature A>' } } },
          { id: 'call-london', type: 'function', function: { name: 'get_weather', arguments: '{"location":"London"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call-paris', content: '18°C' },
      { role: 'tool', tool_call_id: 'call-london', content: '12°C' },
    ]);
  });

  it('Gemini with a thought signature and arguments in later chunks', async () => {
    const { run } = await chat([third('ai-sdk-gemini-thought-signature.sse')]);
    const { events, error } = await run([userMessage]);
    expect(error).toBeUndefined();
    expect(functionCalls(events)).toEqual([
      { type: 'function_call', call_id: 'function-call-1', name: 'check_flight', arguments: '{"flight":"AA100"}', extra_content: { google: { thought_signature: '<Signature A>' } } },
    ]);
  });

  it('Gemini numbering parallel calls without an index: one call per id', async () => {
    const { run } = await chat([third('gemini-indexless-parallel.sse')]);
    const { events, error } = await run([userMessage]);
    expect(error).toBeUndefined();
    expect(functionCalls(events).map((item) => [(item as { call_id: string }).call_id, (item as { arguments: string }).arguments, 'extra_content' in item])).toEqual([
      ['623rbkd0', '{"filePath":"/home/rafael/Projects/git.0ur.uk/nenya/gateway.go"}', true],
      ['k2m7qx1p', '{"filePath":"/home/rafael/Projects/git.0ur.uk/nenya/gateway_test.go"}', false],
    ]);
  });

  it('DeepSeek reasoning_content becomes a reasoning item, goes back with the tool-calling step, and is dropped after the next user message', async () => {
    const { server, run } = await chat([third('ai-sdk-deepseek-tool-call.sse'), final, final]);
    const first = await run([userMessage]);
    expect(first.error).toBeUndefined();
    const items = outputItems(first.events);
    const thought = 'The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. Let me invoke the weather tool with the location parameter set to "San Francisco".';
    expect(items).toEqual([
      { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: thought }] },
      { type: 'function_call', call_id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF', name: 'weather', arguments: '{"location": "San Francisco"}' },
    ]);
    const history: ResponseItem[] = [userMessage, ...items, { type: 'function_call_output', call_id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF', output: 'sunny' }];
    await run(history);
    expect(sentMessages(server.requests[1].body)[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF', type: 'function', function: { name: 'weather', arguments: '{"location": "San Francisco"}' } }],
      reasoning_content: thought,
    });
    await run([...history, { type: 'message', role: 'user', content: 'And tomorrow?' }]);
    expect(sentMessages(server.requests[2].body)[1]).not.toHaveProperty('reasoning_content');
  });

  it('xAI grok reasoning, Groq, Mistral and Claude-compatible calls assemble', async () => {
    const grok = await (await chat([third('ai-sdk-xai-tool-call.sse')])).run([userMessage]);
    expect(grok.error).toBeUndefined();
    expect(outputItems(grok.events).map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    expect(functionCalls(grok.events)[0]).toMatchObject({ name: 'weather', arguments: expect.stringContaining('location') });

    const groq = await (await chat([third('ai-sdk-groq-tool-call.sse')])).run([userMessage]);
    expect(functionCalls(groq.events)).toEqual([{ type: 'function_call', call_id: 'tk85n1k4m', name: 'weather', arguments: '{}' }]);

    const mistral = await (await chat([third('ai-sdk-mistral-incremental-tool-call.sse')])).run([userMessage]);
    expect(functionCalls(mistral.events)).toEqual([
      { type: 'function_call', call_id: 'chatcmpl-tool-9f149c74c42f265b', name: 'webSearchTool', arguments: '{"query": "current Berlin weather"}' },
    ]);

    const claude = await (await chat([third('ai-sdk-anthropic-fallback-tool-call.sse')])).run([userMessage]);
    expect(outputItems(claude.events)).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Reading it.' }] },
      { type: 'function_call', call_id: 'toolu_sanitized', name: 'read_file', arguments: '{"path": "a.txt"}' },
    ]);
  });

  it('an upper-case CONTEXT_LENGTH_EXCEEDED is final, not retried', async () => {
    const { server, run } = await chat([third('upper-case-context-length.sse'), final]);
    const { error } = await run([userMessage]);
    expect(error).toMatchObject({ retryable: false, message: expect.stringMatching(/^model stream error \(CONTEXT_LENGTH_EXCEEDED\): This model's maximum context length/) });
    expect(server.requests).toHaveLength(1);
  });
});

describe('a recorded Responses stream with hosted tool_search', () => {
  it('passes the server-side search items through and the loaded function call with its namespace', async () => {
    const server = await startReplayServer([third('ai-sdk-openai-tool-search.sse'), { fixture: 'responses/final-message.sse' }]);
    const client = openaiResponses({ baseURL: `${server.url}/v1`, model: 'gpt-5.4', apiKey: 'sk-test', maxAttempts: 1 });
    const tools: WireTool[] = [{ type: 'tool_search', execution: 'server' }];
    const first = await collect(client.stream(modelRequest(tools, [userMessage])));
    expect(first.error).toBeUndefined();
    const items = outputItems(first.events);
    expect(items.map((item) => item.type)).toEqual(['tool_search_call', 'tool_search_output', 'function_call']);
    expect(items[2]).toMatchObject({ call_id: 'call_pddfxhfOx4gY56zn4vIIEbFp', name: 'get_weather', namespace: 'get_weather' });
    const history: ResponseItem[] = [userMessage, ...items, { type: 'function_call_output', call_id: 'call_pddfxhfOx4gY56zn4vIIEbFp', output: '61°F' }];
    expect((await collect(client.stream(modelRequest(tools, history)))).error).toBeUndefined();
    const input = (JSON.parse(server.requests[1].body) as { input: Array<Record<string, unknown>> }).input;
    // The API needs the namespace back on the call ("Missing namespace for function_call").
    expect(input[3]).toMatchObject({ type: 'function_call', name: 'get_weather', namespace: 'get_weather' });
    expect(input[1]).toMatchObject({ type: 'tool_search_call', execution: 'server', arguments: { paths: ['get_weather'] } });
  });
});
