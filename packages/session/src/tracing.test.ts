import { describe, expect, it } from 'vitest';
import { SpanKind, SpanStatusCode, context, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ModelRequestError, type ModelClient, type ResponseItem, type ToolExecutor } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createHookEngine } from '@switchyard/hooks';
import { createScriptedModel } from './testing';
import { createSession } from './session';
import type { Session } from './session-types';
import { callItem, execItem, say, useCleanups } from '@switchyard/test-helpers';
import { parentSpanOf, recordingTracer, spanIdOf } from '@switchyard/test-helpers/tracing';

const { defer } = useCleanups();

const usage = { inputTokens: 11, outputTokens: 7, totalTokens: 18 };
const ms = (time: [number, number]) => time[0] * 1e3 + time[1] / 1e6;

/** Two tools that each wait until both are running: the cell's Promise.all proves they ran in parallel. */
function meetingTools(): ToolExecutor[] {
  let arrived = 0;
  let meet!: () => void;
  const together = new Promise<void>((resolve) => (meet = resolve));
  const tool = (name: string) =>
    defineFunctionTool({
      name,
      description: `Answers ${name} once its sibling runs too.`,
      parameters: { type: 'object', properties: {} },
      supportsParallelToolCalls: true,
      async handle() {
        if (++arrived === 2) meet();
        await Promise.race([together, new Promise((_, reject) => setTimeout(() => reject(new Error('sibling never started')), 20_000).unref())]);
        return name;
      },
    });
  return [tool('fetch_a'), tool('fetch_b')];
}

const lookup = defineFunctionTool({
  name: 'lookup',
  description: 'Looks a city up.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  handle: ({ args }) => ({ city: args.city, tempC: 7 }),
});
const deleteEverything = defineFunctionTool({
  name: 'delete_everything',
  description: 'Deletes the workspace.',
  parameters: { type: 'object', properties: {} },
  handle: () => 'deleted',
});
const boom = defineFunctionTool({
  name: 'boom',
  description: 'Always fails.',
  parameters: { type: 'object', properties: {} },
  handle: () => {
    throw new Error('kaput');
  },
});

function denyDeletes() {
  const hooks = createHookEngine({
    functionHooks: [
      {
        event: 'PreToolUse',
        run: (input) =>
          input.tool_name === 'delete_everything'
            ? { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'nothing is deleted here' } }
            : undefined,
      },
    ],
  });
  return defer(hooks, (opened) => opened.close());
}

