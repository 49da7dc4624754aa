import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commandHook } from '@switchyard/test-helpers';
import type { HookEndEvent } from '@switchyard/protocol';
import { createHookEngine } from './hook-engine';
import { POST0, RUN0, engineFor, hook, postRequest, preRequest, recordEvents, useScratch } from '../test/helpers';

const tmp = useScratch();

describe('hook stdin payload', () => {
  it('writes the PreToolUse payload plus caller to stdin and runs in the session cwd', async () => {
    const dir = tmp();
    const script = dir.script('capture.sh', `cat > "${dir.path('stdin.json')}"\npwd > "${dir.path('cwd.txt')}"`);
    const engine = engineFor('PreToolUse', [{ matcher: 'apply_patch', hooks: [commandHook(script)] }]);
    const outcome = await engine.runPreToolUse(
      preRequest({ toolName: 'apply_patch', aliases: ['Write', 'Edit'], toolInput: { command: '*** Begin Patch' }, cwd: dir.dir }),
    );
    expect(outcome).toEqual({ blocked: false, additionalContexts: [], warnings: [] });
    expect(readFileSync(dir.path('stdin.json'), 'utf8')).toBe(
      JSON.stringify({
        session_id: 'session-9',
        turn_id: 'turn-3',
        transcript_path: null,
        cwd: dir.dir,
        hook_event_name: 'PreToolUse',
        model: 'gpt-test',
        permission_mode: 'default',
        tool_name: 'apply_patch',
        tool_input: { command: '*** Begin Patch' },
        tool_use_id: 'call-1',
        caller: { kind: 'direct' },
      }),
    );
    expect(readFileSync(dir.path('cwd.txt'), 'utf8').trim()).toBe(dir.dir);
  });

  it('carries the code-mode caller, the approval policy and the tool response on PostToolUse', async () => {
    const dir = tmp();
    const script = dir.script('capture.sh', `cat > "${dir.path('stdin.json')}"`);
    const engine = engineFor('PostToolUse', [{ hooks: [commandHook(script)] }]);
    const request = postRequest({ cwd: dir.dir, caller: { kind: 'code-mode', cell_id: 'cell-7' }, toolResponse: { tempC: 21 } });
    await engine.runPostToolUse({ ...request, step: { ...request.step, approvalPolicy: 'on-request' } });
    const payload = JSON.parse(readFileSync(dir.path('stdin.json'), 'utf8'));
    expect(payload.hook_event_name).toBe('PostToolUse');
    expect(payload.caller).toEqual({ kind: 'code-mode', cell_id: 'cell-7' });
    expect(payload.permission_mode).toBe('on-request');
    expect(payload.tool_response).toEqual({ tempC: 21 });
    expect(Object.keys(payload)).toEqual([
      'session_id',
      'turn_id',
      'transcript_path',
      'cwd',
      'hook_event_name',
      'model',
      'permission_mode',
      'tool_name',
      'tool_input',
      'tool_use_id',
      'caller',
      'tool_response',
    ]);
  });

  it('uses $SHELL -lc by default', async () => {
    const dir = tmp();
    const previous = process.env.SHELL;
    process.env.SHELL = '/bin/sh';
    try {
      const engine = createHookEngine({ config: { hooks: { PreToolUse: [{ hooks: [commandHook(`echo "$0" > "${dir.path('shell.txt')}"`)] }] } } });
      await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    } finally {
      process.env.SHELL = previous;
    }
    expect(readFileSync(dir.path('shell.txt'), 'utf8').trim()).toBe('/bin/sh');
  });
});

