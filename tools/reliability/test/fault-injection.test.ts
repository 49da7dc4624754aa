import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSwitchyardError, type ResponseItem, type ToolExecutor, type ToolOutputItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createHookEngine } from '@switchyard/hooks';
import { execTools } from '@switchyard/tool-exec';
import { report } from '../src/profile';
import { callItem, execItem, openHarness, outcome, sleep, testTools, texts, waitItem, workerChildren } from './helpers';
import { becomes } from '@switchyard/test-helpers';
import { processesWith } from '@switchyard/config/proc';

const scratch = mkdtempSync(join(tmpdir(), 'reliability-faults-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Tools that misbehave on purpose. `hang_deaf` ignores its abort signal. */
function faultyTools(log: string[]): ToolExecutor[] {
  const tool = (name: string, handle: (args: Record<string, unknown>, signal: AbortSignal) => unknown): ToolExecutor =>
    defineFunctionTool({
      name,
      description: `Misbehaves: ${name}.`,
      parameters: { type: 'object' },
      supportsParallelToolCalls: true,
      handle: ({ args, signal }) => handle(args as Record<string, unknown>, signal) as never,
    });
  return [
    tool('throws', () => {
      throw new Error('thrown synchronously');
    }),
    tool('rejects_early', async () => {
      throw new Error('rejected before the first await');
    }),
    tool('rejects_plain', () => Promise.reject('a bare string rejection')),
    tool('hang_deaf', () => new Promise(() => log.push('hang_deaf started'))),
    tool('circular', () => {
      const value: Record<string, unknown> = { name: 'loop' };
      value.self = value;
      return value;
    }),
    tool('bigint', () => ({ big: 10n })),
    tool('ok', async () => ({ fine: true })),
  ];
}

/** Every call id appears exactly once among the outputs, in the order the calls were made. */
function expectAnsweredOnce(outputs: readonly ToolOutputItem[], callIds: readonly string[]): void {
  expect(outputs.map((item) => item.call_id)).toEqual(callIds);
}

const held: string[] = [];
afterAll(() => report('fault injection', `${held.length} scenarios held:\n  - ${held.join('\n  - ')}`));

describe('fault injection: nothing lost, every call answered exactly once with its call_id', () => {
  it('direct calls to faulty handlers (throw, early reject, deaf hang, circular, BigInt) each get one output; the host survives', async () => {
    const log: string[] = [];
    const harness = await openHarness({ toolMode: 'direct', tools: [...faultyTools(log)] });
    try {
      const ends = new Map<string, number>();
      for (const type of ['tool-call-end', 'tool-call-aborted', 'tool-call-blocked'] as const) {
        harness.session.on(type, (event) => ends.set(event.callId, (ends.get(event.callId) ?? 0) + 1));
      }
      const names = ['throws', 'rejects_early', 'rejects_plain', 'circular', 'bigint', 'ok', 'hang_deaf'];
      const items = names.map((name, index) => callItem(`d${index}-${name}`, name, {}));
      const pending = harness.step.dispatchAll(items);
      expect(await becomes(() => log.length === 1, 5_000)).toBe(true);
      await sleep(100);
      harness.turn.abort('user pressed stop');
      const outputs = await pending;
      expectAnsweredOnce(outputs, items.map((item) => (item as { call_id: string }).call_id));
      const byName = Object.fromEntries(names.map((name, index) => [name, texts(outputs[index]).join('\n')]));
      expect(byName.throws).toContain('thrown synchronously');
      expect(byName.rejects_early).toContain('rejected before the first await');
      expect(byName.rejects_plain).toContain('a bare string rejection');
      expect(byName.ok).toBe('{"fine":true}');
      expect(byName.circular).toBe('tool result is not JSON-serializable: result.self refers back to result (a cycle): return a tree, e.g. replace the back reference with an id');
      expect(byName.bigint).toBe('tool result is not JSON-serializable: result.big is a BigInt: return a number or a string (String(value))');
      expect(byName.hang_deaf).toMatch(/^aborted by user after \d+\.\ds$/);
      for (const item of items) expect(ends.get((item as { call_id: string }).call_id), (item as { call_id: string }).call_id).toBe(1);
      held.push(`direct faulty handlers → 7 calls, 7 outputs in call order; circular → "${byName.circular}"; BigInt → "${byName.bigint}"; deaf hang → "${byName.hang_deaf}"`);
    } finally {
      await harness.close();
    }
  });

  it('nested calls to the same faulty handlers reject inside the cell with a clear reason; the cell completes', async () => {
    const log: string[] = [];
    const harness = await openHarness({ tools: [...faultyTools(log)] });
    try {
      const result = await harness.exec(`
        const names = ['throws', 'rejects_early', 'rejects_plain', 'circular', 'bigint', 'ok'];
        const settled = await Promise.allSettled(names.map((name) => tools[name]({})));
        settled.forEach((s, i) => text(names[i] + ': ' + (s.status === 'fulfilled' ? 'ok ' + JSON.stringify(s.value) : 'rejected ' + String(s.reason))));`);
      expect(result.status).toBe('completed');
      expect(result.output).toHaveLength(6);
      expect(result.output[0]).toBe('throws: rejected tool throws failed: thrown synchronously');
      expect(result.output[1]).toBe('rejects_early: rejected tool rejects_early failed: rejected before the first await');
      expect(result.output[2]).toBe('rejects_plain: rejected tool rejects_plain failed: a bare string rejection');
      expect(result.output[3]).toBe('circular: rejected tool result is not JSON-serializable: result.self refers back to result (a cycle): return a tree, e.g. replace the back reference with an id');
      expect(result.output[4]).toBe('bigint: rejected tool result is not JSON-serializable: result.big is a BigInt: return a number or a string (String(value))');
      expect(result.output[5]).toBe('ok: ok {"fine":true}');
      held.push(`nested faulty handlers → ${result.output.join(' | ')}`);
    } finally {
      await harness.close();
    }
  });

  it('hooks that hang, print garbage, or exit oddly fail open within their timeout; each call answered once; no hook process left', async () => {
    const marker = `${31 + Math.random()}`.slice(0, 7);
    const hooks = createHookEngine({
      shell: '/bin/sh',
      config: {
        hooks: {
          PreToolUse: [
            { matcher: 'echo', hooks: [{ type: 'command', command: `sleep ${marker}`, timeout: 1 }] },
            { matcher: 'echo', hooks: [{ type: 'command', command: "printf '\\001\\377{not json'", timeout: 5 }] },
            { matcher: 'echo', hooks: [{ type: 'command', command: `echo '{"decision": 42, "hookSpecificOutput": "nope", "continue": "maybe"}'`, timeout: 5 }] },
            { matcher: 'echo', hooks: [{ type: 'command', command: `head -c 300000 /dev/urandom; exit 1`, timeout: 5 }] },
            { matcher: 'echo', hooks: [{ type: 'function', name: 'stuck', timeout: 1, run: () => new Promise(() => {}) }] },
            { matcher: 'echo', hooks: [{ type: 'function', name: 'thrower', run: () => { throw new Error('hook bug'); } }] },
          ],
          PostToolUse: [{ matcher: 'echo', hooks: [{ type: 'command', command: `printf '[1,2'`, timeout: 5 }] }],
        },
      },
    });
    const harness = await openHarness({ toolMode: 'code-mode', hooks });
    try {
      const started = Date.now();
      const items: ResponseItem[] = [callItem('h1', 'echo', { n: 1 }), execItem('h2', `text(JSON.stringify(await tools.echo({ n: 2 })));`), callItem('h3', 'echo', { n: 3 })];
      const outputs = await harness.step.dispatchAll(items);
      const elapsed = Date.now() - started;
      expectAnsweredOnce(outputs, ['h1', 'h2', 'h3']);
      expect(texts(outputs[0])).toEqual(['{"n":1}']);
      expect(outcome(outputs[1]).output).toEqual(['{"n":2}']);
      expect(texts(outputs[2])).toEqual(['{"n":3}']);
      // An order of magnitude, not a timing target: the 1 s hook timeouts add up to a few seconds, a
      // hook that was never timed out would hang the call forever (a loaded machine took 15.5 s).
      expect(elapsed).toBeLessThan(45_000);
      expect(processesWith(`sleep ${marker}`)).toEqual([]);
      held.push(`hooks hanging (command + function, 1 s timeouts), printing control bytes / wrong-typed JSON / 300 KB of random bytes, throwing → 3 calls answered once each in ${elapsed} ms, no hook process left`);
    } finally {
      await harness.close();
      await hooks.close();
    }
  });

  it('terminating a cell with nested calls and store writes pending: calls aborted once each, writes dropped, committed values intact', async () => {
    const log = { aborted: [] as string[], measured: [] as number[] };
    const harness = await openHarness({ tools: testTools(log) });
    try {
      const nestedEnds = new Map<string, number>();
      for (const type of ['tool-call-end', 'tool-call-aborted'] as const) {
        harness.session.on(type, (event) => {
          if (event.source.kind === 'code-mode') nestedEnds.set(event.callId, (nestedEnds.get(event.callId) ?? 0) + 1);
        });
      }
      const committed = await harness.exec(`store('committed', { v: 1, list: [1, 2, 3] }); text('stored');`);
      expect(committed.output).toEqual(['stored']);
      const running = await harness.exec(
        `store('committed', 'overwritten'); store('uncommitted', true);
         const calls = Array.from({ length: 10 }, (_, i) => tools.hang({ id: 'h' + i }));
         yield_control();
         await Promise.all(calls);`,
      );
      expect(running.status).toBe('running');
      expect(await becomes(() => nestedEnds.size === 0 && log.aborted.length === 0, 10)).toBe(true);
      await sleep(200);
      const terminated = outcome(await harness.step.dispatch(waitItem('term', { cell_id: running.cellId, terminate: true })));
      expect(terminated.status).toBe('terminated');
      expect(await becomes(() => log.aborted.length === 10, 5_000)).toBe(true);
      expect([...log.aborted].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `h${i}`).sort());
      expect(await becomes(() => nestedEnds.size === 10, 2_000)).toBe(true);
      expect([...nestedEnds.values()].every((count) => count === 1)).toBe(true);
      const after = await harness.exec(`text(JSON.stringify(load('committed'))); text(String(load('uncommitted')));`);
      expect(after.output).toEqual(['{"v":1,"list":[1,2,3]}', 'undefined']);
      held.push(`terminate with 10 nested calls + 2 store writes pending → 10 aborts, one end event each, committed value intact, pending writes dropped`);
    } finally {
      await harness.close();
    }
  });

  it('a worker SIGKILLed in the middle of 50 parallel nested calls: the cell is replayed elsewhere, its calls joined (none run twice), every call answered once, the next exec works', async () => {
    const log = { aborted: [] as string[], measured: [] as number[], started: [] as string[] };
    const before = new Set(workerChildren());
    // its own worker pool, so that the workers this test kills are its own; all 50 calls in flight
    // at once (the step's default admission of 16 concurrent calls would queue the rest)
    const harness = await openHarness({ tools: testTools(log), runtimeOptions: { workers: { shared: false } }, maxConcurrentToolCalls: 64 });
    try {
      const nestedEnds = new Map<string, number>();
      const lost: string[] = [];
      harness.session.on('runtime-lost', (event) => lost.push(event.cause));
      for (const type of ['tool-call-end', 'tool-call-aborted'] as const) {
        harness.session.on(type, (event) => {
          if (event.source.kind === 'code-mode') nestedEnds.set(event.callId, (nestedEnds.get(event.callId) ?? 0) + 1);
        });
      }
      const committed = await harness.exec(`store('committed', 'before the crash'); text('stored');`);
      expect(committed.status).toBe('completed');
      const pending = harness.exec(`store('uncommitted', true); await Promise.all(Array.from({ length: 50 }, (_, i) => tools.hang({ id: 'k' + i }))); text('never');`, {
        callId: 'exec-crash',
        yieldTimeMs: 5_000,
      });
      expect(await becomes(() => log.started.length === 50, 30_000)).toBe(true);
      const workers = workerChildren().filter((pid) => !before.has(pid));
      expect(workers.length).toBeGreaterThanOrEqual(1);
      for (const pid of workers) process.kill(pid, 'SIGKILL');
      // the cell was replayed on a fresh worker from its journal: its 50 calls joined there, none run again nor aborted
      const running = await pending;
      expect(running.status).toBe('running');
      expect(running.item.call_id).toBe('exec-crash');
      expect(lost).toContain('the runtime worker was killed by SIGKILL');
      expect(log.started).toHaveLength(50);
      expect(log.aborted).toEqual([]);
      const ended = outcome((await harness.step.dispatch(waitItem('wait-crash', { cell_id: running.cellId, terminate: true }))) as ToolOutputItem);
      expect(ended.status).toBe('terminated');
      // every nested call: aborted exactly once (by the terminate), one end event each
      const allEnded = await becomes(() => log.aborted.length === 50 && nestedEnds.size === 50, 30_000);
      expect(allEnded, `aborted ${log.aborted.length}, nested ends ${nestedEnds.size} (${[...nestedEnds.values()].join('')})`).toBe(true);
      expect(new Set(log.aborted).size).toBe(50);
      expect([...nestedEnds.values()].every((count) => count === 1)).toBe(true);
      const after = await harness.exec(`text(String(load('committed'))); text(String(load('uncommitted')));`);
      expect(after.output).toEqual(['before the crash', 'undefined']);
      held.push(`worker SIGKILLed during 50 parallel nested calls → the cell replayed, its 50 calls joined (none run twice), terminated: 50 aborts with one end event each, committed value read back, the next exec ran on a fresh worker`);
    } finally {
      await harness.close();
    }
  });

  it('shutdown in the middle of everything: bounded, every call answered once, no orphan process, new turns refused', async () => {
    const marker = `${41 + Math.random()}`.slice(0, 7);
    const log = { aborted: [] as string[], measured: [] as number[], started: [] as string[] };
    const exec = execTools({ shell: '/bin/sh', root: scratch, sandbox: 'danger-full-access', approvalPolicy: 'never', processScope: 'session' });
    const hooks = createHookEngine({ shell: '/bin/sh', config: { hooks: { PreToolUse: [{ matcher: 'hang', hooks: [{ type: 'command', command: `sleep 0.${marker.slice(3)}`, timeout: 5 }] }] } } });
    const harness = await openHarness({ toolMode: 'code-mode', tools: [...testTools(log), ...exec], hooks, cwd: scratch });
    const committed = await harness.exec(`store('safe', 42); text('ok');`);
    expect(committed.output).toEqual(['ok']);
    const items: ResponseItem[] = [
      callItem('s1', 'hang', { id: 'direct' }),
      callItem('s2', 'exec_command', { cmd: `sleep ${marker}`, yield_time_ms: 30_000 }),
      execItem('s3', `// @exec: {"yield_time_ms": 30000}\nawait Promise.all([tools.hang({ id: 'nested' }), tools.exec_command({ cmd: 'sleep ${marker}', yield_time_ms: 30000 })]);`),
      execItem('s4', `// @exec: {"yield_time_ms": 30000}\nlet i = 0; while (true) { store('k' + (i++ % 10), i); }`),
      execItem('s5', `// @exec: {"yield_time_ms": 30000}\nfor (let i = 0; ; i++) { await tools.echo({ i }); store('echoed', i); }`),
    ];
    const answers = items.map((item) => harness.step.dispatch(item).then((output) => output, (error: unknown) => error));
    expect(await becomes(() => processesWith(`sleep ${marker}`).length >= 2 && log.aborted.length === 0, 10_000)).toBe(true);
    await sleep(300);
    const started = Date.now();
    harness.turn.abort('host shutting down');
    await Promise.all([harness.session.shutdown(), exec.shutdown(), hooks.close()]);
    const shutdownMs = Date.now() - started;
    const settled = await Promise.race([Promise.all(answers), sleep(10_000).then(() => 'timeout' as const)]);
    expect(settled).not.toBe('timeout');
    const outputs = settled as unknown[];
    const ids = outputs.map((output) => (output as ToolOutputItem).call_id);
    expect(ids).toEqual(['s1', 's2', 's3', 's4', 's5']);
    expect(shutdownMs).toBeLessThan(5_000);
    expect(await becomes(() => processesWith(`sleep ${marker}`).length === 0, 3_000)).toBe(true);
    // Every hang handler that started was aborted (one whose pre-hook was still running never starts).
    expect(await becomes(() => log.aborted.length === log.started.length, 3_000)).toBe(true);
    expect([...log.aborted].sort()).toEqual([...log.started].sort());
    let refused: unknown;
    try {
      harness.session.beginTurn();
    } catch (error) {
      refused = error;
    }
    expect(isSwitchyardError(refused) && refused.code).toBe('SHUTTING_DOWN');
    const summary = outputs.map((output) => `${(output as ToolOutputItem).call_id}: ${texts(output as ToolOutputItem)[0]?.split('\n')[0]}`).join('; ');
    held.push(`shutdown with a direct hang, 2 sleep processes, a spinning writer, a nested echo loop and a slow hook in flight → done in ${shutdownMs} ms; ${summary}; hang handlers started ${log.started.length}, aborted ${log.aborted.length}; no process left`);
  });
});
