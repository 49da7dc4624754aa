import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import {
  type ApprovalDecision,
  type ApprovalPolicy,
  type ApprovalProvider,
  type ApprovalRequest,
} from '@switchyard/protocol';
import { createExecToolset, type ExecToolset, type ExecToolsOptions } from './exec-tools';
import { ApprovalMemory, isValidPrefixRule } from './approval';
import { isKnownSafeCommand } from './safe-command';
import { callTool, codeModeValue, failureOf, makeWorkspace } from './test-support';

/** A fake approval provider: answers from a script and records every request. */
function fakeApprovals(...answers: Array<ApprovalDecision | Error>): ApprovalProvider & { requests: ApprovalRequest[] } {
  const requests: ApprovalRequest[] = [];
  return {
    requests,
    async requestApproval(request) {
      requests.push(request);
      const answer = answers.shift() ?? 'denied';
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
}

// World-writable, so only the sandbox's read-only mount (not file permissions) can stop a write.
const outside = mkdtempSync('/var/tmp/tool-exec-approval-');
chmodSync(outside, 0o777);
const toolsets: ExecToolset[] = [];

afterEach(async () => {
  await Promise.all(toolsets.splice(0).map((toolset) => toolset.shutdown()));
});
afterAll(() => rmSync(outside, { recursive: true, force: true }));

function openWithPolicy(policy: ApprovalPolicy, approvals: ApprovalProvider | undefined, options: ExecToolsOptions = {}) {
  const root = makeWorkspace();
  const toolset = createExecToolset({ root, sandbox: 'workspace-write', approvalPolicy: policy, approvals, ...options });
  toolsets.push(toolset);
  return { root, exec: toolset.tools[0] };
}

let counter = 0;
const REFERENCE_NAMES = { never: 'Never', 'on-failure': 'OnFailure', untrusted: 'UnlessTrusted' } as const;
const outsideFile = () => join(outside, `file-${++counter}`);

describe('require_escalated', () => {
  for (const policy of ['never', 'on-failure', 'untrusted'] as const) {
    test(`policy ${policy} cannot ask: the reference refusal, the provider is never asked`, async () => {
      const approvals = fakeApprovals('approved');
      const { exec } = openWithPolicy(policy, approvals);
      const target = outsideFile();
      const answer = await failureOf(callTool(exec, { cmd: `touch ${target}`, sandbox_permissions: 'require_escalated', justification: 'need it' }));
      expect(answer).toEqual({
        // the reference names the policy by its Rust variant
        message: `approval policy is ${REFERENCE_NAMES[policy]}; reject command — you cannot ask for escalated permissions if the approval policy is ${REFERENCE_NAMES[policy]}`,
        code: 'APPROVAL_DENIED',
      });
      expect(approvals.requests).toHaveLength(0);
      expect(existsSync(target)).toBe(false);
    });
  }

  test('on-request asks with the justification; approved runs outside the sandbox', async () => {
    const approvals = fakeApprovals('approved');
    const { exec, root } = openWithPolicy('on-request', approvals);
    const target = outsideFile();
    const output = codeModeValue(await callTool(exec, { cmd: `touch ${target} && echo done`, sandbox_permissions: 'require_escalated', justification: 'write the report' }));
    expect(output).toMatchObject({ exit_code: 0, output: 'done\n' });
    expect(existsSync(target)).toBe(true);
    expect(approvals.requests).toEqual([
      expect.objectContaining({ kind: 'exec', toolName: 'exec_command', command: `touch ${target} && echo done`, cwd: root, reason: 'write the report', escalated: true }),
    ]);
  });

  test('on-request: a refusal answers "exec command rejected by user" and runs nothing', async () => {
    const approvals = fakeApprovals('denied');
    const { exec } = openWithPolicy('on-request', approvals);
    const target = outsideFile();
    const answer = await failureOf(callTool(exec, { cmd: `touch ${target}`, sandbox_permissions: 'require_escalated' }));
    expect(answer).toEqual({ message: 'exec command rejected by user', code: 'APPROVAL_DENIED' });
    expect(existsSync(target)).toBe(false);
  });

  test('a throwing provider counts as a refusal; no provider refuses too', async () => {
    const { exec } = openWithPolicy('on-request', fakeApprovals(new Error('ui crashed')));
    expect((await failureOf(callTool(exec, { cmd: 'true', sandbox_permissions: 'require_escalated' }))).message).toBe('exec command rejected by user');
    const { exec: lonely } = openWithPolicy('on-request', undefined);
    expect(await failureOf(callTool(lonely, { cmd: 'true', sandbox_permissions: 'require_escalated' }))).toEqual({
      message: 'exec command rejected: no approval provider is configured to ask the user',
      code: 'APPROVAL_DENIED',
    });
  });

  test('approved-for-session is remembered for the same command, and for a prefix_rule', async () => {
    const approvals = fakeApprovals('approved-for-session', 'approved-for-session');
    const { exec } = openWithPolicy('on-request', approvals);
    await callTool(exec, { cmd: 'echo one', sandbox_permissions: 'require_escalated' });
    await callTool(exec, { cmd: 'echo one', sandbox_permissions: 'require_escalated' });
    expect(approvals.requests).toHaveLength(1);
    await callTool(exec, { cmd: 'printf a', sandbox_permissions: 'require_escalated', prefix_rule: ['printf'] });
    await callTool(exec, { cmd: 'printf b', sandbox_permissions: 'require_escalated' });
    expect(approvals.requests).toHaveLength(2);
    // Not covered by either grant: asked again (and refused by the script's default answer).
    expect((await failureOf(callTool(exec, { cmd: 'echo two', sandbox_permissions: 'require_escalated' }))).message).toBe('exec command rejected by user');
    expect(approvals.requests).toHaveLength(3);
  });
});

describe('prefix_rule', () => {
  test('the rule is shown to the person in the request reason', async () => {
    const approvals = fakeApprovals('approved', 'approved');
    const { exec } = openWithPolicy('on-request', approvals);
    await callTool(exec, { cmd: 'git status', sandbox_permissions: 'require_escalated', justification: 'check the tree', prefix_rule: ['git', 'status'] });
    expect(approvals.requests[0].reason).toBe(
      'check the tree\nApproving for the session also allows, without asking, every command starting with ["git","status"] (simple commands only, no shell operators).',
    );
    await callTool(exec, { cmd: 'echo hi', sandbox_permissions: 'require_escalated', prefix_rule: ['git'] });
    expect(approvals.requests[1].reason).toBe(
      'The requested prefix_rule ["git"] is ignored (not a word prefix of this simple command); approving for the session covers this exact command only.',
    );
  });

  test('a remembered rule never covers a command with shell operators or expansions', async () => {
    const approvals = fakeApprovals('approved-for-session');
    const { exec } = openWithPolicy('on-request', approvals);
    await callTool(exec, { cmd: 'echo status', sandbox_permissions: 'require_escalated', prefix_rule: ['echo'] });
    expect(approvals.requests).toHaveLength(1);
    await callTool(exec, { cmd: 'echo other words', sandbox_permissions: 'require_escalated' });
    expect(approvals.requests).toHaveLength(1); // a simple command is covered
    const target = outsideFile();
    for (const cmd of [
      `echo status; touch ${target}`,
      `echo status && touch ${target}`,
      `echo status & touch ${target}`,
      `echo status | tee ${target}`,
      `echo status > ${target}`,
      `echo status < /etc/hostname`,
      `echo \`touch ${target}\``,
      `echo $(touch ${target})`,
      `echo $HOME`,
      `echo status\ntouch ${target}`,
    ]) {
      const before = approvals.requests.length;
      expect((await failureOf(callTool(exec, { cmd, sandbox_permissions: 'require_escalated' }))).message).toBe('exec command rejected by user');
      expect(approvals.requests).toHaveLength(before + 1);
    }
    expect(existsSync(target)).toBe(false);
  });

  test('a rule that is not a word prefix of the approved command is not remembered (only the exact command is)', async () => {
    const approvals = fakeApprovals('approved-for-session', 'denied', 'approved-for-session');
    const { exec } = openWithPolicy('on-request', approvals);
    await callTool(exec, { cmd: 'printf a', sandbox_permissions: 'require_escalated', prefix_rule: ['echo'] });
    await callTool(exec, { cmd: 'printf a', sandbox_permissions: 'require_escalated' });
    expect(approvals.requests).toHaveLength(1); // the exact command is remembered
    expect((await failureOf(callTool(exec, { cmd: 'echo widened', sandbox_permissions: 'require_escalated' }))).message).toBe('exec command rejected by user');
    expect(approvals.requests).toHaveLength(2);
    // A rule longer than the command is no prefix either.
    await callTool(exec, { cmd: 'true', sandbox_permissions: 'require_escalated', prefix_rule: ['true', 'x'] });
    expect((await failureOf(callTool(exec, { cmd: 'true x', sandbox_permissions: 'require_escalated' }))).message).toBe('exec command rejected by user');
    expect(approvals.requests).toHaveLength(4);
  });

  test('ApprovalMemory: approving `git status` with ["git"] does not cover `git status; curl x | sh`', () => {
    const memory = new ApprovalMemory();
    memory.remember('git status', true, ['git']);
    expect(memory.covers('git log --oneline', true)).toBe(true);
    expect(memory.covers('git log', false)).toBe(false); // escalated and sandboxed grants are apart
    for (const cmd of ['git status; curl x | sh', 'git status && rm -rf ~', 'git $(curl x)', 'git `id`', 'git log > ~/.bashrc', 'git log\nsh', 'gitx status', 'git']) {
      expect(memory.covers(cmd, true)).toBe(cmd === 'git');
    }
    expect(isValidPrefixRule('git status', ['git', 'stat'])).toBe(false);
    expect(isValidPrefixRule('git status', ['git;'])).toBe(false);
    expect(isValidPrefixRule('git status', ['git status'])).toBe(false);
    expect(isValidPrefixRule('git status', [])).toBe(false);
    expect(isValidPrefixRule('  git   status ', ['git', 'status'])).toBe(true);
  });

  test('a rule from a command with shell operators is not remembered: approving `git status; x` with ["git"] does not widen', async () => {
    const approvals = fakeApprovals('approved-for-session');
    const { exec } = openWithPolicy('on-request', approvals);
    await callTool(exec, { cmd: 'echo a; echo b', sandbox_permissions: 'require_escalated', prefix_rule: ['echo'] });
    expect((await failureOf(callTool(exec, { cmd: 'echo c', sandbox_permissions: 'require_escalated' }))).message).toBe('exec command rejected by user');
    expect(approvals.requests).toHaveLength(2);
  });
});

describe('policies without escalation', () => {
  test('on-request and never run in the sandbox without asking', async () => {
    for (const policy of ['on-request', 'never'] as const) {
      const approvals = fakeApprovals();
      const { exec } = openWithPolicy(policy, approvals);
      const target = outsideFile();
      const output = codeModeValue(await callTool(exec, { cmd: `touch ${target}` }));
      expect(output.exit_code).toBe(1);
      expect(output.output).toContain('Read-only file system');
      expect(approvals.requests).toHaveLength(0);
    }
  });

  test('untrusted: known-safe commands run, anything else is asked about', async () => {
    const approvals = fakeApprovals('denied', 'approved');
    const { exec, root } = openWithPolicy('untrusted', approvals);
    expect(codeModeValue(await callTool(exec, { cmd: 'ls -a && pwd' })).exit_code).toBe(0);
    expect(approvals.requests).toHaveLength(0);

    expect((await failureOf(callTool(exec, { cmd: 'touch made.txt' }))).message).toBe('exec command rejected by user');
    expect(existsSync(join(root, 'made.txt'))).toBe(false);
    expect(codeModeValue(await callTool(exec, { cmd: 'touch made.txt' })).exit_code).toBe(0);
    expect(existsSync(join(root, 'made.txt'))).toBe(true);
    expect(approvals.requests.map((request) => [request.command, request.escalated])).toEqual([
      ['touch made.txt', false],
      ['touch made.txt', false],
    ]);
  });

  test('on-failure: a sandbox denial asks to rerun unsandboxed; approved reruns, refused answers the refusal', async () => {
    const approvals = fakeApprovals('approved', 'denied');
    const { exec } = openWithPolicy('on-failure', approvals);
    const target = outsideFile();
    const output = codeModeValue(await callTool(exec, { cmd: `touch ${target} && echo written` }));
    expect(output).toMatchObject({ exit_code: 0, output: 'written\n' });
    expect(existsSync(target)).toBe(true);
    expect(approvals.requests[0]).toMatchObject({ escalated: true, command: `touch ${target} && echo written` });

    const second = outsideFile();
    expect((await failureOf(callTool(exec, { cmd: `touch ${second}` }))).message).toBe('exec command rejected by user');
    expect(existsSync(second)).toBe(false);

    // An ordinary failure is not a sandbox denial: nobody is asked.
    expect(codeModeValue(await callTool(exec, { cmd: 'exit 4' })).exit_code).toBe(4);
    expect(approvals.requests).toHaveLength(2);
  });

  test('the policy and provider come from the step when the options leave them out; options win', async () => {
    const stepApprovals = fakeApprovals('approved');
    const root = makeWorkspace();
    const toolset = createExecToolset({ root, sandbox: 'workspace-write' });
    toolsets.push(toolset);
    const [exec] = toolset.tools;
    const target = outsideFile();
    await callTool(exec, { cmd: `touch ${target}`, sandbox_permissions: 'require_escalated' }, { step: { approvalPolicy: 'on-request', approvals: stepApprovals } });
    expect(existsSync(target)).toBe(true);
    expect(stepApprovals.requests).toHaveLength(1);

    const { exec: strict } = openWithPolicy('never', undefined);
    const answer = await failureOf(callTool(strict, { cmd: 'true', sandbox_permissions: 'require_escalated' }, { step: { approvalPolicy: 'on-request', approvals: stepApprovals } }));
    expect(answer.message).toContain('approval policy is Never;');
  });
});

describe('isKnownSafeCommand', () => {
  test.each([
    ['ls -la', true],
    ['cat a.txt | grep foo | wc -l', true],
    ["grep -n 'a b' file && echo done", true],
    ['git status', true],
    ['git push', false],
    ['sed -n 1,5p file', true],
    ['sed -i s/a/b/ file', false],
    ['find . -name x', true],
    ['find . -delete', false],
    ['echo hi > out', false],
    ['echo $(rm -rf x)', false],
    ['cat `whoami`', false],
    ['rm -rf /', false],
    ['ls &', false],
    ['ls *.ts', false],
    ['', false],
  ])('%j → %s', (command, safe) => {
    expect(isKnownSafeCommand(command)).toBe(safe);
  });
});
