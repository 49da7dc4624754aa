import { describe, expect, it } from 'vitest';
import { FatalToolError, RespondToModelError, toolName, type ToolCall, type ToolExecutor, type ToolOutput } from '@switchyard/protocol';
import { FunctionToolOutput, createStepContext, defineFreeformTool, defineFunctionTool } from '@switchyard/kit';
import { ToolSearchOutput } from '@switchyard/kit/internal';
import { rejectionOf } from '@switchyard/test-helpers';
import { ToolCallRuntime } from './tool-call-runtime';
import { concurrencyProbe, countedTool, functionCall, overlaps, routerSetup, sleep, timedTool, type Interval } from '../test/support';

const echo = defineFunctionTool({
  name: 'echo',
  description: 'Echoes its text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  handle: ({ args }) => ({ echoed: args.text }),
});
const patch = defineFreeformTool({ name: 'apply_patch', description: 'Patches.', handle: ({ input }) => `patched ${input.length} bytes` });
const searchTool = (output: () => Promise<ToolOutput>): ToolExecutor => ({
  name: toolName('tool_search'),
  spec: { type: 'tool_search', execution: 'client', description: 'Search.', parameters: { type: 'object' } },
  handle: output,
});
const searchCall = { type: 'tool_search_call' as const, call_id: 's1', execution: 'client', arguments: { query: 'weather' } };

/** A function tool whose handler waits on its signal forever (or until `teardownMs` after abort when waiting). */
function hangingTool(name: string, options: { waits?: boolean; teardownMs?: number; log?: string[]; shell?: boolean } = {}): ToolExecutor {
  return {
    name: toolName(name),
    spec: { type: 'function', name, description: 'hangs', parameters: { type: 'object' } },
    waitsForCancellation: options.waits,
    abortStyle: options.shell ? 'shell' : undefined,
    handle: (invocation) =>
      new Promise<ToolOutput>((resolve) => {
        invocation.signal.addEventListener('abort', () => {
          options.log?.push('abort seen');
          if (options.teardownMs !== undefined) {
            setTimeout(() => {
              options.log?.push('teardown done');
              resolve(FunctionToolOutput.text('late result'));
            }, options.teardownMs);
          }
        });
      }),
  };
}

