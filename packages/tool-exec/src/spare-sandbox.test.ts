import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { CommandSpawner } from '@switchyard/sandbox';
import { createExecToolset, type ExecToolset, type ExecToolsOptions } from './exec-tools';
import { callTool, codeModeValue, makeWorkspace, processOf, sleepProcesses, uniqueSleepSeconds } from './test-support';
import { becomes } from '@switchyard/test-helpers';

// As root, once a sandboxed command's start was answered, the session's sandbox launcher starts the
// next command's bubblewrap ahead (a prepared sandbox running a stub that waits for one request).
// These tests follow the processes in /proc: the prepared bubblewrap is a child of the launcher
// whose command line runs the stub; a command handed to it runs below that very pid.
const toolsets: ExecToolset[] = [];
afterEach(async () => {
  await Promise.all(toolsets.splice(0).map((toolset) => toolset.shutdown()));
});

/** Exec tools in a fresh workspace, a repository unless `repository` is false (`.git` exists: no placeholder, which only lives while commands run). */
function openSpareWorkspace(options: ExecToolsOptions = {}, repository = true) {
  const root = makeWorkspace();
  if (repository) mkdirSync(join(root, '.git'));
  const toolset = createExecToolset({ root, sandbox: 'workspace-write', approvalPolicy: 'never', shell: '/bin/sh', processScope: 'session', ...options });
  toolsets.push(toolset);
  const [exec] = toolset.tools;
  const run = async (cmd: string, yieldMs = 10_000) => codeModeValue(await callTool(exec, { cmd, yield_time_ms: yieldMs }, { step: { sessionId: 'alice', turnId: 'alice-1' } }));
  return { root, run };
}


function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => processOf(pid)?.parent === parent);
}

/** The session's sandbox launcher: the host's child running the spawner program. */
function launcher(): number | undefined {
  return childrenOf(process.pid).find((pid) => processOf(pid)?.cmdline.trim() === 'sy-box-spawner');
}

/** Prepared bubblewraps seen so far: one keeps its command line while the command handed to it runs. */
const seen = new Set<number>();

/** The prepared bubblewrap: a child of the launcher whose command is the stub, not seen before. */
function prepared(): number | undefined {
  const spawner = launcher();
  if (spawner === undefined) return undefined;
  return childrenOf(spawner).find((pid) => !seen.has(pid) && / --chdir \/ -- \S*perl -e \$0 = 'sy-spare';/.test(processOf(pid)?.cmdline ?? ''));
}

/** The outermost bubblewrap above the `sleep <marker>` of a command (its ancestor whose parent is the launcher). */
function bubblewrapOf(marker: string): number | undefined {
  const spawner = launcher();
  let pid: number | undefined = sleepProcesses(marker)[0];
  while (pid !== undefined && pid > 1) {
    const parent: number | undefined = processOf(pid)?.parent;
    if (parent === spawner) return pid;
    pid = parent;
  }
  return undefined;
}

async function preparedSandbox(): Promise<number> {
  expect(await becomes(() => prepared() !== undefined, 10_000)).toBe(true);
  const pid = prepared() as number;
  seen.add(pid);
  return pid;
}

const asRoot = process.geteuid?.() === 0;

