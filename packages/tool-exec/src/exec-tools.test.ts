import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, test, vi } from 'vitest';
import { type HookRunner, type JsonValue, type SwitchyardEvent } from '@switchyard/protocol';
import { invokeTool, testExecutor, type InvokeToolResult } from '@switchyard/registry/testing';
import { createExecToolset, execTools, type ExecToolset, type ExecToolsOptions } from './exec-tools';
import { callTool, codeModeValue, failureOf, makeWorkspace, modelText, sleepProcesses, uniqueSleepSeconds } from './test-support';
import { becomes } from '@switchyard/test-helpers';

const toolsets: ExecToolset[] = [];

function openToolset(options: ExecToolsOptions = {}) {
  const root = makeWorkspace();
  const toolset = createExecToolset({ root, sandbox: 'danger-full-access', approvalPolicy: 'never', ...options });
  toolsets.push(toolset);
  const [exec, write] = toolset.tools;
  return { root, toolset, exec, write };
}

afterEach(async () => {
  await Promise.all(toolsets.splice(0).map((toolset) => toolset.shutdown()));
});

// The conformance suites keep their own toolsets (the afterEach above shuts its list down after
// every test); each suite's lifecycle check shuts its toolset down, afterAll covers a failed run.
const conformanceToolsets: ExecToolset[] = [];
afterAll(async () => {
  await Promise.all(conformanceToolsets.map((toolset) => toolset.shutdown()));
});
function conformanceToolset(): ExecToolset {
  const toolset = createExecToolset({ root: makeWorkspace(), sandbox: 'danger-full-access', approvalPolicy: 'never', shell: '/bin/sh' });
  conformanceToolsets.push(toolset);
  return toolset;
}

testExecutor({
  executor: () => conformanceToolset().tools[0],
  sample: { cmd: 'echo conformance', yield_time_ms: 5_000 },
  invalid: [{ cmd: '  ' }, { cmd: 'true', tty: 'yes' }, { cmd: 'true', workdir: 'no/such/dir' }],
});

let writeToolset: ExecToolset | undefined;
testExecutor({
  executor: () => (writeToolset = conformanceToolset()).tools[1],
  // Every write_stdin call needs a live process: each sample starts a `cat` of its own (after the
  // lifecycle check's shutdown nothing starts, and the call names an unknown process instead).
  sample: async () => {
    const started = await callTool(writeToolset!.tools[0], { cmd: 'cat', tty: true, yield_time_ms: 250 }).catch(() => undefined);
    return { session_id: started ? (codeModeValue(started).session_id as number) : 999_999, chars: 'conformance\n', yield_time_ms: 500 };
  },
  invalid: [{ session_id: 999_999 }, { session_id: 'one' }, { chars: 'x' }],
});