describe('ToolCallRuntime: error → output table', () => {
  it('Ok → the output as its wire item (function, custom, tool_search)', async () => {
    const { runtime } = routerSetup([echo, patch, searchTool(async () => new ToolSearchOutput([{ type: 'function', name: 'x', description: '', strict: false, parameters: {} }]))]);
    const fn = await runtime.handleItem(functionCall('echo', { text: 'hi' }, 'f1'));
    expect(fn?.item).toEqual({ type: 'function_call_output', call_id: 'f1', output: '{"echoed":"hi"}' });
    expect(fn?.success).toBe(true);
    expect(fn?.output.codeModeResult(fn.payload)).toEqual({ echoed: 'hi' });
    const custom = await runtime.handleItem({ type: 'custom_tool_call', call_id: 'p1', name: 'apply_patch', input: 'abc' });
    expect(custom?.item).toEqual({ type: 'custom_tool_call_output', call_id: 'p1', output: 'patched 3 bytes' });
    const search = await runtime.handleItem(searchCall);
    expect(search?.item).toEqual({
      type: 'tool_search_output',
      call_id: 's1',
      status: 'completed',
      execution: 'client',
      tools: [{ type: 'function', name: 'x', description: '', strict: false, parameters: {} }],
    });
  });

  it('RespondToModel → tool_search_output (empty), custom_tool_call_output or function_call_output, success false', async () => {
    const refuse = async (): Promise<ToolOutput> => {
      throw new RespondToModelError('not today');
    };
    const fnTool: ToolExecutor = { ...echo, handle: refuse };
    const customTool: ToolExecutor = { ...patch, handle: refuse };
    const { runtime } = routerSetup([fnTool, customTool, searchTool(refuse)]);
    const search = await runtime.handleItem(searchCall);
    expect(search?.item).toEqual({ type: 'tool_search_output', call_id: 's1', status: 'completed', execution: 'client', tools: [] });
    expect(search?.success).toBe(false);
    const custom = await runtime.handleItem({ type: 'custom_tool_call', call_id: 'p1', name: 'apply_patch', input: 'x' });
    expect(custom?.item).toEqual({ type: 'custom_tool_call_output', call_id: 'p1', output: 'not today' });
    expect(custom?.success).toBe(false);
    const fn = await runtime.handleItem(functionCall('echo', { text: 'x' }, 'f1'));
    expect(fn?.item).toEqual({ type: 'function_call_output', call_id: 'f1', output: 'not today' });
    expect(fn?.success).toBe(false);
    expect(fn?.error?.code).toBe('RESPOND_TO_MODEL');
  });

  it('Fatal → the turn-level error, no output item', async () => {
    const fatal: ToolExecutor = {
      ...echo,
      handle: async () => {
        throw new FatalToolError('clock exploded');
      },
    };
    const { runtime, events } = routerSetup([fatal]);
    const error = await rejectionOf(runtime.handleItem(functionCall('echo', { text: 'x' })));
    expect(error.code).toBe('FATAL');
    expect(error.message).toBe('clock exploded');
    expect(events.map((event) => event.type)).toEqual(['tool-call-start', 'tool-call-end']);
  });

  it('a broken dispatch → fatal INTERNAL "tool task failed to receive: …"', async () => {
    const { router } = routerSetup([echo]);
    const broken = Object.create(router, {
      hooks: {
        get() {
          throw new Error('router state lost');
        },
      },
    });
    const runtime = new ToolCallRuntime({ router: broken, step: createStepContext() });
    const error = await rejectionOf(runtime.handleItem(functionCall('echo', { text: 'x' })));
    expect(error.code).toBe('INTERNAL');
    expect(error.message).toBe('tool task failed to receive: router state lost');
  });

  it('an output whose wire item cannot be built answers the model instead of crashing', async () => {
    const brokenOutput: ToolExecutor = {
      ...echo,
      handle: async () => ({ ...FunctionToolOutput.text('x'), success: true, toResponseItem: () => { throw new Error('no item'); }, codeModeResult: () => 'x', logPreview: () => 'x' }),
    };
    const { runtime } = routerSetup([brokenOutput]);
    const result = await runtime.handleItem(functionCall('echo', { text: 'x' }, 'b1'));
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'b1', output: 'tool echo returned an output that cannot be sent: no item' });
    expect(result?.success).toBe(false);
  });
});

