import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { JsonObject, ToolExecutor, ToolName, ToolOutput, ToolPayload } from '@switchyard/protocol';
import { FunctionToolOutput, defineFreeformTool } from '@switchyard/kit';
import { invokeTool } from '@switchyard/registry/testing';
import { isBarePatch, parseApplyPatchCommand, rebasePatchPaths } from './apply-patch-interception';
import { createExecToolset, type ExecToolset } from './exec-tools';
import { callTool, codeModeValue, failureOf, makeWorkspace, modelText } from './test-support';

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch';

describe('parseApplyPatchCommand', () => {
  test.each([
    [`apply_patch <<'EOF'\n${PATCH}\nEOF`, { patch: PATCH }],
    [`apply_patch <<"EOF"\n${PATCH}\nEOF\n`, { patch: PATCH }],
    [`apply_patch <<EOF\n${PATCH}\nEOF`, { patch: PATCH }],
    [`applypatch <<'PATCH'\n${PATCH}\nPATCH`, { patch: PATCH }],
    [`cd sub && apply_patch <<'EOF'\n${PATCH}\nEOF`, { patch: PATCH, cd: 'sub' }],
    [`cd 'my dir' && apply_patch <<'EOF'\n${PATCH}\nEOF`, { patch: PATCH, cd: 'my dir' }],
    [`apply_patch '${PATCH}'`, { patch: PATCH }],
  ])('recognizes %j', (command, expected) => {
    expect(parseApplyPatchCommand(command)).toEqual(expected);
  });

  test.each([
    `apply_patch <<'EOF"\n${PATCH}\nEOF`, // mismatched quotes
    `echo hi && apply_patch <<'EOF'\n${PATCH}\nEOF`,
    `apply_patch <<'EOF'\n${PATCH}\nEOF\necho more`,
    'apply_patch',
    'ls -la',
  ])('ignores %j', (command) => {
    expect(parseApplyPatchCommand(command)).toBeUndefined();
  });

  test('a bare patch is recognized as one', () => {
    expect(isBarePatch(`\n${PATCH}`)).toBe(true);
    expect(isBarePatch(`apply_patch '${PATCH}'`)).toBe(false);
  });

  test('paths of a patch meant for a subdirectory are rebased onto the root', () => {
    const patch = '*** Begin Patch\n*** Update File: a.txt\n*** Move to: ../b.txt\n@@\n-x\n+y\n*** Add File: /abs/c.txt\n+c\n*** End Patch';
    expect(rebasePatchPaths(patch, '/w/sub', '/w')).toBe(
      '*** Begin Patch\n*** Update File: sub/a.txt\n*** Move to: b.txt\n@@\n-x\n+y\n*** Add File: /abs/c.txt\n+c\n*** End Patch',
    );
    expect(rebasePatchPaths(patch, '/w', '/w')).toBe(patch);
    expect(rebasePatchPaths('*** Delete File: ../../etc/x', '/w/sub', '/w')).toBe('*** Delete File: /etc/x');
  });
});

/** A stand-in apply_patch tool, registered beside exec_command, that records the patches it is given. */
function fakeApplyPatch(answer: (input: string) => ToolOutput) {
  const calls: Array<{ name: ToolName; payload: ToolPayload }> = [];
  const tool: ToolExecutor = defineFreeformTool({
    name: 'apply_patch',
    description: 'stand-in',
    handle: ({ input, invocation }) => {
      calls.push({ name: invocation.toolName, payload: invocation.payload });
      return answer(input);
    },
  });
  return { tools: [tool], calls };
}

const toolsets: ExecToolset[] = [];
afterEach(async () => {
  await Promise.all(toolsets.splice(0).map((toolset) => toolset.shutdown()));
});

function openFullAccess() {
  const root = makeWorkspace();
  const toolset = createExecToolset({ root, sandbox: 'danger-full-access', approvalPolicy: 'never' });
  toolsets.push(toolset);
  return { root, exec: toolset.tools[0] };
}

describe('exec_command intercepts apply_patch', () => {
  test('a heredoc runs the registered apply_patch tool; the model reads its answer in the shell frame, no warning, no token count', async () => {
    const { exec } = openFullAccess();
    const { tools, calls } = fakeApplyPatch(() => FunctionToolOutput.text('Success. Updated the following files:\nA hello.txt\n'));
    const output = await callTool(exec, { cmd: `apply_patch <<'EOF'\n${PATCH}\nEOF` }, { tools });
    expect(calls).toEqual([{ name: { name: 'apply_patch' }, payload: { kind: 'custom', input: PATCH } }]);
    expect(modelText(output)).toMatch(
      /^Wall time: \d+\.\d{4} seconds\nOutput:\nSuccess\. Updated the following files:\nA hello\.txt\n$/,
    );
    expect((output.codeModeResult({ kind: 'function', arguments: '{}' }) as JsonObject).exit_code).toBeUndefined();
    // Not a finished process: PreToolUse sees the Bash call, no Bash PostToolUse follows the interception.
    const hooked = await invokeTool(exec, { cmd: `apply_patch <<'EOF'\n${PATCH}\nEOF` }, { tools });
    expect(hooked.success).toBe(true);
    expect(hooked.hookInputs.pre.map((request) => request.toolName)).toContain('Bash');
    expect(hooked.hookInputs.post.filter((request) => request.toolName === 'Bash')).toEqual([]);
  });

  test('a cd prefix or a workdir rebases the patch paths onto the workspace root', async () => {
    const { exec, root } = openFullAccess();
    mkdirSync(join(root, 'pkg'));
    const { tools, calls } = fakeApplyPatch(() => FunctionToolOutput.text('ok'));
    await callTool(exec, { cmd: `cd pkg && apply_patch <<'EOF'\n${PATCH}\nEOF` }, { tools });
    await callTool(exec, { cmd: `apply_patch <<'EOF'\n${PATCH}\nEOF`, workdir: 'pkg' }, { tools });
    expect(calls.map((call) => (call.payload.kind === 'custom' ? call.payload.input : ''))).toEqual([
      PATCH.replace('hello.txt', 'pkg/hello.txt'),
      PATCH.replace('hello.txt', 'pkg/hello.txt'),
    ]);
  });

  test('a failed patch is a model-visible failure carrying the error as the apply_patch tool wrote it', async () => {
    const { exec } = openFullAccess();
    const { tools } = fakeApplyPatch(() => FunctionToolOutput.text('apply_patch verification failed: bad', false));
    expect(await failureOf(callTool(exec, { cmd: `apply_patch <<'EOF'\n${PATCH}\nEOF` }, { tools }))).toEqual({
      message: 'apply_patch verification failed: bad',
      code: 'RESPOND_TO_MODEL',
    });
  });

  test('a bare patch as the command gets the reference error', async () => {
    const { exec } = openFullAccess();
    const { tools, calls } = fakeApplyPatch(() => FunctionToolOutput.text('ok'));
    expect((await failureOf(callTool(exec, { cmd: PATCH }, { tools }))).message).toBe(
      'patch detected without explicit call to apply_patch. Rerun as ["apply_patch", "<patch>"]',
    );
    expect(calls).toHaveLength(0);
  });

  test('without a registered apply_patch tool the command simply runs in the shell', async () => {
    const { exec } = openFullAccess();
    const output = await callTool(exec, { cmd: `apply_patch <<'EOF'\n${PATCH}\nEOF` });
    const value = output.codeModeResult({ kind: 'function', arguments: '{}' }) as JsonObject;
    expect(value.exit_code).toBe(127);
    expect(value.output).toContain('apply_patch');
  });
});
