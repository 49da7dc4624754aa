import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIRECT_SOURCE, type SandboxMode } from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';
import { CommandSpawner, findExecutable, killProcessTree, sandboxCommand, sandboxEnvironment, type SpawnOptions } from '@switchyard/sandbox';
// The walk and the audit from one module instance (the walk's records live in it), as the bench's other internals.
import { quarantineNewGitMetadata } from '../../../../packages/sandbox/src/git-quarantine';
import { protectedPaths } from '../../../../packages/sandbox/src/protected-paths';
import { commandLimits } from '../../../../packages/sandbox/src/resource-limits';
import { REAPER, launcherSyscalls } from '../../../../packages/sandbox/src/launchers';
import { execTools } from '@switchyard/tool-exec';
import { alternatingMedians, compare, median, type Bench, type BenchFigure } from '../harness';

const RUNS = 15;
/**
 * Milliseconds of quiet before each timed body: a sandboxed command's launcher prepares the next
 * command (a spare fork, a bubblewrap started ahead) right after this one, and an agent's next
 * command comes after a model turn, seconds later; without the pause, whichever body runs next
 * would be charged that work.
 */
const SETTLE_MS = 60;

/** One `exec_command {cmd: 'true'}` through the real executor, wire arguments in, output out. */
function execTrue(mode: SandboxMode, root: string, options: { spawner?: boolean } = {}): () => Promise<void> {
  const toolset = execTools({ root, sandbox: mode, approvalPolicy: 'never', shell: '/bin/sh', processScope: 'session', ...options });
  const [exec] = toolset;
  let calls = 0;
  return async () => {
    const output = await exec.handle({
      callId: `bench-${++calls}`,
      toolName: exec.name,
      source: DIRECT_SOURCE,
      payload: { kind: 'function', arguments: JSON.stringify({ cmd: 'true' }) },
      signal: new AbortController().signal,
      step: createStepContext({ cwd: root }),
    });
    if (output.codeModeResult({ kind: 'function', arguments: '{}' }) === undefined) throw new Error('no output');
  };
}

