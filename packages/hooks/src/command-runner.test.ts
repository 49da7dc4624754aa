import { becomes } from '@switchyard/test-helpers';
import { readFileSync, existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runHookCommand } from './command-runner';
import { running } from '@switchyard/config/proc';
import { useScratch } from '../test/helpers';

const SH = '/bin/sh';
const tmp = useScratch();

describe('runHookCommand', () => {
  it('runs the command in cwd with the input on stdin and captures stdout, stderr and the exit code', async () => {
    const dir = tmp();
    const result = await runHookCommand({
      command: 'pwd; cat; echo oops >&2; exit 3',
      cwd: dir.dir,
      input: '{"a":1}',
      timeoutSec: 10,
      shell: SH,
    });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe(`${dir.dir}\n{"a":1}`);
    expect(result.stderr).toBe('oops\n');
    expect(result.error).toBeUndefined();
  });

  it('does not fail when the hook never reads stdin', async () => {
    const result = await runHookCommand({ command: 'exit 0', cwd: process.cwd(), input: 'x'.repeat(1 << 20), timeoutSec: 10, shell: SH });
    expect(result.exitCode).toBe(0);
    expect(result.error).toBeUndefined();
  });

  it('kills the whole process group on timeout: no process survives', async () => {
    const dir = tmp();
    const script = dir.script('hang.sh', `echo $$ > "${dir.path('hook.pid')}"\nsleep 300 &\necho $! > "${dir.path('child.pid')}"\nwait`);
    const started = Date.now();
    const result = await runHookCommand({ command: script, cwd: dir.dir, input: '{}', timeoutSec: 1, shell: SH });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(result.error).toBe('hook timed out after 1s');
    const hookPid = Number(readFileSync(dir.path('hook.pid'), 'utf8'));
    const childPid = Number(readFileSync(dir.path('child.pid'), 'utf8'));
    expect(await becomes(() => !running(hookPid) && !running(childPid), 5_000)).toBe(true);
  });

  it('kills processes a hook leaves behind in its group when it exits', async () => {
    const dir = tmp();
    const script = dir.script('leaves.sh', `sleep 300 >/dev/null 2>&1 &\necho $! > "${dir.path('child.pid')}"\nexit 0`);
    const result = await runHookCommand({ command: script, cwd: dir.dir, input: '{}', timeoutSec: 30, shell: SH });
    expect(result.exitCode).toBe(0);
    const childPid = Number(readFileSync(dir.path('child.pid'), 'utf8'));
    expect(await becomes(() => !running(childPid), 5_000)).toBe(true);
  });

  it('kills the group when the signal aborts', async () => {
    const dir = tmp();
    const script = dir.script('hang.sh', `echo $$ > "${dir.path('hook.pid')}"\nexec sleep 300`);
    const controller = new AbortController();
    const pending = runHookCommand({ command: script, cwd: dir.dir, input: '{}', timeoutSec: 600, shell: SH, signal: controller.signal });
    expect(await becomes(() => existsSync(dir.path('hook.pid')) && readFileSync(dir.path('hook.pid'), 'utf8').trim() !== '', 5_000)).toBe(true);
    controller.abort();
    const result = await pending;
    expect(result.aborted).toBe(true);
    expect(result.error).toBe('hook aborted: the tool call was cancelled');
    const hookPid = Number(readFileSync(dir.path('hook.pid'), 'utf8'));
    expect(await becomes(() => !running(hookPid), 5_000)).toBe(true);
  });

  it('caps stdout and stderr at 1 MiB each and keeps draining so the hook finishes', async () => {
    const result = await runHookCommand({
      command: 'head -c 3000000 /dev/zero | tr "\\0" a; head -c 2000000 /dev/zero | tr "\\0" b >&2; exit 0',
      cwd: process.cwd(),
      input: '',
      timeoutSec: 30,
      shell: SH,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.length).toBe(1024 * 1024);
    expect(result.stderr.length).toBe(1024 * 1024);
    expect(result.stdoutTruncated).toBe(true);
    expect(result.stderrTruncated).toBe(true);
  });

  it('reports a missing working directory as a spawn failure', async () => {
    const result = await runHookCommand({ command: 'true', cwd: '/definitely/not/here', input: '', timeoutSec: 5, shell: SH });
    expect(result.exitCode).toBeNull();
    expect(result.error).toMatch(/^failed to spawn hook: /);
  });

  it('reports a missing shell as a spawn failure', async () => {
    const result = await runHookCommand({ command: 'true', cwd: process.cwd(), input: '', timeoutSec: 5, shell: '/no/such/shell' });
    expect(result.error).toMatch(/^failed to spawn hook: .*ENOENT/);
  });
});