describe('exec_command output', () => {
  test('a finished command: the reference header, interleaved stdout and stderr, the exit code', async () => {
    const { exec } = openToolset();
    const output = await callTool(exec, { cmd: "printf 'out\\n'; sleep 0.05; printf 'err\\n' >&2; exit 7" });
    expect(modelText(output)).toMatch(/^Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\nProcess exited with code 7\nOriginal token count: 2\nOutput:\nout\nerr\n$/);
    expect(codeModeValue(output)).toEqual({
      chunk_id: expect.stringMatching(/^[0-9a-f]{6}$/),
      wall_time_seconds: expect.any(Number),
      exit_code: 7,
      original_token_count: 2,
      output: 'out\nerr\n',
    });
    expect(output.success).toBe(true);
  });

  test('exit code 0, and 128 + signal for a killed command', async () => {
    const { exec } = openToolset();
    expect(codeModeValue(await callTool(exec, { cmd: 'true' })).exit_code).toBe(0);
    expect(codeModeValue(await callTool(exec, { cmd: 'kill -TERM $$' })).exit_code).toBe(143);
  });

  test('the command runs in the workspace root, or in a relative workdir', async () => {
    const { exec, root } = openToolset({ shell: '/bin/sh' });
    mkdirSync(join(root, 'sub'));
    expect(codeModeValue(await callTool(exec, { cmd: 'pwd' })).output).toBe(`${root}\n`);
    expect(codeModeValue(await callTool(exec, { cmd: 'pwd', workdir: 'sub' })).output).toBe(`${join(root, 'sub')}\n`);
    const missing = await failureOf(callTool(exec, { cmd: 'pwd', workdir: 'nope' }));
    // the reference's words: the command line it would have run, and its process creation's error
    expect(missing.message).toBe('exec_command failed for `/bin/sh -c pwd`: CreateProcess { message: "Rejected(\\"Failed to create unified exec process: No such file or directory (os error 2)\\")" }');
  });

  test('long output is truncated to max_output_tokens with the original token count', async () => {
    const { exec } = openToolset();
    const output = await callTool(exec, { cmd: 'seq 1 3000', max_output_tokens: 40 });
    const text = modelText(output);
    const original = Math.ceil(Buffer.byteLength(Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join('')) / 4);
    expect(text).toContain(`Process exited with code 0\nOriginal token count: ${original}\nOutput:\nWarning: truncated output (original token count: ${original})\nTotal output lines: 3000\n\n1\n2\n`);
    expect(text).toMatch(/…\d+ tokens truncated…/);
    expect(text.endsWith('2999\n3000\n')).toBe(true);
  });

  test('retained output is capped, keeping its head and its tail', async () => {
    const { exec } = openToolset({ maxRetainedBytes: 1000 });
    const output = await callTool(exec, { cmd: "echo START; head -c 200000 /dev/zero | tr '\\0' x; echo; echo END" });
    const text = codeModeValue(output).output as string;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1000);
    expect(text.startsWith('START\nxxx')).toBe(true);
    expect(text.endsWith('xxx\nEND\n')).toBe(true);
  });

  test('bad arguments and disabled login shells are answered to the model', async () => {
    const { exec } = openToolset();
    expect((await failureOf(callTool(exec, { cmd: '  ' }))).message).toBe('exec_command: `cmd` must be a non-empty string');
    // A wrong type fails the reading of the arguments before the handler, in serde's words as the reference answers.
    expect((await failureOf(callTool(exec, { cmd: 'true', tty: 'yes' }))).message).toBe('failed to parse function arguments: invalid type: string "yes", expected a boolean at line 1 column 25');
    expect((await failureOf(callTool(exec, {}))).message).toBe('failed to parse function arguments: missing field `cmd` at line 1 column 2');
    // unknown properties are ignored, as the reference ignores them
    expect(codeModeValue(await callTool(exec, { cmd: 'echo ran', timeout_ms: 5 }))).toMatchObject({ exit_code: 0, output: 'ran\n' });
    // The handler's own check, for a host that turns schema validation off for it.
    const unvalidated = { ...exec, skipInputValidation: true };
    expect((await failureOf(callTool(unvalidated, { cmd: 'true', tty: 'yes' }))).message).toBe('exec_command: `tty` must be a boolean');
    // Without allowLoginShell `login` is neither offered nor read: like any unknown property it is
    // ignored, and the command runs with -c as configured (also when validation is off).
    for (const tool of [exec, unvalidated]) {
      expect(codeModeValue(await callTool(tool, { cmd: 'shopt -q login_shell && echo login || echo plain', shell: '/bin/bash', login: true })).output).toBe('plain\n');
      expect(codeModeValue(await callTool(tool, { cmd: 'echo ran', login: 'yes' }))).toMatchObject({ exit_code: 0, output: 'ran\n' });
    }
    expect((await failureOf(callTool(exec, { cmd: 'true', shell: '/no/such/shell' }))).message).toBe('exec_command failed for `true`: shell not found: /no/such/shell');
  });

  test('login shells when allowed: the parameter is offered and -l is used', async () => {
    const { exec } = openToolset({ allowLoginShell: true, shell: '/bin/bash' });
    expect(Object.keys((exec.spec as { parameters: { properties: object } }).parameters.properties)).toContain('login');
    expect(codeModeValue(await callTool(exec, { cmd: 'shopt -q login_shell && echo login || echo plain' })).output).toBe('login\n');
    expect(codeModeValue(await callTool(exec, { cmd: 'shopt -q login_shell && echo login || echo plain', login: false })).output).toBe('plain\n');
    const { exec: plain } = openToolset();
    expect(Object.keys((plain.spec as { parameters: { properties: object } }).parameters.properties)).not.toContain('login');
  });

  test('begin and end notifications are emitted', async () => {
    const { exec, root } = openToolset();
    const events: SwitchyardEvent[] = [];
    await callTool(exec, { cmd: 'exit 2' }, { events });
    expect(events.map((event) => (event.type === 'tool-notification' ? [event.name, event.data] : event.type))).toEqual([
      ['exec-command-begin', { command: 'exit 2', cwd: root, tty: false, sandbox: 'danger-full-access' }],
      ['exec-command-end', { command: 'exit 2', exit_code: 2 }],
    ]);
  });
});