describe('tracing', () => {
  it('a turn with a direct call, a cell with two parallel nested calls and a blocked call makes the GenAI span tree', async () => {
    const { exporter, tracer } = recordingTracer();
    const session = defer(
      createSession({
        toolMode: 'code-mode',
        tools: [lookup, ...meetingTools(), deleteEverything],
        hooks: denyDeletes(),
        model: { name: 'gpt-test' },
        sessionId: 'session-1',
        tracer: { tracer, providerName: 'openai' },
      }),
      (session) => session.shutdown(),
    );
    const code = 'const [a, b] = await Promise.all([tools.fetch_a({}), tools.fetch_b({})]);\ntext(a + "+" + b);';
    const model = createScriptedModel([[callItem('c-lookup', 'lookup', { city: 'Oslo' }), execItem('c-exec', code), callItem('c-delete', 'delete_everything', {})], [say('done')]], {
      usage: () => usage,
    });
    const result = await session.runTurn({ model, input: 'go' });
    expect(result.finalText).toBe('done');
    const cellOutput = result.items.find((item) => item.type === 'custom_tool_call_output') as { output: Array<{ text: string }> };
    expect(cellOutput.output.map((part) => part.text).slice(1)).toEqual(['fetch_a+fetch_b']);

    const spans = exporter.getFinishedSpans();
    const named = (name: string) => spans.filter((span) => span.name === name);
    const one = (name: string) => {
      const found = named(name);
      expect(found, name).toHaveLength(1);
      return found[0]!;
    };
    expect(spans.map((span) => span.name).sort()).toEqual(
      [
        'chat gpt-test',
        'chat gpt-test',
        'code_mode.cell',
        'execute_tool delete_everything',
        'execute_tool exec',
        'execute_tool fetch_a',
        'execute_tool fetch_b',
        'execute_tool lookup',
        'hook PreToolUse',
        'hook PreToolUse',
        'hook PreToolUse',
        'hook PreToolUse',
        'hook PreToolUse',
        'invoke_agent',
      ].sort(),
    );
    const turn = one('invoke_agent');
    expect(parentSpanOf(turn)).toBeUndefined();
    expect(turn.kind).toBe(SpanKind.INTERNAL);
    expect(turn.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': 'session-1',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-test',
      'switchyard.turn.id': expect.any(String),
      'gen_ai.usage.input_tokens': 22,
      'gen_ai.usage.output_tokens': 14,
    });
    expect(turn.status.code).toBe(SpanStatusCode.UNSET);
    // every span is in the turn's trace
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([turn.spanContext().traceId]));

    const chats = named('chat gpt-test').sort((a, b) => (a.attributes['switchyard.step.index'] as number) - (b.attributes['switchyard.step.index'] as number));
    for (const [index, chat] of chats.entries()) {
      expect(parentSpanOf(chat)).toBe(spanIdOf(turn));
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(chat.attributes).toEqual({
        'gen_ai.operation.name': 'chat',
        'gen_ai.conversation.id': 'session-1',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-test',
        'switchyard.step.index': index + 1,
        'switchyard.model.attempt': 1,
        'gen_ai.usage.input_tokens': 11,
        'gen_ai.usage.output_tokens': 7,
      });
    }

    const direct = one('execute_tool lookup');
    expect(parentSpanOf(direct)).toBe(spanIdOf(turn));
    expect(direct.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'c-lookup',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.description': 'Looks a city up.',
      'gen_ai.conversation.id': 'session-1',
      'gen_ai.provider.name': 'openai',
      'switchyard.tool.caller': 'direct',
    });
    expect(direct.status.code).toBe(SpanStatusCode.UNSET);

    const execSpan = one('execute_tool exec');
    expect(parentSpanOf(execSpan)).toBe(spanIdOf(turn));
    expect(execSpan.attributes['gen_ai.tool.call.id']).toBe('c-exec');
    const cell = one('code_mode.cell');
    expect(parentSpanOf(cell)).toBe(spanIdOf(execSpan));
    const cellId = cell.attributes['switchyard.cell.id'];
    expect(typeof cellId).toBe('string');
    expect(cell.attributes).toEqual({
      'gen_ai.conversation.id': 'session-1',
      'gen_ai.provider.name': 'openai',
      'switchyard.cell.id': cellId,
      'switchyard.cell.exec_call_id': 'c-exec',
      'switchyard.cell.status': 'completed',
    });
    // the cell span covers its nested calls
    const nested = [one('execute_tool fetch_a'), one('execute_tool fetch_b')];
    for (const [index, span] of nested.entries()) {
      expect(parentSpanOf(span)).toBe(spanIdOf(cell));
      expect(span.attributes).toEqual({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': index === 0 ? 'fetch_a' : 'fetch_b',
        'gen_ai.tool.call.id': expect.stringMatching(/^exec-/),
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.description': `Answers ${index === 0 ? 'fetch_a' : 'fetch_b'} once its sibling runs too.`,
        'gen_ai.conversation.id': 'session-1',
        'gen_ai.provider.name': 'openai',
        'switchyard.tool.caller': 'code-mode',
        'switchyard.cell.id': cellId,
        'switchyard.cell.tool_call_id': index === 0 ? 'tool-1' : 'tool-2',
      });
      expect(ms(span.startTime)).toBeGreaterThanOrEqual(ms(cell.startTime));
      expect(ms(span.endTime)).toBeLessThanOrEqual(ms(cell.endTime));
    }
    // parallel: each started before the other ended
    expect(ms(nested[0]!.startTime)).toBeLessThan(ms(nested[1]!.endTime));
    expect(ms(nested[1]!.startTime)).toBeLessThan(ms(nested[0]!.endTime));

    const blocked = one('execute_tool delete_everything');
    expect(parentSpanOf(blocked)).toBe(spanIdOf(turn));
    expect(blocked.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'delete_everything',
      'gen_ai.tool.call.id': 'c-delete',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.description': 'Deletes the workspace.',
      'gen_ai.conversation.id': 'session-1',
      'gen_ai.provider.name': 'openai',
      'switchyard.tool.caller': 'direct',
      'switchyard.tool.blocked_reason': 'nothing is deleted here',
      'error.type': 'HOOK_BLOCKED',
    });
    expect(blocked.status).toEqual({ code: SpanStatusCode.ERROR, message: 'nothing is deleted here' });
    expect(blocked.events.map((event) => [event.name, event.attributes?.['exception.type'], event.attributes?.['exception.message']])).toEqual([
      ['exception', 'HOOK_BLOCKED', 'nothing is deleted here'],
    ]);

    // one PreToolUse run per call, each a child of its call's span, with the caller's call id
    const hooks = named('hook PreToolUse');
    const toolSpans = [direct, execSpan, blocked, ...nested];
    expect(hooks.map((hook) => parentSpanOf(hook)).sort()).toEqual(toolSpans.map(spanIdOf).sort());
    for (const hook of hooks) {
      const owner = toolSpans.find((span) => spanIdOf(span) === parentSpanOf(hook))!;
      expect(hook.attributes).toEqual({
        'gen_ai.conversation.id': 'session-1',
        'gen_ai.provider.name': 'openai',
        'switchyard.hook.event': 'PreToolUse',
        'switchyard.hook.run_id': expect.stringMatching(new RegExp(`:${owner.attributes['gen_ai.tool.call.id'] as string}$`)),
        'gen_ai.tool.name': owner.attributes['gen_ai.tool.name'],
        'gen_ai.tool.call.id': owner.attributes['gen_ai.tool.call.id'],
        'switchyard.hook.outcome': owner === blocked ? 'block' : 'continue',
        ...(owner === blocked ? { 'switchyard.hook.message': 'nothing is deleted here' } : {}),
      });
      expect(hook.status.code).toBe(SpanStatusCode.UNSET);
    }
    // every child lies within its parent's time span
    const byId = new Map(spans.map((span) => [spanIdOf(span), span]));
    for (const span of spans) {
      const parent = parentSpanOf(span) ? byId.get(parentSpanOf(span)!) : undefined;
      if (!parent || parent === turn) continue;
      expect(ms(span.startTime), span.name).toBeGreaterThanOrEqual(ms(parent.startTime));
    }
    for (const span of spans) expect(ms(span.endTime), span.name).toBeLessThanOrEqual(ms(turn.endTime));
  });

  it('records errors: a failing tool, a retried model request, a failed turn', async () => {
    const { exporter, tracer } = recordingTracer();
    const session = defer(createSession({ tools: [boom], tracer }), (session) => session.shutdown());
    const model = createScriptedModel(
      [new ModelRequestError('overloaded', { retryable: true, status: 429 }), [callItem('c-boom', 'boom', {})], new ModelRequestError('bad request', { retryable: false, status: 400 })],
      { capabilities: { name: 'client-model' } },
    );
    await expect(session.runTurn({ model, input: 'go' })).rejects.toMatchObject({ code: 'MODEL_ERROR' });
    const spans = exporter.getFinishedSpans();
    const turn = spans.find((span) => span.name === 'invoke_agent')!;
    // the model's name comes from the client when the session has none
    expect(turn.attributes['gen_ai.request.model']).toBe('client-model');
    expect(turn.status).toEqual({ code: SpanStatusCode.ERROR, message: 'bad request' });
    expect(turn.attributes['error.type']).toBe('MODEL_ERROR');

    const chats = spans.filter((span) => span.name === 'chat client-model');
    expect(chats.map((chat) => [chat.attributes['switchyard.step.index'], chat.attributes['switchyard.model.attempt'], chat.status.code, chat.attributes['error.type']])).toEqual([
      [1, 1, SpanStatusCode.ERROR, 'MODEL_ERROR'],
      [1, 2, SpanStatusCode.UNSET, undefined],
      [2, 1, SpanStatusCode.ERROR, 'MODEL_ERROR'],
    ]);
    expect(chats[0]!.events[0]!.attributes).toMatchObject({ 'exception.type': 'MODEL_ERROR', 'exception.message': 'overloaded' });
    expect(chats.every((chat) => parentSpanOf(chat) === spanIdOf(turn))).toBe(true);

    const tool = spans.find((span) => span.name === 'execute_tool boom')!;
    expect(parentSpanOf(tool)).toBe(spanIdOf(turn));
    expect(tool.status).toEqual({ code: SpanStatusCode.ERROR, message: 'tool boom failed: kaput' });
    expect(tool.attributes['error.type']).toBe('RESPOND_TO_MODEL');
    expect(tool.events.map((event) => event.attributes?.['exception.message'])).toEqual(['tool boom failed: kaput']);
  });

  it('an aborted call and a cell failing are errors on their spans', async () => {
    const { exporter, tracer } = recordingTracer();
    const hang = defineFunctionTool({
      name: 'hang',
      description: 'Never answers until aborted.',
      parameters: { type: 'object', properties: {} },
      handle: ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')))),
    });
    const session = defer(createSession({ toolMode: 'code-mode', tools: [hang], tracer }), (session) => session.shutdown());
    const turn = session.beginTurn();
    const step = await turn.step();
    const failed = await step.dispatch(execItem('c-fail', 'throw new Error("no luck")'));
    expect(JSON.stringify(failed)).toContain('no luck');
    const pending = step.dispatch(callItem('c-hang', 'hang', {}));
    await new Promise((resolve) => setTimeout(resolve, 20));
    turn.abort(new Error('user stopped'));
    expect(JSON.stringify(await pending)).toContain('aborted');
    await turn.end();

    const spans = exporter.getFinishedSpans();
    const root = spans.find((span) => span.name === 'invoke_agent')!;
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR, message: 'user stopped' });
    const aborted = spans.find((span) => span.name === 'execute_tool hang')!;
    expect(parentSpanOf(aborted)).toBe(spanIdOf(root));
    expect(aborted.status.code).toBe(SpanStatusCode.ERROR);
    expect(aborted.attributes['error.type']).toBe('ABORTED');
    const cell = spans.find((span) => span.name === 'code_mode.cell')!;
    expect(parentSpanOf(cell)).toBe(spanIdOf(spans.find((span) => span.name === 'execute_tool exec')!));
    expect(cell.attributes['switchyard.cell.status']).toBe('failed');
    expect(cell.attributes['error.type']).toBe('SCRIPT_ERROR');
    // what the cell threw is the model's text: recorded only with recordContent (tools/reliability span-content.test.ts)
    expect(cell.status.message).toBe('script failed');
  });

  it("the host's active span is the turn's parent; agentName names the turn span", async () => {
    const { exporter, tracer } = recordingTracer();
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    defer(manager, () => context.disable());
    const session = defer(createSession({ tools: [lookup], tracer: { tracer, agentName: 'helper' } }), (session) => session.shutdown());
    const model = createScriptedModel([[callItem('c1', 'lookup', { city: 'Oslo' })], [say('ok')]]);
    const host = tracer.startSpan('host request');
    await context.with(trace.setSpan(context.active(), host), () => session.runTurn({ model, input: 'go' }));
    host.end();
    const spans = exporter.getFinishedSpans();
    const turn = spans.find((span) => span.name === 'invoke_agent helper')!;
    expect(turn.attributes['gen_ai.agent.name']).toBe('helper');
    expect(parentSpanOf(turn)).toBe(host.spanContext().spanId);
    expect(parentSpanOf(spans.find((span) => span.name === 'execute_tool lookup')!)).toBe(spanIdOf(turn));
    // no provider given: the attribute is left out rather than guessed
    expect(spans.some((span) => 'gen_ai.provider.name' in span.attributes)).toBe(false);
  });

  it("the client's provider and response facts reach the chat spans; the host's providerName overrides; long descriptions are cut", async () => {
    const manual = defineFunctionTool({
      name: 'manual',
      description: 'x'.repeat(5_000),
      parameters: { type: 'object', properties: {} },
      handle: () => 'read',
    });
    const responses: ResponseItem[][] = [[callItem('c1', 'manual', {})], [say('ok')]];
    const model: ModelClient = {
      provider: { name: 'anthropic', serverAddress: 'api.anthropic.com', serverPort: 443, streaming: true },
      async *stream() {
        const step = responses.shift()!;
        for (const item of step) yield { type: 'output-item', item };
        const last = responses.length === 0;
        yield {
          type: 'completed',
          usage: { inputTokens: 40, outputTokens: 9, totalTokens: 49, cacheReadInputTokens: 32, ...(last ? {} : { reasoningOutputTokens: 5 }) },
          responseId: last ? 'msg_2' : 'msg_1',
          model: 'claude-sonnet-4-5-20250929',
          finishReasons: [last ? 'end_turn' : 'tool_use'],
        };
      },
    };
    const { exporter, tracer } = recordingTracer();
    const session = defer(createSession({ tools: [manual], tracer }), (session) => session.shutdown());
    await session.runTurn({ model, input: 'go' });
    const spans = exporter.getFinishedSpans();
    const chats = spans.filter((span) => span.name.startsWith('chat'));
    expect(chats.map((span) => span.attributes)).toEqual([
      expect.objectContaining({
        'gen_ai.provider.name': 'anthropic',
        'server.address': 'api.anthropic.com',
        'server.port': 443,
        'gen_ai.request.stream': true,
        'gen_ai.response.id': 'msg_1',
        'gen_ai.response.model': 'claude-sonnet-4-5-20250929',
        'gen_ai.response.finish_reasons': ['tool_use'],
        'gen_ai.usage.cache_read.input_tokens': 32,
        'gen_ai.usage.reasoning.output_tokens': 5,
      }),
      expect.objectContaining({ 'gen_ai.response.finish_reasons': ['end_turn'], 'gen_ai.usage.cache_read.input_tokens': 32 }),
    ]);
    // a count the provider did not report stays absent
    expect(chats[1]!.attributes).not.toHaveProperty('gen_ai.usage.reasoning.output_tokens');
    expect(spans.find((span) => span.name === 'invoke_agent')!.attributes['gen_ai.provider.name']).toBe('anthropic');
    const description = spans.find((span) => span.name === 'execute_tool manual')!.attributes['gen_ai.tool.description'];
    expect(description).toBe(`${'x'.repeat(1_023)}…`);

    const overridden = recordingTracer();
    responses.push([say('again')]);
    const named = defer(createSession({ tools: [], tracer: { tracer: overridden.tracer, providerName: 'aws.bedrock' } }), (session) => session.shutdown());
    await named.runTurn({ model, input: 'go' });
    const names = overridden.exporter.getFinishedSpans().map((span) => span.attributes['gen_ai.provider.name']);
    expect(names.length).toBeGreaterThanOrEqual(2);
    expect(new Set(names)).toEqual(new Set(['aws.bedrock']));
  });

  it('a tracer that throws costs its spans, never the turn', async () => {
    const broken = {
      startSpan: () => {
        throw new Error('tracer down');
      },
      startActiveSpan: () => {
        throw new Error('tracer down');
      },
    } as unknown as Tracer;
    const session = defer(createSession({ tools: [lookup], tracer: broken }), (session) => session.shutdown());
    const model = createScriptedModel([[callItem('c1', 'lookup', { city: 'Oslo' })], [say('ok')]]);
    const result = await session.runTurn({ model, input: 'go' });
    expect(result.finalText).toBe('ok');
    expect(result.items.find((item) => item.type === 'function_call_output')).toEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: '{"city":"Oslo","tempC":7}',
    });
  });

  it('a session with a tenant stamps switchyard.tenant on every span; one without has none', async () => {
    const traced = recordingTracer();
    const tenant = defer(createSession({ tools: [lookup], tenant: 'acme', tracer: traced.tracer }), (session) => session.shutdown());
    await tenant.runTurn({ model: createScriptedModel([[callItem('c1', 'lookup', { city: 'Oslo' })], [say('ok')]]), input: 'go' });
    const spans = traced.exporter.getFinishedSpans();
    expect(spans.map((span) => span.name).sort()).toEqual(['chat', 'chat', 'execute_tool lookup', 'invoke_agent']);
    for (const span of spans) expect(span.attributes['switchyard.tenant']).toBe('acme');
    const plain = recordingTracer();
    const own = defer(createSession({ tools: [lookup], tracer: plain.tracer }), (session) => session.shutdown());
    await own.runTurn({ model: createScriptedModel([[say('ok')]]), input: 'go' });
    for (const span of plain.exporter.getFinishedSpans()) expect(span.attributes).not.toHaveProperty('switchyard.tenant');
  });

  it('a tracer option that is no tracer is a CONFIG error naming the option', () => {
    expect(() => createSession({ tools: [], tracer: {} as never })).toThrow(expect.objectContaining({ code: 'CONFIG', message: expect.stringContaining('tracer') }));
  });
});
