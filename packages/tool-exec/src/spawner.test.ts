import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, test } from 'vitest';
import { CommandSpawner } from '@switchyard/sandbox';
import { createExecToolset, type ExecToolset, type ExecToolsOptions } from './exec-tools';
import { callTool, codeModeValue, makeWorkspace, processOf, sleepProcesses, uniqueSleepSeconds } from './test-support';
import { becomes } from '@switchyard/test-helpers';

// danger-full-access commands without a tty go through one long-lived spawner per session.
const toolsets: ExecToolset[] = [];
afterEach(async () => {
  await Promise.all(toolsets.splice(0).map((toolset) => toolset.shutdown()));
});

function openShellToolset(options: ExecToolsOptions = {}) {
  const toolset = createExecToolset({ root: makeWorkspace(), sandbox: 'danger-full-access', approvalPolicy: 'never', shell: '/bin/sh', processScope: 'session', ...options });
  toolsets.push(toolset);
  const [exec, write] = toolset.tools;
  return { toolset, exec, write };
}


/** The command prints its reaper's parent: the session's spawner (or, without one, the host). */
const SHOW_SPAWNER = 'cut -d" " -f4 /proc/$PPID/stat';
const step = (sessionId: string) => ({ sessionId, turnId: `${sessionId}-1` });

async function spawnerOf(exec: ExecToolset['tools'][number], sessionId: string): Promise<number> {
  return Number((codeModeValue(await callTool(exec, { cmd: SHOW_SPAWNER }, { step: step(sessionId) })).output as string).trim());
}

describe.runIf(CommandSpawner.supported())('exec_command through the session’s long-lived spawner', () => {
  test('one spawner per session, reused by its commands, never shared, ended with the session', async () => {
    const { toolset, exec } = openShellToolset();
    const [a1, a2, b] = [await spawnerOf(exec, 'alice'), await spawnerOf(exec, 'alice'), await spawnerOf(exec, 'bob')];
    expect(a1).toBe(a2);
    expect(b).not.toBe(a1);
    for (const pid of [a1, b]) expect(processOf(pid)).toMatchObject({ parent: process.pid, cmdline: 'sy-spawner' });
    await toolset.endSession('alice');
    expect(await becomes(() => processOf(a1) === undefined, 5_000)).toBe(true);
    expect(processOf(b)?.parent).toBe(process.pid);
    // alice's next command starts a new spawner; bob's is untouched
    const again = await spawnerOf(exec, 'alice');
    expect([a1, b]).not.toContain(again);
    expect(await spawnerOf(exec, 'bob')).toBe(b);
    await toolset.shutdown();
    expect(await becomes(() => processOf(again) === undefined && processOf(b) === undefined, 5_000)).toBe(true);
  });

  test('killing the spawner mid-command: the command tree dies, the poll says so, the next call gets a fresh spawner', async () => {
    const { exec, write } = openShellToolset();
    const [inner, outer] = [uniqueSleepSeconds(), uniqueSleepSeconds()];
    const started = codeModeValue(await callTool(exec, { cmd: `${SHOW_SPAWNER}; (setsid sleep ${inner} &); sleep ${outer}`, yield_time_ms: 500 }, { step: step('alice') }));
    const spawner = Number((started.output as string).trim());
    expect(await becomes(() => sleepProcesses(inner).length === 1 && sleepProcesses(outer).length === 1, 5_000)).toBe(true);
    process.kill(spawner, 'SIGKILL');
    const polled = codeModeValue(await callTool(write, { session_id: started.session_id as number, chars: '', yield_time_ms: 5_000 }, { step: step('alice') }));
    expect(polled.exit_code).toBe(137);
    expect(polled.output).toBe(`\nexec_command: the session's command spawner (pid ${spawner}) ended (signal SIGKILL) while this command ran; the command and everything it started were killed\n`);
    expect(await becomes(() => sleepProcesses(inner).length + sleepProcesses(outer).length === 0, 5_000)).toBe(true);
    const fresh = await spawnerOf(exec, 'alice');
    expect(fresh).not.toBe(spawner);
    expect(processOf(fresh)?.parent).toBe(process.pid);
  });

  test('spawner: false, and tty commands, start a reaper per command (the host is its parent)', async () => {
    const { exec } = openShellToolset({ spawner: false });
    expect(await spawnerOf(exec, 'alice')).toBe(process.pid);
    const { exec: withTty } = openShellToolset();
    const tty = codeModeValue(await callTool(withTty, { cmd: `${SHOW_SPAWNER}; sleep 0.3`, tty: true, yield_time_ms: 3_000 }, { step: step('alice') }));
    expect((tty.output as string).trim()).toBe(String(process.pid));
  });
});

