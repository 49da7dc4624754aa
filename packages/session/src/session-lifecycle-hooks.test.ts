import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalRequest, HookEndEvent, ResponseItem } from '@switchyard/protocol';
import { defineFreeformTool, defineFunctionTool } from '@switchyard/kit';
import { createHookEngine, type HooksConfig } from '@switchyard/hooks';
import { createScriptedModel } from './testing';
import { createSession } from './session';
import type { SessionWarningEvent } from './session-hooks';
import { callItem, say, useCleanups } from '@switchyard/test-helpers';

const { scratch } = useCleanups();
const command = (text: string) => ({ type: 'command' as const, command: text, timeout: 30 });
/** Every stdin a hook received, one JSON object per line of `file`. */
const stdins = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const contexts = (input: readonly ResponseItem[]) =>
  input.filter((item) => item.type === 'message' && item.role === 'developer').map((item) => (item as { content: string }).content);

function hookedSession(dir: string, config: HooksConfig, extra: Partial<Parameters<typeof createSession>[0]> = {}) {
  const hooks = createHookEngine({ config });
  return createSession({ tools: [], cwd: dir, hooks, sessionId: 'session-1', model: { name: 'gpt-test' }, transcriptPath: join(dir, 'transcript.jsonl'), ...extra });
}

describe('lifecycle hooks through a session', () => {
  it('SessionStart runs once before the first turn; its stdout is context for the first request', async () => {
    const dir = scratch('session-hooks');
    const log = join(dir, 'start.jsonl');
    const s = hookedSession(dir, { hooks: { SessionStart: [{ matcher: 'startup', hooks: [command(`cat >> "${log}"; echo >> "${log}"; echo "repo uses pnpm"`)] }] } });
    const model = createScriptedModel([[say('one')], [say('two')]]);
    await s.runTurn({ model, input: 'hello' });
    await s.runTurn({ model, input: 'again' });
    expect(stdins(log)).toEqual([
      { session_id: 'session-1', transcript_path: join(dir, 'transcript.jsonl'), cwd: dir, model: 'gpt-test', permission_mode: 'default', hook_event_name: 'SessionStart', source: 'startup' },
    ]);
    expect(contexts(model.requests[0].input)).toEqual(['<hook_context>repo uses pnpm</hook_context>']);
    expect(contexts(model.requests[1].input)).toEqual(['<hook_context>repo uses pnpm</hook_context>']);
    await s.shutdown();
  });

  it('UserPromptSubmit blocks a prompt (nothing is sent or recorded) or adds context', async () => {
    const dir = scratch('session-hooks');
    const log = join(dir, 'prompt.jsonl');
    const policy = `cat > "${dir}/in.json"; cat "${dir}/in.json" >> "${log}"; echo >> "${log}"; if grep -q password "${dir}/in.json"; then echo "no secrets in prompts" >&2; exit 2; fi; echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"be brief"}}'`;
    const s = hookedSession(dir, { hooks: { UserPromptSubmit: [{ hooks: [command(policy)] }] } });
    const model = createScriptedModel([[say('ok')]]);
    const blocked = await s.runTurn({ model, input: 'my password is hunter2' });
    expect(blocked).toEqual({ items: [], steps: 0, promptBlocked: 'no secrets in prompts' });
    expect(model.requests).toHaveLength(0);
    expect(s.history).toEqual([]);
    const allowed = await s.runTurn({ model, input: 'list files' });
    expect(allowed.finalText).toBe('ok');
    expect(contexts(model.requests[0].input)).toEqual(['<hook_context>be brief</hook_context>']);
    const [first, second] = stdins(log);
    expect(first).toMatchObject({ hook_event_name: 'UserPromptSubmit', prompt: 'my password is hunter2', session_id: 'session-1', cwd: dir });
    expect(typeof second.turn_id).toBe('string');
    await s.shutdown();
  });

  it('Stop may ask the loop to continue; the next Stop run knows (stop_hook_active)', async () => {
    const dir = scratch('session-hooks');
    const log = join(dir, 'stop.jsonl');
    const gate = `cat > "${dir}/in.json"; cat "${dir}/in.json" >> "${log}"; echo >> "${log}"; grep -q '"stop_hook_active":false' "${dir}/in.json" && { echo '{"decision":"block","reason":"run the tests first"}'; exit 0; }; exit 0`;
    const s = hookedSession(dir, { hooks: { Stop: [{ hooks: [command(gate)] }] } });
    const model = createScriptedModel([[say('done')], [say('tests pass')]]);
    const result = await s.runTurn({ model, input: 'fix it' });
    expect(result.steps).toBe(2);
    expect(result.finalText).toBe('tests pass');
    expect(model.requests[1].input.at(-1)).toEqual({ type: 'message', role: 'user', content: 'run the tests first' });
    expect(stdins(log).map((input) => [input.hook_event_name, input.stop_hook_active, input.last_assistant_message])).toEqual([
      ['Stop', false, 'done'],
      ['Stop', true, 'tests pass'],
    ]);
    await s.shutdown();
  });

  it('SessionEnd runs at shutdown', async () => {
    const dir = scratch('session-hooks');
    const log = join(dir, 'end.jsonl');
    const s = hookedSession(dir, { hooks: { SessionEnd: [{ hooks: [command(`cat > "${log}"`)] }] } });
    await s.runTurn({ model: createScriptedModel([[say('hi')]]), input: 'hi' });
    await s.shutdown();
    expect(JSON.parse(readFileSync(log, 'utf8'))).toMatchObject({ hook_event_name: 'SessionEnd', reason: 'shutdown', session_id: 'session-1' });
  });
});