describe('ToolCallRuntime: dispatch steps', () => {
  it('lookup miss → "unsupported call: X" / "unsupported custom tool call: X", no events', async () => {
    const { runtime, events } = routerSetup([echo]);
    const fn = await runtime.handleItem(functionCall('curr_time', {}, 'm1', 'clock'));
    expect(fn?.item).toEqual({ type: 'function_call_output', call_id: 'm1', output: 'unsupported call: clock__curr_time' });
    expect(fn?.error?.code).toBe('TOOL_NOT_FOUND');
    const custom = await runtime.handleItem({ type: 'custom_tool_call', call_id: 'm2', name: 'apply_patch', input: '' });
    expect(custom?.item).toEqual({ type: 'custom_tool_call_output', call_id: 'm2', output: 'unsupported custom tool call: apply_patch' });
    expect(events).toEqual([]);
  });

  it('a namespaced call never reaches the plain tool of the same name', async () => {
    const { runtime } = routerSetup([echo]);
    const result = await runtime.handleItem(functionCall('echo', { text: 'x' }, 'n1', 'mcp__x__'));
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'n1', output: 'unsupported call: mcp__x__echo' });
  });

  it('payload kind mismatch → the model reads `aborted`, the host gets "tool X invoked with incompatible payload"', async () => {
    const { runtime, events } = routerSetup([patch]);
    const result = await runtime.handleItem(functionCall('apply_patch', {}));
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'call-apply_patch', output: 'aborted' });
    expect(result?.success).toBeUndefined();
    expect(result?.error?.code).toBe('INCOMPATIBLE_PAYLOAD');
    expect(result?.error?.message).toBe('tool apply_patch invoked with incompatible payload');
    expect(events).toEqual([]);
  });

  it('malformed arguments and schema violations answer the model before the handler runs, with no events', async () => {
    let ran = 0;
    const counted: ToolExecutor = { ...echo, handle: async () => FunctionToolOutput.text(String(++ran)) };
    const { runtime, events } = routerSetup([counted]);
    const malformed = await runtime.handleItem(functionCall('echo', '{"text":', 'v1'));
    expect(malformed?.item.type).toBe('function_call_output');
    expect((malformed?.item as { output: string }).output).toBe('failed to parse function arguments: EOF while parsing a value at line 1 column 8');
    expect(malformed?.error?.code).toBe('INVALID_INPUT');
    const invalid = await runtime.handleItem(functionCall('echo', { text: 5, loud: true }, 'v2'));
    const output = (invalid?.item as { output: string }).output;
    expect(output.startsWith('invalid arguments for echo: ')).toBe(true);
    expect(output).toContain('arguments.text must be string');
    expect(output).toContain('arguments.loud is not allowed');
    expect(invalid?.success).toBe(false);
    expect(ran).toBe(0);
    expect(events).toEqual([]);
  });

  it('skipInputValidation leaves the arguments to the handler', async () => {
    const lenient: ToolExecutor = { ...echo, skipInputValidation: true, handle: async (inv) => FunctionToolOutput.text(`raw ${(inv.payload as { arguments: string }).arguments}`) };
    const { runtime } = routerSetup([lenient]);
    const result = await runtime.handleItem(functionCall('echo', 'not json', 'k1'));
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'k1', output: 'raw not json' });
  });

  it('a throwing plugin handler becomes a model-visible failure naming the tool, never a crash', async () => {
    const plugin = defineFunctionTool({
      name: 'get_weather',
      namespace: 'weather__',
      description: 'Weather.',
      parameters: { type: 'object' },
      handle: () => {
        throw new TypeError('cannot read properties of undefined');
      },
    });
    const raw: ToolExecutor = {
      name: toolName('raw'),
      spec: { type: 'function', name: 'raw', description: 'raw', parameters: { type: 'object' } },
      handle: () => {
        throw new Error('sync boom');
      },
    };
    const { runtime, events } = routerSetup([plugin, raw]);
    const a = await runtime.handleItem(functionCall('get_weather', {}, 'w1', 'weather__'));
    expect(a?.item).toEqual({ type: 'function_call_output', call_id: 'w1', output: 'tool weather__get_weather failed: cannot read properties of undefined' });
    expect(a?.success).toBe(false);
    const b = await runtime.handleItem(functionCall('raw', {}, 'r1'));
    expect(b?.item).toEqual({ type: 'function_call_output', call_id: 'r1', output: 'tool raw failed: sync boom' });
    const ends = events.filter((event) => event.type === 'tool-call-end');
    expect(ends.map((event) => [event.callId, event.success, event.handlerExecuted])).toEqual([
      ['w1', false, true],
      ['r1', false, true],
    ]);
  });

  it('a raw executor returning a plain value is normalized', async () => {
    const raw = { ...echo, handle: async () => 'plain text' as unknown as ToolOutput };
    const { runtime } = routerSetup([raw]);
    const result = await runtime.handleItem(functionCall('echo', { text: 'x' }, 'p1'));
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'p1', output: 'plain text' });
  });

  it('handleItem ignores items that are not tool calls', async () => {
    const { runtime } = routerSetup([echo]);
    expect(await runtime.handleItem({ type: 'message', role: 'assistant', content: 'hello' })).toBeUndefined();
  });
});