/** `spawn(file, args)` until it closes; throws on a non-zero exit (a broken chain must not look fast). */
function spawned(root: string, file: string, args: readonly string[], options: { env?: Record<string, string>; piped?: boolean } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: root, env: options.env, stdio: options.piped ? ['ignore', 'pipe', 'pipe'] : 'ignore', detached: options.piped });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdout?.resume();
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${file} exited ${code}: ${stderr}`))));
  });
}

/** The sandbox chain alone (sh → perl launcher → bubblewrap → sh), built and released per run, no executor. */
function rawSandbox(root: string): () => Promise<void> {
  const env = sandboxEnvironment({ mode: 'workspace-write', writable: [root] });
  return async () => {
    const command = sandboxCommand(['/bin/sh', '-c', 'true'], { mode: 'workspace-write', root }, { cwd: root });
    try {
      await spawned(root, command.file, command.args, { env, piped: true });
    } finally {
      command.release();
    }
  };
}

/**
 * The floor of a long-lived spawner (the "a call pays a message"): one perl process, started
 * once, forks and runs `/bin/sh -c true` per request line and answers with its status.
 */
function longLivedSpawner(root: string, perl: string): { run: () => Promise<void>; close: () => void } {
  const program = '$| = 1; while (<STDIN>) { my $pid = fork(); if ($pid == 0) { exec("/bin/sh", "-c", "true") or exit 127 } waitpid($pid, 0); print "$?\\n" }';
  const child: ChildProcessWithoutNullStreams = spawn(perl, ['-e', program], { cwd: root, stdio: 'pipe' });
  let waiting: (() => void) | undefined;
  child.stdout.on('data', () => waiting?.());
  return {
    run: () =>
      new Promise<void>((resolve) => {
        waiting = resolve;
        child.stdin.write('go\n');
      }),
    close: () => child.kill('SIGKILL'),
  };
}

/**
 * One command through a {@link CommandSpawner} (the one exec_command uses), with the environment
 * exec_command gives (its size matters: every variable is a field of the request), until its
 * output closed; throws on a non-zero exit.
 */
function throughSpawner(spawner: CommandSpawner, root: string, argv: readonly string[]): () => Promise<void> {
  const env = sandboxEnvironment({ mode: 'danger-full-access', env: { NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' } });
  return () => spawnedThrough(spawner, argv, { cwd: root, env });
}

/** One command through `spawner` until its output closed; throws on a non-zero exit. */
async function spawnedThrough(spawner: CommandSpawner, argv: readonly string[], options: SpawnOptions): Promise<void> {
  const command = await spawner.spawn(argv, options);
  const closed = new Promise((resolve) => command.output.once('close', resolve));
  command.output.resume();
  const { code } = await command.exited;
  await closed;
  if (code !== 0) throw new Error(`${argv[0]} exited ${code} through the spawner`);
}

/**
 * The sandbox chain alone through the long-lived sandbox launcher (as root; the per-command
 * launcher otherwise): `sandboxCommand`, one request, bubblewrap → sh, release; no executor.
 */
function rawSandboxThroughLauncher(root: string): { run: () => Promise<void>; close: () => Promise<void> } {
  const env = sandboxEnvironment({ mode: 'workspace-write', writable: [root] });
  let spawner: CommandSpawner | undefined;
  return {
    run: async () => {
      const command = sandboxCommand(['/bin/sh', '-c', 'true'], { mode: 'workspace-write', root }, { cwd: root });
      try {
        const spawnable = command.spawnable;
        if (!spawnable) return await spawned(root, command.file, command.args, { env, piped: true });
        spawner ??= new CommandSpawner({ launcher: spawnable.launcher });
        await spawnedThrough(spawner, spawnable.argv, { cwd: root, env, cgroupProcs: spawnable.cgroupProcs, fd3: spawnable.fd3 });
      } finally {
        command.release();
      }
    },
    close: async () => spawner?.close(),
  };
}

function bwrapArgs(extra: readonly string[]): string[] {
  return ['--unshare-user', '--unshare-pid', ...extra, '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', '/bin/sh', '-c', 'true'];
}

/** exec_command through the executor, the raw chain, and what each link of the chain costs alone; all alternating. */
async function startUp(root: string, repository: string): Promise<BenchFigure[]> {
  const perl = findExecutable('perl') as string;
  const bwrap = findExecutable('bwrap') as string;
  const [setpriv, unshare] = [findExecutable('setpriv'), findExecutable('unshare')];
  const spawner = longLivedSpawner(root, perl);
  const commandSpawner = new CommandSpawner();
  const launcherChain = rawSandboxThroughLauncher(root);
  const sandboxNamespaces = ['--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  const bodies: Array<[string, () => Promise<void>]> = [
    ['bare', () => spawned(root, '/bin/sh', ['-c', 'true'])],
    ['workspace-write', execTrue('workspace-write', root)],
    ['workspace-write, repository', execTrue('workspace-write', repository)],
    ['read-only', execTrue('read-only', root)],
    ['workspace-write, launcher per command', execTrue('workspace-write', root, { spawner: false })],
    ['danger-full-access', execTrue('danger-full-access', root)],
    ['danger-full-access, reaper per command', execTrue('danger-full-access', root, { spawner: false })],
    ['CommandSpawner sh', throughSpawner(commandSpawner, root, ['/bin/sh', '-c', 'true'])],
    ['raw sandbox chain, launcher', launcherChain.run],
    ['raw sandbox chain', rawSandbox(root)],
    ['reaper chain', () => spawned(root, perl, ['-e', REAPER, String(launcherSyscalls()?.prctl), '--', '/bin/sh', '-c', 'true'])],
    ['perl start', () => spawned(root, perl, ['-e', 'exit 0'])],
    ['bwrap minimal', () => spawned(root, bwrap, bwrapArgs([]))],
    ['bwrap + net', () => spawned(root, bwrap, bwrapArgs(['--unshare-net']))],
    ['bwrap + net ipc uts cgroup', () => spawned(root, bwrap, bwrapArgs(sandboxNamespaces))],
    // util-linux may be missing: its figures then fall back to a bare spawn and say so below
    ['setpriv', () => (setpriv ? spawned(root, setpriv, ['--reuid=65534', '--regid=65534', '--clear-groups', '--bounding-set=-all', '--', '/bin/sh', '-c', 'true']) : spawned(root, '/bin/sh', ['-c', 'true']))],
    ['unshare -m', () => (unshare ? spawned(root, unshare, ['--mount', '--', '/bin/sh', '-c', 'true']) : spawned(root, '/bin/sh', ['-c', 'true']))],
    ['long-lived spawner', spawner.run],
  ];
  let values: number[];
  try {
    values = await alternatingMedians(bodies.map(([, body]) => body), RUNS, 1, SETTLE_MS);
  } finally {
    spawner.close();
    await commandSpawner.close();
    await launcherChain.close();
  }
  const at = (name: string) => values[bodies.findIndex(([label]) => label === name)];
  const bare = { name: 'bare spawn of /bin/sh -c true', value: at('bare') };
  const note = `median of ${RUNS} alternating runs, ${SETTLE_MS} ms of quiet before each; ${process.geteuid?.() === 0 ? 'as root (launcher + idmapped workspace)' : 'as a user'}`;
  const chain = { name: 'the raw sandbox chain, no executor', value: at('raw sandbox chain') };
  return [
    compare('exec_command `true`, workspace-write sandbox (the session’s long-lived sandbox launcher, bwrap per command)', at('workspace-write'), 'ms', bare, { note: `${note}; target ≤ 2.5×` }),
    compare('exec_command `true`, workspace-write, the workspace a repository (`.git` exists): the next command’s bubblewrap prepared ahead', at('workspace-write, repository'), 'ms', bare, {
      note: `${note}; a workspace without .git (above) gets no prepared sandbox: its .git placeholder lives only while a command runs`,
    }),
    compare('exec_command `true`, workspace-write, the launcher per command (spawner: false)', at('workspace-write, launcher per command'), 'ms', bare, { note: 'the previous path' }),
    compare('exec_command `true`, read-only sandbox', at('read-only'), 'ms', bare, { note }),
    compare('exec_command `true`, danger-full-access (the session’s long-lived spawner)', at('danger-full-access'), 'ms', bare, { note: `${note}; target ≤ 1.5×` }),
    compare('exec_command `true`, danger-full-access, a reaper process per command (spawner: false)', at('danger-full-access, reaper per command'), 'ms', bare, { note: 'the previous path' }),
    compare('CommandSpawner alone: one request to a spare (its reaper and the command’s process forked ahead), exec sh -c true, output via /proc', at('CommandSpawner sh'), 'ms', bare, { note: 'no executor' }),
    compare('the raw sandbox chain through the long-lived launcher: one request, fork → bwrap → sh', at('raw sandbox chain, launcher'), 'ms', bare, { note: 'sandboxCommand + request + release, no executor' }),
    compare('exec_command `true`, workspace-write (launcher per command): the executor around the chain', at('workspace-write, launcher per command'), 'ms', chain, { note: 'args, approval, admission, cgroups, walks, output, answer' }),
    compare('the raw sandbox chain: sh → perl launcher → bwrap → sh', at('raw sandbox chain'), 'ms', bare, { note: 'sandboxCommand + spawn + release, no executor' }),
    compare('the perl reaper chain: perl → sh', at('reaper chain'), 'ms', bare, { note }),
    compare('perl -e "exit 0" (the launcher interpreter alone)', at('perl start'), 'ms', bare, { note }),
    compare('bwrap, user + pid namespaces, / read-only, /proc, /dev', at('bwrap minimal'), 'ms', bare, { note: 'the least bubblewrap does per command' }),
    compare('bwrap, + network namespace', at('bwrap + net'), 'ms', bare, { note }),
    compare('bwrap, + network, ipc, uts, cgroup namespaces', at('bwrap + net ipc uts cgroup'), 'ms', bare, { note: 'the namespaces the sandbox asks for' }),
    compare('setpriv (util-linux): drop to 65534, no groups, empty bounding set', at('setpriv'), 'ms', bare, { note: setpriv ? 'could replace only the launcher’s last step' : 'setpriv not installed: a bare spawn' }),
    compare('unshare --mount (util-linux)', at('unshare -m'), 'ms', bare, { note: unshare ? 'could replace only the launcher’s mount namespace step' : 'unshare not installed: a bare spawn' }),
    compare('long-lived spawner: one message, fork + exec sh -c true', at('long-lived spawner'), 'ms', bare, { note: 'the floor of Build item 1 (no namespaces, no cgroup per call)' }),
  ];
}

/** The walk before this change: breadth first, a `readdir` of every directory (links not followed, `node_modules` skipped). */
function readEveryDirectory(root: string): number {
  let found = 0;
  const queue = [root];
  for (let next = 0; next < queue.length; next++) {
    for (const entry of readdirSync(queue[next], { withFileTypes: true })) {
      if (entry.name === '.git') found += queue[next] !== root && (entry.isDirectory() || entry.isFile()) ? 1 : 0;
      else if (entry.isDirectory() && entry.name !== 'node_modules') queue.push(join(queue[next], entry.name));
    }
  }
  return found;
}

/** What the executor does around the chain, each alone: cgroups, the process-tree sweep, the walks. */
async function pieces(root: string): Promise<BenchFigure[]> {
  const timeOf = (body: () => void, runs = 31) => {
    const samples: number[] = [];
    for (let run = 0; run < runs; run++) {
      const start = performance.now();
      body();
      samples.push(performance.now() - start);
    }
    return median(samples);
  };
  const cgroups = timeOf(() => commandLimits().release());
  const sweep = timeOf(() => killProcessTree(2 ** 22 - 1));
  // The per-command walk for nested .git: a workspace of 10,000 directories.
  for (let a = 0; a < 100; a++) for (let b = 0; b < 100; b++) mkdirSync(join(root, `d${a}`, `e${b}`), { recursive: true });
  mkdirSync(join(root, 'd7', 'e7', '.git'));
  const first = performance.now();
  if (protectedPaths({ root }).length !== 2) throw new Error('expected 2 protected paths');
  const cold = performance.now() - first;
  await new Promise((resolve) => setTimeout(resolve, 2_200)); // the directories' change times settle
  protectedPaths({ root });
  const [warm, previous] = await alternatingMedians(
    [
      async () => {
        if (protectedPaths({ root }).length !== 2) throw new Error('expected 2 protected paths');
      },
      async () => {
        if (readEveryDirectory(root) !== 1) throw new Error('expected 1 nested .git');
      },
    ],
    7,
    0,
  );
  const before = protectedPaths({ root });
  const [audit] = await alternatingMedians([() => quarantineNewGitMetadata({ root }, before)], 7, 0);
  return [
    { name: 'cgroups of one command: create (pids + memory caps) and remove', value: cgroups, unit: 'ms', note: 'median of 31' },
    { name: 'process-tree sweep (reads every /proc/<pid>/stat)', value: sweep, unit: 'ms', note: `was paid at every command's exit, now only by an explicit kill; median of 31; ${execFileSync('/bin/sh', ['-c', 'ls /proc | grep -c "^[0-9]"'], { encoding: 'utf8' }).trim()} processes visible` },
    compare('nested-.git walk, 10,000 directories, nothing changed since the last walk', warm, 'ms', { name: 'the previous walk: readdir of every directory', value: previous }, { note: `one lstat per unchanged directory instead of a readdir; median of 7 alternating; this walk's first run (nothing known): ${cold.toFixed(0)} ms` }),
    { name: 'new-.git audit after a command, 10,000 directories, nothing changed', value: audit, unit: 'ms', note: 'a command pays the walk before it and this audit at its exit (was: before, at exit, and again when its output was taken)' },
  ];
}

const bench: Bench = {
  name: 'exec_command sandbox',
  async run(): Promise<BenchFigure[]> {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'bench-exec-sandbox-')));
    const repository = realpathSync(mkdtempSync(join(tmpdir(), 'bench-exec-sandbox-repository-')));
    mkdirSync(join(repository, '.git'));
    const load = () => loadavg()[0].toFixed(1);
    const loadBefore = load();
    try {
      const figures = [...(await startUp(root, repository)), ...(await pieces(root))];
      const note = `load average ${loadBefore} → ${load()}`;
      return figures.map((figure, index) => (index === 0 ? { ...figure, note: `${figure.note}; ${note}` } : figure));
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(repository, { recursive: true, force: true });
    }
  },
};

export default bench;
