import { parseJsonEventStream, safeValidateTypes } from '@ai-sdk/provider-utils';
import { createHookEngine } from '@switchyard/hooks';
import { defineFunctionTool } from '@switchyard/kit';
import { ModelRequestError, type ModelClient, type ResponseItem } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { UI_MESSAGE_STREAM_HEADERS, readUIMessageStream, uiMessageChunkSchema, type UIMessageChunk } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { slowTool } from '../test/ui-fixtures';
import { toUIMessageStream, toUIMessageStreamResponse, type SwitchyardUIMessage } from './index';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const stockTool = (ran: string[]) =>
  defineFunctionTool<{ sku: string }>({
    name: 'check_stock',
    namespace: 'inventory',
    description: 'Units in stock of a SKU.',
    parameters: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
    handle: ({ args }) => {
      ran.push(args.sku);
      return { sku: args.sku, units: args.sku === 'plum' ? 0 : 7 };
    },
  });

/** Reads a response body as the browser's `DefaultChatTransport` does, validating each chunk with the AI SDK's own schema. */
async function readChunks(response: Response): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  for await (const parsed of parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema })) {
    if (!parsed.success) throw new Error(`invalid chunk ${JSON.stringify(parsed.rawValue)}: ${parsed.error.message}`);
    chunks.push(parsed.value);
  }
  return chunks;
}

async function lastMessage(chunks: UIMessageChunk[]): Promise<SwitchyardUIMessage> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let message: SwitchyardUIMessage | undefined;
  const errors: unknown[] = [];
  for await (const snapshot of readUIMessageStream<SwitchyardUIMessage>({ stream, onError: (error) => errors.push(error) })) message = snapshot;
  expect(errors).toEqual([]);
  return message!;
}

const CELL = "const [a, b] = await Promise.all(['apple', 'plum'].map((sku) => tools.inventory__check_stock({ sku })));\ntext(a.sku + ':' + a.units + ' ' + b.sku + ':' + b.units);";

