import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SwitchyardEvent } from '@switchyard/protocol';
import { DEFAULT_SANDBOX_LIMITS } from '@switchyard/sandbox';
import { execTools, type ExecToolsOptions } from '@switchyard/tool-exec';
import { report } from '../src/profile';
import { callItem, openHarness, outputText, type Harness } from './helpers';
import { becomes } from '@switchyard/test-helpers';

// Resource bombs inside the workspace-write sandbox, through the real stack (session → registry →
// tool-exec → bubblewrap), with the default caps unless a test lowers one. Every bomb is bounded
// by itself too (a counted loop, a sized write, a yield time), so a broken cap cannot take the
// machine down.
const scratch = mkdtempSync(join(tmpdir(), 'reliability-sandbox-resources-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const held: string[] = [];
afterAll(() => report('sandbox resources', `${held.length} resource bombs stopped at their caps:\n  - ${held.join('\n  - ')}`));


let counter = 0;
async function execSession(options: ExecToolsOptions = {}): Promise<{ harness: Harness; root: string; events: SwitchyardEvent[]; close(): Promise<void> }> {
  const root = join(scratch, `ws-${++counter}`);
  mkdirSync(root);
  const exec = execTools({ root, approvalPolicy: 'never', shell: '/bin/sh', ...options });
  const harness = await openHarness({ toolMode: 'direct', cwd: root, tools: [...exec] });
  const events: SwitchyardEvent[] = [];
  harness.session.on('tool-notification', (event) => events.push(event));
  return { harness, root, events, close: async () => (await harness.close(), await exec.shutdown()) };
}

/** Host processes whose command line is exactly `argv` (the bombs use a sleep length nothing else uses). */
function processesRunning(argv: string): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() === argv) count++;
    } catch {
      // gone
    }
  }
  return count;
}

const limitsEvent = (events: SwitchyardEvent[]) => events.find((event) => event.type === 'tool-notification' && event.name === 'sandbox-limits') as { data: Record<string, unknown> } | undefined;

