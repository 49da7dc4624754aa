import { createOpenAI } from '@ai-sdk/openai';
import { isSwitchyardError } from '@switchyard/protocol';
import { defineFreeformTool } from '@switchyard/kit';
import { createSession } from '@switchyard/session';
import { afterEach, describe, expect, it } from 'vitest';
import { aiSdkModel } from '../src/index';
import { asSse, recordedEvents } from './fixtures';
import { startEventReplayServer } from './replay-server';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('@ai-sdk/openai Responses model (recorded streams replayed on loopback)', () => {
  it('sends a Switchyard freeform tool as an OpenAI custom tool and routes the recorded custom_tool_call to it', async () => {
    const server = await startEventReplayServer([
      { events: asSse(recordedEvents('openai-custom-tool.1.chunks.txt')) },
      { events: asSse(recordedEvents('openai-error.1.chunks.txt')) },
    ]);
    cleanups.push(server.close);
    const queries: string[] = [];
    const writeSql = defineFreeformTool({
      name: 'write_sql',
      description: 'Write a SQL SELECT query to answer the user question.',
      grammar: { syntax: 'regex', definition: 'SELECT .+' },
      handle: ({ input }) => {
        queries.push(input);
        return '3 rows';
      },
    });
    const session = createSession({ tools: [writeSql] });
    cleanups.push(() => session.shutdown());
    const openai = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test-key' });

    const failure = await session.runTurn({ model: aiSdkModel(openai('gpt-5.2-codex')), input: 'Which users are older than 25?' }).catch((error: unknown) => error);

    // Request 1: the grammar tool went out as OpenAI's own custom tool, not as a function.
    const first = server.requests[0]!.body as { tools: unknown[] };
    expect(server.requests[0]!.path).toBe('/v1/responses');
    expect(first.tools).toEqual([
      { type: 'custom', name: 'write_sql', description: 'Write a SQL SELECT query to answer the user question.', format: { type: 'grammar', syntax: 'regex', definition: 'SELECT .+' } },
    ]);
    // The recorded call reached the handler with the raw text.
    expect(queries).toEqual(['SELECT * FROM users WHERE age > 25']);
    // Request 2 carried the call back (the provider's item id survived the round trip through
    // Switchyard's history: with OpenAI's default store it becomes an item_reference) and its output.
    const input = (server.requests[1]!.body as { input: Array<Record<string, unknown>> }).input;
    expect(input.slice(1)).toEqual([
      { type: 'item_reference', id: 'ct_abc123def456' },
      { type: 'custom_tool_call_output', call_id: 'call_custom_sql_001', output: '3 rows' },
    ]);
    // The recorded insufficient_quota stream ends the turn with a non-retryable model error carrying the server's message.
    expect(isSwitchyardError(failure)).toBe(true);
    expect(failure).toMatchObject({ code: 'MODEL_ERROR', retryable: false });
    expect((failure as Error).message).toContain('You exceeded your current quota');
    expect(server.requests).toHaveLength(2);
  });

  it('with store: false (passed through callOptions) the call itself goes back', async () => {
    const server = await startEventReplayServer([
      { events: asSse(recordedEvents('openai-custom-tool.1.chunks.txt')) },
      { events: asSse(recordedEvents('openai-error.1.chunks.txt')) },
    ]);
    cleanups.push(server.close);
    const writeSql = defineFreeformTool({ name: 'write_sql', description: 'SQL.', handle: () => 'ok' });
    const session = createSession({ tools: [writeSql] });
    cleanups.push(() => session.shutdown());
    const openai = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test-key' });
    const model = aiSdkModel(openai('gpt-5.2-codex'), { callOptions: { providerOptions: { openai: { store: false } } } });
    await session.runTurn({ model, input: 'Which users are older than 25?' }).catch(() => undefined);
    const input = (server.requests[1]!.body as { input: Array<Record<string, unknown>>; store: boolean }).input;
    expect((server.requests[1]!.body as { store: boolean }).store).toBe(false);
    expect(input).toContainEqual(expect.objectContaining({ type: 'custom_tool_call', call_id: 'call_custom_sql_001', name: 'write_sql', input: 'SELECT * FROM users WHERE age > 25' }));
    expect(input).toContainEqual({ type: 'custom_tool_call_output', call_id: 'call_custom_sql_001', output: 'ok' });
  });
});
