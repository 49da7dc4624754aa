import { describe, expect, it } from 'vitest';
import {
  RespondToModelError,
  isJsonObject,
  toolName,
  type HookRunner,
  type PostToolUseOutcome,
  type PostToolUseRequest,
  type PreToolUseOutcome,
  type PreToolUseRequest,
  type ToolExecutor,
} from '@switchyard/protocol';
import { FunctionToolOutput, defineFreeformTool, defineFunctionTool } from '@switchyard/kit';
import { functionCall, routerSetup } from '../test/support';

/** A fake HookRunner answering with the given outcomes and recording every request. */
function fakeHooks(answers: { pre?: Partial<PreToolUseOutcome>; post?: Partial<PostToolUseOutcome>; throws?: boolean } = {}) {
  const pre: PreToolUseRequest[] = [];
  const post: PostToolUseRequest[] = [];
  const runner: HookRunner = {
    async runPreToolUse(request) {
      pre.push(request);
      if (answers.throws) throw new Error('hook engine crashed');
      return { blocked: false, additionalContexts: [], ...answers.pre };
    },
    async runPostToolUse(request) {
      post.push(request);
      if (answers.throws) throw new Error('hook engine crashed');
      return { additionalContexts: [], ...answers.post };
    },
  };
  return { runner, pre, post };
}

const seen: unknown[] = [];
const weather = defineFunctionTool({
  name: 'get_weather',
  namespace: 'weather__',
  description: 'Weather.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  handle: ({ args }) => {
    seen.push(args);
    return { tempC: 21, city: args.city };
  },
});
const weatherCall = (args: unknown = { city: 'Oslo' }, callId = 'w1') => functionCall('get_weather', args, callId, 'weather__');

/** A shell-like tool with its own hook adapter (`Bash` + `{command}`), as tool-exec supplies. */
const shell: ToolExecutor = {
  ...defineFunctionTool({ name: 'exec_command', description: 'Runs.', parameters: { type: 'object' }, handle: () => 'ran' }),
  hookPayload: {
    pre: (invocation) => {
      const args = JSON.parse((invocation.payload as { arguments: string }).arguments) as { cmd: string };
      return { toolName: 'Bash', toolInput: { command: args.cmd } };
    },
  },
};