describe('sandbox resources: caps per command', () => {
  it('a fork bomb stops at the pids cap with a clear error; nothing is left behind', async () => {
    // The cap is lowered to 128 so the bomb ends quickly on a loaded machine; the defaults are checked below.
    const { harness, events, close } = await execSession({ limits: { pids: 128 } });
    try {
      // Bounded: at most 400 background sleeps of 20 s; the cap must stop it first (the inner
      // shell gives up at its first failed fork). Counting /proc with a glob needs no fork.
      const bomb = `sh -c 'i=0; while [ $i -lt 400 ]; do sleep 20.4711 & i=$((i+1)); done'; set -- /proc/[0-9]*; echo "live=$#"; exit 0`;
      const answer = outputText(await harness.step.dispatch(callItem('bomb', 'exec_command', { cmd: bomb, yield_time_ms: 30_000 })));
      const live = Number(/live=(\d+)/.exec(answer)?.[1]);
      expect(live).toBeGreaterThan(64);
      expect(live).toBeLessThanOrEqual(128);
      expect(answer).toContain('Cannot fork');
      expect(answer).toMatch(/\nsandbox limit: the command reached its limit of 128 processes \(\d+ new processes were refused\)\n$/);
      expect(limitsEvent(events)?.data).toEqual({ mechanism: 'cgroup-v1', pids: 128, memory_bytes: 2 * 1024 ** 3, tmp_bytes: 512 * 1024 ** 2 });
      // Everything it started died with it; the next command runs.
      expect(await becomes(() => processesRunning('sleep 20.4711') === 0, 10_000, 100)).toBe(true);
      const next = outputText(await harness.step.dispatch(callItem('next', 'exec_command', { cmd: 'echo fine', yield_time_ms: 10_000 })));
      expect(next).toMatch(/Process exited with code 0\nOriginal token count: 2\nOutput:\nfine\n$/);
      held.push(`fork bomb (400 sleeps): ${live} processes at most (cap 128, cgroup-v1), "sandbox limit" line, nothing left behind`);
    } finally {
      await close();
    }
  });

  it('a 1.5 GB file in /tmp or /dev/shm fails at the tmpfs size (512 MiB)', async () => {
    const { harness, events, close } = await execSession();
    try {
      for (const dir of ['/tmp', '/dev/shm']) {
        const cmd = `df -k ${dir} | tail -1; head -c 1536M /dev/zero > ${dir}/big; echo "rc=$?"; wc -c < ${dir}/big; rm ${dir}/big`;
        const answer = outputText(await harness.step.dispatch(callItem(`fill${dir}`, 'exec_command', { cmd, yield_time_ms: 30_000 })));
        expect(answer).toMatch(/^tmpfs\s+524288\s/m);
        expect(answer).toContain('No space left on device');
        expect(answer).toContain('rc=1');
        expect(Number(/^(\d+)$/m.exec(answer)?.[1])).toBe(512 * 1024 ** 2);
      }
      expect(limitsEvent(events)?.data).toEqual({ mechanism: 'cgroup-v1', pids: DEFAULT_SANDBOX_LIMITS.pids, memory_bytes: 2 * 1024 ** 3, tmp_bytes: 512 * 1024 ** 2 });
      held.push('1.5 GB into /tmp and /dev/shm: "No space left on device" at 512 MiB each');
    } finally {
      await close();
    }
  });

  it('memory beyond the cap kills the command with a clear error (cap lowered to 256 MiB)', async () => {
    const { harness, close } = await execSession({ limits: { memoryBytes: 256 * 1024 ** 2 } });
    try {
      const cmd = 'python3 -c "x = bytearray(1024 * 1024 * 1024); print(len(x))"; echo "rc=$?"';
      const answer = outputText(await harness.step.dispatch(callItem('memory', 'exec_command', { cmd, yield_time_ms: 30_000 })));
      expect(answer).toContain('rc=137');
      expect(answer).toMatch(/\nsandbox limit: the command reached its memory limit of 256 MiB \(\d+ processes were killed\)\n$/);
      held.push('1 GiB bytearray under a 256 MiB cap: killed (137), "sandbox limit" line');
    } finally {
      await close();
    }
  });

  it('without cgroups the rlimit fallback still stops the fork bomb', async () => {
    const { harness, events, close } = await execSession({ limits: { cgroups: false, pids: 100 } });
    try {
      const bomb = `sh -c 'i=0; while [ $i -lt 300 ]; do sleep 20.4712 & i=$((i+1)); done'; set -- /proc/[0-9]*; echo "live=$#"; exit 0`;
      const answer = outputText(await harness.step.dispatch(callItem('bomb', 'exec_command', { cmd: bomb, yield_time_ms: 30_000 })));
      expect(Number(/live=(\d+)/.exec(answer)?.[1])).toBeLessThanOrEqual(100);
      expect(limitsEvent(events)?.data).toMatchObject({ mechanism: 'rlimit', pids: 100 });
      held.push('rlimit fallback (RLIMIT_NPROC 100): the bomb stayed under 100 processes');
    } finally {
      await close();
    }
  });
});

describe('sandbox resources: admission control per session', () => {
  it('200 exec_command calls in one response: at most 16 run at once, every call is answered', { timeout: 180_000 }, async () => {
    // danger-full-access keeps the machine's load down: the gate sits before the sandbox start
    // and is the same for every mode (a sandboxed run of this test only adds 200 bubblewrap starts).
    const { harness, root, close } = await execSession({ sandbox: 'danger-full-access' });
    const running = join(root, 'running');
    mkdirSync(running);
    try {
      // Each call holds its slot until `go` exists (at most 60 s: the bound of every call).
      const cmd = (id: number) => `mkdir running/${id}; i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; rmdir running/${id}`;
      const answers = Promise.all(
        Array.from({ length: 200 }, (_, id) => harness.step.dispatch(callItem(`c${id}`, 'exec_command', { cmd: cmd(id), yield_time_ms: 30_000 }))),
      );
      expect(await becomes(() => readdirSync(running).length >= 16, 30_000, 100)).toBe(true);
      let peak = 0;
      const until = Date.now() + 3_000;
      while (Date.now() < until) {
        peak = Math.max(peak, readdirSync(running).length);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(peak).toBe(16);
      writeFileSync(join(root, 'go'), '');
      const texts = (await answers).map(outputText);
      expect(texts.filter((answer) => /Process exited with code 0\nOriginal token count: 0\nOutput:\n$/.test(answer))).toHaveLength(200);
      expect(readdirSync(running)).toEqual([]);
      held.push(`200 calls in one response held open: ${peak} ran at once for 3 s (limit 16), all 200 answered with exit 0 once released`);
    } finally {
      writeFileSync(join(root, 'go'), '');
      await close();
    }
  });
});
