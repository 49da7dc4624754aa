import { existsSync, readFileSync, stat } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commandHook, becomes } from '@switchyard/test-helpers';
import { createHookEngine } from './hook-engine';
import { running } from '@switchyard/config/proc';
import { RUN0, engineFor, postRequest, preRequest, recordEvents, useScratch } from '../test/helpers';

const tmp = useScratch();

describe('bad hooks never hurt the host', () => {
  it('a hanging hook is killed at its timeout (with its children) and fails open', async () => {
    const dir = tmp();
    const script = dir.script('hang.sh', `echo $$ > "${dir.path('hook.pid')}"\nsleep 300 &\necho $! > "${dir.path('child.pid')}"\nwait`);
    const engine = engineFor('PreToolUse', [{ hooks: [commandHook(script, { timeout: 1 })] }]);
    const { ends } = recordEvents(engine);
    const started = performance.now();
    const outcome = await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(outcome).toEqual({ blocked: false, additionalContexts: [], warnings: [`${RUN0}hook timed out after 1s`] });
    expect(ends[0]).toMatchObject({ outcome: 'failed', message: 'hook timed out after 1s' });
    for (const name of ['hook.pid', 'child.pid']) expect(await becomes(() => !running(Number(readFileSync(dir.path(name), 'utf8'))), 5_000)).toBe(true);
  });

  it('applies defaultTimeoutSec to hooks without a timeout', async () => {
    const dir = tmp();
    const engine = engineFor('PreToolUse', [{ hooks: [commandHook('exec sleep 30')] }], { defaultTimeoutSec: 1 });
    const outcome = await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(outcome.warnings).toEqual([`${RUN0}hook timed out after 1s`]);
  });

  it('megabytes on stdout are capped and the decision in them is ignored (fail open)', async () => {
    const dir = tmp();
    const engine = engineFor('PreToolUse', [
      { hooks: [commandHook(`head -c 3000000 /dev/zero | tr '\\0' ' '; echo '{"decision":"block","reason":"buried"}'`)] },
    ]);
    const outcome = await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(outcome).toEqual({ blocked: false, additionalContexts: [], warnings: [`${RUN0}hook stdout exceeded 1048576 bytes; output ignored`] });
  });

  it('megabytes on stderr with exit 2 still block, with the reason capped at 1 MiB', async () => {
    const dir = tmp();
    const engine = engineFor('PreToolUse', [{ hooks: [commandHook(`head -c 2000000 /dev/zero | tr '\\0' r >&2; exit 2`)] }]);
    const outcome = await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(outcome.blocked).toBe(true);
    expect(outcome.reason).toBe('r'.repeat(1024 * 1024) + '\n[... stderr truncated ...]');
  });

  it('binary garbage on stdout is ignored', async () => {
    const dir = tmp();
    const engine = engineFor('PreToolUse', [{ hooks: [commandHook(`head -c 4096 /dev/urandom | tr -d '{['`)] }]);
    const outcome = await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(outcome).toEqual({ blocked: false, additionalContexts: [], warnings: [] });
  });

  it('cancelling the call kills running hooks and resolves promptly', async () => {
    const dir = tmp();
    const script = dir.script('hang.sh', `echo $$ > "${dir.path('hook.pid')}"\nexec sleep 300`);
    const engine = engineFor('PreToolUse', [{ hooks: [commandHook(script)] }]);
    const controller = new AbortController();
    const pending = engine.runPreToolUse(preRequest({ cwd: dir.dir, signal: controller.signal }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    const outcome = await pending;
    expect(outcome.blocked).toBe(false);
    expect(outcome.warnings).toEqual([`${RUN0}hook aborted: the tool call was cancelled`]);
    expect(await becomes(() => !running(Number(readFileSync(dir.path('hook.pid'), 'utf8'))), 5_000)).toBe(true);
  });

  it('async hooks do not hold up the call and close() kills them', async () => {
    const dir = tmp();
    const script = dir.script('bg.sh', `echo $$ > "${dir.path('hook.pid')}"\necho blocked >&2\nexec sleep 300`);
    const engine = engineFor('PreToolUse', [{ hooks: [commandHook(script, { async: true })] }]);
    const { ends } = recordEvents(engine);
    const outcome = await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(outcome).toEqual({ blocked: false, additionalContexts: [], warnings: [] });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const pid = Number(readFileSync(dir.path('hook.pid'), 'utf8'));
    expect(running(pid)).toBe(true);
    await engine.close();
    expect(await becomes(() => !running(pid), 5_000)).toBe(true);
    expect(ends.map((event) => event.outcome)).toEqual(['failed']);
  });
});

/** Blocks the host thread (as a long synchronous task would) until `done()` or `capMs`. */
function stallHost(done: () => boolean, capMs = 15_000): number {
  const started = Date.now();
  while (!done() && Date.now() - started < capMs) {
    // Busy: no timer, no I/O callback and no child exit is processed meanwhile.
  }
  return Date.now() - started;
}

describe('a stalled host thread cannot turn an answer into a timeout', () => {
  it('an exit-2 hook that answered while the host was stalled past its timeout still blocks', async () => {
    const dir = tmp();
    const marker = dir.path('answered');
    const script = dir.script('deny.sh', `echo "no rm -rf" >&2\ntouch "${marker}"\nexit 2`);
    const engine = engineFor('PreToolUse', [{ hooks: [commandHook(script, { timeout: 1 })] }]);
    const started = Date.now();
    const pending = engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    // Stall until the hook has answered and exited and its 1 s timeout is long past.
    let answeredAt: number | undefined;
    const stalled = stallHost(() => {
      if (answeredAt === undefined && existsSync(marker)) answeredAt = Date.now();
      return answeredAt !== undefined && Date.now() - answeredAt > 200 && Date.now() - started > 1_500;
    });
    expect(answeredAt).toBeDefined();
    expect(stalled).toBeGreaterThan(1_000);
    expect(await pending).toEqual({ blocked: true, reason: 'no rm -rf', additionalContexts: [], warnings: [] });
  });
});

describe('a stalled host thread: function hooks', () => {
  it('a function hook whose I/O completed during the stall answers instead of timing out', async () => {
    const dir = tmp();
    const engine = createHookEngine({
      functionHooks: [
        {
          event: 'PreToolUse',
          timeout: 1,
          run: async () => {
            await new Promise((resolve) => stat(dir.dir, resolve));
            return { hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'checked and denied' } };
          },
        },
      ],
    });
    const started = Date.now();
    const pending = engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    stallHost(() => Date.now() - started > 1_500);
    expect(await pending).toEqual({ blocked: true, reason: 'checked and denied', additionalContexts: [], warnings: [] });
  });
});

describe('failClosed', () => {
  const crash = () => commandHook('echo crashed >&2; exit 1');
  const hang = () => commandHook('exec sleep 30', { timeout: 1 });

  it('engine-wide: a timeout or a crash blocks, with the failure as the reason', async () => {
    const dir = tmp();
    const timedOut = engineFor('PreToolUse', [{ hooks: [hang()] }], { failClosed: true });
    const { ends } = recordEvents(timedOut);
    expect(await timedOut.runPreToolUse(preRequest({ cwd: dir.dir }))).toEqual({
      blocked: true,
      reason: 'hook failed and is fail-closed: hook timed out after 1s',
      additionalContexts: [],
      warnings: [],
    });
    expect(ends[0]).toMatchObject({ outcome: 'block', message: 'hook failed and is fail-closed: hook timed out after 1s' });
    const crashed = engineFor('PreToolUse', [{ hooks: [crash()] }], { failClosed: true });
    expect(await crashed.runPreToolUse(preRequest({ cwd: dir.dir }))).toMatchObject({ blocked: true, reason: 'hook failed and is fail-closed: hook exited with code 1' });
    const spawnFails = engineFor('PreToolUse', [{ hooks: [commandHook('true')] }], { failClosed: true, shell: '/no/such/shell' });
    expect((await spawnFails.runPreToolUse(preRequest({ cwd: dir.dir }))).reason).toMatch(/^hook failed and is fail-closed: failed to spawn hook: /);
    const invalid = engineFor('PreToolUse', [{ hooks: [commandHook(`echo '{"decision": 3}'`)] }], { failClosed: true });
    expect((await invalid.runPreToolUse(preRequest({ cwd: dir.dir }))).reason).toBe('hook failed and is fail-closed: hook returned invalid pre-tool-use JSON output');
    // A hook that answers is unaffected.
    const fine = engineFor('PreToolUse', [{ hooks: [commandHook('exit 0')] }], { failClosed: true });
    expect(await fine.runPreToolUse(preRequest({ cwd: dir.dir }))).toEqual({ blocked: false, additionalContexts: [], warnings: [] });
  });

  it('per handler: a handler setting wins over the engine, both ways; async handlers never block', async () => {
    const dir = tmp();
    const perHandler = engineFor('PreToolUse', [{ hooks: [crash(), commandHook('exit 1', { failClosed: true })] }]);
    const outcome = await perHandler.runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(outcome).toEqual({
      blocked: true,
      reason: 'hook failed and is fail-closed: hook exited with code 1',
      additionalContexts: [],
      warnings: [`${RUN0}hook exited with code 1`],
    });
    const optedOut = engineFor('PreToolUse', [{ hooks: [commandHook('exit 1', { failClosed: false })] }], { failClosed: true });
    expect((await optedOut.runPreToolUse(preRequest({ cwd: dir.dir }))).blocked).toBe(false);
    const background = engineFor('PreToolUse', [{ hooks: [commandHook('exit 1', { async: true })] }], { failClosed: true });
    expect((await background.runPreToolUse(preRequest({ cwd: dir.dir }))).blocked).toBe(false);
    await background.close();
  });

  it('function hooks: a throw or a timeout blocks', async () => {
    const engine = createHookEngine({
      failClosed: true,
      functionHooks: [
        { event: 'PreToolUse', matcher: 'Bash', run: () => { throw new Error('policy service down'); } },
        { event: 'PreToolUse', matcher: 'Slow', timeout: 1, run: () => new Promise(() => undefined) },
      ],
    });
    expect((await engine.runPreToolUse(preRequest())).reason).toBe('hook failed and is fail-closed: function hook failed: policy service down');
    expect((await engine.runPreToolUse(preRequest({ toolName: 'Slow' }))).reason).toBe('hook failed and is fail-closed: hook timed out after 1s');
  });

  it('PostToolUse: a failed fail-closed hook withholds the output (feedback replaces it)', async () => {
    const dir = tmp();
    const engine = engineFor('PostToolUse', [{ hooks: [crash()] }], { failClosed: true });
    expect(await engine.runPostToolUse(postRequest({ cwd: dir.dir }))).toEqual({
      feedback: 'the tool output was withheld: a PostToolUse hook failed and is fail-closed: hook exited with code 1',
      additionalContexts: [],
      warnings: [],
    });
  });

  it('a non-boolean failClosed in hooks.json is read as true, with a warning', async () => {
    const dir = tmp();
    const engine = engineFor('PreToolUse', [{ hooks: [commandHook('exit 1', { failClosed: 'yes' })] }]);
    expect(engine.warnings).toEqual(['a PreToolUse handler in <config:0> has a non-boolean failClosed; treating it as true']);
    expect((await engine.runPreToolUse(preRequest({ cwd: dir.dir }))).blocked).toBe(true);
  });
});

describe('inputs hooks cannot be given are never run unhooked', () => {
  it('PreToolUse blocks an input nested 6,000 deep without starting a hook; unmatched calls are untouched', async () => {
    const dir = tmp();
    const engine = engineFor('PreToolUse', [{ matcher: 'Bash', hooks: [commandHook('exit 0')] }]);
    const { starts } = recordEvents(engine);
    const deep = JSON.parse(`${'['.repeat(6000)}${']'.repeat(6000)}`);
    expect(await engine.runPreToolUse(preRequest({ cwd: dir.dir, toolInput: { command: 'ls', deep } }))).toEqual({
      blocked: true,
      reason: 'the tool input cannot be checked by hooks: it is nested deeper than 100 levels',
      additionalContexts: [],
      warnings: [],
    });
    expect(starts).toEqual([]);
    expect((await engine.runPreToolUse(preRequest({ cwd: dir.dir, toolName: 'Other', toolInput: { deep } }))).blocked).toBe(false);
    const small = engineFor('PreToolUse', [{ hooks: [commandHook('exit 0')] }], { inputBounds: { maxDepth: 100, maxChars: 1000 } });
    expect((await small.runPreToolUse(preRequest({ cwd: dir.dir, toolInput: { command: 'x'.repeat(2000) } }))).reason).toBe(
      'the tool input cannot be checked by hooks: it is larger than 1000 characters',
    );
  });

  it('PostToolUse withholds a response it cannot serialize', async () => {
    const dir = tmp();
    const engine = engineFor('PostToolUse', [{ hooks: [commandHook('exit 0')] }]);
    const response = JSON.parse(`${'{"a":'.repeat(200)}1${'}'.repeat(200)}`);
    expect(await engine.runPostToolUse(postRequest({ cwd: dir.dir, toolResponse: response }))).toEqual({
      feedback: 'the tool output was withheld: it cannot be checked by PostToolUse hooks: it is nested deeper than 100 levels',
      additionalContexts: [],
      warnings: [],
    });
  });
});
