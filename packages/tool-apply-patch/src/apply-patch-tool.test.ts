import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { chmod, cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toWireTool, type JsonValue, type StepContext, type SwitchyardEvent, type ToolPayload } from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';
import { createToolHarness, invokeTool, testExecutor } from '@switchyard/registry/testing';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { applyPatchTool } from './apply-patch-tool';
import { helperCommand } from './run-helper';
import { getTurnDiff } from './turn-diff';
import { callPatchTool, custom, workspaceFolders, wrap } from './test-support';

let base: string;
let root: string;

beforeEach(async () => ({ base, root } = await workspaceFolders('apply-patch-tool-')));
afterEach(() => rm(base, { recursive: true, force: true }));



// Every conformance call writes into a folder of its own (an explicit root wins over the step cwd).
const conformanceRoot = mkdtempSync(join(tmpdir(), 'apply-patch-conformance-'));
afterAll(() => rmSync(conformanceRoot, { recursive: true, force: true }));
testExecutor({
  executor: applyPatchTool({ root: conformanceRoot }),
  sample: wrap('*** Add File: conformance.txt', '+ok'),
  invalid: ['not a patch', wrap('*** Delete File: missing.txt')],
  // Each call starts a helper process (from source through tsx: seconds on a loaded machine).
  timeout: 90_000,
});

