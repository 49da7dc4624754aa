import { describe, expect, it } from 'vitest';
import type { StepContext } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createCodeMode } from '@switchyard/code-mode';
import { createCodeModeRuntime } from '@switchyard/code-mode-runtime';
import { createSession } from './session';
import type { Session } from './session-types';
import { workerChildren } from '@switchyard/config/proc';
import { until } from '@switchyard/test-helpers';

/** A tool that blocks until `release()`, counting the calls that entered it. */
function holdTool() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const entered: StepContext[] = [];
  const tool = defineFunctionTool({
    name: 'hold',
    description: 'Waits for the test.',
    parameters: { type: 'object', properties: {} },
    supportsParallelToolCalls: true,
    async handle({ invocation }) {
      entered.push(invocation.step);
      await released;
      return 'released';
    },
  });
  return { tool, entered, release };
}


/**
 * Starts one cell per session that calls `hold` and waits there, then answers the worker
 * processes (children of this process) that appeared meanwhile — the workers holding the cells.
 */
async function workersHoldingCells(tenants: ReadonlyArray<string | undefined>, idleMs: number): Promise<{ pids: number[]; steps: StepContext[] }> {
  const before = new Set(workerChildren());
  const hold = holdTool();
  // One pool for the sessions of this call (same worker options: runtimes share it), none prewarmed,
  // one tenant per worker; the idle time only keeps this pool apart from the other tests' pools.
  const workers = { perSession: true, prewarm: false, idleMs };
  const sessions: Session[] = tenants.map((tenant) =>
    createSession({ toolMode: 'code-mode-only', tools: [hold.tool], ...(tenant !== undefined ? { tenant } : {}), codeMode: { runtimeOptions: { workers } } }),
  );
  try {
    const answers = await Promise.all(
      sessions.map(async (session) => {
        const step = await session.beginTurn().step();
        return step.dispatch({ type: 'custom_tool_call', call_id: 'e1', name: 'exec', input: '// @exec: {"yield_time_ms": 100}\ntext(await tools.hold({}));' });
      }),
    );
    for (const answer of answers) expect(JSON.stringify(answer)).toMatch(/Script running with cell ID/);
    await until(() => hold.entered.length === sessions.length, 'every cell to call hold', 60_000);
    const pids = workerChildren().filter((pid) => !before.has(pid));
    return { pids, steps: hold.entered };
  } finally {
    hold.release();
    await Promise.all(sessions.map((session) => session.shutdown()));
  }
}

describe('the session tenant reaches the runtime', () => {
  it('two sessions of the same tenant share one worker process', async () => {
    const { pids, steps } = await workersHoldingCells(['acme', 'acme'], 30_101);
    expect(pids).toHaveLength(1);
    expect(steps.map((step) => step.tenant)).toEqual(['acme', 'acme']);
  }, 120_000);

  it('two sessions of different tenants get a worker each (perSession: true)', async () => {
    const { pids, steps } = await workersHoldingCells(['acme', 'globex'], 30_102);
    expect(pids).toHaveLength(2);
    expect(new Set(pids).size).toBe(2);
    expect(steps.map((step) => step.tenant).sort()).toEqual(['acme', 'globex']);
  }, 120_000);

  it('sessions without a tenant are each a tenant of their own', async () => {
    const { pids, steps } = await workersHoldingCells([undefined, undefined], 30_103);
    expect(pids).toHaveLength(2);
    expect(steps.map((step) => step.tenant)).toEqual([undefined, undefined]);
  }, 120_000);

  it('createCodeMode({ tenant }) names the tenant of sessions that name none; a session tenant wins', async () => {
    const opened: Array<string | undefined> = [];
    const runtime = createCodeModeRuntime({ isolation: 'in-process' });
    const spy = { openSession: (host: Parameters<typeof runtime.openSession>[0], options?: { tenant?: string }) => (opened.push(options?.tenant), runtime.openSession(host, options)), shutdown: () => runtime.shutdown() };
    const codeMode = createCodeMode({ runtime: spy, tenant: 'default-tenant' });
    const plain = createSession({ toolMode: 'code-mode-only', tools: [], codeMode });
    const named = createSession({ toolMode: 'code-mode-only', tools: [], codeMode, tenant: 'named' });
    expect(named.tenant).toBe('named');
    expect(plain.tenant).toBeUndefined();
    for (const session of [plain, named]) {
      const step = await session.beginTurn().step();
      expect(JSON.stringify(await step.dispatch({ type: 'custom_tool_call', call_id: 'e1', name: 'exec', input: "text('hi')" }))).toMatch(/hi/);
    }
    expect(opened).toEqual(['default-tenant', 'named']);
    await Promise.all([plain.shutdown(), named.shutdown()]);
    await codeMode.shutdown();
    await runtime.shutdown();
  });

  it('a tenant that is not a string is a CONFIG error naming the option', () => {
    expect(() => createSession({ tools: [], tenant: 7 as never })).toThrow(/createSession: option `tenant` must be a string/);
    expect(() => createCodeMode({ runtime: createCodeModeRuntime({ isolation: 'in-process' }), tenant: [] as never })).toThrow(/createCodeMode: option `tenant` must be a string/);
  });
});
