import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { PostToolUseRequest, PreToolUseRequest, JsonValue } from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';

/** A scratch directory with executable shell scripts; `cleanup()` removes it. */
export function scratch() {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-hooks-'));
  return {
    dir,
    /** Writes an executable `/bin/sh` script and returns its absolute path. */
    script(name: string, body: string): string {
      const path = join(dir, name);
      writeFileSync(path, `#!/bin/sh\n${body}\n`);
      chmodSync(path, 0o755);
      return path;
    },
    path(name: string): string {
      return join(dir, name);
    },
    cleanup(): void {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Scratch directories for one test file, removed after each test. */
export function useScratch(): () => ReturnType<typeof scratch> {
  const dirs: Array<ReturnType<typeof scratch>> = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.cleanup();
  });
  return () => {
    const dir = scratch();
    dirs.push(dir);
    return dir;
  };
}

/** A PreToolUse request for a Bash-like call. */
export function preRequest(overrides: Partial<PreToolUseRequest> & { cwd?: string } = {}): PreToolUseRequest {
  const { cwd, ...rest } = overrides;
  return {
    toolName: 'Bash',
    toolInput: { command: 'echo hi' },
    toolUseId: 'call-1',
    caller: { kind: 'direct' },
    step: createStepContext({ sessionId: 'session-9', turnId: 'turn-3', cwd: cwd ?? process.cwd(), model: 'gpt-test' }),
    signal: new AbortController().signal,
    ...rest,
  };
}

/** A PostToolUse request. */
export function postRequest(overrides: Partial<PostToolUseRequest> & { cwd?: string; toolResponse?: JsonValue } = {}): PostToolUseRequest {
  const { toolResponse, ...rest } = overrides;
  return { ...preRequest(rest), toolResponse: toolResponse ?? 'hi\n' };
}

/** True while a process with this pid exists and is not a zombie (read from /proc). */
export function alive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

/** Polls `check` every 20 ms until it holds or `ms` passed (a SIGKILLed process takes a moment to die). */
export async function waitUntil(check: () => boolean, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}