describe('sessions and write_stdin', () => {
  test('a long-running loop answers with a session id; an empty poll collects the rest and the exit code', async () => {
    const { exec, write, toolset } = openToolset();
    const first = await callTool(exec, { cmd: 'for i in 1 2 3 4; do echo tick$i; sleep 0.3; done', yield_time_ms: 400 });
    expect(modelText(first)).toMatch(/^Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\nProcess running with session ID 1000\nOriginal token count: \d+\nOutput:\ntick1\n/);
    expect(codeModeValue(first).session_id).toBe(1000);
    expect(codeModeValue(first).exit_code).toBeUndefined();
    expect(toolset.liveSessionIds()).toEqual([1000]);

    const rest = await callTool(write, { session_id: 1000 });
    expect(modelText(rest)).toMatch(/\nProcess exited with code 0\nOriginal token count: \d+\nOutput:\n(tick\d\n)+$/);
    expect(`${codeModeValue(first).output}${codeModeValue(rest).output}`).toBe('tick1\ntick2\ntick3\ntick4\n');
    expect(toolset.liveSessionIds()).toEqual([]);
    expect((await failureOf(callTool(write, { session_id: 1000 }))).message).toBe('write_stdin failed: Unknown process id 1000');
  });

  test('tty: true gives a terminal; cat echoes what write_stdin sends and ends on Ctrl-D', async () => {
    const { exec, write } = openToolset();
    expect(codeModeValue(await callTool(exec, { cmd: 'tty', tty: true })).output).toMatch(/^\/dev\/pts\/\d+\r?\n$/);
    const piped = codeModeValue(await callTool(exec, { cmd: 'tty' }));
    expect(piped).toMatchObject({ exit_code: 1, output: 'not a tty\n' });

    const started = codeModeValue(await callTool(exec, { cmd: 'cat', tty: true, yield_time_ms: 300 }));
    const id = started.session_id as number;
    expect(id).toBeGreaterThanOrEqual(1000);
    const events: SwitchyardEvent[] = [];
    const echoed = await callTool(write, { session_id: id, chars: 'hello pty\n', yield_time_ms: 500 }, { events });
    expect(codeModeValue(echoed).output).toContain('hello pty');
    expect(modelText(echoed)).toContain(`Process running with session ID ${id}`);
    expect(events).toContainEqual(expect.objectContaining({ type: 'tool-notification', name: 'terminal-interaction', data: { session_id: id, stdin: 'hello pty\n' } }));
    const ended = await callTool(write, { session_id: id, chars: '\u0004', yield_time_ms: 3000 });
    expect(codeModeValue(ended).exit_code).toBe(0);
  });

  test('without a tty stdin is closed: commands that read it end, writes are refused', async () => {
    const { exec, write } = openToolset();
    expect(codeModeValue(await callTool(exec, { cmd: 'cat; echo after' }))).toMatchObject({ exit_code: 0, output: 'after\n' });
    const id = codeModeValue(await callTool(exec, { cmd: 'sleep 5', yield_time_ms: 250 })).session_id;
    expect((await failureOf(callTool(write, { session_id: id, chars: 'x' }))).message).toBe(
      'write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true to keep stdin open',
    );
  });

  test('yield times are clamped: at least 250 ms, and an empty poll waits at least 5 s', async () => {
    const { exec, write } = openToolset();
    const first = codeModeValue(await callTool(exec, { cmd: 'sleep 20', yield_time_ms: 1 }));
    expect(first.wall_time_seconds).toBeGreaterThanOrEqual(0.24); // timer vs wall-clock jitter
    const poll = codeModeValue(await callTool(write, { session_id: first.session_id as number, chars: '', yield_time_ms: 1 }));
    expect(poll.wall_time_seconds).toBeGreaterThanOrEqual(4.9);
    expect(poll.session_id).toBe(first.session_id);
  }, 20_000);

  test('at most maxProcesses live sessions: the least recently used is evicted and killed', async () => {
    const { exec, write, toolset } = openToolset({ maxProcesses: 2 });
    const marker = uniqueSleepSeconds();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push(codeModeValue(await callTool(exec, { cmd: `sleep ${marker}`, yield_time_ms: 250 })).session_id as number);
    expect(toolset.liveSessionIds()).toEqual([ids[1], ids[2]]);
    expect((await failureOf(callTool(write, { session_id: ids[0], chars: '' }))).message).toBe(`write_stdin failed: Unknown process id ${ids[0]}`);
    expect(await becomes(() => sleepProcesses(marker).length === 2, 5_000)).toBe(true);
  });
});