/** The session's sandbox launcher of a running sandboxed `sleep <marker>`: the perl ancestor whose parent is this host. */
function launcherOf(marker: string): number | undefined {
  let pid: number | undefined = sleepProcesses(marker)[0];
  while (pid !== undefined && pid > 1) {
    const found = processOf(pid);
    if (!found) return undefined;
    if (found.parent === process.pid) return found.cmdline === 'sy-box-spawner' ? pid : undefined;
    pid = found.parent;
  }
  return undefined;
}

const asRoot = process.geteuid?.() === 0;

describe.runIf(CommandSpawner.supported() && asRoot)('sandboxed exec_command through the session’s long-lived sandbox launcher (as root)', () => {
  const sandboxed = () => openShellToolset({ sandbox: 'workspace-write' });

  test('one launcher per session, reused; each command still gets its own /tmp, PID namespace and cgroup', async () => {
    const { exec } = sandboxed();
    const run = async (sessionId: string, cmd: string, yieldMs = 10_000) => codeModeValue(await callTool(exec, { cmd, yield_time_ms: yieldMs }, { step: step(sessionId) }));
    const [a1, a2, b1] = [uniqueSleepSeconds(), uniqueSleepSeconds(), uniqueSleepSeconds()];
    await run('alice', `sleep ${a1}`, 300);
    await run('bob', `sleep ${b1}`, 300);
    expect(await becomes(() => launcherOf(a1) !== undefined && launcherOf(b1) !== undefined, 5_000)).toBe(true);
    const [alice, bob] = [launcherOf(a1) as number, launcherOf(b1) as number];
    expect(alice).not.toBe(bob);
    await run('alice', `sleep ${a2}`, 300);
    expect(await becomes(() => launcherOf(a2) === alice, 5_000)).toBe(true);
    // the two sleeps of alice run in different cgroups, each its own
    const cgroupOf = (marker: string) => readFileSync(`/proc/${sleepProcesses(marker)[0]}/cgroup`, 'utf8').split('\n').find((line) => line.includes('switchyard-'));
    expect(cgroupOf(a1)).toMatch(/switchyard-\d+-\d+/);
    expect(cgroupOf(a1)).not.toBe(cgroupOf(a2));
    // private /tmp per command, PID namespace per command (the shell is pid 2 under bubblewrap's init; no host process visible)
    expect((await run('alice', 'echo mine > /tmp/mark; cat /tmp/mark; echo $$')).output).toBe('mine\n2\n');
    expect(await run('alice', 'test -e /tmp/mark && echo shared || echo private; ls /proc | grep -c "^[0-9]"; exit 3')).toMatchObject({ exit_code: 3, output: expect.stringMatching(/^private\n[0-9]\n$/) });
  });

  test('killing the launcher mid-command: the sandboxed tree dies, the poll says so, the next command gets a fresh launcher', async () => {
    const { exec, write } = sandboxed();
    const [inner, outer] = [uniqueSleepSeconds(), uniqueSleepSeconds()];
    const started = codeModeValue(await callTool(exec, { cmd: `(setsid sleep ${inner} &); sleep ${outer}`, yield_time_ms: 500 }, { step: step('alice') }));
    expect(await becomes(() => launcherOf(inner) !== undefined && sleepProcesses(outer).length === 1, 5_000)).toBe(true);
    const launcher = launcherOf(inner) as number;
    process.kill(launcher, 'SIGKILL');
    const polled = codeModeValue(await callTool(write, { session_id: started.session_id as number, chars: '', yield_time_ms: 5_000 }, { step: step('alice') }));
    expect(polled.exit_code).toBe(137);
    expect(polled.output).toBe(`\nexec_command: the session's command spawner (pid ${launcher}) ended (signal SIGKILL) while this command ran; the command and everything it started were killed\n`);
    expect(await becomes(() => sleepProcesses(inner).length + sleepProcesses(outer).length === 0, 5_000)).toBe(true);
    const next = uniqueSleepSeconds();
    await callTool(exec, { cmd: `sleep ${next}`, yield_time_ms: 300 }, { step: step('alice') });
    expect(await becomes(() => launcherOf(next) !== undefined, 5_000)).toBe(true);
    expect(launcherOf(next)).not.toBe(launcher);
  });
});