describe('matchers with real command hooks', () => {
  const table: Array<[label: string, matcher: string | undefined]> = [
    ['absent', undefined],
    ['empty', ''],
    ['star', '*'],
    ['exact', 'Bash'],
    ['alternatives', 'Edit|Bash'],
    ['longer', 'BashOutput'],
    ['regex', '^Bash'],
    ['server', 'mcp__memory'],
    ['server-regex', 'mcp__memory__.*'],
    ['alias', 'Write'],
    ['patch-and-aliases', 'apply_patch|Write|Edit'],
    ['invalid', '['],
  ];

  async function ran(toolName: string, aliases: string[] = []) {
    const dir = tmp();
    const log = dir.path('ran.txt');
    writeFileSync(log, '');
    const groups = table.map(([label, matcher]) => ({ matcher, hooks: [commandHook(`echo ${label} >> "${log}"`)] }));
    const engine = engineFor('PreToolUse', groups);
    await engine.runPreToolUse(preRequest({ toolName, aliases, cwd: dir.dir }));
    return { ran: readFileSync(log, 'utf8').split('\n').filter(Boolean).sort(), warnings: engine.warnings };
  }

  it('Bash: match-all, exact, alternatives and unanchored regex; not BashOutput', async () => {
    expect((await ran('Bash')).ran).toEqual(['absent', 'alternatives', 'empty', 'exact', 'regex', 'star'].sort());
  });

  it('BashOutput: an exact "Bash" does not match it, "^Bash" does', async () => {
    expect((await ran('BashOutput')).ran).toEqual(['absent', 'empty', 'longer', 'regex', 'star'].sort());
  });

  it('mcp__memory__create_entities: "mcp__memory" is exact and does not match, the regex does', async () => {
    expect((await ran('mcp__memory__create_entities')).ran).toEqual(['absent', 'empty', 'server-regex', 'star'].sort());
  });

  it('apply_patch with aliases: aliases match, a handler matching several names runs once', async () => {
    // "Edit|Bash" matches through the Edit alias; "apply_patch|Write|Edit" matches all three names and runs once.
    expect((await ran('apply_patch', ['Write', 'Edit'])).ran).toEqual(['absent', 'alias', 'alternatives', 'empty', 'patch-and-aliases', 'star'].sort());
  });

  it('an invalid regex skips its group with a warning', async () => {
    const { warnings } = await ran('Bash');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^invalid matcher "\[" in <config:0>: /);
  });
});