describe('dispatch: hooks', () => {
  it('sends the default payload to PreToolUse and PostToolUse, with the caller', async () => {
    const hooks = fakeHooks();
    const { runtime } = routerSetup([weather], { hooks: hooks.runner });
    await runtime.handleItem(weatherCall());
    await runtime.handle(
      { toolName: toolName('get_weather', 'weather__'), callId: 'w2', payload: { kind: 'function', arguments: '{"city":"Rome"}' } },
      { source: { kind: 'code-mode', cellId: 'cell-7', runtimeToolCallId: 'tool-1' } },
    );
    expect(hooks.pre.map(({ toolName, toolInput, toolUseId, caller }) => ({ toolName, toolInput, toolUseId, caller }))).toEqual([
      { toolName: 'weather__get_weather', toolInput: { city: 'Oslo' }, toolUseId: 'w1', caller: { kind: 'direct' } },
      { toolName: 'weather__get_weather', toolInput: { city: 'Rome' }, toolUseId: 'w2', caller: { kind: 'code-mode', cell_id: 'cell-7' } },
    ]);
    expect(hooks.post[0]).toMatchObject({ toolName: 'weather__get_weather', toolInput: { city: 'Oslo' }, toolResponse: { tempC: 21, city: 'Oslo' }, toolUseId: 'w1' });
    expect(hooks.post[0].signal).toBeInstanceOf(AbortSignal);
    expect(hooks.post[1].caller).toEqual({ kind: 'code-mode', cell_id: 'cell-7' });
  });

  it('block → "Tool call blocked by PreToolUse hook: …", the handler never runs, a blocked event and no end', async () => {
    seen.length = 0;
    const hooks = fakeHooks({ pre: { blocked: true, reason: 'no weather on Sundays', additionalContexts: ['policy: weekday only'] } });
    const { runtime, events } = routerSetup([weather], { hooks: hooks.runner });
    const result = await runtime.handleItem(weatherCall());
    expect(result?.item).toEqual({
      type: 'function_call_output',
      call_id: 'w1',
      output: 'Tool call blocked by PreToolUse hook: no weather on Sundays. Tool: weather__get_weather',
    });
    expect(result?.success).toBe(false);
    expect(result?.error?.code).toBe('HOOK_BLOCKED');
    expect(result?.additionalContexts).toEqual(['policy: weekday only']);
    expect(seen).toEqual([]);
    expect(hooks.post).toEqual([]);
    expect(events.map((event) => event.type)).toEqual(['tool-call-start', 'tool-call-blocked']);
    expect(events[1]).toMatchObject({ reason: 'no weather on Sundays', callId: 'w1' });
  });

  it('block of a shell or apply_patch command quotes the command', async () => {
    const hooks = fakeHooks({ pre: { blocked: true, reason: 'destructive', additionalContexts: [] } });
    const { runtime } = routerSetup([shell], { hooks: hooks.runner });
    const result = await runtime.handleItem(functionCall('exec_command', { cmd: 'rm -rf /' }, 'x1'));
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'x1', output: 'Command blocked by PreToolUse hook: destructive. Command: rm -rf /' });
  });

  it('rewrite → the handler sees the rewritten input, which is validated again', async () => {
    seen.length = 0;
    const rewrite = fakeHooks({ pre: { blocked: false, updatedInput: { city: 'Bergen' }, additionalContexts: [] } });
    const { runtime } = routerSetup([weather], { hooks: rewrite.runner });
    const result = await runtime.handleItem(weatherCall());
    expect(seen).toEqual([{ city: 'Bergen' }]);
    expect(result?.payload).toEqual({ kind: 'function', arguments: '{"city":"Bergen"}' });
    expect(rewrite.post[0].toolInput).toEqual({ city: 'Bergen' });

    const invalid = fakeHooks({ pre: { blocked: false, updatedInput: { town: 'Bergen' }, additionalContexts: [] } });
    const second = routerSetup([weather], { hooks: invalid.runner });
    const refused = await second.runtime.handleItem(weatherCall());
    expect(refused?.item).toEqual({ type: 'function_call_output', call_id: 'w1', output: 'invalid arguments for weather__get_weather: arguments.city is required' });
    expect(second.events.map((event) => event.type)).toEqual(['tool-call-start', 'tool-call-end']);
    expect(second.events[1]).toMatchObject({ success: false, handlerExecuted: false });
  });

  it("a rewrite the tool cannot take answers the model with the adapter's message", async () => {
    const strict: ToolExecutor = {
      ...shell,
      hookPayload: {
        pre: () => ({ toolName: 'Bash', toolInput: { command: 'ls' } }),
        rewrite: (_invocation, updated) => {
          if (!isJsonObject(updated) || typeof updated.command !== 'string') throw new RespondToModelError('hook returned updatedInput without string field `command`');
          return { kind: 'function', arguments: JSON.stringify({ cmd: updated.command }) };
        },
      },
    };
    const hooks = fakeHooks({ pre: { blocked: false, updatedInput: { cmd: 1 }, additionalContexts: [] } });
    const { runtime } = routerSetup([strict], { hooks: hooks.runner });
    const result = await runtime.handleItem(functionCall('exec_command', { cmd: 'ls' }, 'x2'));
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'x2', output: 'hook returned updatedInput without string field `command`' });
  });

  it('post feedback replaces what the model sees; Code Mode still receives the original typed result', async () => {
    const hooks = fakeHooks({ post: { feedback: 'temperature redacted', additionalContexts: ['ctx after'] } });
    const { runtime, events } = routerSetup([weather], { hooks: hooks.runner });
    const result = await runtime.handleItem(weatherCall());
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'w1', output: 'temperature redacted' });
    expect(result?.success).toBeUndefined();
    expect(result?.output.codeModeResult(result.payload)).toEqual({ tempC: 21, city: 'Oslo' });
    expect(result?.additionalContexts).toEqual(['ctx after']);
    expect(events[1]).toMatchObject({ type: 'tool-call-end', success: true });
  });

  it('post stop without a reason gives the default stop text', async () => {
    const hooks = fakeHooks({ post: { stop: true, additionalContexts: [] } });
    const { runtime } = routerSetup([weather], { hooks: hooks.runner });
    const result = await runtime.handleItem(weatherCall());
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'w1', output: 'PostToolUse hook stopped execution' });
  });

  it('post hooks run only after a successful handler', async () => {
    const failing = defineFunctionTool({ name: 'flaky', description: '', parameters: { type: 'object' }, handle: () => new FunctionToolOutput('nope', false) });
    const throwing = defineFunctionTool({ name: 'broken', description: '', parameters: { type: 'object' }, handle: () => { throw new Error('x'); } });
    const hooks = fakeHooks({ post: { feedback: 'should not appear', additionalContexts: [] } });
    const { runtime } = routerSetup([failing, throwing], { hooks: hooks.runner });
    const a = await runtime.handleItem(functionCall('flaky', {}, 'f1'));
    const b = await runtime.handleItem(functionCall('broken', {}, 'f2'));
    expect(a?.item).toEqual({ type: 'function_call_output', call_id: 'f1', output: 'nope' });
    expect(b?.item).toEqual({ type: 'function_call_output', call_id: 'f2', output: 'tool broken failed: x' });
    expect(hooks.pre).toHaveLength(2);
    expect(hooks.post).toEqual([]);
  });

  it('hands each call its hook additional contexts (pre and post, in arrival order)', async () => {
    const hooks = fakeHooks({ pre: { blocked: false, additionalContexts: ['before'] }, post: { additionalContexts: ['after'] } });
    const { runtime } = routerSetup([weather], { hooks: hooks.runner });
    const [a, b] = await runtime.dispatchAll([
      { toolName: toolName('get_weather', 'weather__'), callId: 'a', payload: { kind: 'function', arguments: '{"city":"A"}' } },
      { toolName: toolName('get_weather', 'weather__'), callId: 'b', payload: { kind: 'function', arguments: '{"city":"B"}' } },
    ]);
    expect(a?.additionalContexts).toEqual(['before', 'after']);
    expect(b?.additionalContexts).toEqual(['before', 'after']);
  });

  it('custom tools get `{ input }` hooks by default or their own adapter; hookPayload false means none', async () => {
    const plain = defineFreeformTool({ name: 'notes', description: '', handle: ({ input }) => input });
    const optedIn = defineFreeformTool({
      name: 'apply_patch',
      description: '',
      hookPayload: { pre: (invocation) => ({ toolName: 'apply_patch', aliases: ['Write', 'Edit'], toolInput: { command: (invocation.payload as { input: string }).input } }) },
      handle: ({ input }) => input,
    });
    const noHooks = defineFunctionTool({ name: 'wait', description: '', parameters: { type: 'object' }, hookPayload: false, handle: () => 'waited' });
    const hooks = fakeHooks();
    const { runtime } = routerSetup([plain, optedIn, noHooks], { hooks: hooks.runner });
    await runtime.handleItem({ type: 'custom_tool_call', call_id: 'c1', name: 'notes', input: 'hello' });
    await runtime.handleItem({ type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: '*** Begin Patch' });
    await runtime.handleItem(functionCall('wait', {}, 'c3'));
    expect(hooks.pre.map((request) => [request.toolName, request.toolInput])).toEqual([
      ['notes', { input: 'hello' }],
      ['apply_patch', { command: '*** Begin Patch' }],
    ]);
  });

  it('a throwing HookRunner fails open: the call goes on', async () => {
    seen.length = 0;
    const hooks = fakeHooks({ throws: true });
    const { runtime } = routerSetup([weather], { hooks: hooks.runner });
    const result = await runtime.handleItem(weatherCall());
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'w1', output: '{"tempC":21,"city":"Oslo"}' });
    expect(hooks.post).toHaveLength(1);
    expect(seen).toEqual([{ city: 'Oslo' }]);
  });

  it('a throwing hook adapter refuses the call (INVALID_INPUT) before it starts: never run unhooked', async () => {
    seen.length = 0;
    const hooks = fakeHooks();
    const brokenAdapter: ToolExecutor = { ...weather, name: toolName('adapter'), hookPayload: { pre: () => { throw new Error('adapter bug'); } } };
    const { runtime, events } = routerSetup([brokenAdapter], { hooks: hooks.runner });
    const result = await runtime.handleItem(functionCall('adapter', { city: 'Lima' }, 'w3'));
    expect(result?.item).toEqual({
      type: 'function_call_output',
      call_id: 'w3',
      output: 'invalid input for adapter: the call cannot be checked by hooks: its hook input could not be built (adapter bug)',
    });
    expect(result?.error?.code).toBe('INVALID_INPUT');
    expect(seen).toEqual([]);
    expect(hooks.pre).toEqual([]);
    expect(events).toEqual([]);
  });

  it('arguments nested 6,000 deep never reach the handler (nor the hooks); without hooks the bound does not apply', async () => {
    seen.length = 0;
    const hooks = fakeHooks();
    const { runtime } = routerSetup([weather], { hooks: hooks.runner });
    const deep = `{"city":"Oslo","extra":${'['.repeat(6000)}${']'.repeat(6000)}}`;
    const result = await runtime.handleItem(weatherCall(deep, 'deep'));
    expect(result?.item).toEqual({
      type: 'function_call_output',
      call_id: 'deep',
      output: 'invalid input for weather__get_weather: the call cannot be checked by hooks: it is nested deeper than 100 levels',
    });
    expect(result?.error?.code).toBe('INVALID_INPUT');
    expect(seen).toEqual([]);
    expect(hooks.pre).toEqual([]);
    // The bound is the router's: a host may lower (or raise) it.
    const strict = routerSetup([weather], { hooks: hooks.runner, hookInputBounds: { maxDepth: 1, maxChars: 1000 } });
    const refused = await strict.runtime.handleItem(weatherCall({ city: 'Oslo', extra: { a: 1 } }, 'two'));
    expect(refused?.error?.code).toBe('INVALID_INPUT');
    const large = await strict.runtime.handleItem(weatherCall({ city: 'x'.repeat(2000) }, 'large'));
    expect(large?.item).toMatchObject({ output: 'invalid input for weather__get_weather: the call cannot be checked by hooks: it is larger than 1000 characters' });
    const plain = routerSetup([weather]);
    const unhooked = await plain.runtime.handleItem(weatherCall(deep, 'no-hooks'));
    expect(unhooked?.success).toBe(true);
  });

  it('the input bound applies only when a PreToolUse hook matches (hasToolHooks): deep arguments of a tool no hook reads run', async () => {
    seen.length = 0;
    const deep = `{"city":"Oslo","extra":${'['.repeat(6000)}${']'.repeat(6000)}}`;
    const asked: Array<[string, string]> = [];
    // hooks for the shell only (its adapter names it Bash): the weather tool is read by none
    const shellOnly = fakeHooks();
    const runner: HookRunner = { ...shellOnly.runner, hasToolHooks: (event, request) => (asked.push([event, request.toolName]), request.toolName === 'Bash') };
    const { runtime, events } = routerSetup([weather, shell], { hooks: runner });
    const result = await runtime.handleItem(weatherCall(deep, 'unread'));
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'unread', output: '{"tempC":21,"city":"Oslo"}' });
    expect(result?.error).toBeUndefined();
    expect(seen).toHaveLength(1);
    expect(shellOnly.pre).toEqual([]);
    expect(shellOnly.post).toEqual([]);
    expect(asked).toEqual([
      ['PreToolUse', 'weather__get_weather'],
      ['PostToolUse', 'weather__get_weather'],
    ]);
    expect(events.map((event) => event.type)).toEqual(['tool-call-start', 'tool-call-end']);
    // a matching hook still refuses the same call: it is never run unhooked
    const everyTool = fakeHooks();
    const matching = routerSetup([weather], { hooks: { ...everyTool.runner, hasToolHooks: () => true } });
    const refused = await matching.runtime.handleItem(weatherCall(deep, 'read'));
    expect(refused?.item).toEqual({
      type: 'function_call_output',
      call_id: 'read',
      output: 'invalid input for weather__get_weather: the call cannot be checked by hooks: it is nested deeper than 100 levels',
    });
    expect(everyTool.pre).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it('an output PostToolUse hooks cannot be given is withheld from the model and from Code Mode', async () => {
    const deepTool = defineFunctionTool({
      name: 'deep',
      description: '',
      parameters: { type: 'object' },
      handle: () => JSON.parse(`${'['.repeat(500)}"secret"${']'.repeat(500)}`),
    });
    const hooks = fakeHooks();
    const { runtime, events } = routerSetup([deepTool], { hooks: hooks.runner });
    const result = await runtime.handleItem(functionCall('deep', {}, 'd1'));
    const message = 'the output of deep was withheld: it cannot be checked by PostToolUse hooks: it is nested deeper than 100 levels';
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'd1', output: message });
    expect(JSON.stringify(result?.output.codeModeResult(result.payload))).not.toContain('secret');
    expect(result?.error?.code).toBe('LIMIT_EXCEEDED');
    expect(hooks.post).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'tool-call-end', success: false, handlerExecuted: true });
  });

  it('matchers also get the tool\'s own name: aliases are the adapter\'s, then every spelling of the tool', async () => {
    const hooks = fakeHooks();
    const { runtime } = routerSetup([weather, shell], { hooks: hooks.runner });
    await runtime.handleItem(weatherCall());
    await runtime.handleItem(functionCall('exec_command', { cmd: 'ls' }, 'x3'));
    expect(hooks.pre.map((request) => [request.toolName, request.aliases])).toEqual([
      ['weather__get_weather', ['get_weather', 'weather__.get_weather', 'weather.get_weather']],
      ['Bash', ['exec_command']],
    ]);
    // The fake shell has no post adapter: the default payload names the tool itself.
    expect(hooks.post.map((request) => [request.toolName, request.aliases])).toEqual([
      ['weather__get_weather', ['get_weather', 'weather__.get_weather', 'weather.get_weather']],
      ['exec_command', []],
    ]);
  });

  it('nested calls through invocation.tools go through the hooks too', async () => {
    const caller: ToolExecutor = {
      ...defineFunctionTool({ name: 'outer', description: '', parameters: { type: 'object' }, hookPayload: false, handle: () => '' }),
      async handle(invocation) {
        return invocation.tools!.call(toolName('get_weather', 'weather__'), { kind: 'function', arguments: '{"city":"Nuuk"}' });
      },
    };
    const hooks = fakeHooks({ pre: { blocked: true, reason: 'nested blocked', additionalContexts: [] } });
    const { runtime } = routerSetup([caller, weather], { hooks: hooks.runner });
    const result = await runtime.handleItem(functionCall('outer', {}, 'o1'));
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'o1', output: 'Tool call blocked by PreToolUse hook: nested blocked. Tool: weather__get_weather' });
    expect(hooks.pre.map((request) => request.toolName)).toEqual(['weather__get_weather']);
    expect(hooks.pre[0].toolUseId).not.toBe('o1');
  });
});