// Each call starts a helper process (from source through tsx: seconds on a loaded machine).
describe('applyPatchTool', { timeout: 90_000 }, () => {
  it('is the freeform apply_patch tool with the reference description and Lark grammar', () => {
    const tool = applyPatchTool();
    expect(tool.name).toEqual({ name: 'apply_patch' });
    const wire = toWireTool(tool.spec);
    expect(wire).toMatchObject({
      type: 'custom',
      name: 'apply_patch',
      description: 'Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.',
      format: { type: 'grammar', syntax: 'lark' },
    });
    const definition = (wire as { format: { definition: string } }).format.definition;
    // byte for byte the reference's grammar, blank lines included (tools/codex-differential compares the tool table with the binary's)
    expect(definition).toBe(
      'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\nend_patch: "*** End Patch" LF?\n\nhunk: add_hunk | delete_hunk | update_hunk\n' +
        'add_hunk: "*** Add File: " filename LF add_line+\ndelete_hunk: "*** Delete File: " filename LF\nupdate_hunk: "*** Update File: " filename LF change_move? change?\n\n' +
        'filename: /(.+)/\nadd_line: "+" /(.*)/ LF -> line\n\nchange_move: "*** Move to: " filename LF\nchange: (change_context | change_line)+ eof_line?\n' +
        'change_context: ("@@" | "@@ " /(.+)/) LF\nchange_line: ("+" | "-" | " ") /(.*)/ LF\neof_line: "*** End of File" LF\n\n%import common.LF\n',
    );
  });

  it('applies in the step cwd and answers with the summary; Code Mode gets the lists', async () => {
    await writeFile(join(root, 'a.txt'), 'hello\n');
    const output = await callPatchTool(wrap('*** Update File: a.txt', '-hello', '+world', '*** Add File: b.txt', '+new'), createStepContext({ cwd: root }));
    expect(output.success).toBe(true);
    // the summary inside the reference's shell-output frame (the wall time in whole seconds)
    expect(output.toResponseItem('call-9', custom(''))).toEqual({
      type: 'custom_tool_call_output',
      call_id: 'call-9',
      output: expect.stringMatching(/^Exit code: 0\nWall time: \d+ seconds\nOutput:\nSuccess\. Updated the following files:\nA b\.txt\nM a\.txt\n$/),
    });
    expect(output.codeModeResult(custom(''))).toEqual({ status: 'completed', added: ['b.txt'], modified: ['a.txt'], deleted: [] });
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('world\n');
  });

  it('an explicit root wins over the step cwd', async () => {
    await callPatchTool(wrap('*** Add File: x.txt', '+x'), createStepContext({ cwd: base }), [], applyPatchTool({ root }));
    expect(await readFile(join(root, 'x.txt'), 'utf8')).toBe('x\n');
  });

  it('refuses every call under a read-only sandbox, before reading or writing anything', async () => {
    await writeFile(join(root, 'a.txt'), 'hello\n');
    const events: SwitchyardEvent[] = [];
    const step = createStepContext({ cwd: root, sandboxMode: 'read-only' });
    const patch = wrap('*** Update File: a.txt', '-hello', '+world', '*** Add File: b.txt', '+new', '*** Delete File: a.txt');
    await expect(callPatchTool(patch, step, events)).rejects.toMatchObject({
      code: 'RESPOND_TO_MODEL',
      message: 'apply_patch is not allowed: the sandbox is read-only',
    });
    // Refused before verification: even an invalid patch gets the sandbox error.
    await expect(callPatchTool('not a patch', step, events)).rejects.toThrow(/^apply_patch is not allowed: the sandbox is read-only$/);
    expect(events).toEqual([]);
    expect(step.turnState.size).toBe(0);
    expect(await readdir(root)).toEqual(['a.txt']);
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('hello\n');
  });

  it('writes under workspace-write, and under read-only when the host allows it', async () => {
    await callPatchTool(wrap('*** Add File: w.txt', '+w'), createStepContext({ cwd: root, sandboxMode: 'workspace-write' }));
    expect(await readFile(join(root, 'w.txt'), 'utf8')).toBe('w\n');
    const output = await callPatchTool(wrap('*** Add File: r.txt', '+r'), createStepContext({ cwd: root, sandboxMode: 'read-only' }), [], applyPatchTool({ allowWritesInReadOnly: true }));
    expect(output.success).toBe(true);
    expect(await readFile(join(root, 'r.txt'), 'utf8')).toBe('r\n');
  });

  it('tells the model why verification failed, and emits no events', async () => {
    const events: SwitchyardEvent[] = [];
    const step = createStepContext({ cwd: root });
    await expect(callPatchTool('*** Update File: a.txt', step, events)).rejects.toMatchObject({
      code: 'RESPOND_TO_MODEL',
      message: "apply_patch verification failed: invalid patch: The first line of the patch must be '*** Begin Patch'",
    });
    await expect(callPatchTool(wrap('*** Update File: test.py'), step, events)).rejects.toThrow(
      "apply_patch verification failed: invalid hunk at line 2, Update file hunk for path 'test.py' is empty",
    );
    await expect(callPatchTool(wrap('*** Delete File: nope.txt'), step, events)).rejects.toThrow(
      `apply_patch verification failed: Failed to read ${root}/nope.txt: No such file or directory (os error 2)`,
    );
    await expect(callPatchTool(wrap('*** Add File: ../escape.txt', '+x'), step, events)).rejects.toThrow(
      "apply_patch verification failed: path '../escape.txt' resolves outside the workspace root",
    );
    // An empty patch answers like Codex's tool (not its library's "No files were modified.").
    await expect(callPatchTool('*** Begin Patch\n*** End Patch', step, events)).rejects.toMatchObject({ code: 'RESPOND_TO_MODEL', message: 'patch rejected: empty patch' });
    await expect(callPatchTool('  *** Begin Patch  \n  *** End Patch\n', step, events)).rejects.toThrow(/^patch rejected: empty patch$/);
    expect(events).toEqual([]);
  });

  it('emits begin and end notifications and the turn diff', async () => {
    await writeFile(join(root, 'a.txt'), 'one\n');
    const events: SwitchyardEvent[] = [];
    await callPatchTool(wrap('*** Update File: a.txt', '-one', '+two'), createStepContext({ cwd: root, turnId: 'turn-7' }), events);
    const change = { kind: 'update', path: 'a.txt', newContent: 'two\n', unifiedDiff: '@@ -1,1 +1,1 @@\n-one\n+two\n' };
    expect(events).toEqual([
      { type: 'tool-notification', callId: 'call-9', name: 'patch-apply-begin', data: { turnId: 'turn-7', autoApproved: true, changes: [change] } },
      {
        type: 'tool-notification',
        callId: 'call-9',
        name: 'patch-apply-end',
        data: { turnId: 'turn-7', success: true, status: 'completed', stdout: 'Success. Updated the following files:\nM a.txt\n', stderr: '', changes: [change] },
      },
      {
        type: 'tool-notification',
        callId: 'call-9',
        name: 'turn-diff',
        data: { turnId: 'turn-7', unifiedDiff: 'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-one\n+two\n' },
      },
    ]);
  });

  it('a turn-diff event keeps the turn diff of its own patch, however late it is read', async () => {
    await writeFile(join(root, 'a.txt'), 'one\n');
    await writeFile(join(root, 'b.txt'), 'uno\n');
    const tool = applyPatchTool();
    const step = createStepContext({ cwd: root, turnId: 'turn-8' });
    const seen: SwitchyardEvent[] = [];
    try {
      await callPatchTool(wrap('*** Update File: a.txt', '-one', '+two'), step, seen, tool);
      await callPatchTool(wrap('*** Update File: b.txt', '-uno', '+dos'), step, seen, tool);
    } finally {
      await tool.dispose?.({ sessionId: step.sessionId });
    }
    const diffs = seen.filter((event) => event.type === 'tool-notification' && event.name === 'turn-diff').map((event) => (event as unknown as { data: { unifiedDiff: string } }).data.unifiedDiff);
    const a = 'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-one\n+two\n';
    const b = 'diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1,1 +1,1 @@\n-uno\n+dos\n';
    // Both read only now, after the second patch: the first still says what the turn was after the first.
    expect(diffs).toEqual([a, a + b]);
    // The change texts the helper sent, decoded on first read.
    const begins = seen.filter((event) => event.type === 'tool-notification' && event.name === 'patch-apply-begin').map((event) => JSON.parse(JSON.stringify((event as unknown as { data: JsonValue }).data)));
    expect(begins.map((data) => data.changes)).toEqual([
      [{ kind: 'update', path: 'a.txt', newContent: 'two\n', unifiedDiff: '@@ -1,1 +1,1 @@\n-one\n+two\n' }],
      [{ kind: 'update', path: 'b.txt', newContent: 'dos\n', unifiedDiff: '@@ -1,1 +1,1 @@\n-uno\n+dos\n' }],
    ]);
  });

  it('a failing write emits a failed end event and changes nothing', async () => {
    await writeFile(join(root, 'a.txt'), 'one\n');
    await writeFile(join(root, 'blocker'), 'file\n');
    const events: SwitchyardEvent[] = [];
    await expect(callPatchTool(wrap('*** Update File: a.txt', '-one', '+two', '*** Add File: blocker/x', '+x'), createStepContext({ cwd: root }), events)).rejects.toThrow(
      'Failed to create parent directories for blocker/x: File exists. No files were changed.',
    );
    expect(events.map((event) => event.type === 'tool-notification' && [event.name, (event.data as { status?: string }).status])).toEqual([
      ['patch-apply-begin', undefined],
      ['patch-apply-end', 'failed'],
    ]);
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('one\n');
  });

  it('a throwing event listener does not fail the patch', async () => {
    const harness = createToolHarness(applyPatchTool(), { step: { cwd: root }, hooks: false });
    harness.router.on('tool-notification', () => {
      throw new Error('listener broke');
    });
    const result = await harness.call(custom(wrap('*** Add File: ok.txt', '+ok')));
    harness.dispose();
    expect(result.success).toBe(true);
    expect(await readFile(join(root, 'ok.txt'), 'utf8')).toBe('ok\n');
  });
});