describe('PreToolUse decisions, one command hook each', () => {
  type Row = {
    name: string;
    stdout?: string;
    stderr?: string;
    code?: number;
    blocked?: boolean;
    reason?: string;
    updatedInput?: unknown;
    contexts?: string[];
    failure?: string;
    warning?: string;
    outcome: HookEndEvent['outcome'];
  };
  const rows: Row[] = [
    { name: 'exit 0, empty stdout → continue', outcome: 'continue' },
    { name: 'plain text stdout → ignored', stdout: 'looks fine to me', outcome: 'continue' },
    { name: 'JSON-looking invalid stdout → fail open', stdout: '{"decision": ', failure: 'hook returned invalid pre-tool-use JSON output', outcome: 'failed' },
    { name: 'a JSON array → fail open', stdout: '[1, 2]', failure: 'hook returned invalid pre-tool-use JSON output', outcome: 'failed' },
    { name: 'a field of the wrong type → fail open', stdout: '{"hookSpecificOutput":{"permissionDecision":"maybe"}}', failure: 'hook returned invalid pre-tool-use JSON output', outcome: 'failed' },
    {
      name: 'deny with a reason → block',
      stdout: '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":" no rm "}}',
      blocked: true,
      reason: 'no rm',
      outcome: 'block',
    },
    {
      name: 'deny without a reason → fail open',
      stdout: '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"  "}}',
      failure: 'PreToolUse hook returned permissionDecision:deny without a non-empty permissionDecisionReason',
      outcome: 'failed',
    },
    {
      name: 'allow with updatedInput → rewrite',
      stdout: '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"echo safe"}}}',
      updatedInput: { command: 'echo safe' },
      outcome: 'rewrite',
    },
    {
      name: 'allow alone → fail open',
      stdout: '{"hookSpecificOutput":{"permissionDecision":"allow"}}',
      failure: 'PreToolUse hook returned unsupported permissionDecision:allow',
      outcome: 'failed',
    },
    {
      name: 'ask without an approval provider → fail open',
      stdout: '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"sure?"}}',
      failure: 'PreToolUse hook returned unsupported permissionDecision:ask',
      outcome: 'failed',
    },
    {
      name: 'updatedInput without allow → fail open',
      stdout: '{"hookSpecificOutput":{"updatedInput":{"command":"x"}}}',
      failure: 'PreToolUse hook returned updatedInput without permissionDecision:allow',
      outcome: 'failed',
    },
    {
      name: 'a reason without a decision → fail open',
      stdout: '{"hookSpecificOutput":{"permissionDecisionReason":"because"}}',
      failure: 'PreToolUse hook returned permissionDecisionReason without permissionDecision',
      outcome: 'failed',
    },
    { name: 'legacy decision:block → block', stdout: '{"decision":"block","reason":"legacy says no"}', blocked: true, reason: 'legacy says no', outcome: 'block' },
    { name: 'legacy decision:approve → fail open', stdout: '{"decision":"approve"}', failure: 'PreToolUse hook returned unsupported decision:approve', outcome: 'failed' },
    {
      name: 'legacy block without a reason → fail open',
      stdout: '{"decision":"block"}',
      failure: 'PreToolUse hook returned decision:block without a non-empty reason',
      outcome: 'failed',
    },
    { name: 'legacy reason without decision → fail open', stdout: '{"reason":"hm"}', failure: 'PreToolUse hook returned reason without decision', outcome: 'failed' },
    { name: 'continue:false → fail open', stdout: '{"continue":false}', failure: 'PreToolUse hook returned unsupported continue:false', outcome: 'failed' },
    { name: 'stopReason → fail open', stdout: '{"stopReason":"halt"}', failure: 'PreToolUse hook returned unsupported stopReason', outcome: 'failed' },
    { name: 'suppressOutput → fail open', stdout: '{"suppressOutput":true}', failure: 'PreToolUse hook returned unsupported suppressOutput', outcome: 'failed' },
    {
      name: 'additionalContext is recorded even when blocking',
      stdout: '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no","additionalContext":"policy v2"}}',
      blocked: true,
      reason: 'no',
      contexts: ['policy v2'],
      outcome: 'block',
    },
    { name: 'systemMessage → a warning', stdout: '{"systemMessage":"heads up"}', warning: 'heads up', outcome: 'continue' },
    { name: 'exit 2 → block with trimmed stderr', stderr: '  not on my watch  ', code: 2, blocked: true, reason: 'not on my watch', outcome: 'block' },
    {
      name: 'exit 2 without stderr → fail open',
      code: 2,
      failure: 'PreToolUse hook exited with code 2 but did not write a blocking reason to stderr',
      outcome: 'failed',
    },
    { name: 'exit 1 → fail open', stdout: '{"decision":"block","reason":"ignored"}', code: 1, failure: 'hook exited with code 1', outcome: 'failed' },
    { name: 'exit 127 → fail open', code: 127, failure: 'hook exited with code 127', outcome: 'failed' },
  ];

  for (const row of rows) {
    it(row.name, async () => {
      const dir = tmp();
      const engine = engineFor('PreToolUse', [{ matcher: 'Bash', hooks: [commandHook(hook(dir, row))] }]);
      const { ends } = recordEvents(engine);
      const outcome = await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
      expect(outcome.blocked).toBe(row.blocked ?? false);
      expect(outcome.reason).toBe(row.reason);
      expect(outcome.updatedInput).toEqual(row.updatedInput);
      expect(outcome.additionalContexts).toEqual(row.contexts ?? []);
      const expectedWarnings = [...(row.warning ? [row.warning] : []), ...(row.failure ? [RUN0 + row.failure] : [])];
      expect(outcome.warnings).toEqual(expectedWarnings);
      expect(ends.map((event) => event.outcome)).toEqual([row.outcome]);
    });
  }

  it('a hook killed by a signal fails open', async () => {
    const dir = tmp();
    const engine = engineFor('PreToolUse', [{ hooks: [commandHook('kill -9 $$')] }]);
    const outcome = await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(outcome).toEqual({ blocked: false, additionalContexts: [], warnings: [`${RUN0}hook exited without a status code`] });
  });

  it('a missing command file fails open', async () => {
    const dir = tmp();
    const engine = engineFor('PreToolUse', [{ hooks: [commandHook(dir.path('missing-hook.sh'))] }]);
    const outcome = await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(outcome).toEqual({ blocked: false, additionalContexts: [], warnings: [`${RUN0}hook exited with code 127`] });
  });
});

