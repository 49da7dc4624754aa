import { describe, expect, it } from 'vitest';
import { RespondToModelError } from '@switchyard/protocol';
import { ExecProcess, type ExecProcessSpec } from './exec-process';

// The audit (the check after a command: tool-exec's is the renaming of new git metadata) runs each
// time output is taken and once at the exit. Checks never overlap, and a check that fails closes
// the command: killed, output withheld, the failure instead.

function spec(cmd: string, audit: ExecProcessSpec['audit']): ExecProcessSpec {
  return { file: '/bin/sh', args: ['-c', cmd], cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, tty: false, maxRetainedBytes: 1 << 20, audit };
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ExecProcess audits', () => {
  it('one audit at a time: takings of output while one runs wait for it and share the one after it', async () => {
    let running = 0;
    let most = 0;
    let calls = 0;
    const audit = async () => {
      calls++;
      running++;
      most = Math.max(most, running);
      await tick(150);
      running--;
      return `audit ${calls}`;
    };
    const execProcess = await ExecProcess.start(spec('echo out; sleep 1.5', audit));
    // the first taking starts an audit; two more while it runs share the one queued after it
    const first = execProcess.takeOutput();
    await tick(50);
    const outputs = await Promise.all([first, execProcess.takeOutput(), execProcess.takeOutput()]);
    expect(calls).toBe(2);
    expect(outputs.join('')).toContain('audit 1');
    expect(outputs.join('')).toContain('audit 2');
    await execProcess.finished;
    // the exit's audit ran after them, never beside one
    expect(calls).toBe(3);
    expect(most).toBe(1);
    const last = await execProcess.takeOutput();
    expect(last.endsWith('\naudit 3\n')).toBe(true);
    expect(`${outputs.join('')}${last}`.split('out\n')).toHaveLength(2);
  });

  it('an audit that fails while the command runs: the command is killed, its output withheld, every taking throws the failure', async () => {
    const failure = new RespondToModelError('check could not finish', { code: 'LIMIT_EXCEEDED' });
    let calls = 0;
    const audit = async () => {
      if (++calls === 1) throw failure;
      return 'never';
    };
    const execProcess = await ExecProcess.start(spec('echo secret-output; exec sleep 30', audit));
    await tick(200);
    await expect(execProcess.takeOutput()).rejects.toBe(failure);
    await execProcess.finished;
    expect(execProcess.exitCode).toBe(128 + 9);
    await expect(execProcess.takeOutput()).rejects.toBe(failure);
    // no audit after the failure (the exit's included): nothing more is vouched for
    expect(calls).toBe(1);
  });

  it('an audit that fails at the exit: the output is withheld; a throw that is not a Switchyard error becomes a model-visible one', async () => {
    const audit = (): string => {
      throw new Error('walk broke');
    };
    const execProcess = await ExecProcess.start(spec('echo secret-output', undefined));
    await execProcess.finished;
    expect(await execProcess.takeOutput()).toBe('secret-output\n');
    const failing = await ExecProcess.start(spec('echo secret-output', audit));
    await failing.finished;
    const error = await failing.takeOutput().then(
      () => undefined,
      (thrown: unknown) => thrown as RespondToModelError,
    );
    expect([error?.name, error?.code, error?.message]).toEqual([
      'RespondToModelError',
      'RESPOND_TO_MODEL',
      'exec_command failed closed: the check after the command could not finish (walk broke); its output is withheld and it was stopped if still running',
    ]);
  });
});
