import { describe, expect, it } from 'vitest';
import {
  RespondToModelError,
  SwitchyardError,
  type HookRunner,
  type PostToolUseFailureRequest,
  type PostToolUseOutcome,
  type PostToolUseRequest,
  type ToolExecutor,
} from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { FailureToolOutput, approvalRefusal } from '@switchyard/kit/internal';
import { functionCall, routerSetup } from '../test/support';

/** A HookRunner recording PostToolUse and PostToolUseFailure requests, answering failures with `answer`. */
function failureRecordingHooks(answer: Partial<PostToolUseOutcome> = {}) {
  const post: PostToolUseRequest[] = [];
  const failures: PostToolUseFailureRequest[] = [];
  const runner: HookRunner = {
    runPreToolUse: async () => ({ blocked: false, additionalContexts: [] }),
    runPostToolUse: async (request) => (post.push(request), { additionalContexts: [] }),
    runPostToolUseFailure: async (request) => (failures.push(request), { additionalContexts: [], ...answer }),
  };
  return { runner, post, failures };
}

/** A tool that does what its `mode` argument says. */
const flaky: ToolExecutor = defineFunctionTool({
  name: 'flaky',
  description: 'Fails on request.',
  parameters: { type: 'object', properties: { mode: { type: 'string' } }, required: ['mode'] },
  handle: ({ args }) => {
    switch (args.mode) {
      case 'throw':
        throw new Error('disk on fire');
      case 'refuse':
        throw new RespondToModelError('no such order', { code: 'LIMIT_EXCEEDED' });
      case 'denied':
        throw approvalRefusal('flaky');
      case 'timeout':
        return Object.assign(new FailureToolOutput('tool call error: timed out awaiting tools/call after 50ms'), { failureCode: 'TIMEOUT' as const });
      case 'failed-output':
        return new FailureToolOutput('exit status 3');
      default:
        return { ok: true };
    }
  },
});