describe('PostToolUse decisions', () => {
  type Row = { name: string; stdout?: string; stderr?: string; code?: number; feedback?: string; stop?: boolean; contexts?: string[]; failure?: string; warning?: string; outcome: HookEndEvent['outcome'] };
  const rows: Row[] = [
    { name: 'empty stdout → nothing', outcome: 'continue' },
    { name: 'decision:block with a reason → feedback', stdout: '{"decision":"block","reason":"output looked sketchy"}', feedback: 'output looked sketchy', outcome: 'feedback' },
    {
      name: 'block without a reason → fail open',
      stdout: '{"decision":"block","reason":""}',
      failure: 'PostToolUse hook returned decision:block without a non-empty reason',
      outcome: 'failed',
    },
    { name: 'a reason without a decision → fail open', stdout: '{"reason":"x"}', failure: 'PostToolUse hook returned reason without decision', outcome: 'failed' },
    { name: 'continue:false with a reason → stop with the reason', stdout: '{"continue":false,"reason":"stop now","stopReason":"sr"}', feedback: 'stop now', stop: true, outcome: 'stop' },
    { name: 'continue:false with a stopReason → stop with it', stdout: '{"continue":false,"stopReason":"enough"}', feedback: 'enough', stop: true, outcome: 'stop' },
    { name: 'continue:false alone → the default stop text', stdout: '{"continue":false}', feedback: 'PostToolUse hook stopped execution', stop: true, outcome: 'stop' },
    { name: 'additionalContext → recorded', stdout: '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"remember this"}}', contexts: ['remember this'], outcome: 'continue' },
    { name: 'suppressOutput → fail open', stdout: '{"suppressOutput":true}', failure: 'PostToolUse hook returned unsupported suppressOutput', outcome: 'failed' },
    {
      name: 'updatedMCPToolOutput → not supported, ignored',
      stdout: '{"hookSpecificOutput":{"updatedMCPToolOutput":{"ok":true}}}',
      warning: 'PostToolUse hook returned unsupported updatedMCPToolOutput (ignored)',
      outcome: 'continue',
    },
    { name: 'invalid JSON → fail open', stdout: '{oops', failure: 'hook returned invalid post-tool-use JSON output', outcome: 'failed' },
    { name: 'exit 2 → feedback from stderr', stderr: 'tests failed after this edit\n', code: 2, feedback: 'tests failed after this edit', outcome: 'feedback' },
    { name: 'exit 2 without stderr → fail open', code: 2, failure: 'PostToolUse hook exited with code 2 but did not write feedback to stderr', outcome: 'failed' },
    { name: 'exit 3 → fail open', code: 3, failure: 'hook exited with code 3', outcome: 'failed' },
  ];

  for (const row of rows) {
    it(row.name, async () => {
      const dir = tmp();
      const engine = engineFor('PostToolUse', [{ hooks: [commandHook(hook(dir, row))] }]);
      const { ends } = recordEvents(engine);
      const outcome = await engine.runPostToolUse(postRequest({ cwd: dir.dir }));
      expect(outcome.feedback).toBe(row.feedback);
      expect(outcome.stop).toBe(row.stop);
      expect(outcome.additionalContexts).toEqual(row.contexts ?? []);
      expect(outcome.warnings).toEqual([...(row.warning ? [row.warning] : []), ...(row.failure ? [POST0 + row.failure] : [])]);
      expect(ends.map((event) => event.outcome)).toEqual([row.outcome]);
    });
  }

  it('feedback from several hooks is joined with a blank line in configured order', async () => {
    const dir = tmp();
    const slow = hook(dir, { before: 'sleep 0.4', stdout: '{"decision":"block","reason":"first"}' });
    const fast = hook(dir, { stderr: 'second', code: 2 });
    const engine = engineFor('PostToolUse', [{ hooks: [commandHook(slow), commandHook(fast)] }]);
    const outcome = await engine.runPostToolUse(postRequest({ cwd: dir.dir }));
    expect(outcome.feedback).toBe('first\n\nsecond');
  });
});