describe('ToolCallRuntime: events', () => {
  it('emits tool-call-start and tool-call-end exactly once per call, with success and duration', async () => {
    const failing = defineFunctionTool({ name: 'fails', description: '', parameters: { type: 'object' }, handle: () => new FunctionToolOutput('no', false) });
    const { runtime, events } = routerSetup([echo, failing]);
    await runtime.dispatchAll([
      { toolName: toolName('echo'), callId: 'e1', payload: { kind: 'function', arguments: '{"text":"a"}' } },
      { toolName: toolName('fails'), callId: 'e2', payload: { kind: 'function', arguments: '{}' } },
    ]);
    for (const callId of ['e1', 'e2']) {
      const mine = events.filter((event) => 'callId' in event && event.callId === callId);
      expect(mine.map((event) => event.type)).toEqual(['tool-call-start', 'tool-call-end']);
    }
    const end = events.find((event) => event.type === 'tool-call-end' && event.callId === 'e2');
    expect(end).toMatchObject({ toolName: 'fails', success: false, handlerExecuted: true, source: { kind: 'direct' } });
    expect(typeof (end as { durationMs: number }).durationMs).toBe('number');
    expect(events.find((event) => event.type === 'tool-call-end' && event.callId === 'e1')).toMatchObject({ success: true });
  });

  it('tool-call-start carries the input as it arrived: the arguments text, unparsed', async () => {
    const { runtime, events } = routerSetup([echo]);
    const text = '{ "text" : "spaced" }';
    await runtime.handle({ toolName: toolName('echo'), callId: 'i1', payload: { kind: 'function', arguments: text } });
    expect(events.find((event) => event.type === 'tool-call-start')).toEqual({ type: 'tool-call-start', callId: 'i1', toolName: 'echo', source: { kind: 'direct' }, input: text });
  });

  it("forwards an executor's own events through invocation.emit", async () => {
    const notifying: ToolExecutor = {
      ...echo,
      handle: async (invocation) => {
        invocation.emit?.({ type: 'tool-notification', callId: invocation.callId, name: 'patch-apply-begin', data: { files: 1 } });
        return FunctionToolOutput.text('ok');
      },
    };
    const { runtime, events } = routerSetup([notifying]);
    await runtime.handleItem(functionCall('echo', { text: 'x' }, 'n1'));
    expect(events.map((event) => event.type)).toEqual(['tool-call-start', 'tool-notification', 'tool-call-end']);
    expect(events[1]).toEqual({ type: 'tool-notification', callId: 'n1', name: 'patch-apply-begin', data: { files: 1 } });
  });
});

