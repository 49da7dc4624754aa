import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelClient, ResponseItem, SandboxMode } from '@switchyard/protocol';
import { createHookEngine } from '@switchyard/hooks';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { builtinTools } from './builtins';
import { planTable } from './plan-command';
import { clip, createStyle } from './render';

/** The script the demo's model "writes": every built-in, a blocked command, store, yield and wait. */
export const DEMO_SCRIPT = `// @exec: {"yield_time_ms": 8000}
const file = await tools.exec_command({ cmd: 'cat notes.txt' });
text('notes.txt: ' + file.output.trim().split('\\n').join(' | '));
const patched = await tools.apply_patch('*** Begin Patch\\n*** Update File: notes.txt\\n@@\\n-status: draft\\n+status: reviewed\\n*** End Patch');
text('apply_patch modified: ' + patched.modified.join(', '));
const now = await tools.clock__curr_time();
const budget = await tools.get_context_remaining();
text('clock: ' + now.iso + ' · tokens left: ' + budget.tokens_left);
store('reviewed_at', now.iso);
try {
  await tools.exec_command({ cmd: 'rm -rf notes.txt' });
} catch (error) {
  text('refused: ' + error);
}
yield_control();
await new Promise((resolve) => setTimeout(resolve, 200));
const check = await tools.exec_command({ cmd: 'grep status notes.txt' });
text('after the yield: ' + check.output.trim() + ' (stored ' + load('reviewed_at') + ')');`;

/** The hook the demo installs: a real command hook that refuses recursive deletes. */
export const DEMO_HOOK = `if grep -q 'rm -rf'; then echo 'recursive deletes are not allowed here' >&2; exit 2; fi`;

export interface DemoOptions {
  color: boolean;
  model?: ModelClient;
  keep?: boolean;
  /** Sandbox of exec_command (default workspace-write). */
  sandbox?: SandboxMode;
}

function cellOf(item: ResponseItem | undefined): string | undefined {
  const output = (item as { output?: unknown })?.output;
  const first = Array.isArray(output) ? (output[0] as { text?: string })?.text : typeof output === 'string' ? output : undefined;
  return /Script running with cell ID (\S+)/.exec(first ?? '')?.[1];
}

