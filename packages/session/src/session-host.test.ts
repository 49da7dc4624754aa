import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FatalToolError, ModelRequestError, type ModelClient, type ResponseItem, type ToolExecutor } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createScriptedModel } from './testing';
import { createSession } from './session';
import type { TurnEvent } from './session-events';
import { configError } from '@switchyard/config/config-error';
import { callItem, say } from '@switchyard/test-helpers';
const noWait = { initialDelayMs: 0, sleep: async () => undefined };

const echo = defineFunctionTool({ name: 'echo', description: 'Echoes.', parameters: { type: 'object' }, handle: () => 'echoed' });
const boom = defineFunctionTool({ name: 'boom', description: 'Fails fatally.', parameters: { type: 'object' }, handle: () => { throw new FatalToolError('disk on fire'); } });
const stock = defineFunctionTool({ name: 'check_stock', namespace: 'inventory', description: 'Stock.', parameters: { type: 'object' }, handle: () => '3' });

function waiter(started: string[]): ToolExecutor {
  return defineFunctionTool({
    name: 'wait',
    description: 'Waits until aborted.',
    parameters: { type: 'object' },
    handle: ({ signal }) =>
      new Promise<string>((_resolve, reject) => {
        started.push('wait');
        signal.addEventListener('abort', () => reject(new Error('aborted')));
      }),
  });
}

/** Every call item has exactly one output with its call_id, and every output answers an earlier call. */
function expectPairedOutputs(history: readonly ResponseItem[]) {
  const calls = history.filter((item) => item.type === 'function_call').map((item) => (item as { call_id: string }).call_id);
  const outputs = history.filter((item) => item.type === 'function_call_output').map((item) => (item as { call_id: string }).call_id);
  expect(outputs.sort()).toEqual([...calls].sort());
  expect(new Set(outputs).size).toBe(outputs.length);
}

describe('createSession options are strict', () => {
  it('names an unknown option and the closest valid one', async () => {
    expect(await configError(() => createSession({ tools: [], toolmode: 'code-mode' } as never))).toBe('createSession: unknown option `toolmode`; did you mean `toolMode`?');
    expect(await configError(() => createSession({ tool: [echo] } as never))).toBe('createSession: unknown option `tool`; did you mean `tools`?');
    expect(await configError(() => createSession({ tools: [], provider: { namespaceTool: false } } as never))).toBe(
      'createSession: unknown option `provider.namespaceTool`; did you mean `provider.namespaceTools`?',
    );
  });

  it('names an invalid value and a near miss', async () => {
    expect(await configError(() => createSession({ tools: [], toolMode: 'codemode' } as never))).toBe(
      'createSession: option `toolMode` must be one of "direct", "code-mode", "code-mode-only"; got "codemode" (did you mean "code-mode"?)',
    );
    expect(await configError(() => createSession({ tools: [echo, 'clock'] } as never))).toBe(
      'createSession: option `tools[1]` must be a tool executor (e.g. `clockTool()` or `defineFunctionTool({...})`)',
    );
    expect(await configError(() => createSession({ tools: [], maxSteps: 0 }))).toBe('createSession: option `maxSteps` must be an integer ≥ 1; got 0');
    expect(await configError(() => createSession({} as never))).toBe('createSession: option `tools` is required');
  });
});

describe('planner warnings are never silent', () => {
  let warnings: Array<{ message: string; code?: string }> = [];
  const onWarning = (warning: Error & { code?: string }) => warnings.push({ message: warning.message, code: warning.code });
  beforeEach(() => {
    warnings = [];
    process.on('warning', onWarning);
  });
  afterEach(() => {
    process.off('warning', onWarning);
  });

  it('hidden namespaced tools are an event and one process warning; `strict` makes them a CONFIG error', async () => {
    const unique = defineFunctionTool({ name: 'check_stock_once', namespace: 'warehouse', description: 'Stock.', parameters: { type: 'object' }, handle: () => '3' });
    const session = createSession({ tools: [unique], provider: { namespaceTools: false } });
    const events: string[] = [];
    session.on('plan-warning', (event) => events.push(event.message));
    await session.runTurn({ model: createScriptedModel([[say('a')], [say('b')]]), input: 'x' });
    await session.runTurn({ model: createScriptedModel([[say('a')]]), input: 'y' });
    const message = 'tool "warehouse__check_stock_once" is registered but not visible: the provider does not accept namespaces (provider.namespaceTools is false)';
    expect(events).toEqual([message, message]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((warning) => warning.message === message)).toEqual([{ message, code: 'SWITCHYARD_PLAN' }]);

    const strict = createSession({ tools: [unique], provider: { namespaceTools: false }, strict: true });
    const error = await strict.runTurn({ model: createScriptedModel([[say('never')]]), input: 'x' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'CONFIG', message: `strict session: ${message}` });
    expect(strict.history).toEqual([]);
  });

  it('a broken tool definition is skipped with a warning, or refused in a strict session', async () => {
    const broken = { ...echo, spec: { ...echo.spec, name: 'has spaces' } } as ToolExecutor;
    const strict = createSession({ tools: [broken], strict: true });
    const message = await configError(() => strict.runTurn({ model: createScriptedModel([[say('never')]]), input: 'x' }));
    expect(message).toMatch(/^strict session: skipped tool "echo": /);
  });
});

