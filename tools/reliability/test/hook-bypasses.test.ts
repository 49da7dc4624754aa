import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createHookEngine, type HookEngine, type HookEngineOptions } from '@switchyard/hooks';
import { execTools } from '@switchyard/tool-exec';
import { report } from '../src/profile';
import { callItem, openHarness, outputText, type Harness } from './helpers';

// Each attack tries to get a call past a PreToolUse hook that should stop it, through the real
// stack: session → router → registry → hooks (real /bin/sh hook processes) → tool-exec processes.
const scratch = mkdtempSync(join(tmpdir(), 'reliability-hooks-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const held: string[] = [];
afterAll(() => report('hook bypasses', `${held.length} attacks failed:\n  - ${held.join('\n  - ')}`));

let counter = 0;
/** A fresh workspace holding `victim/keep.txt`, which every attack tries to delete. */
function victimWorkspace(): { root: string; victim: string } {
  const root = join(scratch, `ws-${++counter}`);
  mkdirSync(join(root, 'victim'), { recursive: true });
  writeFileSync(join(root, 'victim', 'keep.txt'), 'precious');
  return { root, victim: join(root, 'victim', 'keep.txt') };
}

/** A hook refusing anything whose stdin mentions `rm -rf` (exit 2, reason on stderr). */
const NO_RM = 'grep -q "rm -rf" && { echo "no rm -rf" >&2; exit 2; } || exit 0';

async function directSession(root: string, hooks: HookEngineOptions | HookEngine, extraTools = [] as ReturnType<typeof defineFunctionTool>[]): Promise<Harness> {
  return openHarness({
    toolMode: 'direct',
    cwd: root,
    tools: [...execTools({ root, sandbox: 'danger-full-access', approvalPolicy: 'never', shell: '/bin/sh' }), ...extraTools],
    hooks: 'runPreToolUse' in hooks ? hooks : createHookEngine({ shell: '/bin/sh', ...hooks }),
  });
}


describe('hook bypasses: a blocking hook always blocks', () => {
  for (const matcher of ['Bash', 'write_stdin']) {
    it(`typing rm -rf into a tty shell with write_stdin is blocked by a ${matcher} hook`, async () => {
      const { root, victim } = victimWorkspace();
      const harness = await directSession(root, { config: { hooks: { PreToolUse: [{ matcher, hooks: [{ type: 'command', command: NO_RM, timeout: 30 }] }] } } });
      try {
        const shell = await harness.step.dispatch(callItem('start', 'exec_command', { cmd: 'sh', tty: true, yield_time_ms: 300 }));
        const sessionId = Number(/session ID (\d+)/.exec(outputText(shell))?.[1]);
        expect(sessionId).toBeGreaterThan(0);
        const typed = await harness.step.dispatch(callItem('type', 'write_stdin', { session_id: sessionId, chars: 'rm -rf victim\n', yield_time_ms: 500 }));
        expect(outputText(typed)).toBe('Tool call blocked by PreToolUse hook: no rm -rf. Tool: write_stdin');
        // Harmless input still reaches the shell, and the file survived.
        const listed = await harness.step.dispatch(callItem('ls', 'write_stdin', { session_id: sessionId, chars: 'cat victim/keep.txt; exit\n', yield_time_ms: 2_000 }));
        expect(outputText(listed)).toContain('precious');
        expect(readFileSync(victim, 'utf8')).toBe('precious');
        held.push(`write_stdin "rm -rf victim" into a tty sh → blocked by a ${matcher} hook; harmless input passed`);
      } finally {
        await harness.close();
      }
    });
  }

  it('a matcher naming the tool (exec_command) fires, and hooks see command, shell and workdir', async () => {
    const { root, victim } = victimWorkspace();
    const seen = join(root, 'seen.json');
    const harness = await directSession(root, {
      config: { hooks: { PreToolUse: [{ matcher: 'exec_command', hooks: [{ type: 'command', command: `cat > "${seen}"; echo "tool name matcher" >&2; exit 2`, timeout: 30 }] }] } },
    });
    try {
      mkdirSync(join(root, 'sub'));
      const blocked = await harness.step.dispatch(callItem('x', 'exec_command', { cmd: 'rm -rf ../victim', workdir: 'sub' }));
      expect(outputText(blocked)).toBe('Command blocked by PreToolUse hook: tool name matcher. Command: rm -rf ../victim');
      const stdin = JSON.parse(readFileSync(seen, 'utf8')) as JsonObject;
      expect(stdin.tool_name).toBe('Bash');
      expect(stdin.tool_input).toEqual({ command: 'rm -rf ../victim', shell: '/bin/sh', workdir: join(root, 'sub') });
      expect(existsSync(victim)).toBe(true);
      held.push('matcher "exec_command" fired on exec_command; stdin carried command, shell and workdir');
    } finally {
      await harness.close();
    }
  });

  it('arguments nested 6,000 deep never reach the handler, directly or from Code Mode', async () => {
    const { root } = victimWorkspace();
    const ran: string[] = [];
    const tool = defineFunctionTool({
      name: 'record',
      description: 'Records that it ran.',
      parameters: { type: 'object' },
      supportsParallelToolCalls: true,
      handle: ({ args }) => {
        ran.push(JSON.stringify(args).slice(0, 20));
        return 'ran';
      },
    });
    const hooks = { config: { hooks: { PreToolUse: [{ matcher: 'record', hooks: [{ type: 'command' as const, command: 'echo "never" >&2; exit 2', timeout: 30 }] }] } } };
    const direct = await directSession(root, hooks, [tool]);
    const deep = `{"x":${'['.repeat(6000)}${']'.repeat(6000)}}`;
    try {
      const answer = await direct.step.dispatch({ type: 'function_call', call_id: 'deep', name: 'record', arguments: deep });
      expect(outputText(answer)).toBe('invalid input for record: the call cannot be checked by hooks: it is nested deeper than 100 levels');
      const shallow = await direct.step.dispatch(callItem('shallow', 'record', { x: [[1]] }));
      expect(outputText(shallow)).toBe('Tool call blocked by PreToolUse hook: never. Tool: record');
    } finally {
      await direct.close();
    }
    const codeMode = await openHarness({ tools: [tool], hooks: createHookEngine({ shell: '/bin/sh', ...hooks }) });
    try {
      // 200 levels cross the isolate bridge and are refused by the registry; 6,000 already fail in the cell.
      for (const depth of [200, 6000]) {
        const cell = await codeMode.exec(`let v = 0; for (let i = 0; i < ${depth}; i++) v = [v];\ntry { await tools.record({ x: v }); text('no error'); } catch (e) { text(String(e)); }`);
        expect(cell.output).toHaveLength(1);
        expect(cell.output[0]).not.toBe('no error');
        if (depth === 200) expect(cell.output[0]).toContain('the call cannot be checked by hooks: it is nested deeper than 100 levels');
      }
    } finally {
      await codeMode.close();
    }
    expect(ran).toEqual([]);
    held.push('6,000-deep arguments (direct and nested from a cell) refused with INVALID_INPUT; the handler never ran');
  });

  it('a host thread stalled past the timeout of an exit-2 hook does not let the command run', async () => {
    const { root, victim } = victimWorkspace();
    const answered = join(root, 'answered');
    const engine = createHookEngine({
      shell: '/bin/sh',
      config: { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `(${NO_RM}); status=$?; touch "${answered}"; exit $status`, timeout: 1 }] }] } },
    });
    let stalledMs = 0;
    let answeredAt: number | undefined;
    // The hook process is spawned in the same synchronous step that emits hook-start: stall right after.
    engine.on('hook-start', () =>
      queueMicrotask(() => {
        const started = Date.now();
        while (Date.now() - started < 15_000) {
          // A synchronous stall of the host thread: no timer, exit or pipe event is processed.
          if (answeredAt === undefined && existsSync(answered)) answeredAt = Date.now();
          if (answeredAt !== undefined && Date.now() - answeredAt > 200 && Date.now() - started > 1_500) break;
        }
        stalledMs = Date.now() - started;
      }),
    );
    const harness = await directSession(root, engine);
    try {
      const answer = await harness.step.dispatch(callItem('stall', 'exec_command', { cmd: 'rm -rf victim' }));
      expect(answeredAt).toBeDefined();
      expect(stalledMs).toBeGreaterThan(1_000);
      expect(outputText(answer)).toBe('Command blocked by PreToolUse hook: no rm -rf. Command: rm -rf victim');
      expect(readFileSync(victim, 'utf8')).toBe('precious');
      held.push(`host stalled ${stalledMs} ms past a 1 s hook timeout: the exit-2 answer still blocked`);
    } finally {
      await harness.close();
    }
  });

  it('a fail-closed hook that times out or crashes blocks', async () => {
    const { root, victim } = victimWorkspace();
    const harness = await directSession(root, {
      failClosed: true,
      config: {
        hooks: {
          PreToolUse: [
            { matcher: 'exec_command', hooks: [{ type: 'command', command: 'exec sleep 30', timeout: 1 }] },
            { matcher: 'write_stdin', hooks: [{ type: 'command', command: 'kill -SEGV $$' }] },
          ],
        },
      },
    });
    try {
      const blocked = await harness.step.dispatch(callItem('slow', 'exec_command', { cmd: 'rm -rf victim' }));
      expect(outputText(blocked)).toBe('Command blocked by PreToolUse hook: hook failed and is fail-closed: hook timed out after 1s. Command: rm -rf victim');
      const crashed = await harness.step.dispatch(callItem('crash', 'write_stdin', { session_id: 1, chars: 'rm -rf victim\n' }));
      expect(outputText(crashed)).toBe('Tool call blocked by PreToolUse hook: hook failed and is fail-closed: hook exited without a status code. Tool: write_stdin');
      expect(existsSync(victim)).toBe(true);
      held.push('fail-closed: a timed-out hook and a crashed hook both blocked');
    } finally {
      await harness.close();
    }
  });
});

