import { mkdtempSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxPolicy } from './policy';
import { spawnSandboxed, type SpawnSandboxedOptions } from './spawn-sandboxed';

/** Runs `script` with /bin/sh inside the sandbox; resolves with its exit code and merged output. */
export async function runIn(policy: SandboxPolicy, script: string, options: SpawnSandboxedOptions = {}): Promise<{ code: number; output: string }> {
  const child = await spawnSandboxed(['/bin/sh', '-c', script], policy, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number>((resolve) => child.once('close', (status, signal) => resolve(status ?? 128 + (signal ? 9 : 0))));
  return { code, output };
}

/** Pids whose command line contains `marker` (a unique string), excluding this process. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (cmdline.includes(marker) && !/\) Z /.test(state)) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

/** The command line of `pid`, or `''` once it is gone (a listed process may exit before it is read). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

export { makeWorkspace, uniqueSleepSeconds } from '@switchyard/test-helpers';