describe('ToolCallRuntime: cancellation', () => {
  it('aborts a running call: aborted output with the same call_id, success unset, one aborted event, no end', async () => {
    const { runtime, events } = routerSetup([hangingTool('hang')]);
    const pending = runtime.handle({ toolName: toolName('hang'), callId: 'h1', payload: { kind: 'function', arguments: '{}' } });
    await sleep(20);
    runtime.abort();
    const result = await pending;
    expect(result.item).toEqual({ type: 'function_call_output', call_id: 'h1', output: 'aborted by user after 0.1s' });
    expect(result.success).toBeUndefined();
    expect(result.error?.code).toBe('ABORTED');
    expect(events.map((event) => event.type)).toEqual(['tool-call-start', 'tool-call-aborted']);
    expect(events[1]).toMatchObject({ callId: 'h1', toolName: 'hang' });
  });

  it('uses the shell wording for shell-style executors and reports elapsed seconds', async () => {
    const { runtime } = routerSetup([hangingTool('exec_like', { shell: true })]);
    const pending = runtime.handle({ toolName: toolName('exec_like'), callId: 'x1', payload: { kind: 'function', arguments: '{}' } });
    await sleep(250);
    runtime.abort();
    const output = ((await pending).item as { output: string }).output;
    expect(output).toMatch(/^Wall time: \d+\.\d seconds\naborted by user$/);
    expect(Number(/Wall time: (\d+\.\d)/.exec(output)?.[1])).toBeGreaterThanOrEqual(0.2);
  });

  it('answers a cancelled tool_search with an empty completed tool_search_output', async () => {
    const search = searchTool(() => new Promise<ToolOutput>(() => undefined));
    const controller = new AbortController();
    const { runtime } = routerSetup([search], { signal: controller.signal });
    const pending = runtime.handleItem(searchCall);
    controller.abort();
    expect((await pending)?.item).toEqual({ type: 'tool_search_output', call_id: 's1', status: 'completed', execution: 'client', tools: [] });
  });

  it('awaits the teardown of an executor that waits for cancellation, discarding its output', async () => {
    const log: string[] = [];
    const { runtime } = routerSetup([hangingTool('wait', { waits: true, teardownMs: 60, log })]);
    const pendingFn = runtime.handle({ toolName: toolName('wait'), callId: 'w2', payload: { kind: 'function', arguments: '{}' } });
    await sleep(10);
    runtime.abort();
    const result = await pendingFn;
    log.push('handle resolved');
    expect(log).toEqual(['abort seen', 'teardown done', 'handle resolved']);
    expect(result.item).toEqual({ type: 'function_call_output', call_id: 'w2', output: 'aborted by user after 0.1s' });
  });

  it('keeps a result that had already finished when the cancellation arrived', async () => {
    const quick = defineFunctionTool({ name: 'quick', description: '', parameters: { type: 'object' }, handle: () => 'done' });
    const { runtime, router, events } = routerSetup([quick]);
    router.on('tool-call-end', () => runtime.abort());
    const result = await runtime.handle({ toolName: toolName('quick'), callId: 'q1', payload: { kind: 'function', arguments: '{}' } });
    expect(result.item).toEqual({ type: 'function_call_output', call_id: 'q1', output: 'done' });
    expect(events.map((event) => event.type)).toEqual(['tool-call-start', 'tool-call-end']);
  });

  it('a per-call signal cancels only that call; the turn signal cancels later calls too', async () => {
    const quick = defineFunctionTool({ name: 'quick', description: '', parameters: { type: 'object' }, handle: () => 'done' });
    const turn = new AbortController();
    const { runtime } = routerSetup([hangingTool('hang'), quick], { signal: turn.signal });
    const mine = new AbortController();
    const cancelled = runtime.handle({ toolName: toolName('hang'), callId: 'c1', payload: { kind: 'function', arguments: '{}' } }, { signal: mine.signal });
    const other = runtime.handle({ toolName: toolName('hang'), callId: 'c2', payload: { kind: 'function', arguments: '{}' } });
    mine.abort();
    expect(((await cancelled).item as { output: string }).output).toBe('aborted by user after 0.1s');
    const fine = await runtime.handle({ toolName: toolName('quick'), callId: 'c3', payload: { kind: 'function', arguments: '{}' } }, { source: { kind: 'code-mode', cellId: '1', runtimeToolCallId: 'tool-1' } });
    expect(fine.item).toEqual({ type: 'function_call_output', call_id: 'c3', output: 'done' });
    turn.abort();
    expect((await other).success).toBeUndefined();
    const late = await runtime.handle({ toolName: toolName('quick'), callId: 'c4', payload: { kind: 'function', arguments: '{}' } });
    expect(late.item).toEqual({ type: 'function_call_output', call_id: 'c4', output: 'aborted by user after 0.1s' });
  });

  it('after the turn is cancelled, code-mode and nested calls answer aborted without running their handler', async () => {
    let ran = 0;
    const effect = defineFunctionTool({ name: 'effect', description: '', parameters: { type: 'object' }, handle: () => (ran++, 'did it') });
    const turn = new AbortController();
    const { runtime, events } = routerSetup([effect], { signal: turn.signal });
    turn.abort();
    const nested = await runtime.handle(
      { toolName: toolName('effect'), callId: 'n1', payload: { kind: 'function', arguments: '{}' } },
      { source: { kind: 'code-mode', cellId: 'c', runtimeToolCallId: 'tool-1' } },
    );
    expect(nested.item).toEqual({ type: 'function_call_output', call_id: 'n1', output: 'aborted by user after 0.1s' });
    expect(nested.error?.code).toBe('ABORTED');
    const mine = new AbortController();
    mine.abort();
    const { runtime: fresh } = routerSetup([effect]);
    const direct = await fresh.handle({ toolName: toolName('effect'), callId: 'n2', payload: { kind: 'function', arguments: '{}' } }, { signal: mine.signal });
    expect(direct.success).toBeUndefined();
    expect(ran).toBe(0);
    expect(events.map((event) => event.type)).toEqual(['tool-call-aborted']);
  });

  it('dispose() stops listening to the turn signal', async () => {
    const turn = new AbortController();
    const { runtime } = routerSetup([hangingTool('hang')], { signal: turn.signal });
    runtime.dispose();
    const running = runtime.handle({ toolName: toolName('hang'), callId: 'h1', payload: { kind: 'function', arguments: '{}' } });
    turn.abort();
    const outcome = await Promise.race([running.then(() => 'settled'), sleep(200).then(() => 'still running')]);
    expect(outcome).toBe('still running');
    runtime.abort();
    expect((await running).success).toBeUndefined();
  });

  it('a call cancelled while queued at the gate never starts, and frees its place', async () => {
    const log: Interval[] = [];
    const { runtime, events } = routerSetup([timedTool('slow', 80, log), timedTool('next', 10, log)]);
    const first = runtime.handle({ toolName: toolName('slow'), callId: 'g1', payload: { kind: 'function', arguments: '{}' } });
    const controller = new AbortController();
    const queued = runtime.handle({ toolName: toolName('slow'), callId: 'g2', payload: { kind: 'function', arguments: '{}' } }, { signal: controller.signal });
    const after = runtime.handle({ toolName: toolName('next'), callId: 'g3', payload: { kind: 'function', arguments: '{}' } });
    controller.abort();
    expect((await queued).success).toBeUndefined();
    await Promise.all([first, after]);
    expect(log.map((entry) => entry.name)).toEqual(['slow', 'next']);
    expect(events.filter((event) => 'callId' in event && event.callId === 'g2').map((event) => event.type)).toEqual(['tool-call-aborted']);
  });

  it('the handler sees the reason; the runtime has answered (aborted event) by the time the handler hears of it', async () => {
    const seen: string[] = [];
    const listening = defineFunctionTool({
      name: 'listening',
      description: '',
      parameters: { type: 'object' },
      handle: ({ signal }) =>
        new Promise<string>(() => {
          signal.addEventListener('abort', () => seen.push(`handler: ${String(signal.reason)}`));
        }),
    });
    const { runtime, router } = routerSetup([listening]);
    router.on('tool-call-aborted', () => seen.push('event'));
    const pending = runtime.handle({ toolName: toolName('listening'), callId: 'l1', payload: { kind: 'function', arguments: '{}' } });
    await sleep(5);
    runtime.abort('stop now');
    expect((await pending).success).toBeUndefined();
    expect(seen).toEqual(['event', 'handler: stop now']);
  });

  it("a code-mode caller's signal cancels its call only, and a completed call ignores a later abort", async () => {
    const quick = defineFunctionTool({ name: 'quick', description: '', parameters: { type: 'object' }, supportsParallelToolCalls: true, handle: () => 'done' });
    const { runtime, events } = routerSetup([{ ...hangingTool('hang'), supportsParallelToolCalls: true }, quick]);
    const source = { kind: 'code-mode' as const, cellId: 'c', runtimeToolCallId: 'tool-1' };
    const caller = new AbortController();
    const hanging = runtime.handle({ toolName: toolName('hang'), callId: 'n1', payload: { kind: 'function', arguments: '{}' } }, { source, signal: caller.signal });
    const other = new AbortController();
    const done = await runtime.handle({ toolName: toolName('quick'), callId: 'n2', payload: { kind: 'function', arguments: '{}' } }, { source, signal: other.signal });
    other.abort();
    caller.abort('cell terminated');
    expect(((await hanging).item as { output: string }).output).toBe('aborted by user after 0.1s');
    expect(done.item).toEqual({ type: 'function_call_output', call_id: 'n2', output: 'done' });
    expect(events.map((event) => `${event.type} ${'callId' in event ? event.callId : ''}`)).toEqual([
      'tool-call-start n1',
      'tool-call-start n2',
      'tool-call-end n2',
      'tool-call-aborted n1',
    ]);
  });

  it('an abandoned exclusive call gives the gate back so the turn goes on', async () => {
    const log: Interval[] = [];
    const { runtime } = routerSetup([hangingTool('hang'), timedTool('next', 5, log)]);
    const stuck = runtime.handle({ toolName: toolName('hang'), callId: 'a1', payload: { kind: 'function', arguments: '{}' } }, { signal: AbortSignal.timeout(30) });
    const next = await runtime.handle({ toolName: toolName('next'), callId: 'a2', payload: { kind: 'function', arguments: '{}' } });
    expect((await stuck).success).toBeUndefined();
    expect(next.item).toEqual({ type: 'function_call_output', call_id: 'a2', output: 'next' });
  });
});

