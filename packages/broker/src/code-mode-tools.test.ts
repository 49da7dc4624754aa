import { createCodeModeRuntime } from '@switchyard/code-mode-runtime';
import type { CodeModeRuntime, CodeModeSurface, ToolInvocation } from '@switchyard/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { CodeModeService } from './code-mode-service';
import { createExecTool, createWaitTool } from './code-mode-tools';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

const invocation = (payload: ToolInvocation['payload'], signal: AbortSignal, callId = 'call-1') =>
  ({ callId, payload, signal, step: { sessionId: 'tools-test', provider: { originalImageDetail: false } } }) as unknown as ToolInvocation;
const bodyText = (output: unknown) => JSON.stringify((output as { body: unknown }).body);

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
    const cancelled = wait.handle(invocation({ kind: 'function', arguments: JSON.stringify({ cell_id: cellId }) }, controller.signal));
    await sleep(20);
    controller.abort();
    await expect(cancelled).rejects.toMatchObject({ code: 'RESPOND_TO_MODEL' });
    await sleep(250); // the cell emits and completes while nobody observes
    const next = await wait.handle(invocation({ kind: 'function', arguments: JSON.stringify({ cell_id: cellId }) }, new AbortController().signal));
    expect(bodyText(next)).toContain('Script completed');
    expect(bodyText(next)).toContain('second');
    expect(bodyText(next)).not.toContain('not found');
  });

  it('a cancelled exec terminates its cell (its id never reached the model)', async () => {
    const controller = new AbortController();
    const cancelled = exec.handle(invocation({ kind: 'custom', input: `text('x'); await new Promise(() => {});` }, controller.signal, 'call-2'));
    await sleep(50);
    controller.abort();
    await expect(cancelled).rejects.toThrow(/cancelled/);
    expect(terminated).toHaveLength(1);
  });
});
