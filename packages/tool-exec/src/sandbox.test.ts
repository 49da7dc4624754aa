import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { isSwitchyardError } from '@switchyard/protocol';
import { createExecToolset, type ExecToolset, type ExecToolsOptions } from './exec-tools';
import { findExecutable } from '@switchyard/sandbox';
import { callTool, codeModeValue, makeWorkspace, sleepProcesses, uniqueSleepSeconds } from './test-support';
import { becomes } from '@switchyard/test-helpers';

// These tests need bubblewrap (installed by `npm test` / scripts/setup.mjs on CI). They fail, not
// skip, without it: the sandbox is a promise of this package.
const toolsets: ExecToolset[] = [];
let outside: string;
let server: Server;
let port: number;
let connections = 0;

beforeAll(async () => {
  // Outside both the workspace and /tmp (which the sandbox replaces with a private one).
  outside = mkdtempSync('/var/tmp/tool-exec-outside-');
  // World-writable, so only the sandbox's read-only mount (not file permissions) can stop a write.
  chmodSync(outside, 0o777);
  server = createServer((socket) => {
    connections++;
    socket.end('hello from the host\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  rmSync(outside, { recursive: true, force: true });
  await new Promise((resolve) => server.close(resolve));
});

afterEach(async () => {
  await Promise.all(toolsets.splice(0).map((toolset) => toolset.shutdown()));
});

function openWorkspaceExec(options: ExecToolsOptions) {
  const root = makeWorkspace();
  const toolset = createExecToolset({ root, approvalPolicy: 'never', ...options });
  toolsets.push(toolset);
  return { root, exec: toolset.tools[0], write: toolset.tools[1] };
}

// The node that runs the tests may live under a directory the sandbox hides (the Node 24 pass of
// `npm test` runs from ~/.cache); inside the sandbox the command finds `node` on PATH instead.
const SANDBOX_NODE = /^\/(usr|opt|bin)\//.test(process.execPath) ? process.execPath : 'node';

const connectScript = (target: number) =>
  `${JSON.stringify(SANDBOX_NODE)} -e "require('net').connect(${target}, '127.0.0.1').on('data', (d) => { process.stdout.write('connected: ' + d); process.exit(0); }).on('error', (e) => { console.log('failed: ' + e.code); process.exit(3); })"`;

describe('bubblewrap sandbox', () => {
  test('bwrap is installed (CI installs bubblewrap)', () => {
    expect(findExecutable('bwrap')).toBeDefined();
  });

  test('workspace-write: a write inside the workspace lands on disk, one outside is refused', async () => {
    const { exec, root } = openWorkspaceExec({ sandbox: 'workspace-write' });
    const inside = codeModeValue(await callTool(exec, { cmd: 'echo data > inside.txt && cat inside.txt' }));
    expect(inside).toMatchObject({ exit_code: 0, output: 'data\n' });
    expect(readFileSync(join(root, 'inside.txt'), 'utf8')).toBe('data\n');

    const target = join(outside, 'escaped.txt');
    const refused = await callTool(exec, { cmd: `echo data > ${target}` });
    const escaped = codeModeValue(refused);
    expect(escaped.exit_code).toBe(1);
    expect(escaped.output).toContain('Read-only file system');
    expect(existsSync(target)).toBe(false);
    // a sandbox denial is a failed call (PostToolUseFailure hooks read SANDBOX_DENIED); an ordinary non-zero exit is not
    expect([refused.success, refused.failureCode]).toEqual([false, 'SANDBOX_DENIED']);
    const plain = await callTool(exec, { cmd: 'echo nope; exit 3' });
    expect([plain.success, plain.failureCode, codeModeValue(plain).exit_code]).toEqual([true, undefined, 3]);
  });

  test('workspace-write: /tmp is private to the sandbox', async () => {
    const { exec } = openWorkspaceExec({ sandbox: 'workspace-write' });
    const hostTmp = mkdtempSync('/tmp/tool-exec-hosttmp-');
    try {
      const output = codeModeValue(await callTool(exec, { cmd: `mkdir -p ${hostTmp} && echo x > ${hostTmp}/f && cat ${hostTmp}/f` }));
      expect(output).toMatchObject({ exit_code: 0, output: 'x\n' });
      expect(existsSync(join(hostTmp, 'f'))).toBe(false);
    } finally {
      rmSync(hostTmp, { recursive: true, force: true });
    }
  });

  test('read-only: even the workspace cannot be written, but it can be read', async () => {
    const { exec, root } = openWorkspaceExec({ sandbox: 'read-only' });
    const write = codeModeValue(await callTool(exec, { cmd: 'echo data > inside.txt' }));
    expect(write.exit_code).toBe(1);
    expect(write.output).toContain('Read-only file system');
    expect(existsSync(join(root, 'inside.txt'))).toBe(false);
    expect(codeModeValue(await callTool(exec, { cmd: 'pwd && ls -a' }))).toMatchObject({ exit_code: 0, output: `${root}\n.\n..\n` });
  });

  test('no network: a loopback server started by the test is unreachable from the sandbox', async () => {
    const before = connections;
    const { exec: sandboxed } = openWorkspaceExec({ sandbox: 'workspace-write' });
    const refused = codeModeValue(await callTool(sandboxed, { cmd: connectScript(port) }));
    expect(refused).toMatchObject({ exit_code: 3, output: 'failed: ECONNREFUSED\n' });
    expect(connections).toBe(before);

    // Control: the same command reaches the server without the sandbox, and with network allowed.
    const { exec: unsandboxed } = openWorkspaceExec({ sandbox: 'danger-full-access' });
    expect(codeModeValue(await callTool(unsandboxed, { cmd: connectScript(port) }))).toMatchObject({ exit_code: 0, output: 'connected: hello from the host\n' });
    const { exec: networked } = openWorkspaceExec({ sandbox: 'workspace-write', network: true });
    expect(codeModeValue(await callTool(networked, { cmd: connectScript(port) }))).toMatchObject({ exit_code: 0, output: 'connected: hello from the host\n' });
    expect(connections).toBe(before + 2);
  });

  test('no Unix sockets: a host socket server outside the workspace is unreachable from workspace-write', async () => {
    const socketPath = join(outside, 'host.sock');
    let unixConnections = 0;
    const unixServer = createServer((socket) => {
      unixConnections++;
      socket.end('hello over unix\n');
    });
    await new Promise<void>((resolve) => unixServer.listen(socketPath, resolve));
    try {
      const script = `${JSON.stringify(SANDBOX_NODE)} -e "require('net').connect(${JSON.stringify(socketPath).replace(/"/g, "'")}).on('data', (d) => { process.stdout.write('connected: ' + d); process.exit(0); }).on('error', (e) => { console.log('failed: ' + e.code); process.exit(3); })"`;
      const { exec: sandboxed } = openWorkspaceExec({ sandbox: 'workspace-write' });
      const refused = codeModeValue(await callTool(sandboxed, { cmd: script }));
      expect(refused).toMatchObject({ exit_code: 3, output: 'failed: EPERM\n' });
      // Even with network allowed (no network namespace) the seccomp filter refuses AF_UNIX.
      const { exec: networked } = openWorkspaceExec({ sandbox: 'workspace-write', network: true });
      expect(codeModeValue(await callTool(networked, { cmd: script }))).toMatchObject({ exit_code: 3, output: 'failed: EPERM\n' });
      const python = codeModeValue(await callTool(sandboxed, { cmd: `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${socketPath}'); print(s.recv(100))"` }));
      expect(python.exit_code).not.toBe(0);
      expect(python.output).toContain('Operation not permitted');
      expect(unixConnections).toBe(0);

      // Control: the same command connects without the sandbox.
      const { exec: unsandboxed } = openWorkspaceExec({ sandbox: 'danger-full-access' });
      expect(codeModeValue(await callTool(unsandboxed, { cmd: script }))).toMatchObject({ exit_code: 0, output: 'connected: hello over unix\n' });
      expect(unixConnections).toBe(1);
    } finally {
      await new Promise((resolve) => unixServer.close(resolve));
    }
  });

  test('the seccomp filter and hidden /run leave ordinary commands working (pipes and tty)', async () => {
    const { exec, write, root } = openWorkspaceExec({ sandbox: 'workspace-write' });
    writeFileSync(join(root, 'a.txt'), 'alpha\nbeta\n');
    expect(codeModeValue(await callTool(exec, { cmd: 'ls && cat a.txt | grep beta | tr a-z A-Z && python3 -c "print(6 * 7)"' }))).toMatchObject({
      exit_code: 0,
      output: 'a.txt\nBETA\n42\n',
    });
    expect(codeModeValue(await callTool(exec, { cmd: 'ls -A /run | wc -l' }))).toMatchObject({ exit_code: 0, output: '0\n' });
    // An AF_INET socket can still be created (the filter only refuses AF_UNIX).
    expect(codeModeValue(await callTool(exec, { cmd: 'python3 -c "import socket; socket.socket(); print(\'inet ok\')"' }))).toMatchObject({ exit_code: 0, output: 'inet ok\n' });
    const id = codeModeValue(await callTool(exec, { cmd: 'cat', tty: true, yield_time_ms: 400 })).session_id as number;
    expect(codeModeValue(await callTool(write, { session_id: id, chars: 'still a tty\n', yield_time_ms: 500 })).output).toContain('still a tty');
    const ttyUnix = codeModeValue(await callTool(exec, { cmd: 'python3 -c "import socket; socket.socket(socket.AF_UNIX)"', tty: true }));
    expect(ttyUnix.exit_code).not.toBe(0);
    expect(ttyUnix.output).toContain('Operation not permitted');
  });

  test('workspace-write: .git stays read-only (no planted hooks) while the rest of the workspace is writable', async () => {
    const { exec, root } = openWorkspaceExec({ sandbox: 'workspace-write' });
    mkdirSync(join(root, '.git', 'hooks'), { recursive: true });
    const hook = codeModeValue(await callTool(exec, { cmd: 'printf "#!/bin/sh\\ntouch /pwned\\n" > .git/hooks/pre-commit' }));
    expect(hook.exit_code).toBe(1);
    expect(hook.output).toContain('Read-only file system');
    expect(existsSync(join(root, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(codeModeValue(await callTool(exec, { cmd: 'rm -rf .git; mv .git moved' })).exit_code).not.toBe(0);
    expect(existsSync(join(root, '.git', 'hooks'))).toBe(true);
    expect(codeModeValue(await callTool(exec, { cmd: 'mkdir -p src && echo ok > src/file.txt && cat src/file.txt' }))).toMatchObject({ exit_code: 0, output: 'ok\n' });
    expect(readFileSync(join(root, 'src', 'file.txt'), 'utf8')).toBe('ok\n');
  });

  test('a new PID namespace: the command cannot see host processes', async () => {
    const { exec } = openWorkspaceExec({ sandbox: 'workspace-write' });
    const output = codeModeValue(await callTool(exec, { cmd: `ls /proc | grep -c '^[0-9]'` }));
    expect(Number((output.output as string).trim())).toBeLessThan(10);
  });

  test('tty works inside the sandbox', async () => {
    const { exec, write } = openWorkspaceExec({ sandbox: 'workspace-write' });
    const id = codeModeValue(await callTool(exec, { cmd: 'cat', tty: true, yield_time_ms: 400 })).session_id as number;
    expect(codeModeValue(await callTool(write, { session_id: id, chars: 'sandboxed\n', yield_time_ms: 500 })).output).toContain('sandboxed');
  });

  test('cancelling a sandboxed command leaves no survivors in /proc', async () => {
    const { exec } = openWorkspaceExec({ sandbox: 'workspace-write' });
    const marker = uniqueSleepSeconds();
    const controller = new AbortController();
    const call = callTool(exec, { cmd: `sleep ${marker} & sleep ${marker}; wait`, yield_time_ms: 30_000 }, { signal: controller.signal });
    expect(await becomes(() => sleepProcesses(marker).length === 2, 5_000)).toBe(true);
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    expect(await becomes(() => sleepProcesses(marker).length === 0, 5_000)).toBe(true);
  });

  test('without bubblewrap a sandboxed mode refuses with a clear error and runs nothing', async () => {
    const { exec, root } = openWorkspaceExec({ sandbox: 'workspace-write', bwrapPath: '/nonexistent/bwrap' });
    let error: unknown;
    try {
      await callTool(exec, { cmd: 'touch ran.txt' });
    } catch (caught) {
      error = caught;
    }
    expect(isSwitchyardError(error) && error.code).toBe('SANDBOX_UNAVAILABLE');
    expect((error as Error).message).toBe(
      'sandbox unavailable: bubblewrap (/nonexistent/bwrap) was not found; refusing to run the command without the workspace-write sandbox (install bubblewrap, or configure the sandbox as danger-full-access)',
    );
    expect(existsSync(join(root, 'ran.txt'))).toBe(false);
  });

  test('the sandbox mode comes from the step when the options leave it out', async () => {
    const root = makeWorkspace();
    const toolset = createExecToolset({ root, approvalPolicy: 'never' });
    toolsets.push(toolset);
    const output = codeModeValue(await callTool(toolset.tools[0], { cmd: 'echo x > f' }, { step: { sandboxMode: 'read-only' } }));
    expect(output.output).toContain('Read-only file system');
    const defaulted = codeModeValue(await callTool(toolset.tools[0], { cmd: `echo x > f && echo y > ${join(outside, 'g')}` }));
    expect(existsSync(join(root, 'f'))).toBe(true); // default workspace-write
    expect(defaulted.exit_code).toBe(1);
  });
});