describe('ToolCallRuntime: Code Mode calls and parallel-safety', () => {
  const source = { kind: 'code-mode' as const, cellId: 'c', runtimeToolCallId: 'tool-1' };
  const call = (name: string, callId: string) => ({ toolName: toolName(name), callId, payload: { kind: 'function' as const, arguments: JSON.stringify({ label: callId }) } });

  it('runs nested calls of a tool that is not parallel-safe one at a time, and parallel-safe ones together', async () => {
    const log: Interval[] = [];
    const { runtime } = routerSetup([timedTool('serial', 40, log), timedTool('free', 40, log, { parallel: true })]);
    await Promise.all(['s1', 's2', 's3'].map((id) => runtime.handle(call('serial', id), { source })));
    const serial = log.splice(0);
    expect(serial).toHaveLength(3);
    for (const [index, a] of serial.entries()) for (const b of serial.slice(index + 1)) expect(overlaps(a, b), `${a.name} / ${b.name}`).toBe(false);
    await Promise.all(['f1', 'f2', 'f3'].map((id) => runtime.handle(call('free', id), { source })));
    expect(overlaps(log[0], log[1]) && overlaps(log[1], log[2])).toBe(true);
  });

  it('does not wait for the turn gate an exec holds, and a cancelled waiter leaves the nested gate', async () => {
    const log: Interval[] = [];
    const { runtime } = routerSetup([hangingTool('exec_like'), timedTool('serial', 30, log)]);
    const outer = new AbortController();
    const exec = runtime.handle(call('exec_like', 'e1'), { signal: outer.signal });
    const first = runtime.handle(call('serial', 'n1'), { source });
    const waiting = new AbortController();
    const second = runtime.handle(call('serial', 'n2'), { source, signal: waiting.signal });
    waiting.abort('cell terminated');
    const third = runtime.handle(call('serial', 'n3'), { source });
    expect((await first).success).toBe(true);
    expect((await second).item).toMatchObject({ call_id: 'n2', output: expect.stringMatching(/^aborted by user after /) });
    expect((await third).success).toBe(true);
    expect(log.map((entry) => entry.name)).toEqual(['n1', 'n3']);
    outer.abort();
    expect((await exec).success).toBeUndefined();
  });

  it('lets a handler call a sibling through invocation.tools without any gate', async () => {
    const log: Interval[] = [];
    const inner = timedTool('inner', 5, log);
    const outerTool = defineFunctionTool({
      name: 'outer',
      description: 'calls inner',
      parameters: { type: 'object' },
      async handle({ invocation }) {
        const output = await invocation.tools!.call(toolName('inner'), { kind: 'function', arguments: '{}' });
        return `outer saw ${String(output.codeModeResult({ kind: 'function', arguments: '{}' }))}`;
      },
    });
    const { runtime } = routerSetup([outerTool, inner]);
    const result = await runtime.handle(call('outer', 'o1'), { source });
    expect(result.item).toEqual({ type: 'function_call_output', call_id: 'o1', output: 'outer saw inner' });
  });
});

