import { createCodeModeRuntime } from '@switchyard/code-mode-runtime';
import type { CodeModeRuntime, CodeModeSurface } from '@switchyard/protocol';
import { invokeTool, type InvokeToolResult, type ToolCallInput } from '@switchyard/registry/testing';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CodeModeService } from './code-mode-service';
import { createExecTool, createWaitTool, type CodeModeToolOptions } from './code-mode-tools';
import { bodyText, sleep } from '@switchyard/test-helpers';

const runtime = createCodeModeRuntime({ nodeSnapshotCheck: 'ignore' });
const terminated: string[] = [];
// records terminate calls made by the tools
const recording: CodeModeRuntime = {
  openSession(host) {
    const session = runtime.openSession(host);
    return {
      createCell: (options) => session.createCell(options),
      observe: (cellId, options) => session.observe(cellId, options),
      terminate: (cellId) => {
        terminated.push(cellId);
        return session.terminate(cellId);
      },
      shutdown: () => session.shutdown(),
    };
  },
  shutdown: () => runtime.shutdown(),
};
const service = new CodeModeService(recording);
const options = { defaultYieldTimeMs: 10_000, defaultMaxOutputTokens: 10_000, execHooks: false };
const wait = createWaitTool(service, options);
const exec = createExecTool(service, { mode: 'code-mode', tools: [], hasDeferredTools: false } as CodeModeSurface, options);
afterAll(() => runtime.shutdown());

/** One call through the registry's real dispatch, in a step of the session `tools-test`. */
const invokeCodeModeTool = (tool: typeof exec, input: ToolCallInput, signal?: AbortSignal, callId = 'call-1'): Promise<InvokeToolResult> =>
  invokeTool(tool, input, { callId, signal, step: { sessionId: 'tools-test', provider: { originalImageDetail: false } } });

describe('cancellation of wait and exec (a dropped observer)', () => {
  it('a cancelled wait keeps the output and completion for the next wait', async () => {
    const session = service.session('tools-test');
    const { cellId, observation } = await session.runtime.createCell({
      source: `text('first'); await new Promise((resolve) => setTimeout(resolve, 150)); text('second');`,
      tools: [],
      yieldTimeMs: 10,
    });
    expect(observation.kind).toBe('yielded');
    const controller = new AbortController();
    const cancelled = invokeCodeModeTool(wait, { cell_id: cellId }, controller.signal);
    await sleep(20);
    controller.abort();
    // wait waits for its own teardown, then answers aborted.
    expect((await cancelled).error?.code).toBe('ABORTED');
    await sleep(250); // the cell emits and completes while nobody observes
    const next = await invokeCodeModeTool(wait, { cell_id: cellId });
    expect(bodyText(next)).toContain('Script completed');
    expect(bodyText(next)).toContain('second');
    expect(bodyText(next)).not.toContain('not found');
  });

  it('a cancelled exec terminates its cell (its id never reached the model)', async () => {
    const controller = new AbortController();
    const cancelled = invokeCodeModeTool(exec, `text('x'); await new Promise(() => {});`, controller.signal, 'call-2');
    await sleep(50);
    controller.abort();
    const answer = await cancelled;
    expect(answer.error?.code).toBe('ABORTED');
    expect(answer.item).toMatchObject({ type: 'custom_tool_call_output', call_id: 'call-2', output: expect.stringMatching(/^aborted by user after \d+\.\ds$/) });
    // The runtime answers at once; the handler's teardown terminates the cell.
    await vi.waitFor(() => expect(terminated).toHaveLength(1));
  });
});

describe('the defaults the exec description states', () => {
  const surface = { mode: 'code-mode', tools: [], hasDeferredTools: false } as CodeModeSurface;
  const describedBy = (overrides: Partial<CodeModeToolOptions>) => String(createExecTool(service, surface, { ...options, ...overrides }).spec.description);

  it('are the reference\'s by default, and the host\'s own when it sets them (30 s as Codex 0.169.0 yields; a cap wins)', () => {
    expect(describedBy({})).toContain('Defaults to 10000 ms.');
    expect(describedBy({})).toContain('direct `exec` results. Defaults to 10000 tokens.');
    const newer = describedBy({ defaultYieldTimeMs: 30_000, defaultMaxOutputTokens: 4_000 });
    expect(newer).toContain('use `wait` with that cell ID to see more). Defaults to 30000 ms.');
    expect(newer).toContain('direct `exec` results. Defaults to 4000 tokens.');
    expect(newer).not.toMatch(/Defaults to 10000/);
    expect(describedBy({ defaultYieldTimeMs: 30_000, maxYieldTimeMs: 20_000 })).toContain('see more). Defaults to 20000 ms.');
  });
});

describe('the host cap on yield times (maxYieldTimeMs)', () => {
  const capped = { ...options, maxYieldTimeMs: 100 };
  const cappedExec = createExecTool(service, { mode: 'code-mode', tools: [], hasDeferredTools: false } as CodeModeSurface, capped);
  const cappedWait = createWaitTool(service, capped);

  it('clamps the pragma yield_time_ms and wait.yield_time_ms: a running cell is reported long before the 60 s asked for', async () => {
    const started = Date.now();
    const first = await invokeCodeModeTool(cappedExec, `// @exec: {"yield_time_ms": 60000}\ntext('x'); await new Promise(() => {});`, undefined, 'call-cap-1');
    const cellId = /Script running with cell ID ([0-9a-z]+)/.exec(bodyText(first))?.[1];
    expect(cellId).toBeDefined();
    const second = await invokeCodeModeTool(cappedWait, { cell_id: cellId as string, yield_time_ms: 60_000 }, undefined, 'call-cap-2');
    expect(bodyText(second)).toContain(`Script running with cell ID ${cellId}`);
    // two yields of at most 100 ms each: an order of magnitude below one 60 s yield, even under load
    expect(Date.now() - started).toBeLessThan(30_000);
    const ended = await invokeCodeModeTool(cappedWait, { cell_id: cellId as string, terminate: true }, undefined, 'call-cap-3');
    expect(bodyText(ended)).toContain('Script terminated');
  });
});
