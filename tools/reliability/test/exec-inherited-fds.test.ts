import { spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { report } from '../src/profile';
import { bundleEntry } from './bundle';
import type { FdCase } from './exec-fds/main';

// Issue 47 row 2: a host process that inherited open descriptors (a listening socket, a Unix
// connection, a root-only file; Node and libuv mark only their own close-on-exec) must not hand
// them to any command it runs, sandboxed or not, however the command is started.
const here = dirname(fileURLToPath(import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'reliability-fds-'));
chmodSync(scratch, 0o755);
const SECRET = 'root-only secret 4711';
const servers: Server[] = [];
const sockets: Socket[] = [];
afterAll(() => {
  sockets.forEach((socket) => socket.destroy());
  servers.forEach((server) => server.close());
  rmSync(scratch, { recursive: true, force: true });
});

/** The descriptors of a handle (a listening server or a connected socket). */
const fdOf = (handle: Server | Socket) => (handle as unknown as { _handle: { fd: number } })._handle.fd;

async function listen(path: string, onData?: (text: string) => void): Promise<Server> {
  const server = createServer((socket) => socket.on('data', (chunk) => onData?.(chunk.toString('utf8'))));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return server;
}

function runFdHost(argv: string[], root: string, fds: readonly number[]): Promise<{ uid: number; cases: FdCase[] }> {
  // Descriptors 27, 28, 29 of the host: what index N of `stdio` is, the child holds as fd N, without close-on-exec.
  const stdio = ['ignore', 'pipe', 'pipe', ...Array<'ignore'>(24).fill('ignore'), ...fds];
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], [...argv.slice(1), root], { stdio: stdio as never, cwd: tmpdir() });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => (stdout += chunk));
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    child.once('close', (code) => {
      try {
        resolve(JSON.parse(stdout.trim().split('\n').pop() ?? ''));
      } catch {
        reject(new Error(`host ${argv.join(' ')} exited ${code}: ${stderr || stdout}`));
      }
    });
  });
}

test('a host holding a listening socket, a Unix connection and a root-only file: every command sees descriptors 0-2 only, sandboxed and not, as root and as an unprivileged user', async () => {
  const file = await bundleEntry(join(here, 'exec-fds', 'main.ts'));
  const received: string[] = [];
  const listening = await listen(join(scratch, 'listening.sock'));
  await listen(join(scratch, 'peer.sock'), (text) => received.push(text));
  const connection = createConnection(join(scratch, 'peer.sock'));
  sockets.push(connection);
  await new Promise<void>((resolve) => connection.once('connect', () => resolve()));
  const secretFile = join(scratch, 'secret');
  writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
  const secret = openSync(secretFile, 'r');
  const asRoot = process.geteuid?.() === 0;
  const runs = [{ who: asRoot ? 'root' : `uid ${process.getuid?.()}`, argv: [process.execPath, file] }];
  if (asRoot) runs.push({ who: 'uid 65534', argv: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--', process.execPath, file] });
  try {
    for (const [index, run] of runs.entries()) {
      const root = join(scratch, `ws-${index}`);
      mkdirSync(join(root, '.git'), { recursive: true });
      chmodSync(root, 0o777);
      const result = await runFdHost(run.argv, root, [fdOf(listening), fdOf(connection), secret]);
      const [control, ...commands] = result.cases;
      // The control proves the listing sees inherited descriptors and the command could use them.
      expect(control.fds.split(' ')).toEqual(expect.arrayContaining(['27', '28', '29']));
      expect(control.output).toContain(`read: ${SECRET}`);
      expect(commands, run.who).toEqual(commands.map(({ name }) => ({ name, fds: '0 1 2', output: '' })));
      report('exec inherited descriptors', `${run.who}: ${commands.length} ways of starting a command, each saw 0 1 2 only (control: the host's own child saw ${control.fds})`);
    }
  } finally {
    closeSync(secret);
  }
  // The control wrote into the connection; no command did.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(received.join('').split('written by the command').length - 1).toBe(runs.length);
}, 300_000);