describe('toUIMessageStreamResponse: a Switchyard turn as the UI message stream', () => {
  it('text, a direct tool part, an exec part with the cell output, nested-call and hook data parts: every chunk valid', async () => {
    const ran: string[] = [];
    // the policy: pears are counted by hand
    const hooks = createHookEngine({
      functionHooks: [{ event: 'PreToolUse', matcher: 'inventory__check_stock', run: (input) => ((input.tool_input as { sku?: string }).sku === 'pear' ? { decision: 'block', reason: 'pears are counted by hand' } : undefined) }],
    });
    const session = createSession({ toolMode: 'code-mode', tools: [stockTool(ran)], hooks });
    cleanups.push(() => session.shutdown());
    const model = createScriptedModel(
      [
        [
          { type: 'message', role: 'assistant', content: 'Checking both.' },
          { type: 'function_call', call_id: 'direct-1', name: 'check_stock', namespace: 'inventory', arguments: '{"sku":"pear"}' },
          { type: 'custom_tool_call', call_id: 'cell-1', name: 'exec', input: CELL },
        ],
        [{ type: 'message', role: 'assistant', content: 'Plums are out.' }],
      ],
      { textDeltas: true },
    );
    const response = toUIMessageStreamResponse(session.streamTurn({ model, input: 'What is in stock?' }), { messageId: 'm-1' });
    for (const [name, value] of Object.entries(UI_MESSAGE_STREAM_HEADERS)) expect(response.headers.get(name)).toBe(value);
    const chunks = await readChunks(response);
    for (const chunk of chunks) expect((await safeValidateTypes({ value: chunk, schema: uiMessageChunkSchema })).success).toBe(true);
    expect(chunks[0]).toEqual({ type: 'start', messageId: 'm-1' });
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    expect(chunks.filter((chunk) => chunk.type === 'start-step')).toHaveLength(2);

    const message = await lastMessage(chunks);
    expect(message.id).toBe('m-1');
    const texts = message.parts.filter((part) => part.type === 'text').map((part) => part.text);
    expect(texts).toEqual(['Checking both.', 'Plums are out.']);

    const direct = message.parts.find((part) => part.type === 'tool-inventory__check_stock');
    expect(direct).toMatchObject({ toolCallId: 'direct-1', state: 'output-error', input: { sku: 'pear' }, errorText: expect.stringContaining('pears are counted by hand') });

    const exec = message.parts.find((part) => part.type === 'tool-exec');
    expect(exec).toMatchObject({ toolCallId: 'cell-1', state: 'output-available', input: CELL });
    const execOutput = (exec as { output: Array<{ type: string; text: string }> }).output;
    expect(execOutput.at(-1)).toEqual({ type: 'input_text', text: 'apple:7 plum:0' });
    expect(execOutput[0].text).toMatch(/^Script completed\n/);

    const nested = message.parts.filter((part) => part.type === 'data-switchyard-call').map((part) => part.data);
    expect(nested.map((data) => data.input).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([{ sku: 'apple' }, { sku: 'plum' }]);
    for (const data of nested) {
      expect(data).toMatchObject({ toolName: 'inventory__check_stock', caller: 'code-mode', execCallId: 'cell-1', status: 'completed' });
      expect(data.cellId).toMatch(/^\w+$/);
      expect(data.runtimeToolCallId).toMatch(/^tool-\d+$/);
    }
    const cell = message.parts.find((part) => part.type === 'data-switchyard-cell');
    expect(cell?.data).toMatchObject({ execCallId: 'cell-1', status: 'completed' });

    const hookRuns = message.parts.filter((part) => part.type === 'data-switchyard-hook').map((part) => part.data);
    // one PreToolUse run per call: the direct one and both nested ones
    expect(hookRuns.map((run) => run.callId).sort()).toEqual(['direct-1', ...nested.map((data) => data.callId)].sort());
    for (const run of hookRuns) expect(run).toMatchObject({ event: 'PreToolUse', toolName: 'inventory__check_stock', outcome: run.callId === 'direct-1' ? 'block' : 'continue' });
    expect(hookRuns.find((run) => run.callId === 'direct-1')?.message).toBe('pears are counted by hand');
    expect(ran.sort()).toEqual(['apple', 'plum']);
    // the turn's result is in the history
    expect(session.history.at(-1)).toEqual({ type: 'message', role: 'assistant', content: 'Plums are out.' });
  });

  it('a failed direct call is an output-error part with the text the model read; a retried step drops the text shown before', async () => {
    const session = createSession({ tools: [stockTool([])], retry: { initialDelayMs: 1 } });
    cleanups.push(() => session.shutdown());
    const scripted = createScriptedModel([
      [{ type: 'function_call', call_id: 'bad-1', name: 'check_stock', namespace: 'inventory', arguments: '{"sku":1}' }],
      [{ type: 'message', role: 'assistant', content: 'That SKU is invalid.' }],
    ]);
    let attempts = 0;
    const model: ModelClient = {
      async *stream(request) {
        if (attempts++ === 0) {
          yield { type: 'text-delta', delta: 'half a thou' };
          throw new ModelRequestError('overloaded', { retryable: true });
        }
        yield* scripted.stream(request);
      },
    };
    const chunks: UIMessageChunk[] = [];
    const reader = toUIMessageStream(session.streamTurn({ model, input: 'check' })).getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
    expect(chunks.map((chunk) => chunk.type)).toContain('reset-step');
    const message = await lastMessage(chunks);
    expect(message.parts.filter((part) => part.type === 'text').map((part) => part.text)).toEqual(['That SKU is invalid.']);
    expect(message.parts.find((part) => part.type === 'tool-inventory__check_stock')).toMatchObject({
      toolCallId: 'bad-1',
      state: 'output-error',
      errorText: expect.stringMatching(/^invalid arguments for inventory__check_stock: arguments\.sku must be string/),
    });
  });

  it('a failed turn ends with an error chunk that names the failure and no credential', async () => {
    const session = createSession({ tools: [] });
    cleanups.push(() => session.shutdown());
    const secret = 'sk-live-0123456789abcdefABCDEF';
    const model = createScriptedModel([
      new ModelRequestError(`401 from https://user:hunter2@api.example.com/v1?api_key=${secret}: Incorrect API key provided: ${secret}; Authorization: Bearer abc.def.ghi`, { retryable: false }),
    ]);
    const chunks = await readChunks(toUIMessageStreamResponse(session.streamTurn({ model, input: 'hi' })));
    const error = chunks.find((chunk) => chunk.type === 'error') as { errorText: string };
    expect(error.errorText).toMatch(/^MODEL_ERROR: 401 from https:\/\/\[redacted\]@api\.example\.com/);
    for (const leaked of [secret, 'hunter2', 'abc.def.ghi']) expect(error.errorText).not.toContain(leaked);
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'error' });
    // the session keeps working
    const next = await session.runTurn({ model: createScriptedModel([[{ type: 'message', role: 'assistant', content: 'back' }]]), input: 'again' });
    expect(next.finalText).toBe('back');
  });

  it('a reader that leaves mid-stream does not stop the turn: it finishes and its result is in the history', async () => {
    const slow = slowTool(150);
    const session = createSession({ tools: [slow] });
    cleanups.push(() => session.shutdown());
    const ended = new Promise<unknown>((resolve) => session.on('turn-end', resolve));
    const model = createScriptedModel([[{ type: 'function_call', call_id: 's-1', name: 'slow', arguments: '{}' }], [{ type: 'message', role: 'assistant', content: 'finished anyway' }]]);
    const reader = toUIMessageStream(session.streamTurn({ model, input: 'go' })).getReader();
    expect((await reader.read()).value).toEqual({ type: 'start' });
    await reader.cancel();
    expect(await ended).toMatchObject({ result: { finalText: 'finished anyway' } });
    const items: ResponseItem[] = [...session.history];
    expect(items).toContainEqual({ type: 'function_call_output', call_id: 's-1', output: 'slow done' });
    expect(items.at(-1)).toEqual({ type: 'message', role: 'assistant', content: 'finished anyway' });
  });
});