describe('history stays valid', () => {
  it('a fatal tool error answers every call; the next turn sends a valid request', async () => {
    const session = createSession({ tools: [echo, boom] });
    const failed = session.runTurn({ model: createScriptedModel([[callItem('e1', 'echo', {}), callItem('b1', 'boom', {})]]), input: 'go' });
    await expect(failed).rejects.toMatchObject({ code: 'FATAL', message: 'disk on fire' });
    expectPairedOutputs(session.history);
    expect(session.history).toContainEqual({ type: 'function_call_output', call_id: 'e1', output: 'echoed' });
    expect(session.history).toContainEqual({ type: 'function_call_output', call_id: 'b1', output: 'the turn failed before this call finished: disk on fire' });
    const model = createScriptedModel([[say('recovered')]]);
    await session.runTurn({ model, input: 'again' });
    expectPairedOutputs(model.requests[0].input);
  });

  it('a model error before any output leaves no trace; the host retry sends the input once', async () => {
    const session = createSession({ tools: [echo], maxModelRetries: 0 });
    await expect(session.runTurn({ model: createScriptedModel([new ModelRequestError('server down', { retryable: true, status: 503 })]), input: 'hello' })).rejects.toMatchObject({
      code: 'MODEL_ERROR',
    });
    expect(session.history).toEqual([]);
    const model = createScriptedModel([[say('hi')]]);
    await session.runTurn({ model, input: 'hello' });
    expect(model.requests[0].input.filter((item) => (item as { content?: unknown }).content === 'hello')).toHaveLength(1);
  });

  it('a model error after a tool ran keeps the call and its output; a retry with the same input resumes the turn', async () => {
    const session = createSession({ tools: [echo], maxModelRetries: 0 });
    const failing = createScriptedModel([[callItem('e1', 'echo', {})], new ModelRequestError('server down', { retryable: true, status: 503 })]);
    await expect(session.runTurn({ model: failing, input: 'hello' })).rejects.toMatchObject({ code: 'MODEL_ERROR' });
    expect(session.history).toEqual([
      { type: 'message', role: 'user', content: 'hello' },
      callItem('e1', 'echo', {}),
      { type: 'function_call_output', call_id: 'e1', output: 'echoed' },
    ]);
    const model = createScriptedModel([[say('done')]]);
    const result = await session.runTurn({ model, input: 'hello' });
    expect(model.requests[0].input).toEqual(session.history.slice(0, 3));
    expect(result.items).toEqual([say('done')]);
    expect(session.history.filter((item) => (item as { content?: unknown }).content === 'hello')).toHaveLength(1);
  });

  it('an aborted turn is ABORTED, not a model error, and its calls answer with the aborted output', async () => {
    const started: string[] = [];
    const session = createSession({ tools: [waiter(started)] });
    const controller = new AbortController();
    const model = createScriptedModel([[callItem('w1', 'wait', {})], [say('never')]]);
    const pending = session.runTurn({ model, input: 'wait', signal: controller.signal });
    while (started.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED', message: 'turn aborted' });
    expectPairedOutputs(session.history);
    const output = session.history.find((item) => item.type === 'function_call_output') as { output: string };
    expect(output.output).toMatch(/^aborted by user after \d+\.\ds$/);
    // aborted while the model streams, before any item: ABORTED too, and no trace
    const again = new AbortController();
    const hanging: ModelClient = {
      async *stream(request) {
        again.abort(new Error('user pressed stop'));
        request.signal.throwIfAborted();
        yield { type: 'completed' };
      },
    };
    const before = session.history.length;
    await expect(session.runTurn({ model: hanging, input: 'x', signal: again.signal })).rejects.toMatchObject({ code: 'ABORTED', message: 'turn aborted: user pressed stop' });
    expect(session.history).toHaveLength(before);
  });

  it('history is JSON and createSession({ history }) continues the conversation', async () => {
    const first = createSession({ tools: [echo] });
    await first.runTurn({ model: createScriptedModel([[callItem('e1', 'echo', {})], [say('first answer')]]), input: 'one' });
    const saved = JSON.parse(JSON.stringify(first.history)) as ResponseItem[];
    expect(saved).toEqual(first.history);
    const second = createSession({ tools: [echo], history: saved });
    const model = createScriptedModel([[say('second answer')]]);
    await second.runTurn({ model, input: 'two' });
    expect(model.requests[0].input).toEqual([...saved, { type: 'message', role: 'user', content: 'two' }]);
    // a call saved without its output gets one; a malformed history is refused
    const open = createSession({ tools: [echo], history: [callItem('x1', 'echo', {})] });
    expect(open.history[1]).toEqual({ type: 'function_call_output', call_id: 'x1', output: 'the conversation was interrupted before this call finished' });
    expect(await configError(() => createSession({ tools: [], history: [{ type: 'function_call_output', call_id: 'zz', output: '' }] }))).toBe(
      'createSession: option `history[0]` answers call "zz", which no earlier item makes',
    );
    expect(await configError(() => createSession({ tools: [], history: [{ role: 'user' }] as never }))).toBe(
      'createSession: option `history[0]` must be an item with a string `type`',
    );
  });
});

describe('streamTurn', () => {
  it('yields text deltas, items, tool calls and a turn-end carrying what runTurn returns', async () => {
    const session = createSession({ tools: [stock] });
    const model = createScriptedModel([[callItem('s1', 'check_stock', {}, 'inventory')], [say('three in stock')]], { textDeltas: true });
    const events: TurnEvent[] = [];
    for await (const event of session.streamTurn({ model, input: 'stock?' })) events.push(event);
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('turn-start');
    expect(types.at(-1)).toBe('turn-end');
    expect(types.indexOf('tool-call-start')).toBeLessThan(types.indexOf('tool-call-end'));
    expect(events.filter((event) => event.type === 'text-delta').map((event) => (event as { delta: string }).delta)).toEqual(['three ', 'in ', 'stock']);
    expect(events.find((event) => event.type === 'tool-call-start')).toMatchObject({ toolName: 'inventory__check_stock' });
    const end = events.at(-1) as Extract<TurnEvent, { type: 'turn-end' }>;
    expect(end.result).toEqual({ items: session.history.slice(), finalText: 'three in stock', steps: 2 });

    const replay = createSession({ tools: [stock] });
    const result = await replay.runTurn({ model: createScriptedModel([[callItem('s1', 'check_stock', {}, 'inventory')], [say('three in stock')]]), input: 'stock?' });
    expect(result).toEqual(end.result);
  });

  it('a failed turn ends with turn-end carrying the error, then the iteration throws it', async () => {
    const session = createSession({ tools: [boom] });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of session.streamTurn({ model: createScriptedModel([[callItem('b1', 'boom', {})]]), input: 'x' })) {
        seen.push(event.type === 'turn-end' ? `turn-end:${(event.error as { code?: string } | undefined)?.code}` : event.type);
      }
    })().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'FATAL', message: 'disk on fire' });
    expect(seen.at(-1)).toBe('turn-end:FATAL');
  });

  it('leaving the loop early aborts the turn and keeps the history valid', async () => {
    const started: string[] = [];
    const session = createSession({ tools: [waiter(started)] });
    for await (const event of session.streamTurn({ model: createScriptedModel([[callItem('w1', 'wait', {})]]), input: 'x' })) {
      if (event.type === 'tool-call-start') break;
    }
    expectPairedOutputs(session.history);
    expect(started).toEqual(['wait']);
  });
});

