import { afterEach, describe, expect, it } from 'vitest';
import type { BackgroundCompletion, BackgroundDelivery } from '@switchyard/protocol';
import { createExecToolset, type ExecToolset } from './exec-tools';
import { EXEC_COMMAND_BACKGROUND_NOTE, EXEC_COMMAND_DESCRIPTION } from './exec-specs';
import { callTool, codeModeValue, failureOf, makeWorkspace, modelText } from './test-support';

// A process that outlives its exec_command call delivers its exit through the step's background
// inbox, once, unless a write_stdin is waiting on it then.

const toolsets: ExecToolset[] = [];
afterEach(async () => {
  for (const toolset of toolsets.splice(0)) await toolset.shutdown();
});
function inbox(): { delivery: BackgroundDelivery; completions: BackgroundCompletion[]; next: Promise<BackgroundCompletion> } {
  const completions: BackgroundCompletion[] = [];
  let resolveNext: (completion: BackgroundCompletion) => void = () => undefined;
  const next = new Promise<BackgroundCompletion>((resolve) => (resolveNext = resolve));
  const delivery: BackgroundDelivery = {
    signal: new AbortController().signal,
    complete: (completion) => {
      completions.push(completion);
      resolveNext(completion);
    },
  };
  return { delivery, completions, next };
}
function openSessionScoped(background?: boolean): ExecToolset {
  const toolset = createExecToolset({ root: makeWorkspace(), sandbox: 'danger-full-access', processScope: 'session', ...(background ? { background } : {}) });
  toolsets.push(toolset);
  return toolset;
}

describe('exec_command: background exit delivery', () => {
  it('an exit nobody polls is delivered once as a function_call_output of the exec_command call; the process then leaves the table', async () => {
    const { tools } = openSessionScoped();
    const box = inbox();
    const step = { background: box.delivery };
    const started = codeModeValue(await callTool(tools[0], { cmd: 'sleep 0.4; echo bye; exit 3', yield_time_ms: 250 }, { step }));
    const id = started.session_id as number;
    expect(typeof id).toBe('number');
    const completion = await box.next;
    expect(completion).toMatchObject({ processId: id, status: 'failed' });
    expect(completion.item.type).toBe('function_call_output');
    expect(completion.item.call_id).toBe(completion.callId);
    expect((completion.item as { output: string }).output).toMatch(/Process exited with code 3\nOriginal token count: 1\nOutput:\nbye\n?$/);
    expect((await failureOf(callTool(tools[1], { session_id: id }, { step }))).message).toBe(`write_stdin failed: Unknown process id ${id}`);
    expect(box.completions).toHaveLength(1);
  });

  it('a write_stdin waiting when the process exits reports the exit itself: nothing is delivered', async () => {
    const { tools } = openSessionScoped();
    const box = inbox();
    const step = { background: box.delivery };
    const id = codeModeValue(await callTool(tools[0], { cmd: 'sleep 0.5; echo polled', yield_time_ms: 250 }, { step })).session_id as number;
    const polled = modelText(await callTool(tools[1], { session_id: id, yield_time_ms: 5000 }, { step }));
    expect(polled).toMatch(/Process exited with code 0\nOriginal token count: 2\nOutput:\npolled/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(box.completions).toEqual([]);
  });

  it('a process killed with its session delivers nothing; without a background inbox nothing is delivered either', async () => {
    const toolset = openSessionScoped();
    const box = inbox();
    await callTool(toolset.tools[0], { cmd: 'sleep 30', yield_time_ms: 250 }, { step: { background: box.delivery, sessionId: 's-1' } });
    await toolset.endSession('s-1');
    const plain = inbox();
    await callTool(toolset.tools[0], { cmd: 'sleep 0.3', yield_time_ms: 250 });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect([...box.completions, ...plain.completions]).toEqual([]);
  });

  it('the description says polling is unnecessary only with `background: true`', () => {
    expect(openSessionScoped(true).tools[0].spec).toMatchObject({ description: `${EXEC_COMMAND_DESCRIPTION} ${EXEC_COMMAND_BACKGROUND_NOTE}` });
    expect(openSessionScoped().tools[0].spec).toMatchObject({ description: EXEC_COMMAND_DESCRIPTION });
  });

  it('runningWork lists the processes of a session that outlive their call (for a session store), and only that session’s; turn-scoped ones never', async () => {
    const toolset = openSessionScoped();
    const marker = `running-work-${process.pid}`;
    const id = codeModeValue(await callTool(toolset.tools[0], { cmd: `sleep 30 # ${marker}`, yield_time_ms: 250 }, { step: { sessionId: 's-1' } })).session_id as number;
    await callTool(toolset.tools[0], { cmd: 'true', yield_time_ms: 250 }, { step: { sessionId: 's-1' } });
    await callTool(toolset.tools[0], { cmd: 'sleep 30', yield_time_ms: 250 }, { step: { sessionId: 's-2' } });
    const work = toolset.tools[0].runningWork!({ sessionId: 's-1' });
    expect(work).toHaveLength(1);
    expect(work[0]).toMatchObject({ processId: id, command: `sleep 30 # ${marker}` });
    expect(typeof work[0].callId).toBe('string');
    expect(toolset.tools[1].runningWork).toBe(toolset.tools[0].runningWork);
    await toolset.endSession('s-1');
    expect(toolset.tools[0].runningWork!({ sessionId: 's-1' })).toEqual([]);
    const turnScoped = createExecToolset({ root: makeWorkspace(), sandbox: 'danger-full-access' });
    toolsets.push(turnScoped);
    await callTool(turnScoped.tools[0], { cmd: 'sleep 30', yield_time_ms: 250 }, { step: { sessionId: 's-1' } });
    expect(turnScoped.tools[0].runningWork!({ sessionId: 's-1' })).toEqual([]);
  });
});
