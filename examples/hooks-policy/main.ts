/**
 * hooks-policy: a hooks.json policy that blocks any shell command containing `rm -rf` and appends
 * every call to a JSONL audit file, guarding the real `exec_command` through the session's router
 * and registry — for a direct call and for a nested call from a Code Mode cell. Asserts its own
 * outcome and exits 0.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHookEngine } from '@switchyard/hooks';
import { createSession } from '@switchyard/session';
import { execTools } from '@switchyard/tool-exec';

const here = dirname(fileURLToPath(import.meta.url));
const workspace = mkdtempSync(join(tmpdir(), 'hooks-policy-'));
const textOf = (output: unknown): string =>
  typeof output === 'string' ? output : (output as Array<{ text?: string }>).map((part) => part.text ?? '').join('');

try {
  const auditLog = join(workspace, '.audit', 'calls.jsonl');
  mkdirSync(dirname(auditLog));
  mkdirSync(join(workspace, 'important'));
  writeFileSync(join(workspace, 'important', 'keep.txt'), 'do not delete\n');

  // `node hooks/policy.mjs` runs in the folder of hooks.json, whatever the session cwd; the
  // PreToolUse handler is `required`, so a broken policy blocks calls instead of letting them by.
  const hooks = createHookEngine({ configFiles: [join(here, 'hooks.json')], env: { AUDIT_LOG: auditLog } });
  assert.deepEqual(hooks.warnings, []);
  // code-mode: exec_command stays a direct tool and is callable from cells too.
  const session = createSession({
    toolMode: 'code-mode',
    tools: execTools({ root: workspace, sandbox: 'danger-full-access', approvalPolicy: 'never' }),
    hooks,
    cwd: workspace,
    sessionId: 'demo-session',
  });
  const turn = session.beginTurn();
  const step = await turn.step();

  // 1. A direct call the policy allows: it runs, and both hooks audit it.
  const allowed = await step.dispatch({
    type: 'function_call',
    call_id: 'call-1',
    name: 'exec_command',
    arguments: JSON.stringify({ cmd: 'echo hello > greeting.txt && cat greeting.txt' }),
  });
  assert.equal(allowed.type, 'function_call_output');
  assert.match(textOf((allowed as { output: unknown }).output), /Process exited with code 0\n[\s\S]*Output:\nhello\n?$/);
  assert.equal(readFileSync(join(workspace, 'greeting.txt'), 'utf8'), 'hello\n');

  // 2. A direct call the policy denies: the model reads the reference block message; nothing runs.
  const blocked = await step.dispatch({ type: 'function_call', call_id: 'call-2', name: 'exec_command', arguments: JSON.stringify({ cmd: 'rm -rf important' }) });
  assert.equal(textOf((blocked as { output: unknown }).output), 'Command blocked by PreToolUse hook: recursive force-deletes are not allowed in this workspace. Command: rm -rf important');

  // 3. The same command from a Code Mode cell: the same registry, the same hook, and the cell can catch the refusal.
  const cell = await step.dispatch({
    type: 'custom_tool_call',
    call_id: 'call-3',
    name: 'exec',
    input: `try { await tools.exec_command({ cmd: 'rm -rf important' }); text('deleted'); } catch (error) { text('refused: ' + error); }`,
  });
  const cellTexts = ((cell as { output: unknown }).output as Array<{ text: string }>).map((part) => part.text);
  assert.match(cellTexts[0], /^Script completed\n/);
  assert.equal(cellTexts[1], 'refused: Command blocked by PreToolUse hook: recursive force-deletes are not allowed in this workspace. Command: rm -rf important');
  assert.ok(existsSync(join(workspace, 'important', 'keep.txt')), 'the blocked command must not have run');
  await turn.end();
  await session.shutdown();
  await hooks.close();

  const audit = readFileSync(auditLog, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  const nested = audit[3];
  assert.deepEqual(audit.slice(0, 3), [
    { event: 'PreToolUse', tool: 'Bash', command: 'echo hello > greeting.txt && cat greeting.txt', caller: { kind: 'direct' }, callId: 'call-1', decision: 'allow' },
    { event: 'PostToolUse', tool: 'Bash', command: 'echo hello > greeting.txt && cat greeting.txt', caller: { kind: 'direct' }, callId: 'call-1', decision: 'allow' },
    { event: 'PreToolUse', tool: 'Bash', command: 'rm -rf important', caller: { kind: 'direct' }, callId: 'call-2', decision: 'deny' },
  ]);
  assert.equal(audit.length, 4);
  assert.equal(nested.caller.kind, 'code-mode');
  assert.match(nested.caller.cell_id, /^[0-9a-z]{16}$/);
  assert.match(nested.callId, /^exec-/);
  assert.equal(nested.decision, 'deny');

  console.log(`allowed: ${JSON.stringify(textOf((allowed as { output: unknown }).output).split('Output:\n')[1])}`);
  console.log(`blocked: ${textOf((blocked as { output: unknown }).output)}`);
  console.log(`in a cell: ${cellTexts[1]}`);
  console.log(`audit:   ${audit.length} entries, the last from cell ${nested.caller.cell_id}`);
  console.log('hooks-policy: ok');
} finally {
  rmSync(workspace, { recursive: true, force: true });
}