describe('hook bypasses: a namespaced tool is matched by every spelling of its name', () => {
  // Each matcher is written the way a host might name the tool; each route is a way the model may
  // reach it. Every pair must be blocked before the handler runs.
  const tools = [
    { namespace: 'inventory', name: 'check_stock', matchers: ['inventory__check_stock', 'check_stock', 'inventory.check_stock', '^inventory__', 'inventory__.*', 'Bash|check_stock'] },
    { namespace: 'mcp__fs__', name: 'read_file', matchers: ['mcp__fs__read_file', 'read_file', 'mcp__fs.read_file', 'mcp__fs__.*'] },
    // a name that is not a JS identifier: the display name keeps the hyphen, the cell calls the identifier
    { namespace: 'fs', name: 'read-file', matchers: ['fs__read-file', 'fs__read_file', 'read-file', 'fs.read-file'] },
  ];
  for (const tool of tools) {
    for (const matcher of tool.matchers) {
      it(`matcher ${JSON.stringify(matcher)} blocks ${tool.namespace} + ${tool.name} directly and from a cell`, async () => {
        const ran: string[] = [];
        const executor = defineFunctionTool({ name: tool.name, namespace: tool.namespace, description: 'Guarded.', parameters: { type: 'object' }, handle: () => {
          ran.push('ran');
          return 'ran';
        } });
        const hooks = createHookEngine({ shell: '/bin/sh', config: { hooks: { PreToolUse: [{ matcher, hooks: [{ type: 'command', command: 'echo guarded >&2; exit 2', timeout: 30 }] }] } } });
        const harness = await openHarness({ toolMode: 'code-mode', tools: [executor], hooks });
        try {
          const direct = await harness.step.dispatch({ type: 'function_call', call_id: 'd', name: tool.name, namespace: tool.namespace, arguments: '{}' });
          expect(outputText(direct)).toMatch(/^Tool call blocked by PreToolUse hook: guarded\. Tool: /);
          const definition = harness.step.plan.codeModeSurface!.tools[0];
          const cell = await harness.exec(`try { await tools[${JSON.stringify(definition.codeModeName)}]({}); text('ran'); } catch (e) { text(String(e)); }`);
          expect(cell.output).toEqual([outputText(direct)]);
          expect(ran).toEqual([]);
          held.push(`matcher ${JSON.stringify(matcher)} → ${tool.namespace} + ${tool.name} blocked (direct and as tools.${definition.codeModeName})`);
        } finally {
          await harness.close();
          await hooks.close();
        }
      });
    }
  }
});

