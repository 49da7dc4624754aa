import { describe, expect, it } from 'vitest';
import type { ApprovalProvider, ApprovalRequest, HookEndEvent } from '@switchyard/protocol';
import { createHookEngine } from './hook-engine';
import { preRequest } from '../test/helpers';

const ASK = `echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"this deletes files"}}'`;
const ASK_WITHOUT_REASON = `echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}'`;

function answering(answer: Awaited<ReturnType<ApprovalProvider['requestApproval']>> | Error) {
  const requests: ApprovalRequest[] = [];
  const provider: ApprovalProvider = {
    async requestApproval(request) {
      requests.push(request);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  return { provider, requests };
}

function engine(command: string, approvals?: ApprovalProvider) {
  const created = createHookEngine({ shell: '/bin/sh', approvals, config: { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command }] }] } } });
  const ends: HookEndEvent[] = [];
  created.on('hook-end', (event) => ends.push(event));
  return { engine: created, ends };
}

describe('permissionDecision "ask"', () => {
  it('approved → the call continues; the provider sees the command, the reason and the call id', async () => {
    const { provider, requests } = answering('approved');
    const { engine: hooks, ends } = engine(ASK, provider);
    const request = preRequest({ toolInput: { command: 'rm -rf build' } });
    expect(await hooks.runPreToolUse(request)).toEqual({ blocked: false, additionalContexts: [], warnings: [] });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ kind: 'hook', toolName: 'Bash', callId: 'call-1', command: 'rm -rf build', reason: 'this deletes files', cwd: request.step.cwd });
    expect(requests[0].signal).toBe(request.signal);
    expect(ends.map((event) => event.outcome)).toEqual(['continue']);
  });

  it('approved-for-session counts as approved', async () => {
    const { provider } = answering('approved-for-session');
    expect((await engine(ASK, provider).engine.runPreToolUse(preRequest())).blocked).toBe(false);
  });

  it('denied → blocked with the hook reason', async () => {
    const { provider } = answering('denied');
    const { engine: hooks, ends } = engine(ASK, provider);
    expect(await hooks.runPreToolUse(preRequest())).toEqual({ blocked: true, reason: 'this deletes files', additionalContexts: [], warnings: [] });
    expect(ends).toMatchObject([{ outcome: 'block', message: 'this deletes files' }]);
  });

  it('denied without a hook reason → blocked with a generic reason', async () => {
    const { provider } = answering('denied');
    expect(await engine(ASK_WITHOUT_REASON, provider).engine.runPreToolUse(preRequest())).toMatchObject({
      blocked: true,
      reason: 'PreToolUse hook asked for approval and it was denied',
    });
  });

  it('a provider that throws counts as denied', async () => {
    const { provider } = answering(new Error('no terminal'));
    expect((await engine(ASK, provider).engine.runPreToolUse(preRequest())).blocked).toBe(true);
  });

  it('falls back to the step approval provider', async () => {
    const { provider, requests } = answering('denied');
    const request = preRequest();
    const outcome = await engine(ASK).engine.runPreToolUse({ ...request, step: { ...request.step, approvals: provider } });
    expect(outcome.blocked).toBe(true);
    expect(requests).toHaveLength(1);
  });

  it('without any provider → fails open as the reference does', async () => {
    const { engine: hooks, ends } = engine(ASK);
    expect(await hooks.runPreToolUse(preRequest())).toEqual({
      blocked: false,
      additionalContexts: [],
      warnings: ['hook pre-tool-use:0:<config:0>:call-1 failed: PreToolUse hook returned unsupported permissionDecision:ask'],
    });
    expect(ends.map((event) => event.outcome)).toEqual(['failed']);
  });
});