describe('ToolCallRuntime: the read/write gate', () => {
  const call = (name: string, label: string, namespace?: string): ToolCall => ({
    toolName: toolName(name, namespace),
    callId: label,
    payload: { kind: 'function', arguments: JSON.stringify({ label }) },
  });

  it('parallel-safe calls overlap; an exclusive call overlaps nothing', async () => {
    const log: Interval[] = [];
    const { runtime } = routerSetup([timedTool('read', 120, log, { parallel: true }), timedTool('write', 60, log)]);
    await runtime.dispatchAll([call('read', 'r1'), call('read', 'r2'), call('write', 'w1'), call('read', 'r3'), call('read', 'r4')]);
    const by = (name: string) => log.find((entry) => entry.name === name) as Interval;
    expect(overlaps(by('r1'), by('r2'))).toBe(true);
    expect(overlaps(by('r3'), by('r4'))).toBe(true);
    for (const other of ['r1', 'r2', 'r3', 'r4']) expect(overlaps(by('w1'), by(other))).toBe(false);
    // Fair order: the reads queued behind the write wait for it.
    expect(by('r3').start).toBeGreaterThanOrEqual(by('w1').end);
  });

  it('looks the parallel flag up by exact name: a namespaced twin stays exclusive', async () => {
    const log: Interval[] = [];
    const { runtime } = routerSetup([timedTool('read', 60, log, { parallel: true }), timedTool('read', 60, log, { namespace: 'mcp__fs__' })]);
    await runtime.dispatchAll([call('read', 'plain1'), call('read', 'ns1', 'mcp__fs__'), call('read', 'plain2'), call('read', 'ns2', 'mcp__fs__')]);
    const by = (name: string) => log.find((entry) => entry.name === name) as Interval;
    for (const ns of ['ns1', 'ns2']) {
      for (const other of log.filter((entry) => entry.name !== ns)) expect(overlaps(by(ns), other)).toBe(false);
    }
  });

  it('hidden tools are never parallel', async () => {
    const log: Interval[] = [];
    const hidden = { ...timedTool('hidden', 40, log, { parallel: true }), exposure: 'hidden' as const };
    const { runtime } = routerSetup([hidden]);
    await runtime.dispatchAll([call('hidden', 'h1'), call('hidden', 'h2')]);
    expect(overlaps(log[0], log[1])).toBe(false);
  });

  it('returns results in call order whatever order the calls finish in', async () => {
    const log: Interval[] = [];
    const slow = timedTool('slow', 90, log, { parallel: true });
    const fast = timedTool('fast', 5, log, { parallel: true });
    const medium = timedTool('medium', 40, log, { parallel: true });
    const { runtime } = routerSetup([slow, fast, medium]);
    const results = await runtime.dispatchAll([call('slow', 'a'), call('fast', 'b'), call('medium', 'c')]);
    expect(log.map((entry) => entry.name)).toEqual(['b', 'c', 'a']);
    expect(results.map((result) => result.item)).toEqual([
      { type: 'function_call_output', call_id: 'a', output: 'slow' },
      { type: 'function_call_output', call_id: 'b', output: 'fast' },
      { type: 'function_call_output', call_id: 'c', output: 'medium' },
    ]);
  });

  it('lets an exclusive handler call another exclusive tool through invocation.tools without deadlock', async () => {
    const inner = defineFunctionTool({ name: 'inner', description: '', parameters: { type: 'object' }, handle: ({ invocation }) => `inner ${invocation.callId.startsWith('call-')}` });
    const outer: ToolExecutor = {
      ...defineFunctionTool({ name: 'outer', description: '', parameters: { type: 'object' }, handle: () => '' }),
      async handle(invocation) {
        expect(invocation.tools?.has(toolName('inner'))).toBe(true);
        expect(invocation.tools?.has(toolName('nope'))).toBe(false);
        const output = await invocation.tools!.call(toolName('inner'), { kind: 'function', arguments: '{}' });
        const missing = await invocation.tools!.call(toolName('nope'), { kind: 'function', arguments: '{}' });
        return FunctionToolOutput.text(`${output.codeModeResult({ kind: 'function', arguments: '{}' })} / ${missing.codeModeResult({ kind: 'function', arguments: '{}' })}`);
      },
    };
    const { runtime, events } = routerSetup([outer, inner]);
    const result = await runtime.handle({ toolName: toolName('outer'), callId: 'o1', payload: { kind: 'function', arguments: '{}' } });
    expect(result.item).toEqual({ type: 'function_call_output', call_id: 'o1', output: 'inner true / unsupported call: nope' });
    expect(events.filter((event) => event.type === 'tool-call-start').map((event) => event.toolName)).toEqual(['outer', 'inner']);
  });
});