describe('process hygiene', () => {
  test('cancelling exec_command kills the whole process group, including a setsid child: no survivors in /proc', async () => {
    const { exec } = openToolset();
    const marker = uniqueSleepSeconds();
    const controller = new AbortController();
    const call = callTool(exec, { cmd: `sleep ${marker} & setsid sleep ${marker} & sleep ${marker}; wait`, yield_time_ms: 30_000 }, { signal: controller.signal });
    expect(await becomes(() => sleepProcesses(marker).length === 3, 5_000)).toBe(true);
    controller.abort();
    const failure = await failureOf(call);
    expect(failure.code).toBe('ABORTED');
    expect(failure.message).toMatch(/^Wall time: \d+\.\d seconds\naborted by user$/);
    expect(await becomes(() => sleepProcesses(marker).length === 0, 5_000)).toBe(true);
  });

  test('cancelling write_stdin kills its process', async () => {
    const { exec, write, toolset } = openToolset();
    const marker = uniqueSleepSeconds();
    const id = codeModeValue(await callTool(exec, { cmd: `sleep ${marker}`, yield_time_ms: 250 })).session_id as number;
    const controller = new AbortController();
    const call = callTool(write, { session_id: id, chars: '' }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect((await failureOf(call)).code).toBe('ABORTED');
    expect(toolset.liveSessionIds()).toEqual([]);
    expect(await becomes(() => sleepProcesses(marker).length === 0, 5_000)).toBe(true);
  });

  test("a turn's end kills its processes; a later turn's call sweeps earlier ones; shutdown kills the rest", async () => {
    const { exec, toolset } = openToolset();
    const [a, b, c] = [uniqueSleepSeconds(), uniqueSleepSeconds(), uniqueSleepSeconds()];
    await callTool(exec, { cmd: `sleep ${a}`, yield_time_ms: 250 }, { step: { turnId: 'turn-1' } });
    await callTool(exec, { cmd: `sleep ${b}`, yield_time_ms: 250 }, { step: { turnId: 'turn-2' } });
    expect(await becomes(() => sleepProcesses(a).length === 0, 5_000)).toBe(true); // swept by turn-2's first call
    await toolset.endTurn('turn-2');
    expect(await becomes(() => sleepProcesses(b).length === 0, 5_000)).toBe(true);
    await callTool(exec, { cmd: `sleep ${c}`, yield_time_ms: 250 }, { step: { turnId: 'turn-3' } });
    expect(sleepProcesses(c).length).toBe(1);
    await toolset.shutdown();
    expect(await becomes(() => sleepProcesses(c).length === 0, 5_000)).toBe(true);
    const refused = await failureOf(callTool(exec, { cmd: 'true' }));
    expect(refused).toEqual({ message: 'exec tools are shut down', code: 'SHUTTING_DOWN' });
  });

  test("processScope 'session' keeps processes across turns until shutdown", async () => {
    const { exec, write, toolset } = openToolset({ processScope: 'session' });
    const id = codeModeValue(await callTool(exec, { cmd: 'cat', tty: true, yield_time_ms: 250 }, { step: { turnId: 'turn-1' } })).session_id as number;
    await toolset.endTurn('turn-1');
    const later = codeModeValue(await callTool(write, { session_id: id, chars: 'ping\n', yield_time_ms: 300 }, { step: { turnId: 'turn-2' } }));
    expect(later.session_id).toBe(id);
    expect(later.output).toContain('ping');
  });

  test('a tty command that exits while a background child keeps writing still finishes', async () => {
    const { exec } = openToolset();
    const output = codeModeValue(await callTool(exec, { cmd: '(while true; do echo spam; sleep 0.01; done) & sleep 0.2; exit 5', tty: true, yield_time_ms: 10_000 }));
    expect(output.exit_code).toBe(5);
    expect(output.wall_time_seconds).toBeLessThan(5);
  });

  test('a finished command leaves no background children behind', async () => {
    const { exec } = openToolset();
    const marker = uniqueSleepSeconds();
    const output = codeModeValue(await callTool(exec, { cmd: `sleep ${marker} & echo started` }));
    expect(output).toMatchObject({ exit_code: 0, output: 'started\n' });
    expect(await becomes(() => sleepProcesses(marker).length === 0, 5_000)).toBe(true);
  });
});

describe('hook payloads', () => {
  /** A PreToolUse hook answering `updatedInput` (PostToolUse continues). */
  const rewriting = (updatedInput: JsonValue): HookRunner => ({
    runPreToolUse: async () => ({ blocked: false, updatedInput, additionalContexts: [] }),
    runPostToolUse: async () => ({ additionalContexts: [] }),
  });
  const argumentsOf = (result: InvokeToolResult) => (result.payload.kind === 'function' ? JSON.parse(result.payload.arguments) : undefined);

  test('exec_command: pre is Bash + {command, shell, workdir}; a rewrite replaces cmd (and shell/workdir); post only for a finished process', async () => {
    const { exec, root } = openToolset({ shell: '/bin/sh' });
    mkdirSync(join(root, 'sub'));
    const one = await invokeTool(exec, { cmd: 'echo one', yield_time_ms: 500 });
    expect(one.hookInputs.pre.map(hookView)).toEqual([{ toolName: 'Bash', toolInput: { command: 'echo one', shell: '/bin/sh', workdir: root } }]);
    const elsewhere = await invokeTool(exec, { cmd: 'ls', workdir: 'sub', shell: '/bin/bash' });
    expect(elsewhere.hookInputs.pre.map(hookView)).toEqual([{ toolName: 'Bash', toolInput: { command: 'ls', shell: '/bin/bash', workdir: join(root, 'sub') } }]);

    const two = await invokeTool(exec, { cmd: 'echo one', yield_time_ms: 500 }, { hooks: rewriting({ command: 'echo two' }) });
    expect(two.payload).toEqual({ kind: 'function', arguments: JSON.stringify({ cmd: 'echo two', yield_time_ms: 500 }) });
    expect(codeModeValue(two.output).output).toBe('two\n');
    const moved = await invokeTool(exec, { cmd: 'echo one', yield_time_ms: 500 }, { hooks: rewriting({ command: 'echo two', workdir: '/tmp', shell: '/bin/bash' }) });
    expect(moved.payload).toEqual({ kind: 'function', arguments: JSON.stringify({ cmd: 'echo two', yield_time_ms: 500, shell: '/bin/bash', workdir: '/tmp' }) });
    const refused = await invokeTool(exec, { cmd: 'echo one', yield_time_ms: 500 }, { hooks: rewriting({ cmd: 'x' }) });
    expect(refused.item).toMatchObject({ output: 'hook returned updatedInput without string field `command`' });

    const finished = await invokeTool(exec, { cmd: 'echo done' });
    expect(finished.hookInputs.post.map(hookView)).toEqual([{ toolName: 'Bash', toolInput: { command: 'echo done', shell: '/bin/sh', workdir: root }, toolResponse: 'done\n' }]);
    const running = await invokeTool(exec, { cmd: 'sleep 0.6; echo late', yield_time_ms: 250 });
    expect(running.hookInputs.pre).toHaveLength(1);
    expect(running.hookInputs.post).toEqual([]);
  });

  test('exec_command parses its arguments once: the registry validates, hooks and the handler reuse that value', async () => {
    const { exec } = openToolset({ shell: '/bin/sh' });
    const text = JSON.stringify({ cmd: 'echo once' });
    const parse = JSON.parse;
    let parses = 0;
    const spy = vi.spyOn(JSON, 'parse').mockImplementation((source: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
      if (source === text) parses++;
      return parse(source, reviver);
    });
    try {
      const result = await invokeTool(exec, { kind: 'function', arguments: text });
      expect(codeModeValue(result.output).output).toBe('once\n');
      expect(result.hookInputs.pre.map(hookView)).toEqual([{ toolName: 'Bash', toolInput: { command: 'echo once', shell: '/bin/sh', workdir: expect.any(String) } }]);
      expect(result.hookInputs.post).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
    // The arguments are read once, by the serde reader the tool declares; nothing JSON.parses them again
    // (before the registry handed its parse on, validation, both hook adapters and the handler each parsed: 4).
    expect(parses).toBe(0);
  });

  test('write_stdin: pre and post are write_stdin (alias Bash) + {session_id, chars, command}; a rewrite replaces chars; the poll that sees the exit is the exec_command PostToolUse', async () => {
    const { exec, write } = openToolset({ shell: '/bin/sh' });
    const started = await invokeTool(exec, { cmd: 'read line; echo "got $line"', tty: true, yield_time_ms: 250 }, { callId: 'exec-call-1' });
    const sessionId = codeModeValue(started.output).session_id as number;
    const command = 'read line; echo "got $line"';
    const polled = await invokeTool(write, { session_id: sessionId, yield_time_ms: 100 });
    expect(polled.hookInputs.pre.map(hookView)).toEqual([{ toolName: 'write_stdin', toolInput: { session_id: sessionId, chars: '', command, line: '' } }]);
    expect(polled.hookInputs.pre[0].aliases).toContain('Bash');
    const unknown = await invokeTool(write, { session_id: 999_999 });
    expect(unknown.hookInputs.pre.map(hookView)).toEqual([{ toolName: 'write_stdin', toolInput: { session_id: 999_999, chars: '' } }]);
    const refused = await invokeTool(write, { session_id: sessionId, chars: 'bye\n' }, { hooks: rewriting({ command: 'x' }) });
    expect(refused.item).toMatchObject({ output: 'hook returned updatedInput without string field `chars`' });

    const answered = await invokeTool(write, { session_id: sessionId, chars: 'bye\n', yield_time_ms: 2_000 }, { hooks: rewriting({ chars: 'hello\n' }) });
    expect(answered.hookInputs.pre.map(hookView)).toEqual([{ toolName: 'write_stdin', toolInput: { session_id: sessionId, chars: 'bye\n', command, line: 'bye\n' } }]);
    expect(argumentsOf(answered)).toEqual({ session_id: sessionId, chars: 'hello\n', yield_time_ms: 2_000 });
    // The session finished and left the table; the answer still names its command.
    expect(codeModeValue(answered.output).exit_code).toBe(0);
    // The reference's rule: a process that finishes through a write_stdin poll fires one PostToolUse
    // as `Bash` with the exec_command's call id (a write_stdin matcher still matches: an alias).
    expect(answered.hookInputs.post.map(hookView)).toEqual([
      {
        toolName: 'Bash',
        toolInput: { command },
        // What was read (the tty's echo and the answer; a pty may deliver the last bytes after the exit).
        toolResponse: expect.stringContaining('hello'),
      },
    ]);
    expect(answered.hookInputs.post[0].toolUseId).toBe('exec-call-1');
    expect(answered.hookInputs.post[0].aliases).toContain('write_stdin');
    // a poll of a process still running stays write_stdin's own
    expect(polled.hookInputs.post.map((request) => request.toolName)).toEqual(['write_stdin']);
    expect(polled.hookInputs.post[0].toolUseId).not.toBe('exec-call-1');
  });
});

/** What a hook command reads of a recorded request: the name, the input and (PostToolUse) the response. */
function hookView(request: { toolName: string; toolInput: JsonValue; toolResponse?: JsonValue }) {
  return { toolName: request.toolName, toolInput: request.toolInput, ...(request.toolResponse !== undefined ? { toolResponse: request.toolResponse } : {}) };
}

describe('execTools()', () => {
  test('spreads into a tool list and carries shutdown', async () => {
    const root = makeWorkspace();
    writeFileSync(join(root, 'file.txt'), 'content');
    const tools = execTools({ root, sandbox: 'danger-full-access' });
    expect([...tools].map((tool) => tool.name.name)).toEqual(['exec_command', 'write_stdin']);
    expect(tools[0].spec).toMatchObject({ type: 'function', name: 'exec_command', description: 'Runs a command in a PTY, returning output or a session ID for ongoing interaction.' });
    expect(tools[0].abortStyle).toBe('shell');
    expect(codeModeValue(await callTool(tools[0], { cmd: 'cat file.txt' })).output).toBe('content');
    await tools.shutdown();
    expect((await failureOf(callTool(tools[0], { cmd: 'true' }))).code).toBe('SHUTTING_DOWN');
  });

  test("onShutdown runs once, on shutdown(); a session's dispose never shuts the toolset down (a throwing hook is ignored)", async () => {
    let calls = 0;
    const shared = execTools({ root: makeWorkspace(), sandbox: 'danger-full-access', shell: '/bin/sh', onShutdown: () => calls++ });
    await (shared[0] as { dispose?: () => Promise<void> }).dispose?.();
    expect(calls).toBe(0);
    expect(codeModeValue(await callTool(shared[0], { cmd: 'echo still open' })).output).toBe('still open\n');
    await shared.shutdown();
    await shared.shutdown();
    expect(calls).toBe(1);
    const throwing = execTools({ root: makeWorkspace(), sandbox: 'danger-full-access', onShutdown: () => {
      throw new Error('host hook broke');
    } });
    await throwing.shutdown();
    expect((await failureOf(callTool(throwing[0], { cmd: 'true' }))).code).toBe('SHUTTING_DOWN');
  });
});

describe('checkSetup (the session calls it at creation)', () => {
  test('a sandboxed mode this machine cannot start is reported before any call; danger-full-access is not', async () => {
    const root = makeWorkspace();
    const broken = execTools({ root, sandbox: 'workspace-write', bwrapPath: join(root, 'no-bwrap') });
    expect(broken[1].checkSetup).toBeUndefined();
    const problems = await broken[0].checkSetup!({ cwd: root });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^exec_command cannot run commands in the "workspace-write" sandbox on this machine, so it will refuse every command: .*no-bwrap.* \(sandbox: 'danger-full-access' runs them unsandboxed\)$/s);
    // the same refusal the model would read on a call
    expect((await failureOf(callTool(broken[0], { cmd: 'true' }))).message).toContain('no-bwrap');
    expect(await execTools({ root, sandbox: 'danger-full-access' })[0].checkSetup!({ cwd: root })).toEqual([]);
    // the step's mode is the default: danger-full-access from the session needs no sandbox
    expect(await execTools({ root, bwrapPath: join(root, 'no-bwrap') })[0].checkSetup!({ cwd: root, sandboxMode: 'danger-full-access' })).toEqual([]);
  });
});

describe('admission control', () => {
  test('maxConcurrentCommands: excess calls of a session wait (a cancelled waiter answers aborted); other sessions do not wait', async () => {
    const { exec, root } = openToolset({ maxConcurrentCommands: 1, shell: '/bin/sh' });
    const alice = { sessionId: 'alice' };
    const holder = callTool(exec, { cmd: 'while [ ! -e go ]; do sleep 0.05; done; echo first', yield_time_ms: 20_000 }, { step: alice });
    const waiting = callTool(exec, { cmd: 'echo second', yield_time_ms: 20_000 }, { step: alice });
    const controller = new AbortController();
    const cancelled = failureOf(callTool(exec, { cmd: 'touch ran', yield_time_ms: 20_000 }, { step: alice, signal: controller.signal }));
    // Another session is not held up by Alice's full gate.
    expect(codeModeValue(await callTool(exec, { cmd: 'echo bob', yield_time_ms: 20_000 }, { step: { sessionId: 'bob' } })).output).toBe('bob\n');
    controller.abort();
    expect((await cancelled).code).toBe('ABORTED');
    writeFileSync(join(root, 'go'), '');
    expect(codeModeValue(await holder).output).toBe('first\n');
    expect(codeModeValue(await waiting).output).toBe('second\n');
    expect(existsSync(join(root, 'ran'))).toBe(false);
  });
});

describe('one toolset, several sessions', () => {
  const alice = { sessionId: 'alice', turnId: 'alice-1' };
  const bob = { sessionId: 'bob', turnId: 'bob-1' };

  test("another session's process id answers exactly like an unknown one", async () => {
    const { exec, write, toolset } = openToolset({ processScope: 'session', shell: '/bin/sh' });
    const id = codeModeValue(await callTool(exec, { cmd: 'cat', tty: true, yield_time_ms: 250 }, { step: alice })).session_id as number;
    const foreign = await failureOf(callTool(write, { session_id: id, chars: 'x\n' }, { step: bob }));
    const unknown = await failureOf(callTool(write, { session_id: 999_999, chars: 'x\n' }, { step: bob }));
    expect(foreign.message).toBe(`write_stdin failed: Unknown process id ${id}`);
    expect(unknown.message).toBe('write_stdin failed: Unknown process id 999999');
    expect(toolset.liveSessionIds('alice')).toEqual([id]);
    expect(toolset.liveSessionIds('bob')).toEqual([]);
  });

  test("endSession and a session's dispose with its id end only that session's processes", async () => {
    const { exec, write, toolset } = openToolset({ processScope: 'session', shell: '/bin/sh' });
    const start = async (step: typeof alice) => codeModeValue(await callTool(exec, { cmd: 'cat', tty: true, yield_time_ms: 250 }, { step })).session_id as number;
    const [a, b1, b2] = [await start(alice), await start(bob), await start(bob)];
    await toolset.endSession('bob');
    expect(toolset.liveSessionIds()).toEqual([a]);
    const b3 = await start(bob);
    await (toolset.tools[0] as { dispose?: (context: { sessionId: string }) => Promise<void> }).dispose?.({ sessionId: 'bob' });
    expect(toolset.liveSessionIds()).toEqual([a]);
    expect([b1, b2, b3].every((id) => id !== a)).toBe(true);
    expect(codeModeValue(await callTool(write, { session_id: a, chars: 'ping\n', yield_time_ms: 300 }, { step: alice })).output).toContain('ping');
  });
});

describe('environment', () => {
  const names = ['OPENAI_API_KEY', 'GITHUB_TOKEN', 'db_password', 'MY_SECRET_THING', 'SWITCHYARD_HARMLESS'];
  const saved = new Map(names.map((name) => [name, process.env[name]]));
  const setAll = () => names.forEach((name) => (process.env[name] = `value-of-${name}`));
  const restore = () => saved.forEach((value, name) => (value === undefined ? delete process.env[name] : (process.env[name] = value)));
  const script = names.map((name) => `echo ${name}=\${${name}-unset}`).join('; ');

  test('by default host variables named like secrets (KEY, SECRET, TOKEN, PASSWORD) are dropped; env still adds', async () => {
    setAll();
    try {
      const { exec } = openToolset({ env: { EXTRA_API_KEY: 'given-explicitly' } });
      const output = codeModeValue(await callTool(exec, { cmd: `${script}; echo EXTRA_API_KEY=$EXTRA_API_KEY` })).output;
      expect(output).toBe(
        'OPENAI_API_KEY=unset\nGITHUB_TOKEN=unset\ndb_password=unset\nMY_SECRET_THING=unset\nSWITCHYARD_HARMLESS=value-of-SWITCHYARD_HARMLESS\nEXTRA_API_KEY=given-explicitly\n',
      );
    } finally {
      restore();
    }
  });

  test("inheritEnv: 'all' passes every host variable", async () => {
    setAll();
    try {
      const { exec } = openToolset({ inheritEnv: 'all' });
      const output = codeModeValue(await callTool(exec, { cmd: script })).output;
      expect(output).toBe(names.map((name) => `${name}=value-of-${name}\n`).join(''));
    } finally {
      restore();
    }
  });
});