describe('model retries', () => {
  it('backs off with growing delays and reports each retry', async () => {
    const delays: number[] = [];
    const session = createSession({ tools: [], maxModelRetries: 3, retry: { initialDelayMs: 100, random: () => 0.5, sleep: async (ms) => void delays.push(ms) } });
    const retries: number[] = [];
    session.on('model-retry', (event) => retries.push(event.delayMs));
    const down = new ModelRequestError('overloaded', { retryable: true, status: 429 });
    const result = await session.runTurn({ model: createScriptedModel([down, down, down, [say('finally')]]), input: 'x' });
    expect(result.finalText).toBe('finally');
    expect(delays).toEqual([100, 200, 400]);
    expect(retries).toEqual(delays);
  });

  it('does not retry what the client already retried, unless configured to', async () => {
    const retried = () => new ModelRequestError('still down after 5 attempts', { retryable: true, status: 503, attempts: 5 });
    const plain = createScriptedModel([retried(), [say('never')]]);
    await expect(createSession({ tools: [], retry: noWait }).runTurn({ model: plain, input: 'x' })).rejects.toMatchObject({ code: 'MODEL_ERROR' });
    expect(plain.requests).toHaveLength(1);
    const configured = createScriptedModel([retried(), [say('ok')]]);
    await createSession({ tools: [], retry: { ...noWait, afterClientRetries: true } }).runTurn({ model: configured, input: 'x' });
    expect(configured.requests).toHaveLength(2);
  });

  it('an abort during the backoff ends the turn as ABORTED', async () => {
    const controller = new AbortController();
    const session = createSession({ tools: [], retry: { initialDelayMs: 60_000 } });
    session.on('model-retry', () => controller.abort());
    const started = Date.now();
    await expect(
      session.runTurn({ model: createScriptedModel([new ModelRequestError('overloaded', { retryable: true, status: 429 })]), input: 'x', signal: controller.signal }),
    ).rejects.toMatchObject({ code: 'ABORTED' });
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