describe('aggregation and concurrency', () => {
  const deny = (reason: string) => JSON.stringify({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: reason } });
  const rewrite = (commandText: string) => JSON.stringify({ hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { command: commandText } } });
  const context = (text: string) => JSON.stringify({ hookSpecificOutput: { additionalContext: text } });

  it('blocks when any hook blocks, with the reason of the first blocking hook in configured order', async () => {
    const dir = tmp();
    const engine = engineFor('PreToolUse', [
      { hooks: [commandHook(hook(dir, { stdout: context('ctx one') }))] },
      { hooks: [commandHook(hook(dir, { before: 'sleep 0.6', stdout: deny('slow but first') }))] },
      { hooks: [commandHook(hook(dir, { stderr: 'fast but second', code: 2 }))] },
      { hooks: [commandHook(hook(dir, { stdout: rewrite('echo rewritten') }))] },
    ]);
    const outcome = await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(outcome).toEqual({ blocked: true, reason: 'slow but first', additionalContexts: ['ctx one'], warnings: [] });
  });

  it('takes the updated input from the hook that finished last, not the last configured', async () => {
    const dir = tmp();
    const slowFirst = engineFor('PreToolUse', [
      { hooks: [commandHook(hook(dir, { before: 'sleep 0.6', stdout: rewrite('from the slow first hook') }))] },
      { hooks: [commandHook(hook(dir, { stdout: rewrite('from the fast second hook') }))] },
    ]);
    expect((await slowFirst.runPreToolUse(preRequest({ cwd: dir.dir }))).updatedInput).toEqual({ command: 'from the slow first hook' });

    const slowSecond = engineFor('PreToolUse', [
      { hooks: [commandHook(hook(dir, { stdout: rewrite('from the fast first hook') }))] },
      { hooks: [commandHook(hook(dir, { before: 'sleep 0.6', stdout: rewrite('from the slow second hook') }))] },
    ]);
    expect((await slowSecond.runPreToolUse(preRequest({ cwd: dir.dir }))).updatedInput).toEqual({ command: 'from the slow second hook' });
  });

  it('collects additional context from every hook in configured order', async () => {
    const dir = tmp();
    const engine = engineFor('PreToolUse', [
      { hooks: [commandHook(hook(dir, { before: 'sleep 0.4', stdout: context('one') })), commandHook(hook(dir, { stdout: context('two') }))] },
      { hooks: [commandHook(hook(dir, { stdout: context('three') }))] },
    ]);
    expect((await engine.runPreToolUse(preRequest({ cwd: dir.dir }))).additionalContexts).toEqual(['one', 'two', 'three']);
  });

  it('runs the hooks of one event concurrently', async () => {
    const dir = tmp();
    const sleeper = hook(dir, { before: 'sleep 1' });
    const engine = engineFor('PreToolUse', [{ hooks: [commandHook(sleeper), commandHook(sleeper), commandHook(sleeper), commandHook(sleeper)] }]);
    const started = performance.now();
    await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    // Four one-second hooks one after another would take four seconds.
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe('events', () => {
  it('emits hook-start and hook-end with the run id and the outcome', async () => {
    const dir = tmp();
    const file = dir.path('hooks.json');
    writeFileSync(
      file,
      JSON.stringify({
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [commandHook('true'), commandHook('echo no >&2; exit 2')] }],
          PostToolUse: [{ hooks: [commandHook('true')] }],
        },
      }),
    );
    const engine = createHookEngine({ shell: '/bin/sh', configFiles: [file] });
    const { starts, ends } = recordEvents(engine);
    await engine.runPreToolUse(preRequest({ cwd: dir.dir, toolUseId: 'tool-call-123' }));
    expect(starts.map((event) => event.runId).sort()).toEqual([`pre-tool-use:0:${file}:tool-call-123`, `pre-tool-use:1:${file}:tool-call-123`]);
    expect(starts.every((event) => event.event === 'PreToolUse' && event.toolName === 'Bash')).toBe(true);
    const byRun = Object.fromEntries(ends.map((event) => [event.runId, event]));
    expect(byRun[`pre-tool-use:0:${file}:tool-call-123`]).toMatchObject({ type: 'hook-end', outcome: 'continue' });
    expect(byRun[`pre-tool-use:1:${file}:tool-call-123`]).toMatchObject({ type: 'hook-end', outcome: 'block', message: 'no' });
    expect(ends.every((event) => event.durationMs >= 0)).toBe(true);

    await engine.runPostToolUse(postRequest({ cwd: dir.dir, toolUseId: 'tool-call-123' }));
    expect(ends.at(-1)).toMatchObject({ runId: `post-tool-use:2:${file}:tool-call-123`, event: 'PostToolUse', outcome: 'continue' });
  });

  it('unsubscribes, and a throwing listener never breaks a run: it is reported as a SWITCHYARD_LISTENER warning', async () => {
    const dir = tmp();
    const engine = engineFor('PreToolUse', [{ hooks: [commandHook('echo nope >&2; exit 2')] }]);
    let calls = 0;
    const off = engine.on('hook-end', () => {
      calls += 1;
    });
    const marker = `listener bug ${Math.random()}`;
    engine.on('hook-start', () => {
      throw new Error(marker);
    });
    const warnings: Array<{ code?: string; message: string }> = [];
    const onWarning = (warning: Error & { code?: string }) => warnings.push({ code: warning.code, message: warning.message });
    process.on('warning', onWarning);
    try {
      expect((await engine.runPreToolUse(preRequest({ cwd: dir.dir }))).blocked).toBe(true);
      off();
      await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(calls).toBe(1);
    expect(warnings).toContainEqual({ code: 'SWITCHYARD_LISTENER', message: `a hooks listener for "hook-start" threw: ${marker}` });
  });
});
