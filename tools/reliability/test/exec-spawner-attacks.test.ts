import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CommandSpawner } from '@switchyard/sandbox';
import { execTools } from '@switchyard/tool-exec';
import { report } from '../src/profile';
import { callItem, execSessionIdOf, openHarness, outputText, type Harness } from './helpers';
import { becomes } from '@switchyard/test-helpers';
import { processInfo, processesWith } from '@switchyard/config/proc';

// Unsandboxed (danger-full-access) commands of a session go through one long-lived spawner. A
// command runs as the spawner's user and can find it (its reaper's parent), so these attacks are
// about robustness, not a boundary: whatever a command does to the spawner, the host keeps
// answering, the session's next command runs, and nothing the command started survives.
const scratch = mkdtempSync(join(tmpdir(), 'reliability-exec-spawner-'));
const outcomes: string[] = [];
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  report('exec spawner attacks', outcomes.join('\n'));
});

const SPAWNER_PID = 's=$(cut -d" " -f4 /proc/$PPID/stat)';

let calls = 0;
async function execOn(harness: Harness, cmd: string, yieldMs = 10_000): Promise<string> {
  return outputText(await harness.step.dispatch(callItem(`c${++calls}`, 'exec_command', { cmd, yield_time_ms: yieldMs })));
}

describe.runIf(CommandSpawner.supported())('exec_command: a command against its session’s spawner', () => {
  const root = join(scratch, 'ws');
  mkdirSync(root, { recursive: true });
  const exec = execTools({ root, sandbox: 'danger-full-access', approvalPolicy: 'never', shell: '/bin/sh', processScope: 'session' });
  const open = () => openHarness({ toolMode: 'direct', cwd: root, tools: [...exec] });
  afterAll(() => exec.shutdown());

  it('SIGKILL of its own spawner: the call answers (killed, with a note), its setsid child dies, the next call works', async () => {
    const harness = await open();
    try {
      const marker = '4711.0815';
      const answer = await execOn(harness, `${SPAWNER_PID}; (setsid sleep ${marker} &); sleep 0.3; kill -9 $s; sleep 5`);
      expect(answer).toContain('Process exited with code 137');
      expect(answer).toMatch(/exec_command: the session's command spawner \(pid \d+\) ended \(signal SIGKILL\) while this command ran; the command and everything it started were killed/);
      expect(await becomes(() => processesWith(`sleep ${marker}`).length === 0, 5_000)).toBe(true);
      expect(await execOn(harness, 'echo next')).toContain('next');
      outcomes.push('SIGKILL of the spawner: call answered 137 with the note, tree gone, next call ran');
    } finally {
      await harness.close();
    }
  }, 30_000);

  it('SIGSTOP of its spawner: the next call is not hung — the spawner is killed after 10 s and the call after it runs', async () => {
    const harness = await open();
    try {
      expect(await execOn(harness, `${SPAWNER_PID}; kill -STOP $s; echo stopped`, 1_000)).toContain('stopped');
      const started = Date.now();
      const stalled = await execOn(harness, 'echo never');
      expect(stalled).toMatch(/Failed to create unified exec process: the session's command spawner \(pid \d+\) ended \(it did not answer within 10 s and was killed\) before the command started/);
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(await execOn(harness, 'echo after')).toContain('after');
      outcomes.push(`SIGSTOP of the spawner: the next call failed clearly after ${Date.now() - started} ms, the one after ran`);
    } finally {
      await harness.close();
    }
  }, 60_000);

  it('reopening the spawner’s control channel and pipes through /proc forges nothing; draining its wake pipe only delays exits', async () => {
    const harness = await open();
    try {
      const forge = `${SPAWNER_PID}; for fd in 0 1 2; do (echo "X 1 0" > /proc/$s/fd/$fd) 2>/dev/null && echo "wrote $fd"; done; echo tried`;
      const forged = await execOn(harness, forge);
      expect(forged).toContain('tried');
      expect(forged).not.toMatch(/wrote \d/);
      // A background command keeps reading the spawner's wake pipe (its fd 3) for 20 s.
      const thief = await harness.step.dispatch(
        callItem(`c${++calls}`, 'exec_command', { cmd: `${SPAWNER_PID}; end=$(($(date +%s)+20)); while [ $(date +%s) -lt $end ]; do timeout 1 cat /proc/$s/fd/3 >/dev/null 2>&1; done`, yield_time_ms: 300 }),
      );
      expect(execSessionIdOf(thief)).toBeGreaterThan(0);
      const started = Date.now();
      expect(await execOn(harness, 'echo still answered')).toContain('still answered');
      expect(Date.now() - started).toBeLessThan(8_000);
      outcomes.push(`forging through /proc/<spawner>/fd: refused; wake pipe drained: exit still reported in ${Date.now() - started} ms`);
    } finally {
      await harness.close();
    }
  }, 60_000);
});

/** The parent pid of `pid` while it runs (undefined once gone or a zombie). */
function liveParentOf(pid: number): number | undefined {
  const info = processInfo(pid);
  return info && info.state !== 'Z' ? info.ppid : undefined;
}

/** This host's sandbox launchers (perl children running the long-lived sandbox launcher, named `sy-box-spawner`). */
function sandboxLaunchers(): number[] {
  return processesWith('sy-box-spawner').filter((pid) => liveParentOf(pid) === process.pid);
}

describe.runIf(CommandSpawner.supported() && process.geteuid?.() === 0)('sandboxed exec_command: a command against its session’s sandbox launcher', () => {
  const root = join(scratch, 'sandboxed');
  mkdirSync(root, { recursive: true });
  const exec = execTools({ root, sandbox: 'workspace-write', approvalPolicy: 'never', shell: '/bin/sh', processScope: 'session' });
  afterAll(() => exec.shutdown());

  it('cannot see or signal the launcher: a /proc search, a kill of its pid and kill -9 -1 reach only its own sandbox', async () => {
    const before = sandboxLaunchers();
    const harness = await openHarness({ toolMode: 'direct', cwd: root, tools: [...exec] });
    try {
      expect(await execOn(harness, 'echo warm')).toContain('warm');
      const launchers = sandboxLaunchers().filter((pid) => !before.includes(pid));
      expect(launchers).toHaveLength(1);
      // The pattern is assembled in a file, so that no command line in the sandbox contains it.
      const attack = [
        "printf 'sy-box-spawn%s' er > /tmp/pattern",
        'grep -l -F -f /tmp/pattern /proc/[0-9]*/cmdline 2>/dev/null | wc -l',
        `kill -9 ${launchers[0]} 2>/dev/null && echo "signalled the launcher" || echo "no such process"`,
        'ls /proc | grep -c "^[0-9]"',
        '(kill -9 -1) 2>/dev/null',
      ].join('; ');
      const answer = await execOn(harness, attack);
      // kill -9 -1 from a subshell reaches every process of its own PID namespace but init, the shell included: 137
      expect(answer).toContain('Process exited with code 137');
      expect(answer).toMatch(/Output:\n0\nno such process\n[2-4]\n/);
      expect(answer).not.toContain('signalled the launcher');
      // the launcher lives and serves the next command of the session
      expect(sandboxLaunchers()).toContain(launchers[0]);
      expect(await execOn(harness, 'echo next')).toContain('next');
      expect(sandboxLaunchers()).toContain(launchers[0]);
      outcomes.push('sandboxed command vs its launcher: not visible, not signallable, kill -9 -1 stayed inside its PID namespace');
    } finally {
      await harness.close();
    }
  }, 30_000);
});

/** Sandboxes `launcher` prepared ahead: its bubblewrap children running the stub that waits for a request. */
function preparedBy(launcher: number): number[] {
  return processesWith("-- /usr/bin/perl -e $0 = 'sy-spare';").filter((pid) => liveParentOf(pid) === launcher);
}

describe.runIf(CommandSpawner.supported() && process.geteuid?.() === 0)('sandboxed exec_command: a command against the next command’s prepared sandbox', () => {
  const root = join(scratch, 'prepared');
  // a repository: the launcher prepares the next command's sandbox ahead (no .git placeholder to keep)
  mkdirSync(join(root, '.git'), { recursive: true });
  const exec = execTools({ root, sandbox: 'workspace-write', approvalPolicy: 'never', shell: '/bin/sh', processScope: 'session' });
  afterAll(() => exec.shutdown());

  it('given its host pid, cannot signal it, write a request into it through /proc, or leave anything in it', async () => {
    const before = sandboxLaunchers();
    const harness = await openHarness({ toolMode: 'direct', cwd: root, tools: [...exec] });
    try {
      expect(await execOn(harness, 'echo warm')).toContain('warm');
      const [launcher] = sandboxLaunchers().filter((pid) => !before.includes(pid));
      expect(await becomes(() => preparedBy(launcher).length === 1, 10_000)).toBe(true);
      const mine = preparedBy(launcher)[0];
      // The attack waits for the host to name the sandbox prepared for the command after it, then
      // signals it, writes a forged request (`sh -c 'echo FORGED'` in /) into every descriptor of
      // that pid and of every process it can see, leaves a file in /tmp and kills its own namespace.
      const forged = ['2f', '3', '2f62696e2f7368', '2d63', Buffer.from('echo FORGED').toString('hex'), '0'].join(' ');
      const attack = [
        'while [ ! -s target ]; do sleep 0.1; done; t=$(cat target)',
        'kill -9 $t 2>/dev/null && echo "signalled it" || echo "no such process"',
        `for f in /proc/$t/fd/* /proc/[0-9]*/fd/*; do [ -p "$f" ] && { printf '%s\\n' '${forged}' > "$f"; } 2>/dev/null && echo "wrote $f" >> /tmp/wrote; done`,
        'echo leftover > /tmp/leftover',
        'echo done',
        '(kill -9 -1) 2>/dev/null',
      ].join('; ');
      const running = harness.step.dispatch(callItem(`c${++calls}`, 'exec_command', { cmd: attack, yield_time_ms: 20_000 }));
      expect(await becomes(() => preparedBy(launcher).some((pid) => pid !== mine), 10_000)).toBe(true);
      const next = preparedBy(launcher).find((pid) => pid !== mine) as number;
      writeFileSync(join(root, 'target'), String(next));
      const answer = outputText(await running);
      expect(answer).toMatch(/Output:\nno such process\ndone\n/);
      expect(answer).toContain('Process exited with code 137');
      // the prepared sandbox lives, and the next command runs in it, untouched
      expect(liveParentOf(next)).toBe(launcher);
      const after = await execOn(harness, 'echo "pid $$"; ls /tmp | grep -c -e leftover -e wrote');
      expect(after).toMatch(/Output:\npid 2\n0\n$/);
      expect(after).not.toContain('FORGED');
      expect(liveParentOf(next)).toBeUndefined(); // used once, ended with its command
      outcomes.push('sandboxed command vs the next command’s prepared sandbox: not signallable by host pid, no request forged through /proc, nothing left in its /tmp');
    } finally {
      await harness.close();
    }
  }, 60_000);
});

// Issue 47 row 11: an unsandboxed command that kills its reaper (and its spawner) from /proc, then
// daemonizes, leaves a process reparented away from everything that would kill it. As root each
// such command runs in a tracking cgroup of its own, killed whole when the command ends.
const asRootWithCgroups = process.getuid?.() === 0 && readdirSync('/sys/fs/cgroup').length > 0;
describe.runIf(CommandSpawner.supported() && asRootWithCgroups)('exec_command: a daemon that escaped its reaper (issue 47 row 11)', () => {
  const cases = [
    { tty: false, cgroups: true },
    { tty: true, cgroups: true },
    { tty: false, cgroups: false }, // the control: no tracking group, so the daemon must survive
  ];
  for (const { tty, cgroups } of cases) {
    const how = tty ? 'tty, per-command reaper' : 'through the spawner';
    it(cgroups ? `${how}: killed with its command, though its reaper${tty ? '' : ' and spawner'} died first` : `control, ${how} with cgroups off: the daemon outlives its command`, async () => {
      const root = join(scratch, `daemon-${tty}-${cgroups}`);
      mkdirSync(root, { recursive: true });
      const exec = execTools({ root, sandbox: 'danger-full-access', approvalPolicy: 'never', shell: '/bin/sh', processScope: 'session', limits: { cgroups } });
      const harness = await openHarness({ toolMode: 'direct', cwd: root, tools: [...exec] });
      const marker = `4711.${tty ? 1 : 2}${cgroups ? 1 : 2}`;
      try {
        const attack = [
          `(setsid sh -c 'echo $$ > daemon; exec sleep ${marker}' </dev/null >/dev/null 2>&1 &)`,
          'while [ ! -s daemon ]; do sleep 0.1; done',
          'r=$PPID; s=$(cut -d" " -f4 /proc/$r/stat); k=$r',
          // the spawner too, never the host (its parent when the reaper is a process of its own)
          '[ "$(cat /proc/$s/comm)" = sy-spawner ] && k="$k $s"',
          'echo $k > killed; kill -9 $k; sleep 30',
        ].join('; ');
        await harness.step.dispatch(callItem(`c${++calls}`, 'exec_command', { cmd: attack, tty, yield_time_ms: 15_000 }));
        const killed = readFileSync(join(root, 'killed'), 'utf8').trim().split(' ').map(Number);
        expect(killed).toHaveLength(tty ? 1 : 2);
        const daemon = Number(readFileSync(join(root, 'daemon'), 'utf8'));
        if (!cgroups) {
          // reparented away from the dead reaper, and alive well after the answer
          await new Promise((resolve) => setTimeout(resolve, 2_000));
          expect(processesWith(`sleep ${marker}`)).toEqual([daemon]);
          expect(killed).not.toContain(liveParentOf(daemon));
          outcomes.push(`control (cgroups off, ${tty ? 'tty' : 'spawner'}): the daemon outlived its dead reaper, parent ${liveParentOf(daemon)}`);
          return;
        }
        // Gone once the answer is out, without waiting for the session or the toolset to end.
        expect(await becomes(() => processesWith(`sleep ${marker}`).length === 0, 5_000)).toBe(true);
        outcomes.push(`${tty ? 'tty' : 'spawner'}: a daemon that killed its reaper${tty ? '' : ' and spawner'} died with its command (tracking cgroup)`);
      } finally {
        for (const pid of processesWith(`sleep ${marker}`)) process.kill(pid, 'SIGKILL');
        await harness.close();
        await exec.shutdown();
      }
    }, 60_000);
  }
});