describe('dispatch: PostToolUseFailure', () => {
  it('fires for a handler that throws, with the model-visible text, the code, the input and the caller; never for a success', async () => {
    const hooks = failureRecordingHooks();
    const { runtime } = routerSetup([flaky], { hooks: hooks.runner });
    const thrown = await runtime.handleItem(functionCall('flaky', { mode: 'throw' }, 'c1'));
    expect(thrown?.item).toEqual({ type: 'function_call_output', call_id: 'c1', output: 'tool flaky failed: disk on fire' });
    const refused = await runtime.handleItem(functionCall('flaky', { mode: 'refuse' }, 'c2'));
    const ok = await runtime.handleItem(functionCall('flaky', { mode: 'fine' }, 'c3'));
    expect(ok?.success).toBe(true);
    expect(hooks.failures.map((request) => ({ tool: request.toolName, id: request.toolUseId, input: request.toolInput, caller: request.caller, error: request.error, code: request.errorCode }))).toEqual([
      { tool: 'flaky', id: 'c1', input: { mode: 'throw' }, caller: { kind: 'direct' }, error: 'tool flaky failed: disk on fire', code: 'RESPOND_TO_MODEL' },
      { tool: 'flaky', id: 'c2', input: { mode: 'refuse' }, caller: { kind: 'direct' }, error: 'no such order', code: 'LIMIT_EXCEEDED' },
    ]);
    expect(refused?.error?.code).toBe('LIMIT_EXCEEDED');
    expect(hooks.post.map((request) => request.toolUseId)).toEqual(['c3']);
  });

  it('fires for a failed output with its failureCode (TIMEOUT) or RESPOND_TO_MODEL; PostToolUse does not run for it', async () => {
    const hooks = failureRecordingHooks();
    const { runtime } = routerSetup([flaky], { hooks: hooks.runner });
    await runtime.handleItem(functionCall('flaky', { mode: 'timeout' }, 't1'));
    await runtime.handleItem(functionCall('flaky', { mode: 'failed-output' }, 't2'));
    expect(hooks.failures.map((request) => [request.toolUseId, request.errorCode, request.error])).toEqual([
      ['t1', 'TIMEOUT', 'tool call error: timed out awaiting tools/call after 50ms'],
      ['t2', 'RESPOND_TO_MODEL', 'exit status 3'],
    ]);
    expect(hooks.post).toEqual([]);
  });

  it('feedback replaces the failure text the model reads (success stays false, the error keeps its code); contexts are collected', async () => {
    const hooks = failureRecordingHooks({ feedback: 'the disk is fine; retry once', additionalContexts: ['ops was paged'] });
    const { runtime, events } = routerSetup([flaky], { hooks: hooks.runner });
    const thrown = await runtime.handleItem(functionCall('flaky', { mode: 'throw' }, 'f1'));
    expect(thrown).toMatchObject({ item: { type: 'function_call_output', call_id: 'f1', output: 'the disk is fine; retry once' }, success: false, additionalContexts: ['ops was paged'] });
    expect(thrown?.error?.message).toBe('tool flaky failed: disk on fire');
    expect(thrown?.output.codeModeResult(thrown.payload)).toBe('tool flaky failed: disk on fire');
    const timedOut = await runtime.handleItem(functionCall('flaky', { mode: 'timeout' }, 'f2'));
    expect(timedOut).toMatchObject({ item: { output: 'the disk is fine; retry once' }, success: false });
    expect(timedOut?.output.failureCode).toBe('TIMEOUT');
    expect(events.filter((event) => event.type === 'tool-call-end').map((event) => (event as { success: boolean }).success)).toEqual([false, false]);
  });

  it('fires for a failed call although no PreToolUse hook matches it (hasToolHooks), with the input as the handler got it', async () => {
    const hooks = failureRecordingHooks();
    const pre: string[] = [];
    const runner: HookRunner = {
      ...hooks.runner,
      runPreToolUse: async (request) => (pre.push(request.toolName), { blocked: false, additionalContexts: [] }),
      hasToolHooks: (event) => event !== 'PreToolUse',
    };
    const { runtime } = routerSetup([flaky], { hooks: runner });
    const thrown = await runtime.handleItem(functionCall('flaky', { mode: 'throw' }, 'n1'));
    expect(thrown?.item).toEqual({ type: 'function_call_output', call_id: 'n1', output: 'tool flaky failed: disk on fire' });
    expect(pre).toEqual([]);
    expect(hooks.failures.map((request) => [request.toolUseId, request.toolInput, request.error])).toEqual([['n1', { mode: 'throw' }, 'tool flaky failed: disk on fire']]);
  });

  it('does not fire for an approval refusal, a blocked, an invalid, an unknown or a cancelled call', async () => {
    const hooks = failureRecordingHooks();
    const blocking: HookRunner = { ...hooks.runner, runPreToolUse: async (request) => ({ blocked: (request.toolInput as { mode: string }).mode === 'blocked', additionalContexts: [] }) };
    const hanging = defineFunctionTool({
      name: 'hang',
      description: 'Waits for its signal.',
      parameters: { type: 'object' },
      handle: ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new SwitchyardError('ABORTED', 'cancelled')))),
    });
    const { runtime } = routerSetup([flaky, hanging], { hooks: blocking });
    await runtime.handleItem(functionCall('flaky', { mode: 'denied' }, 'd1'));
    await runtime.handleItem(functionCall('flaky', { mode: 'blocked' }, 'd2'));
    await runtime.handleItem(functionCall('flaky', { mode: 7 }, 'd3'));
    await runtime.handleItem(functionCall('nope', {}, 'd4'));
    const pending = runtime.handleItem(functionCall('hang', {}, 'd5'));
    setTimeout(() => runtime.abort(), 20);
    expect((await pending)?.item).toMatchObject({ call_id: 'd5' });
    expect(hooks.failures).toEqual([]);
  });

  it('a runner without runPostToolUseFailure, or one that rejects, leaves the failure as it is', async () => {
    const bare: HookRunner = { runPreToolUse: async () => ({ blocked: false, additionalContexts: [] }), runPostToolUse: async () => ({ additionalContexts: [] }) };
    const rejecting: HookRunner = { ...bare, runPostToolUseFailure: async () => Promise.reject(new Error('engine down')) };
    for (const runner of [bare, rejecting]) {
      const { runtime } = routerSetup([flaky], { hooks: runner });
      expect((await runtime.handleItem(functionCall('flaky', { mode: 'throw' }, 'r1')))?.item).toEqual({ type: 'function_call_output', call_id: 'r1', output: 'tool flaky failed: disk on fire' });
    }
  });
});