describe('turn diff', { timeout: 90_000 }, () => {
  it('aggregates every patch of the turn against each file at first touch, and git apply accepts it', async () => {
    await writeFile(join(root, 'keep.txt'), 'k1\nk2\nk3\n');
    await writeFile(join(root, 'gone.txt'), 'bye\n');
    const baseline = join(base, 'baseline');
    await cp(root, baseline, { recursive: true });
    const step = createStepContext({ cwd: root });
    await callPatchTool(wrap('*** Update File: keep.txt', '-k2', '+K2', '*** Add File: new/file.txt', '+first'), step);
    await callPatchTool(wrap('*** Update File: keep.txt', '-k3', '+K3', '*** Update File: new/file.txt', '-first', '+second', '*** Delete File: gone.txt'), step);
    const diff = getTurnDiff(step);
    expect(diff).toBe(
      [
        'diff --git a/gone.txt b/gone.txt',
        'deleted file mode 100644',
        '--- a/gone.txt',
        '+++ /dev/null',
        '@@ -1,1 +0,0 @@',
        '-bye',
        'diff --git a/keep.txt b/keep.txt',
        '--- a/keep.txt',
        '+++ b/keep.txt',
        '@@ -1,3 +1,3 @@',
        ' k1',
        '-k2',
        '-k3',
        '+K2',
        '+K3',
        'diff --git a/new/file.txt b/new/file.txt',
        'new file mode 100644',
        '--- /dev/null',
        '+++ b/new/file.txt',
        '@@ -0,0 +1,1 @@',
        '+second',
        '',
      ].join('\n'),
    );
    await writeFile(join(base, 'turn.diff'), diff);
    execFileSync('git', ['apply', join(base, 'turn.diff')], { cwd: baseline });
    expect(await readFile(join(baseline, 'keep.txt'), 'utf8')).toBe('k1\nK2\nK3\n');
    expect(await readFile(join(baseline, 'new/file.txt'), 'utf8')).toBe('second\n');
    await expect(readFile(join(baseline, 'gone.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('is empty before any patch', () => {
    expect(getTurnDiff(createStepContext())).toBe('');
  });
});

describe('hook payload', { timeout: 90_000 }, () => {
  /** The PreToolUse hook answering `updatedInput`, through the registry. */
  const rewriting = (updatedInput: JsonValue) => ({
    runPreToolUse: async () => ({ blocked: false, updatedInput, additionalContexts: [] }),
    runPostToolUse: async () => ({ additionalContexts: [] }),
  });

  it('pre and post carry apply_patch with the Write/Edit aliases and { command: patch }', async () => {
    const patch = wrap('*** Add File: h.txt', '+h');
    const result = await invokeTool(applyPatchTool({ root }), custom(patch));
    const [pre] = result.hookInputs.pre;
    expect([pre.toolName, pre.aliases, pre.toolInput]).toEqual(['apply_patch', ['Write', 'Edit'], { command: patch }]);
    const [post] = result.hookInputs.post;
    expect([post.toolName, post.aliases, post.toolInput, post.toolResponse]).toEqual([
      'apply_patch',
      ['Write', 'Edit'],
      { command: patch },
      { status: 'completed', added: ['h.txt'], modified: [], deleted: [] },
    ]);
  });

  it('a rewrite needs a string command', async () => {
    const rewritten = wrap('*** Add File: rewritten.txt', '+r');
    const result = await invokeTool(applyPatchTool({ root }), custom('old'), { hooks: rewriting({ command: rewritten }) });
    expect(result.payload).toEqual({ kind: 'custom', input: rewritten });
    expect(await readdir(root)).toEqual(['rewritten.txt']);
    for (const bad of [{ command: 42 }, 'text', null, { cmd: 'x' }] as JsonValue[]) {
      const refused = await invokeTool(applyPatchTool({ root }), custom('old'), { hooks: rewriting(bad) });
      expect(refused.item).toMatchObject({ type: 'custom_tool_call_output', output: 'hook returned updatedInput without string field `command`' });
    }
  });
});

describe('the helper process', { timeout: 90_000 }, () => {
  it('an abort after verification writes nothing and answers aborted; a begin event came first', async () => {
    await writeFile(join(root, 'a.txt'), 'one\n');
    const controller = new AbortController();
    const harness = createToolHarness(applyPatchTool(), { step: { cwd: root }, signal: controller.signal, hooks: false });
    // The host learns of the verified patch and is cancelled before it says "commit".
    harness.router.on('tool-notification', (event) => {
      if (event.name === 'patch-apply-begin') controller.abort();
    });
    const result = await harness.call(custom(wrap('*** Update File: a.txt', '-one', '+two', '*** Add File: b.txt', '+b')), 'abort-1');
    expect(result.error?.code).toBe('ABORTED');
    expect(result.item).toMatchObject({ type: 'custom_tool_call_output', call_id: 'abort-1', output: expect.stringMatching(/^aborted by user after \d+\.\ds$/) });
    // The runtime answers at once; the helper is told to stop and reports its end.
    await vi.waitFor(() => expect(harness.events.map((event) => (event as { name?: string }).name)).toContain('patch-apply-end'), { timeout: 30_000 });
    harness.dispose();
    const names = harness.events.filter((event) => event.type === 'tool-notification').map((event) => (event as { name?: string }).name);
    expect(names).toEqual(['patch-apply-begin', 'patch-apply-end']);
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('one\n');
    expect(await readdir(root)).toEqual(['a.txt']);
  });

  it('a helper that cannot run, or dies, answers HELPER_FAILED and changes nothing; a wrap that refuses is passed on', async () => {
    const step = createStepContext({ cwd: root });
    const dies = applyPatchTool({ wrapHelper: () => ({ file: '/bin/sh', args: ['-c', 'echo "helper broke" >&2; exit 3'] }) });
    await expect(callPatchTool(wrap('*** Add File: x.txt', '+x'), step, [], dies)).rejects.toThrow(/^apply_patch helper exited with code 3: helper broke; no file was changed$/);
    const missing = applyPatchTool({ wrapHelper: () => ({ file: '/no/such/launcher', args: [] }) });
    await expect(callPatchTool(wrap('*** Add File: x.txt', '+x'), step, [], missing)).rejects.toThrow(/^apply_patch helper could not start: .*; no file was changed$/);
    const refuses = applyPatchTool({
      wrapHelper: () => {
        throw Object.assign(new Error('sandbox unavailable: bubblewrap was not found'), { code: 'SANDBOX_UNAVAILABLE' });
      },
    });
    await expect(callPatchTool(wrap('*** Add File: x.txt', '+x'), step, [], refuses)).rejects.toThrow('sandbox unavailable: bubblewrap was not found');
    expect(await readdir(root)).toEqual([]);
  });

  it('a patch over the size cap is refused by the host before any helper starts', async () => {
    const tool = applyPatchTool({ limits: { maxPatchBytes: 100 }, wrapHelper: () => { throw new Error('must not start'); } });
    await expect(callPatchTool(wrap('*** Add File: x.txt', `+${'x'.repeat(200)}`), createStepContext({ cwd: root }), [], tool)).rejects.toMatchObject({
      code: 'LIMIT_EXCEEDED',
      message: 'apply_patch verification failed: the patch is 251 bytes; apply_patch accepts patches of at most 100 bytes',
    });
  });
});

describe('through the exec sandbox', { timeout: 90_000 }, () => {
  it('under workspace-write the kernel keeps the writes in the workspace, whatever the path checks allow', async () => {
    // Outside /tmp, which is private inside the sandbox (a write there would vanish, not fail).
    const outside = await mkdtemp('/var/tmp/apply-patch-outside-');
    // World-writable: file permissions would let the sandbox user in; only the read-only mount stops it.
    await chmod(outside, 0o777);
    // allowOutsideRoot turns the path check off: only the sandbox stands between the patch and `outside`.
    const tool = applyPatchTool({ allowOutsideRoot: true });
    const escaped = join(outside, 'escaped.txt');
    const patch = wrap('*** Add File: inside.txt', '+in', `*** Add File: ${escaped}`, '+out');
    try {
    const events: SwitchyardEvent[] = [];
    await expect(callPatchTool(patch, createStepContext({ cwd: root, sandboxMode: 'workspace-write' }), events, tool)).rejects.toThrow(
      `Failed to write file ${escaped}: Read-only file system. No files were changed.`,
    );
    expect(await readdir(outside)).toEqual([]);
    expect((await readdir(root)).filter((name) => name !== '.git')).toEqual([]);
    expect(events.map((event) => (event as { name?: string }).name)).toEqual(['patch-apply-begin', 'patch-apply-end']);
    // The same patch without a sandbox writes both (the host allowed outside paths).
    await callPatchTool(patch, createStepContext({ cwd: root, sandboxMode: 'danger-full-access' }), [], tool);
    expect(await readFile(escaped, 'utf8')).toBe('out\n');
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('the helper names what it reads to start — this Node and, from source, the checkout — for the sandbox to show read-only', () => {
    const command = helperCommand();
    const node = realpathSync(process.execPath);
    const checkout = realpathSync(fileURLToPath(new URL('../../..', import.meta.url)));
    expect(command.file).toBe(node);
    expect(command.reads).toEqual([node, checkout]);
    expect(command.args.at(-1)).toBe(join(checkout, 'packages', 'tool-apply-patch', 'src', 'apply-patch-helper.ts'));
  });

  it('a sandbox that cannot start refuses the patch; it never falls back to writing unsandboxed', async () => {
    const tool = applyPatchTool({ sandbox: { bwrapPath: '/no/such/bwrap' } });
    await expect(callPatchTool(wrap('*** Add File: x.txt', '+x'), createStepContext({ cwd: root, sandboxMode: 'workspace-write' }), [], tool)).rejects.toMatchObject({
      code: 'SANDBOX_UNAVAILABLE',
    });
    expect(await readdir(root)).toEqual([]);
  });
});
