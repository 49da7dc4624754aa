import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { killProcessTree } from './kill-tree';
import { CommandSpawner, SpawnerPool, type SpawnedCommand } from './spawner';
import { becomes } from '@switchyard/test-helpers';
import { processInfo } from '@switchyard/config/proc';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'sandbox-spawner-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const env = { PATH: '/usr/bin:/bin' };
const spawners: CommandSpawner[] = [];
afterEach(async () => {
  await Promise.all(spawners.splice(0).map((spawner) => spawner.close()));
});

function openSpawner(options: { idleMs?: number } = {}): CommandSpawner {
  const spawner = new CommandSpawner(options);
  spawners.push(spawner);
  return spawner;
}

/** Everything the command wrote, and how it ended. */
async function result(command: SpawnedCommand): Promise<{ output: string; code: number; lost?: string }> {
  const chunks: Buffer[] = [];
  command.output.on('data', (chunk: Buffer) => chunks.push(chunk));
  const closed = new Promise((resolve) => command.output.once('close', resolve));
  const exit = await command.exited;
  await closed;
  return { output: Buffer.concat(chunks).toString('utf8'), ...exit };
}


/** Pids whose command line is exactly `wanted` (zombies have none). */
function processesNamed(wanted: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() === wanted) found.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}


describe.runIf(CommandSpawner.supported())('the long-lived command spawner', () => {
  test('runs commands as forks of one spawner: output (stdout and stderr in order), exit codes, signals, cwd and env', async () => {
    const spawner = openSpawner();
    const first = await spawner.spawn(['/bin/sh', '-c', 'sleep 0.5; echo out; echo err >&2; pwd; echo "$GREETING"; exit 3'], { cwd: root, env: { ...env, GREETING: 'hi there' } });
    const pid = spawner.pid as number;
    expect(processInfo(first.pid)?.ppid).toBe(pid);
    expect(await result(first)).toEqual({ output: `out\nerr\n${root}\nhi there\n`, code: 3 });
    const killed = await spawner.spawn(['/bin/sh', '-c', 'kill -TERM $$'], { cwd: root, env });
    expect(await result(killed)).toEqual({ output: '', code: 143 });
    const missing = await spawner.spawn(['/no/such/program'], { cwd: root, env });
    expect(await result(missing)).toEqual({ output: '/no/such/program: No such file or directory\n', code: 127 });
    // the same spawner served every command
    expect(spawner.pid).toBe(pid);
  });

  test('commands sent at once to a spawner not yet running share one start', async () => {
    const spawner = openSpawner();
    const commands = await Promise.all([1, 2, 3, 4, 5].map((n) => spawner.spawn(['/bin/sh', '-c', `sleep 1; echo ${n}`], { cwd: root, env })));
    expect(new Set(commands.map((command) => processInfo(command.pid)?.ppid)).size).toBe(1);
    expect(await Promise.all(commands.map(result))).toEqual([1, 2, 3, 4, 5].map((n) => ({ output: `${n}\n`, code: 0 })));
  });

  test('a cwd that is not a directory is refused before anything runs', async () => {
    const spawner = openSpawner();
    await expect(spawner.spawn(['/bin/true'], { cwd: join(root, 'nope'), env })).rejects.toThrow(`cwd ${join(root, 'nope')} is not a directory`);
    // and the spawner still serves the next command
    expect((await result(await spawner.spawn(['/bin/echo', 'ok'], { cwd: root, env }))).output).toBe('ok\n');
  });

  test('output larger than a pipe, and output of a command that ended before it was read, arrive whole', async () => {
    const spawner = openSpawner();
    const big = await spawner.spawn(['/bin/sh', '-c', 'head -c 300000 /dev/zero | tr "\\0" x'], { cwd: root, env });
    expect((await result(big)).output).toBe('x'.repeat(300_000));
    const quick = await spawner.spawn(['/bin/echo', 'gone already'], { cwd: root, env });
    await quick.exited;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await result(quick)).output).toBe('gone already\n');
  });

  test('what a command leaves behind (setsid, double fork) dies when it ends; a kill of its pid takes its tree', async () => {
    const spawner = openSpawner();
    const left = await spawner.spawn(['/bin/sh', '-c', '(setsid sleep 3141 &) ; (sleep 3142 &) ; echo started'], { cwd: root, env });
    expect(await result(left)).toEqual({ output: 'started\n', code: 0 });
    expect(await becomes(() => processesNamed('sleep 3141').length + processesNamed('sleep 3142').length === 0, 5_000)).toBe(true);
    const running = await spawner.spawn(['/bin/sh', '-c', '(setsid sleep 3143 &) ; sleep 3144'], { cwd: root, env });
    expect(await becomes(() => processesNamed('sleep 3143').length === 1 && processesNamed('sleep 3144').length === 1, 5_000)).toBe(true);
    killProcessTree(running.pid);
    expect((await result(running)).code).toBe(137);
    expect(await becomes(() => processesNamed('sleep 3143').length + processesNamed('sleep 3144').length === 0, 5_000)).toBe(true);
  });

  test('killing the spawner mid-command kills the command tree, says so, and the next command gets a fresh spawner', async () => {
    const spawner = openSpawner();
    const running = await spawner.spawn(['/bin/sh', '-c', '(setsid sleep 3145 &) ; echo before; sleep 3146'], { cwd: root, env });
    expect(await becomes(() => processesNamed('sleep 3145').length === 1 && processesNamed('sleep 3146').length === 1, 5_000)).toBe(true);
    const old = spawner.pid as number;
    process.kill(old, 'SIGKILL');
    const ended = await result(running);
    expect(ended.output).toBe('before\n');
    expect(ended.code).toBe(137);
    expect(ended.lost).toBe(`exec_command: the session's command spawner (pid ${old}) ended (signal SIGKILL) while this command ran; the command and everything it started were killed`);
    expect(await becomes(() => processesNamed('sleep 3145').length + processesNamed('sleep 3146').length === 0 && processInfo(running.pid)?.ppid === undefined, 5_000)).toBe(true);
    const next = await spawner.spawn(['/bin/echo', 'again'], { cwd: root, env });
    expect(spawner.pid).not.toBe(old);
    expect(await result(next)).toEqual({ output: 'again\n', code: 0 });
  });

  test('a command cannot reopen the spawner’s control channel through /proc (socket pairs, not pipes) to forge a message', async () => {
    const spawner = openSpawner();
    const script = 'spawner=$(cut -d" " -f4 /proc/$PPID/stat); for fd in 0 1 2; do (echo "X 1 0" > /proc/$spawner/fd/$fd) 2>/dev/null && echo "wrote $fd"; (cat < /proc/$spawner/fd/$fd) 2>/dev/null && echo "read $fd"; done; echo done';
    const forger = await spawner.spawn(['/bin/sh', '-c', script], { cwd: root, env });
    expect(await result(forger)).toEqual({ output: 'done\n', code: 0 });
    expect((await result(await spawner.spawn(['/bin/echo', 'fine'], { cwd: root, env }))).output).toBe('fine\n');
  });

  test('close ends the spawner and its commands; later spawns are refused; an idle spawner exits by itself', async () => {
    const spawner = openSpawner();
    const running = await spawner.spawn(['/bin/sleep', '3148'], { cwd: root, env });
    const pid = spawner.pid as number;
    await spawner.close();
    expect((await running.exited).code).toBe(137);
    expect(await becomes(() => processInfo(pid)?.ppid === undefined && processesNamed('/bin/sleep 3148').length === 0, 5_000)).toBe(true);
    await expect(spawner.spawn(['/bin/true'], { cwd: root, env })).rejects.toThrow('the command spawner was closed with its session');
    const idle = openSpawner({ idleMs: 100 });
    await result(await idle.spawn(['/bin/true'], { cwd: root, env }));
    const idlePid = idle.pid as number;
    expect(await becomes(() => processInfo(idlePid)?.ppid === undefined, 5_000)).toBe(true);
    expect((await result(await idle.spawn(['/bin/echo', 'restarted'], { cwd: root, env }))).output).toBe('restarted\n');
  });

  test('commands arriving just as an idle spawner leaves each start (on a new spawner when needed)', async () => {
    const spawner = openSpawner({ idleMs: 30 });
    const pids = new Set<number>();
    for (let round = 0; round < 12; round++) {
      const command = await spawner.spawn(['/bin/echo', String(round)], { cwd: root, env });
      pids.add(spawner.pid as number);
      expect(await result(command)).toEqual({ output: `${round}\n`, code: 0 });
      await new Promise((resolve) => setTimeout(resolve, 24 + (round % 4) * 4));
    }
    expect(pids.size).toBeGreaterThan(1);
  });

  test('a pool gives each session its own spawner and closes one session’s alone', async () => {
    const pool = new SpawnerPool();
    const a = pool.spawnerFor('a', 'danger-full-access');
    const b = pool.spawnerFor('b', 'danger-full-access');
    expect(pool.spawnerFor('a', 'danger-full-access')).toBe(a);
    expect(b).not.toBe(a);
    await Promise.all([a, b].map(async (spawner) => result(await spawner.spawn(['/bin/true'], { cwd: root, env }))));
    const [pidA, pidB] = [a.pid as number, b.pid as number];
    expect(pidA).not.toBe(pidB);
    await pool.close('a');
    expect(await becomes(() => processInfo(pidA)?.ppid === undefined, 5_000)).toBe(true);
    expect(processInfo(pidB)?.ppid).toBe(process.pid);
    await pool.close();
    expect(await becomes(() => processInfo(pidB)?.ppid === undefined, 5_000)).toBe(true);
  });
});
