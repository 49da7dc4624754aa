import { createCodeModeRuntime } from '@switchyard/code-mode-runtime';
import type { CodeModeRuntime, CodeModeSurface, CreateCellOptions, ObserveOptions } from '@switchyard/protocol';
import { invokeTool, type InvokeToolResult } from '@switchyard/registry/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { CodeModeService } from './code-mode-service';
import { createExecTool, createWaitTool } from './code-mode-tools';
import { bodyText } from '@switchyard/test-helpers';

const runtime = createCodeModeRuntime();
const creations: CreateCellOptions[] = [];
const observations: ObserveOptions[] = [];
// the real runtime, recording what the tools ask of it
const recording: CodeModeRuntime = {
  openSession(host) {
    const session = runtime.openSession(host);
    return {
      createCell: (options) => (creations.push(options), session.createCell(options)),
      observe: (cellId, options) => (observations.push(options), session.observe(cellId, options)),
      terminate: (cellId) => session.terminate(cellId),
      shutdown: () => session.shutdown(),
    };
  },
  shutdown: () => runtime.shutdown(),
};
afterAll(() => runtime.shutdown());

const service = new CodeModeService(recording);
const options = { defaultYieldTimeMs: 10_000, defaultMaxOutputTokens: 10_000, execHooks: false };
const exec = createExecTool(service, { mode: 'code-mode', tools: [], hasDeferredTools: false } as CodeModeSurface, options);
const wait = createWaitTool(service, options);

describe('exec and wait key their runtime calls', () => {
  it('by turn, step and call_id, so a runtime can answer a retried call with the original cell or observation', async () => {
    const step = { sessionId: 'keys', turnId: 'turn-9', stepIndex: 3, provider: { originalImageDetail: false } };
    const started = await invokeTool(exec, `text('one'); yield_control(); text('two');`, { callId: 'call_exec', step });
    expect(bodyText(started)).toContain('Script running with cell ID');
    expect(creations.at(-1)?.idempotencyKey).toBe('turn-9/3/call_exec');
    const cellId = creations.at(-1)!.cellId!;
    const waited = await invokeTool(wait, { cell_id: cellId }, { callId: 'call_wait', step: { ...step, stepIndex: 4 } });
    expect(bodyText(waited)).toContain('two');
    expect(observations.at(-1)?.idempotencyKey).toBe('turn-9/4/call_wait');
  }, 60_000);
});
