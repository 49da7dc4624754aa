/**
 * hooks-policy: a hooks.json policy that blocks any shell command containing `rm -rf` and appends
 * every call to a JSONL audit file. Asserts its own outcome and exits 0.
 *
 * Until the registry wires hooks in, `callTool` below plays the registry's part (reference §3.4):
 * PreToolUse → block or run the handler → PostToolUse.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHookEngine } from '@switchyard/hooks';
import {
  createStepContext,
  defineFunctionTool,
  hookCaller,
  isJsonObject,
  type HookRunner,
  type StepContext,
  type ToolCallSource,
  type ToolExecutor,
  type ToolPayload,
} from '@switchyard/protocol';

const here = dirname(fileURLToPath(import.meta.url));

/** A small stand-in for `exec_command`: runs `cmd` with /bin/sh in the workspace. Hooks see it as `Bash`. */
const execCommand = defineFunctionTool<{ cmd: string }>({
  name: 'exec_command',
  description: 'Runs a shell command in the workspace and returns its output.',
  parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  hookPayload: {
    pre: (invocation) => ({ toolName: 'Bash', toolInput: { command: commandOf(invocation.payload) } }),
    post: (invocation, output) => ({
      input: { toolName: 'Bash', toolInput: { command: commandOf(invocation.payload) } },
      response: output.codeModeResult(invocation.payload),
    }),
  },
  handle: ({ args, signal, invocation }) =>
    new Promise<string>((resolve, reject) => {
      execFile('/bin/sh', ['-c', args.cmd], { cwd: invocation.step.cwd, signal }, (error, stdout, stderr) =>
        error ? reject(new Error(stderr || error.message)) : resolve(stdout),
      );
    }),
});

function commandOf(payload: ToolPayload): string {
  const args: unknown = payload.kind === 'function' ? JSON.parse(payload.arguments || '{}') : {};
  return isJsonObject(args) && typeof args.cmd === 'string' ? args.cmd : '';
}

/** What the model would read back for one call. */
interface CallResult {
  output: string;
  blocked: boolean;
}

async function callTool(hooks: HookRunner, tool: ToolExecutor, step: StepContext, callId: string, args: object, source: ToolCallSource): Promise<CallResult> {
  const signal = new AbortController().signal;
  const invocation = { callId, toolName: tool.name, source, payload: { kind: 'function' as const, arguments: JSON.stringify(args) }, signal, step };
  const adapter = tool.hookPayload || undefined;
  const pre = adapter?.pre?.(invocation);
  if (pre) {
    const outcome = await hooks.runPreToolUse({ ...pre, toolUseId: callId, caller: hookCaller(source), step, signal });
    if (outcome.blocked) {
      const command = isJsonObject(pre.toolInput) ? pre.toolInput.command : undefined;
      const output =
        pre.toolName === 'Bash' && typeof command === 'string'
          ? `Command blocked by PreToolUse hook: ${outcome.reason}. Command: ${command}`
          : `Tool call blocked by PreToolUse hook: ${outcome.reason}. Tool: ${pre.toolName}`;
      return { output, blocked: true };
    }
  }
  const result = await tool.handle(invocation);
  const post = adapter?.post?.(invocation, result);
  if (post) {
    const outcome = await hooks.runPostToolUse({ ...post.input, toolResponse: post.response, toolUseId: callId, caller: hookCaller(source), step, signal });
    if (outcome.feedback !== undefined) return { output: outcome.feedback, blocked: false };
  }
  return { output: String(result.codeModeResult(invocation.payload)), blocked: false };
}

const workspace = mkdtempSync(join(tmpdir(), 'hooks-policy-'));
try {
  const auditLog = join(workspace, '.audit', 'calls.jsonl');
  mkdirSync(dirname(auditLog));
  mkdirSync(join(workspace, 'important'));
  writeFileSync(join(workspace, 'important', 'keep.txt'), 'do not delete\n');

  const hooks = createHookEngine({ configFiles: [join(here, 'hooks.json')], env: { POLICY_DIR: here, AUDIT_LOG: auditLog } });
  assert.deepEqual(hooks.warnings, []);
  const step = createStepContext({ cwd: workspace, sessionId: 'demo-session', model: 'demo-model' });

  const allowed = await callTool(hooks, execCommand, step, 'call-1', { cmd: 'echo hello > greeting.txt && cat greeting.txt' }, { kind: 'direct' });
  assert.equal(allowed.blocked, false);
  assert.equal(allowed.output, 'hello\n');
  assert.equal(readFileSync(join(workspace, 'greeting.txt'), 'utf8'), 'hello\n');

  const blocked = await callTool(hooks, execCommand, step, 'call-2', { cmd: 'rm -rf important' }, { kind: 'code-mode', cellId: 'cell-1', runtimeToolCallId: 'tool-1' });
  assert.equal(blocked.blocked, true);
  assert.equal(blocked.output, 'Command blocked by PreToolUse hook: recursive force-deletes are not allowed in this workspace. Command: rm -rf important');
  assert.ok(existsSync(join(workspace, 'important', 'keep.txt')), 'the blocked command must not have run');

  const audit = readFileSync(auditLog, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(audit, [
    { event: 'PreToolUse', tool: 'Bash', command: 'echo hello > greeting.txt && cat greeting.txt', caller: { kind: 'direct' }, callId: 'call-1', decision: 'allow' },
    { event: 'PostToolUse', tool: 'Bash', command: 'echo hello > greeting.txt && cat greeting.txt', caller: { kind: 'direct' }, callId: 'call-1', decision: 'allow' },
    { event: 'PreToolUse', tool: 'Bash', command: 'rm -rf important', caller: { kind: 'code-mode', cell_id: 'cell-1' }, callId: 'call-2', decision: 'deny' },
  ]);

  await hooks.close();
  console.log(`allowed: ${JSON.stringify(allowed.output)}`);
  console.log(`blocked: ${blocked.output}`);
  console.log(`audit:   ${audit.length} entries in ${auditLog}`);
  console.log('hooks-policy: ok');
} finally {
  rmSync(workspace, { recursive: true, force: true });
}