describe.runIf(CommandSpawner.supported() && asRoot)('exec_command through a sandbox prepared ahead (as root)', () => {
  test('the next command runs in the prepared bubblewrap, with its own fresh /tmp and PID namespace each time', async () => {
    const { run } = openSpareWorkspace();
    // Each command stays (a sleep) so their namespaces exist at once: a freed namespace's inode number is reused.
    const first = await run(`echo one > /tmp/mark; readlink /proc/self/ns/pid; echo $$; sleep ${uniqueSleepSeconds()}`, 500);
    const [firstNs, firstPid] = (first.output as string).trim().split('\n');
    expect(firstPid).toBe('2');
    const namespaces = [firstNs];
    for (let i = 0; i < 2; i++) {
      const ready = await preparedSandbox();
      const marker = uniqueSleepSeconds();
      const next = await run(`test -e /tmp/mark && echo shared || echo private; echo two > /tmp/mark; readlink /proc/self/ns/pid; echo $$; ls /proc | grep -c '^[0-9]'; sleep ${marker}`, 500);
      expect(await becomes(() => bubblewrapOf(marker) !== undefined, 5_000)).toBe(true);
      // the command's bubblewrap is the one started before the request, not a new one
      expect(bubblewrapOf(marker)).toBe(ready);
      const [tmp, ns, pid, visible] = (next.output as string).trim().split('\n');
      expect({ tmp, pid }).toEqual({ tmp: 'private', pid: '2' });
      // bubblewrap's init, the shell, ls and grep: nothing of the host or of another command
      expect(Number(visible)).toBeLessThan(6);
      expect(namespaces).not.toContain(ns);
      namespaces.push(ns);
    }
    expect(new Set(namespaces).size).toBe(3);
  }, 60_000);

  test('a command sees the same environment, directory and exit status through a prepared sandbox as through its own bubblewrap', async () => {
    const { root, run } = openSpareWorkspace();
    mkdirSync(join(root, 'sub'));
    // bubblewrap's init (pid 1) has bubblewrap's command line: the stub's in a prepared sandbox
    // (the pattern assembled in a file, so that the probe's own command line does not contain it)
    const probe = { cmd: "env | sort; pwd; printf 'ARGV%s' '[0]' > /tmp/p; grep -c -F -f /tmp/p /proc/1/cmdline; exit 7", workdir: 'sub' };
    const own = codeModeValue(await callTool(toolsets[0].tools[0], { ...probe, yield_time_ms: 10_000 }, { step: { sessionId: 'alice', turnId: 'alice-1' } }));
    const ready = await preparedSandbox();
    const marker = uniqueSleepSeconds();
    await run(`sleep ${marker}`, 500);
    expect(await becomes(() => bubblewrapOf(marker) !== undefined, 5_000)).toBe(true);
    expect(bubblewrapOf(marker)).toBe(ready);
    await preparedSandbox();
    const prepared = codeModeValue(await callTool(toolsets[0].tools[0], { ...probe, yield_time_ms: 10_000 }, { step: { sessionId: 'alice', turnId: 'alice-1' } }));
    expect({ own: own.exit_code, prepared: prepared.exit_code }).toEqual({ own: 7, prepared: 7 });
    expect((own.output as string).endsWith('\n0\n')).toBe(true);
    expect(prepared.output).toBe(`${(own.output as string).slice(0, -2)}1\n`);
    expect(prepared.output).toContain(`PWD=${join(root, 'sub')}\n`);
  }, 60_000);

  test('a nested .git made or replaced after the sandbox was prepared: it is discarded and the command\'s own bubblewrap protects it', async () => {
    const { root, run } = openSpareWorkspace();
    mkdirSync(join(root, 'old', '.git'), { recursive: true });
    await run('true');
    // a new .git: the read-only binds differ from the prepared sandbox's
    let stale = await preparedSandbox();
    mkdirSync(join(root, 'sub', '.git'), { recursive: true });
    let marker = uniqueSleepSeconds();
    let answer = await run(`{ echo hook > sub/.git/config; } 2>/dev/null && echo written || echo refused; sleep ${marker}`, 500);
    expect(answer.output).toBe('refused\n');
    expect(await becomes(() => bubblewrapOf(marker) !== undefined, 5_000)).toBe(true);
    expect(bubblewrapOf(marker)).not.toBe(stale);
    expect(await becomes(() => processOf(stale) === undefined, 5_000)).toBe(true);
    // the same path replaced by a new directory (the binds read the same): the prepared mount would
    // no longer cover it, so it is discarded too
    stale = await preparedSandbox();
    rmSync(join(root, 'old', '.git'), { recursive: true });
    mkdirSync(join(root, 'old', '.git'));
    marker = uniqueSleepSeconds();
    answer = await run(`{ echo hook > old/.git/config; } 2>/dev/null && echo written || echo refused; sleep ${marker}`, 500);
    expect(answer.output).toBe('refused\n');
    expect(await becomes(() => bubblewrapOf(marker) !== undefined, 5_000)).toBe(true);
    expect(bubblewrapOf(marker)).not.toBe(stale);
    expect(readdirSync(join(root, 'old', '.git'))).toEqual([]);
    expect(readdirSync(join(root, 'sub', '.git'))).toEqual([]);
  }, 60_000);

  test('a workspace that is not a repository gets no prepared sandbox: its .git placeholder lives only while a command runs', async () => {
    const { root, run } = openSpareWorkspace({}, false);
    const marker = uniqueSleepSeconds();
    await run(`sleep ${marker}`, 500);
    expect(await becomes(() => bubblewrapOf(marker) !== undefined, 5_000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(prepared()).toBeUndefined();
    expect(readdirSync(root)).toEqual(['.git']);
  }, 60_000);

  test('a prepared sandbox ends with its session (and its launcher), unused', async () => {
    const { run } = openSpareWorkspace();
    await run('true');
    const ready = await preparedSandbox();
    expect(processOf(ready)).toBeDefined();
    await toolsets[0].endSession('alice');
    expect(await becomes(() => processOf(ready) === undefined && launcher() === undefined, 5_000)).toBe(true);
  }, 60_000);

  test('the cgroup caps hold for a command run in a prepared sandbox: a fork bomb stops at the pids cap', async () => {
    const { run } = openSpareWorkspace({ limits: { pids: 24 } });
    await run('true');
    const ready = await preparedSandbox();
    const marker = uniqueSleepSeconds();
    // Bounded: at most 60 background sleeps of 20 s (the inner shell gives up at its first failed
    // fork); counting /proc with a glob needs no fork. The first two seconds are for finding it.
    const bomb = `(sleep ${marker} &); sleep 2; sh -c 'i=0; while [ $i -lt 60 ]; do sleep 20.4712 & i=$((i+1)); done'; set -- /proc/[0-9]*; echo "live=$#"; exit 0`;
    const answer = await run(bomb, 300);
    expect(await becomes(() => bubblewrapOf(marker) !== undefined, 5_000)).toBe(true);
    expect(bubblewrapOf(marker)).toBe(ready);
    // the rest of the output and the exit come with the poll
    const write = toolsets[0].tools[1];
    const polled = codeModeValue(await callTool(write, { session_id: answer.session_id as number, chars: '', yield_time_ms: 20_000 }, { step: { sessionId: 'alice', turnId: 'alice-1' } }));
    const output = `${answer.output as string}${polled.output as string}`;
    const live = Number(/live=(\d+)/.exec(output)?.[1]);
    expect(live).toBeGreaterThan(12);
    expect(live).toBeLessThanOrEqual(24);
    expect(output).toContain('Cannot fork');
    expect(output).toMatch(/\nsandbox limit: the command reached its limit of 24 processes \(\d+ new processes were refused\)\n$/);
    expect(polled.exit_code).toBe(0);
    expect(await becomes(() => sleepProcesses('20.4712').length === 0, 5_000)).toBe(true);
  }, 60_000);
});
