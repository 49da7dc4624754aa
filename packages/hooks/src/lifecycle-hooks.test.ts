import { describe, expect, it } from 'vitest';
import { commandHook } from '@switchyard/test-helpers';
import type { HookEndEvent } from '@switchyard/protocol';
import { createHookEngine } from './hook-engine';
import type { LifecycleHookInput } from './hook-payload';
import { engineFor } from '../test/helpers';

const base = { sessionId: 's-1', cwd: '/tmp', model: 'gpt-test', signal: new AbortController().signal };

describe('lifecycle events in the engine', () => {
  it('PermissionRequest: any deny wins over an allow; an allow alone approves; nothing decided is no verdict', async () => {
    const allow = commandHook(`echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'`, { timeout: 30 });
    const deny = commandHook('echo "not today" >&2; exit 2', { timeout: 30 });
    const request = { ...base, turnId: 't-1', toolName: 'deploy', toolInput: { env: 'prod' }, toolUseId: 'c-1' };
    expect(await engineFor('PermissionRequest', [{ hooks: [allow, deny] }]).runPermissionRequest(request)).toEqual({ decision: 'deny', message: 'not today', warnings: [] });
    expect(await engineFor('PermissionRequest', [{ hooks: [allow] }]).runPermissionRequest(request)).toEqual({ decision: 'allow', warnings: [] });
    expect(await engineFor('PermissionRequest', [{ matcher: 'other', hooks: [allow] }]).runPermissionRequest(request)).toEqual({ warnings: [] });
  });

  it('a required UserPromptSubmit hook that fails refuses the prompt, naming itself; a SessionStart failure only warns', async () => {
    const refused = await engineFor('UserPromptSubmit', [{ hooks: [commandHook('exit 7', { timeout: 30, required: true })] }]).runUserPromptSubmit({ ...base, turnId: 't-1', prompt: 'hi' });
    expect(refused).toMatchObject({ blocked: true, reason: 'required hook "exit 7" (<config:0>) failed: hook exited with code 7' });
    const engine = engineFor('SessionStart', [{ hooks: [commandHook('exit 7', { timeout: 30, required: true })] }]);
    const ends: HookEndEvent[] = [];
    engine.on('hook-end', (event) => ends.push(event));
    const started = await engine.runSessionStart({ ...base, source: 'startup' });
    expect(started).toEqual({ blocked: false, additionalContexts: [], warnings: ['hook session-start:0:<config:0>:s-1 failed: hook exited with code 7'] });
    expect(ends).toMatchObject([{ event: 'SessionStart', outcome: 'failed', error: 'hook exited with code 7', required: true, toolName: '' }]);
  });

  it('Stop: exit 2 with a reason, or decision block, asks to continue; a function hook reads the Stop input', async () => {
    const seen: LifecycleHookInput[] = [];
    const engine = createHookEngine({
      functionHooks: [{ event: 'Stop', name: 'tests', run: (input) => (seen.push(input as unknown as LifecycleHookInput), { decision: 'block', reason: 'run the tests' }) }],
    });
    const outcome = await engine.runStop({ ...base, turnId: 't-2', stopHookActive: false, lastAssistantMessage: 'done', transcriptPath: '/tmp/t.jsonl' });
    expect(outcome).toEqual({ blocked: true, reason: 'run the tests', additionalContexts: [], warnings: [] });
    expect(seen).toEqual([
      { session_id: 's-1', turn_id: 't-2', transcript_path: '/tmp/t.jsonl', cwd: '/tmp', model: 'gpt-test', permission_mode: 'default', hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'done' },
    ]);
    expect(await engineFor('Stop', [{ hooks: [commandHook('echo "keep going" >&2; exit 2', { timeout: 30 })] }]).runStop({ ...base, turnId: 't', stopHookActive: true })).toMatchObject({ blocked: true, reason: 'keep going' });
    // decision:block without a reason is a failure, not a continuation
    expect(await engineFor('Stop', [{ hooks: [commandHook(`echo '{"decision":"block"}'`, { timeout: 30 })] }]).runStop({ ...base, turnId: 't', stopHookActive: false })).toMatchObject({ blocked: false });
  });
});
