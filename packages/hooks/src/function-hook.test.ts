import { describe, expect, it } from 'vitest';
import type { HookEndEvent } from '@switchyard/protocol';
import { createHookEngine } from './hook-engine';
import type { HookInput } from './hook-payload';
import { postRequest, preRequest } from '../test/helpers';

const RUN0 = 'hook pre-tool-use:0:<config:0>:call-1 failed: ';

describe('function hooks', () => {
  it('receive the stdin object and can block with the same output shape as a command', async () => {
    const seen: HookInput[] = [];
    const engine = createHookEngine({
      config: {
        hooks: {
          PreToolUse: [
            {
              matcher: 'Bash',
              hooks: [
                {
                  type: 'function',
                  name: 'no-rm',
                  run(input) {
                    seen.push(input);
                    const command = (input.tool_input as { command: string }).command;
                    if (command.includes('rm -rf')) {
                      return { hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'rm -rf is not allowed' } };
                    }
                    return undefined;
                  },
                },
              ],
            },
          ],
        },
      },
    });
    const request = preRequest({ toolInput: { command: 'rm -rf /' }, caller: { kind: 'code-mode', cell_id: 'cell-1' } });
    expect(await engine.runPreToolUse(request)).toEqual({ blocked: true, reason: 'rm -rf is not allowed', additionalContexts: [], warnings: [] });
    expect(seen[0]).toEqual({
      session_id: 'session-9',
      turn_id: 'turn-3',
      transcript_path: null,
      cwd: request.step.cwd,
      hook_event_name: 'PreToolUse',
      model: 'gpt-test',
      permission_mode: 'default',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf /' },
      tool_use_id: 'call-1',
      caller: { kind: 'code-mode', cell_id: 'cell-1' },
    });
    expect((await engine.runPreToolUse(preRequest({ toolInput: { command: 'ls' } }))).blocked).toBe(false);
  });

  it('can rewrite the input, and cannot change what later hooks see by mutating it', async () => {
    const engine = createHookEngine({
      functionHooks: [
        {
          event: 'PreToolUse',
          name: 'mutator',
          run(input) {
            (input.tool_input as { command: string }).command = 'mutated';
            return undefined;
          },
        },
        {
          event: 'PreToolUse',
          matcher: '^Ba',
          run: async (input) => ({
            hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { command: `${(input.tool_input as { command: string }).command} --dry-run` } },
          }),
        },
      ],
    });
    const request = preRequest();
    const outcome = await engine.runPreToolUse(request);
    expect(outcome.updatedInput).toEqual({ command: 'echo hi --dry-run' });
    expect(request.toolInput).toEqual({ command: 'echo hi' });
  });

  it('a throw fails open with a warning; invalid output fails open like a command', async () => {
    const engine = createHookEngine({
      config: {
        hooks: {
          PreToolUse: [
            {
              hooks: [
                {
                  type: 'function',
                  run() {
                    throw new Error('boom');
                  },
                },
                { type: 'function', run: () => ({ decision: 'approve' }) },
              ],
            },
          ],
        },
      },
    });
    expect(await engine.runPreToolUse(preRequest())).toEqual({
      blocked: false,
      additionalContexts: [],
      warnings: [`${RUN0}function hook failed: boom`, 'hook pre-tool-use:1:<config:0>:call-1 failed: PreToolUse hook returned unsupported decision:approve'],
    });
  });

  it('a hanging function is abandoned at its timeout, its signal aborted, and fails open', async () => {
    let aborted = false;
    const engine = createHookEngine({
      functionHooks: [
        {
          event: 'PreToolUse',
          timeout: 1,
          run: (_input, { signal }) =>
            new Promise(() => {
              signal.addEventListener('abort', () => {
                aborted = true;
              });
            }),
        },
      ],
    });
    const ends: HookEndEvent[] = [];
    engine.on('hook-end', (event) => ends.push(event));
    const started = performance.now();
    const outcome = await engine.runPreToolUse(preRequest());
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(outcome.warnings).toEqual(['hook pre-tool-use:0:<function>:call-1 failed: hook timed out after 1s']);
    expect(aborted).toBe(true);
    expect(ends).toMatchObject([{ runId: 'pre-tool-use:0:<function>:call-1', outcome: 'failed' }]);
  });

  it('PostToolUse functions give feedback and stop; they run in configured order with command hooks', async () => {
    const engine = createHookEngine({
      shell: '/bin/sh',
      config: {
        hooks: {
          PostToolUse: [
            { hooks: [{ type: 'command', command: 'echo "from the command" >&2; exit 2' }] },
            { hooks: [{ type: 'function', run: (input) => ({ continue: false, stopReason: `saw ${JSON.stringify((input as { tool_response: unknown }).tool_response)}` }) }] },
          ],
        },
      },
    });
    expect(await engine.runPostToolUse(postRequest({ toolResponse: 'ok' }))).toEqual({
      feedback: 'from the command\n\nsaw "ok"',
      stop: true,
      additionalContexts: [],
      warnings: [],
    });
  });
});
