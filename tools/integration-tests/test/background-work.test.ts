import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApprovalRequest, ModelRequest, ResponseItem } from '@switchyard/protocol';
import { createHookEngine } from '@switchyard/hooks';
import { createSession, type BackgroundCompleteEvent, type Session } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { execTools } from '@switchyard/tool-exec';
import { exec, say, texts } from './helpers';
import { callItem, outputsOf, useCleanups } from '@switchyard/test-helpers';

// Background work across packages: a process exec_command left running delivers its exit into the
// next turn without write_stdin, and a cell that outlived its turn dispatches its nested
// exec_command between turns through the session's hooks and approvals.

const { defer, scratch: scratchDir } = useCleanups();
const nextCompletion = (session: Session) => new Promise<BackgroundCompleteEvent>((resolve) => session.on('background-complete', resolve));

describe('background work across packages', () => {
  it('(c) an exec_command process that outlived its yield delivers its exit into the next turn once, with its process id', async () => {
    const dir = scratchDir('background-work');
    const tools = execTools({ processScope: 'session', sandbox: 'danger-full-access', background: true });
    const session = defer(createSession({ tools: [...tools], cwd: dir, background: true }), (session) => session.shutdown());
    const done = nextCompletion(session);
    const first = createScriptedModel([[callItem('cmd-1', 'exec_command', { cmd: 'sleep 0.6; echo migration-finished', yield_time_ms: 250 })], [say('running it')]]);
    await session.runTurn({ model: first, input: 'run the migration' });
    expect(texts(outputsOf(first.requests[1].input, 'cmd-1')[0]).join('')).toMatch(/Process running with session ID 1000/);
    expect(first.requests[0].tools.find((tool) => (tool as { name?: string }).name === 'exec_command')).toMatchObject({
      description: expect.stringContaining('you do not need to poll it with write_stdin'),
    });
    expect(await done).toEqual({ type: 'background-complete', callId: 'cmd-1', processId: 1000, status: 'completed', item: expect.objectContaining({ type: 'function_call_output', call_id: 'cmd-1' }) });

    const second = createScriptedModel([[callItem('poll-1', 'write_stdin', { session_id: 1000 })], [say('done')]]);
    await session.runTurn({ model: second, input: 'did it finish?' });
    const delivered = outputsOf(second.requests[0].input, 'cmd-1').map((item) => texts(item).join(''));
    expect(delivered).toHaveLength(2);
    expect(delivered[1]).toMatch(/Process exited with code 0\nOriginal token count: \d+\nOutput:\nmigration-finished\n?$/);
    // the exit was reported once: a poll afterwards finds no such process
    expect(texts(outputsOf(second.requests[1].input, 'poll-1')[0]).join('')).toBe('write_stdin failed: Unknown process id 1000');
    expect(session.history.filter((item) => texts(item).join('').includes('migration-finished'))).toHaveLength(1);
  });

  it('(d) a cell that outlived its turn runs its nested exec_command between turns through PreToolUse hooks and approvals', async () => {
    const dir = scratchDir('background-work');
    const hookLog = join(dir, 'hook.jsonl');
    const hooks = createHookEngine({ config: { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `cat >> "${hookLog}"; echo >> "${hookLog}"`, timeout: 30 }] }] } } });
    const asked: ApprovalRequest[] = [];
    const approvals = { requestApproval: async (request: ApprovalRequest) => (asked.push(request), 'approved' as const) };
    const session = defer(
      createSession({
        toolMode: 'code-mode-only',
        tools: [...execTools({ sandbox: 'danger-full-access', approvalPolicy: 'untrusted' })],
        cwd: dir,
        hooks,
        approvals,
        background: true,
        codeMode: { runtimeOptions: { isolation: 'in-process' } },
      }),
      (session) => session.shutdown(),
    );
    const done = nextCompletion(session);
    const turnEnds: number[] = [];
    session.on('turn-end', () => turnEnds.push(Date.now()));
    const cell = `// @exec: {"yield_time_ms": 50}\nawait new Promise((resolve) => setTimeout(resolve, 400));\nconst result = await tools.exec_command({ cmd: 'touch made-between-turns && echo wrote' });\ntext(result.output);`;
    await session.runTurn({ model: createScriptedModel([[exec('exec-1', cell)], [say('it will write the file')]]), input: 'write it later' });
    expect(existsSync(join(dir, 'made-between-turns'))).toBe(false);

    const completion = await done;
    const finished = Date.now();
    expect(completion).toMatchObject({ callId: 'exec-1', status: 'completed' });
    // no second turn ran: the nested call was dispatched between turns
    expect(turnEnds).toHaveLength(1);
    expect(turnEnds[0]).toBeLessThan(finished);
    expect(existsSync(join(dir, 'made-between-turns'))).toBe(true);
    expect(asked.map((request) => request.command)).toEqual(['touch made-between-turns && echo wrote']);
    const [stdin] = readFileSync(hookLog, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(stdin.caller).toEqual({ kind: 'code-mode', cell_id: completion.cellId, background: true });
    expect(stdin.turn_id).toMatch(/^background-/);

    const next = createScriptedModel([[say('the file is there')]]);
    await session.runTurn({ model: next, input: 'well?' });
    expect(outputsOf(next.requests[0].input, 'exec-1').map((item) => texts(item).join('\n')).filter((text) => text.includes('wrote'))).toHaveLength(1);
  });

  it('shutdown() ends a background cell and its nested call within its deadline, and nothing is delivered after', async () => {
    const dir = scratchDir('background-work');
    const session = createSession({ toolMode: 'code-mode-only', tools: [...execTools({ sandbox: 'danger-full-access', approvalPolicy: 'never' })], cwd: dir, background: true, codeMode: { runtimeOptions: { isolation: 'in-process' } } });
    const completions: BackgroundCompleteEvent[] = [];
    session.on('background-complete', (event) => completions.push(event));
    const cell = `// @exec: {"yield_time_ms": 50}\nawait tools.exec_command({ cmd: 'sleep 30', yield_time_ms: 30000 });`;
    await session.runTurn({ model: createScriptedModel([[exec('exec-1', cell)], [say('sleeping')]]), input: 'sleep' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await session.shutdown();
    expect(Date.now() - started).toBeLessThan(5_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(completions).toEqual([]);
  });
});
