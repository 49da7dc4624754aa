import { mkdtempSync, realpathSync } from 'node:fs';
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

export { makeWorkspace, uniqueSleepSeconds } from '@switchyard/test-helpers';
