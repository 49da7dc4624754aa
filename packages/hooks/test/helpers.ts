import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { HookEndEvent, HookStartEvent, PostToolUseRequest, PreToolUseRequest, JsonValue } from '@switchyard/protocol';
import { createHookEngine, type HookEngineOptions } from '../src/hook-engine';
import type { HookEventName, HookMatcherGroup, HooksConfig } from '../src/hooks-config';
import { createStepContext } from '@switchyard/kit';

/** A scratch folder for executable shell scripts; `cleanup()` removes it. */
export function scriptFolder() {
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
export function useScratch(): () => ReturnType<typeof scriptFolder> {
  const dirs: Array<ReturnType<typeof scriptFolder>> = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.cleanup();
  });
  return () => {
    const dir = scriptFolder();
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

/** A shell snippet printing `stdout` verbatim, `stderr` to stderr, then exiting with `code`. */
export function hook(dir: ReturnType<typeof scriptFolder>, options: { stdout?: string; stderr?: string; code?: number; before?: string }): string {
  const name = `hook-${Math.random().toString(36).slice(2)}.sh`;
  const lines = [options.before ?? ''];
  if (options.stdout !== undefined) lines.push(`cat <<'HOOK_STDOUT'\n${options.stdout}\nHOOK_STDOUT`);
  if (options.stderr !== undefined) lines.push(`cat >&2 <<'HOOK_STDERR'\n${options.stderr}\nHOOK_STDERR`);
  lines.push(`exit ${options.code ?? 0}`);
  return dir.script(name, lines.join('\n'));
}

/** A hook engine with `groups` under one event, run by /bin/sh. */
export function engineFor(event: HookEventName, groups: HookMatcherGroup[], options: HookEngineOptions = {}) {
  const config: HooksConfig = { hooks: { [event]: groups } };
  return createHookEngine({ shell: '/bin/sh', config, ...options });
}

/** Collects the engine's hook-start / hook-end events. */
export function recordEvents(engine: ReturnType<typeof createHookEngine>) {
  const starts: HookStartEvent[] = [];
  const ends: HookEndEvent[] = [];
  engine.on('hook-start', (event) => starts.push(event));
  engine.on('hook-end', (event) => ends.push(event));
  return { starts, ends };
}

/** The failure prefix of the first PreToolUse config hook on call-1. */
export const RUN0 = 'hook pre-tool-use:0:<config:0>:call-1 failed: ';
/** The failure prefix of the first PostToolUse config hook on call-1. */
export const POST0 = 'hook post-tool-use:0:<config:0>:call-1 failed: ';
