import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HookEndEvent, PostToolUseFailureRequest } from '@switchyard/protocol';
import { createHookEngine } from './hook-engine';
import type { HookInput, LifecycleHookInput } from './hook-payload';
import { preRequest, useScratch } from '../test/helpers';

const tmp = useScratch();

function failureRequest(overrides: Partial<PostToolUseFailureRequest> = {}): PostToolUseFailureRequest {
  return { ...preRequest({ toolName: 'deploy', toolInput: { env: 'prod' } }), error: 'tool deploy failed: quota exceeded', errorCode: 'RESPOND_TO_MODEL', ...overrides };
}

describe('PostToolUseFailure in the engine', () => {
  it('gives a command hook the pre fields plus error and error_code on stdin, and matches like PostToolUse', async () => {
    const dir = tmp();
    const engine = createHookEngine({
      shell: '/bin/sh',
      config: {
        hooks: {
          PostToolUseFailure: [
            { matcher: 'deploy', hooks: [{ type: 'command', command: `cat > "${dir.path('stdin.json')}"` }] },
            { matcher: 'other', hooks: [{ type: 'command', command: `touch "${dir.path('other-ran')}"` }] },
          ],
        },
      },
    });
    const outcome = await engine.runPostToolUseFailure(failureRequest({ aliases: ['ops__deploy'], caller: { kind: 'code-mode', cell_id: 'cell-7' } }));
    expect(outcome).toEqual({ additionalContexts: [], warnings: [] });
    expect(JSON.parse(readFileSync(dir.path('stdin.json'), 'utf8'))).toEqual({
      session_id: 'session-9',
      turn_id: 'turn-3',
      transcript_path: null,
      cwd: process.cwd(),
      hook_event_name: 'PostToolUseFailure',
      model: 'gpt-test',
      permission_mode: 'default',
      tool_name: 'deploy',
      tool_input: { env: 'prod' },
      tool_use_id: 'call-1',
      caller: { kind: 'code-mode', cell_id: 'cell-7' },
      error: 'tool deploy failed: quota exceeded',
      error_code: 'RESPOND_TO_MODEL',
    });
    expect(() => readFileSync(dir.path('other-ran'))).toThrow();
  });

  it('replaces the failure text (exit 2 or decision block), adds context, and joins several feedbacks', async () => {
    const seen: HookInput[] = [];
    const engine = createHookEngine({
      shell: '/bin/sh',
      config: { hooks: { PostToolUseFailure: [{ hooks: [{ type: 'command', command: 'echo "quota is per team; ask ops" >&2; exit 2' }] }] } },
      functionHooks: [
        {
          event: 'PostToolUseFailure',
          name: 'context',
          run: (input) => {
            seen.push(input);
            return { decision: 'block', reason: 'try env=staging', hookSpecificOutput: { hookEventName: 'PostToolUseFailure', additionalContext: 'deploys fail on Fridays' } };
          },
        },
      ],
    });
    const outcome = await engine.runPostToolUseFailure(failureRequest({ errorCode: 'TIMEOUT' }));
    expect(outcome).toEqual({ feedback: 'quota is per team; ask ops\n\ntry env=staging', additionalContexts: ['deploys fail on Fridays'], warnings: [] });
    expect(seen).toMatchObject([{ hook_event_name: 'PostToolUseFailure', error_code: 'TIMEOUT', error: 'tool deploy failed: quota exceeded' }]);
  });

  it('a required failure hook that fails withholds the failure text, naming itself; an invalid answer names the event', async () => {
    const required = createHookEngine({ config: { hooks: { PostToolUseFailure: [{ hooks: [{ type: 'command', command: 'exit 3', required: true }] }] } } });
    expect(await required.runPostToolUseFailure(failureRequest())).toMatchObject({
      feedback: 'the tool output was withheld: a PostToolUseFailure required hook "exit 3" (<config:0>) failed: hook exited with code 3',
    });
    const invalid = createHookEngine({ config: { hooks: { PostToolUseFailure: [{ hooks: [{ type: 'command', command: `echo '{"reason":"x"}'` }] }] } } });
    expect(await invalid.runPostToolUseFailure(failureRequest())).toEqual({
      additionalContexts: [],
      warnings: ['hook post-tool-use-failure:0:<config:0>:call-1 failed: PostToolUseFailure hook returned reason without decision'],
    });
  });
});

describe('Interrupt in the engine', () => {
  const base = { sessionId: 's-1', turnId: 't-9', cwd: '/tmp', model: 'gpt-test', signal: new AbortController().signal };

  it('gives hooks the reason and detail and matches the reason; a required hook that fails only warns (nothing to refuse)', async () => {
    const seen: LifecycleHookInput[] = [];
    const ends: HookEndEvent[] = [];
    const engine = createHookEngine({
      config: { hooks: { Interrupt: [{ matcher: 'signal', hooks: [{ type: 'command', command: 'exit 9', required: true }] }] } },
      functionHooks: [
        { event: 'Interrupt', matcher: 'shutdown|signal', name: 'log', run: (input) => void seen.push(input as unknown as LifecycleHookInput) },
        { event: 'Interrupt', matcher: 'abort', name: 'abort-only', run: () => void seen.push({ hook_event_name: 'wrong' } as never) },
      ],
    });
    engine.on('hook-end', (event) => ends.push(event));
    const outcome = await engine.runInterrupt({ ...base, reason: 'signal', detail: 'user pressed Esc' });
    expect(outcome).toEqual({ blocked: false, additionalContexts: [], warnings: ['hook interrupt:0:<config:0>:t-9 failed: hook exited with code 9'] });
    expect(seen).toEqual([
      { session_id: 's-1', turn_id: 't-9', transcript_path: null, cwd: '/tmp', model: 'gpt-test', permission_mode: 'default', hook_event_name: 'Interrupt', reason: 'signal', detail: 'user pressed Esc' },
    ]);
    expect(ends.map((event) => `${event.event} ${event.runId} ${event.outcome}`).sort()).toEqual([
      'Interrupt interrupt:0:<config:0>:t-9 failed',
      'Interrupt interrupt:1:<function:log>:t-9 continue',
    ]);
    expect(await engine.runInterrupt({ ...base, reason: 'shutdown' })).toEqual({ blocked: false, additionalContexts: [], warnings: [] });
    expect(seen.at(-1)).toMatchObject({ reason: 'shutdown', detail: null });
  });
});