describe('PermissionRequest hooks answer through the session approval provider', () => {
  const ran: string[] = [];
  const guarded = defineFunctionTool({ name: 'deploy', description: 'Deploys.', parameters: { type: 'object' }, needsApproval: true, handle: ({ args }) => (ran.push(JSON.stringify(args)), 'deployed') });
  const output = (items: readonly ResponseItem[]) => (items.find((item) => item.type === 'function_call_output') as { output: string }).output;

  for (const [verdict, expected] of [
    ['allow', 'deployed'],
    ['deny', 'deploy rejected by user'],
  ] as const) {
    it(`${verdict}: decided by the hook, the host provider is never asked`, async () => {
      ran.length = 0;
      const dir = scratch('session-hooks');
      const asked: ApprovalRequest[] = [];
      const answer = verdict === 'allow' ? '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}' : '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not on fridays"}}}';
      const s = hookedSession(
        dir,
        { hooks: { PermissionRequest: [{ matcher: 'deploy', hooks: [command(`cat > "${dir}/in.json"; echo '${answer}'`)] }] } },
        { tools: [guarded], approvals: { requestApproval: async (request) => (asked.push(request), 'approved') } },
      );
      const result = await s.runTurn({ model: createScriptedModel([[callItem('c1', 'deploy', { env: 'prod' })], [say('ok')]]), input: 'ship it' });
      expect(output(result.items)).toBe(expected);
      expect(ran).toEqual(verdict === 'allow' ? ['{"env":"prod"}'] : []);
      expect(asked).toEqual([]);
      expect(JSON.parse(readFileSync(join(dir, 'in.json'), 'utf8'))).toMatchObject({ hook_event_name: 'PermissionRequest', tool_name: 'deploy', tool_input: { env: 'prod' }, tool_use_id: 'c1' });
      await s.shutdown();
    });
  }

  it('no verdict: the host provider decides', async () => {
    ran.length = 0;
    const dir = scratch('session-hooks');
    const asked: string[] = [];
    const s = hookedSession(dir, { hooks: { PermissionRequest: [{ hooks: [command('exit 0')] }] } }, { tools: [guarded], approvals: { requestApproval: async (request) => (asked.push(request.callId), 'denied') } });
    const result = await s.runTurn({ model: createScriptedModel([[callItem('c2', 'deploy', {})], [say('ok')]]), input: 'ship it' });
    expect(output(result.items)).toBe('deploy rejected by user');
    expect(asked).toEqual(['c2']);
    await s.shutdown();
  });
});