describe('a policy beside its hooks.json cannot silently not enforce', () => {
  /** The user's layout: <policy>/hooks.json and <policy>/hooks/policy.mjs, in a folder other than the session cwd. */
  function policyFolder(options: { required?: boolean; script?: string } = {}): string {
    const folder = join(scratch, `policy-${++counter}`);
    mkdirSync(join(folder, 'hooks'), { recursive: true });
    writeFileSync(
      join(folder, 'hooks', 'policy.mjs'),
      options.script ??
        `let text = ''; process.stdin.on('data', (c) => (text += c)); process.stdin.on('end', () => { if (JSON.parse(text).tool_input.command.includes('rm -rf')) { process.stderr.write('rm -rf is not allowed'); process.exit(2); } });\n`,
    );
    const handler = { type: 'command', command: 'node hooks/policy.mjs', ...(options.required ? { required: true } : {}) };
    writeFileSync(join(folder, 'hooks.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [handler] }] } }));
    return join(folder, 'hooks.json');
  }

  it('`node hooks/policy.mjs` (matcher Bash, default options) blocks the model’s rm -rf data.csv', async () => {
    const { root } = victimWorkspace();
    writeFileSync(join(root, 'data.csv'), 'a,b\n1,2\n');
    const harness = await directSession(root, createHookEngine({ configFiles: [policyFolder()] }));
    try {
      const output = await harness.step.dispatch(callItem('rm', 'exec_command', { cmd: 'rm -rf data.csv' }));
      expect(outputText(output)).toBe('Command blocked by PreToolUse hook: rm -rf is not allowed. Command: rm -rf data.csv');
      expect(readFileSync(join(root, 'data.csv'), 'utf8')).toBe('a,b\n1,2\n');
      held.push('the user setup: node hooks/policy.mjs beside hooks.json in another folder blocked rm -rf data.csv');
    } finally {
      await harness.close();
    }
  });

  it('a required policy that crashes blocks the call and names itself', async () => {
    const { root } = victimWorkspace();
    writeFileSync(join(root, 'data.csv'), 'a,b\n');
    const file = policyFolder({ required: true, script: 'throw new Error("policy bug")\n' });
    const harness = await directSession(root, createHookEngine({ configFiles: [file] }));
    try {
      const output = await harness.step.dispatch(callItem('rm', 'exec_command', { cmd: 'rm -rf data.csv' }));
      expect(outputText(output)).toBe(`Command blocked by PreToolUse hook: required hook "node hooks/policy.mjs" (${file}) failed: hook exited with code 1. Command: rm -rf data.csv`);
      expect(existsSync(join(root, 'data.csv'))).toBe(true);
      held.push('a required policy that crashed blocked the call, naming the hook');
    } finally {
      await harness.close();
    }
  });
});