/** `switchyard demo`: a scripted Code Mode turn in a temporary workspace, printed as a transcript. Exit 0 when the edit landed. */
export async function demoCommand(options: DemoOptions, write: (text: string) => void): Promise<number> {
  const style = createStyle(options.color);
  const workspace = mkdtempSync(join(tmpdir(), 'switchyard-demo-'));
  writeFileSync(join(workspace, 'notes.txt'), 'title: launch checklist\nstatus: draft\n');
  const builtins = builtinTools(workspace, options.sandbox);
  // /bin/sh, not the login $SHELL: a heavy login profile (pyenv, nvm) must not slow every hook down.
  const hooks = createHookEngine({ shell: '/bin/sh', config: { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: DEMO_HOOK, timeout: 10 }] }] } } });
  const session = createSession({
    toolMode: 'code-mode-only',
    tools: builtins.tools,
    hooks,
    cwd: workspace,
    model: { contextWindow: 200_000, name: 'scripted' },
    approvalPolicy: 'never',
  });
  const model =
    options.model ??
    createScriptedModel([
      [{ type: 'custom_tool_call', call_id: 'call-exec', name: 'exec', input: DEMO_SCRIPT }],
      (request) => {
        const cellId = cellOf(request.input.find((item) => (item as { call_id?: string }).call_id === 'call-exec' && item.type === 'custom_tool_call_output'));
        return [{ type: 'function_call', call_id: 'call-wait', name: 'wait', arguments: JSON.stringify({ cell_id: cellId, yield_time_ms: 5000 }) }];
      },
      [{ type: 'message', role: 'assistant', content: 'notes.txt is reviewed; the recursive delete was refused by policy.' }],
    ]);

  write(`${style.bold('Switchyard demo')} — a scripted Code Mode turn in ${workspace}\n`);
  write(`sandbox: ${builtins.sandbox}${builtins.sandbox === 'danger-full-access' ? ' (none)' : ' (bubblewrap)'} · hooks: a command hook refuses "rm -rf"\n\n`);
  let printedPlan = false;
  session.on('step-start', (event) => {
    if (printedPlan) return;
    printedPlan = true;
    write(`${style.bold('The two tables')} (mode code-mode-only): what the model sees, what the host can run\n`);
    write(`${planTable(event.plan.describe(), style)}\n\n${style.bold('The turn')}\n`);
  });
  session.on('model-item', (event) => {
    const item = event.item as { type: string; name?: string; call_id?: string; input?: string; arguments?: string; content?: unknown };
    if (item.type === 'custom_tool_call' || item.type === 'function_call') {
      const body = item.type === 'custom_tool_call' ? `${item.input?.split('\n').length} lines of JavaScript` : clip(item.arguments ?? '', 120);
      write(`${style.cyan('model →')} ${style.bold(item.name ?? '')} ${style.dim(`[${item.call_id}]`)} ${body}\n`);
    } else if (item.type === 'message') {
      write(`${style.cyan('model:')} ${typeof item.content === 'string' ? item.content : JSON.stringify(item.content)}\n`);
    }
  });
  session.on('tool-call-start', (event) => {
    const caller = event.source.kind === 'direct' ? 'direct' : `cell ${event.source.cellId.slice(0, 6)}… ${event.source.runtimeToolCallId}`;
    if (event.source.kind === 'code-mode') write(`  ${style.dim(caller)} → ${event.toolName}\n`);
  });
  session.on('tool-call-end', (event) => {
    if (event.source.kind === 'code-mode') write(`  ${style.dim(`${event.toolName} ${event.success ? 'ok' : 'failed'} in ${event.durationMs.toFixed(0)} ms`)}\n`);
  });
  session.on('cell-start', (event) => write(`  ${style.dim(`cell ${event.cellId.slice(0, 6)}… started`)}\n`));
  session.on('cell-end', (event) => write(`  ${style.dim(`cell ${event.cellId.slice(0, 6)}… ${event.status}`)}\n`));
  session.on('tool-call-blocked', (event) => write(`  ${style.red('blocked')} ${event.toolName}: ${event.reason}\n`));
  hooks.on('hook-end', (event) => write(`  ${style.yellow('hook')} ${event.event} ${event.toolName}: ${event.outcome}${event.message ? ` — ${event.message}` : ''}\n`));
  session.on('tool-output', (event) => {
    const output = (event.item as { output?: unknown }).output;
    const parts = typeof output === 'string' ? [output] : Array.isArray(output) ? output.map((part: { text?: string }) => part.text ?? '[image]') : [];
    const [header, ...rest] = parts;
    write(`${style.green('←')} ${style.dim(`[${event.item.call_id}]`)} ${header?.split('\n')[0] ?? ''}\n`);
    for (const text of rest) write(`    ${text}\n`);
  });

  let code = 1;
  try {
    const result = await session.runTurn({ model, input: 'Review notes.txt: mark it reviewed and record when.' });
    const after = readFileSync(join(workspace, 'notes.txt'), 'utf8');
    const ok = after.includes('status: reviewed');
    write(`\n${style.bold('Result')}: ${result.steps} steps; notes.txt now reads ${JSON.stringify(after)}\n`);
    write(ok ? `${style.green('demo ok')}\n` : `${style.red('demo failed: the edit did not land')}\n`);
    code = ok ? 0 : 1;
  } finally {
    await session.shutdown();
    await builtins.exec.shutdown();
    await hooks.close();
    if (!options.keep) rmSync(workspace, { recursive: true, force: true });
  }
  return code;
}