describe('ToolCallRuntime: duplicate call ids in one response', () => {
  it('the second and third call with an id already seen are refused with that call_id and never run; the first answers for real', async () => {
    const counted = countedTool();
    const { runtime, events } = routerSetup([counted.tool, patch]);
    const results = await Promise.all([
      runtime.handleItem(functionCall('counted', {}, 'same')),
      runtime.handleItem(functionCall('counted', {}, 'same')),
      runtime.handleItem({ type: 'custom_tool_call', call_id: 'same', name: 'apply_patch', input: 'abc' }),
    ]);
    expect(counted.runs()).toBe(1);
    expect(results[0]?.item).toEqual({ type: 'function_call_output', call_id: 'same', output: '{"run":1}' });
    const refusal =
      'duplicate call_id "same": an earlier call in this response already uses it, so this call was not run; give every call its own call_id';
    expect(results[1]?.item).toEqual({ type: 'function_call_output', call_id: 'same', output: refusal });
    expect(results[2]?.item).toEqual({ type: 'custom_tool_call_output', call_id: 'same', output: refusal });
    expect(results.map((result) => result?.success)).toEqual([true, false, false]);
    expect(results[1]?.error?.code).toBe('RESPOND_TO_MODEL');
    // only the first call started and ended
    expect(events.filter((event) => event.type === 'tool-call-start')).toHaveLength(1);
    // a new step's runtime (the next response) may reuse the id
    const next = routerSetup([counted.tool]).runtime;
    expect((await next.handleItem(functionCall('counted', {}, 'same')))?.item).toEqual({ type: 'function_call_output', call_id: 'same', output: '{"run":2}' });
  });
});