describe('hook runs are session events', () => {
  it('hook-end reaches session.on for a hook that could not start; a failing hook warns once per hook', async () => {
    const dir = scratch('session-hooks');
    const echo = defineFunctionTool({ name: 'echo', description: 'Echoes.', parameters: { type: 'object' }, handle: () => 'echoed' });
    const hooks = createHookEngine({ shell: join(dir, 'no-such-shell'), config: { hooks: { PreToolUse: [{ hooks: [command('true')] }] } } });
    const s = createSession({ tools: [echo], cwd: dir, hooks });
    const ends: HookEndEvent[] = [];
    const warnings: SessionWarningEvent[] = [];
    s.on('hook-end', (event) => ends.push(event));
    s.on('warning', (event) => warnings.push(event));
    await s.runTurn({ model: createScriptedModel([[callItem('a', 'echo', {}), callItem('b', 'echo', {})], [say('ok')]]), input: 'go' });
    expect(ends.map((event) => [event.outcome, event.required])).toEqual([
      ['failed', false],
      ['failed', false],
    ]);
    expect(ends[0].error).toMatch(/^failed to spawn hook: /);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].message).toMatch(/^PreToolUse hook "true" \(<config:0>\) failed and did not block: failed to spawn hook: /);
    await s.shutdown();
  });
});

describe('a matcher naming a freeform tool', () => {
  it('fires: the hook reads { input } and its block is what the model sees', async () => {
    const dir = scratch('session-hooks');
    const ran: string[] = [];
    const sql = defineFreeformTool({ name: 'sql', description: 'Runs SQL.', handle: ({ input }) => (ran.push(input), 'ok') });
    const guard = `cat > "${dir}/in.json"; grep -q DROP "${dir}/in.json" && { echo "no DROP" >&2; exit 2; }; exit 0`;
    const s = hookedSession(dir, { hooks: { PreToolUse: [{ matcher: 'sql', hooks: [command(guard)] }] } }, { tools: [sql] });
    const model = createScriptedModel([
      [{ type: 'custom_tool_call', call_id: 'q1', name: 'sql', input: 'DROP TABLE users' }, { type: 'custom_tool_call', call_id: 'q2', name: 'sql', input: 'SELECT 1' }],
      [say('ok')],
    ]);
    const result = await s.runTurn({ model, input: 'clean up' });
    const outputs = result.items.filter((item) => item.type === 'custom_tool_call_output').map((item) => (item as { output: string }).output);
    expect(outputs).toEqual(['Tool call blocked by PreToolUse hook: no DROP. Tool: sql', 'ok']);
    expect(ran).toEqual(['SELECT 1']);
    expect(JSON.parse(readFileSync(join(dir, 'in.json'), 'utf8'))).toMatchObject({ tool_name: 'sql', tool_input: { input: 'SELECT 1' } });
    await s.shutdown();
  });
});

describe('tool setup checks at creation', () => {
  it("each distinct checkSetup runs once with the session's cwd and sandbox mode; its problems are warning events", async () => {
    const dir = scratch('session-hooks');
    const seen: unknown[] = [];
    const checkSetup = async (context: unknown) => (seen.push(context), ['exec_command cannot run commands in the "workspace-write" sandbox on this machine']);
    const tool = defineFunctionTool({ name: 'run', description: 'Runs.', parameters: { type: 'object' }, handle: () => 'ran' });
    const s = createSession({ tools: [{ ...tool, checkSetup }, { ...tool, name: { name: 'run2' } as never, checkSetup }], cwd: dir, sandboxMode: 'workspace-write' });
    const warnings: SessionWarningEvent[] = [];
    s.on('warning', (event) => warnings.push(event));
    for (let wait = 0; wait < 100 && warnings.length === 0; wait++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(warnings).toEqual([{ type: 'warning', source: 'tools', message: 'exec_command cannot run commands in the "workspace-write" sandbox on this machine' }]);
    expect(seen).toEqual([{ cwd: dir, sandboxMode: 'workspace-write' }]);
    await s.shutdown();
  });
});

describe('without PermissionRequest handlers', () => {
  it('the step keeps the host provider as is: no provider still reads "no approval provider is configured"', async () => {
    const dir = scratch('session-hooks');
    const guarded = defineFunctionTool({ name: 'deploy', description: 'Deploys.', parameters: { type: 'object' }, needsApproval: true, handle: () => 'deployed' });
    const s = hookedSession(dir, { hooks: { PreToolUse: [] } }, { tools: [guarded] });
    const result = await s.runTurn({ model: createScriptedModel([[callItem('c3', 'deploy', {})], [say('ok')]]), input: 'ship it' });
    expect((result.items.find((item) => item.type === 'function_call_output') as { output: string }).output).toBe('deploy needs approval, and no approval provider is configured');
    await s.shutdown();
  });
});
