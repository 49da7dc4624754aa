import { afterEach, describe, expect, it } from 'vitest';
import type { ModelRequest, ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createScriptedModel } from './testing';
import { createSession } from './session';
import type { Session, SessionOptions } from './session-types';
import type { BackgroundCompleteEvent } from './background';
import { configError } from '@switchyard/config/config-error';
import { callItem, cellIdOf, execItem, outputsOf, outputText, say } from '@switchyard/test-helpers';

// Background work through a whole session (router, broker, real isolates): a cell still running
// after its exec delivers its end into the model's next request without any `wait`.

/** The outputs answering `callId` in a model request whose text holds `needle`. */
const outputsCarrying = (request: ModelRequest, callId: string, needle: string) => outputsOf(request.input, callId).filter((item) => outputText(item).includes(needle));
/** A cell that yields after 50 ms and completes after `ms` with `text`. */
const slowCell = (ms: number, text: string) => `// @exec: {"yield_time_ms": 50}\nawait new Promise((resolve) => setTimeout(resolve, ${ms}));\ntext(${JSON.stringify(text)});`;

const sessions: Session[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.shutdown()));
});
function openSleepySession(extra: Partial<SessionOptions> = {}): Session {
  const sleepy = defineFunctionTool({
    name: 'sleepy',
    description: 'Takes a while.',
    parameters: { type: 'object' },
    handle: () => new Promise<string>((resolve) => setTimeout(() => resolve('slept'), 700)),
  });
  const session = createSession({ toolMode: 'code-mode', tools: [sleepy], background: true, codeMode: { runtimeOptions: { isolation: 'in-process' } }, ...extra });
  sessions.push(session);
  return session;
}
const backgroundComplete = (session: Session) => new Promise<BackgroundCompleteEvent>((resolve) => session.on('background-complete', resolve));

describe('background work: a yielded cell reaches the model without wait', () => {
  it('(a) within a turn, the cell’s final text is in the next request although the model never called wait', async () => {
    const session = openSleepySession();
    const model = createScriptedModel([
      [execItem('exec-1', slowCell(300, 'answer is 42'))],
      // busy with another call while the cell finishes
      [callItem('sleepy-1', 'sleepy', {})],
      [say('the cell said 42')],
    ]);
    const result = await session.runTurn({ model, input: 'compute' });
    expect(result.finalText).toBe('the cell said 42');
    expect(model.requests).toHaveLength(3);
    expect(outputsCarrying(model.requests[1], 'exec-1', 'answer is 42')).toHaveLength(0);
    const delivered = outputsCarrying(model.requests[2], 'exec-1', 'answer is 42');
    expect(delivered).toHaveLength(1);
    expect(delivered[0].type).toBe('custom_tool_call_output');
    expect(outputText(delivered[0])).toMatch(/^Script completed\nWall time [\d.]+ seconds\nOutput:\n\nanswer is 42$/);
    // the model's own calls: exec and sleepy, never wait
    const names = model.requests[2].input.filter((item) => item.type.endsWith('_call')).map((item) => (item as { name: string }).name);
    expect(names).toEqual(['exec', 'sleepy']);
  });

  it('(b) across turns, background-complete names the cell and the next turn’s first request carries the output once; a later wait finds the cell closed', async () => {
    const session = openSleepySession();
    const first = createScriptedModel([[execItem('exec-1', slowCell(400, 'report ready'))], [say('started it')]]);
    const done = backgroundComplete(session);
    await session.runTurn({ model: first, input: 'start the report' });
    const cellId = cellIdOf(session.history.find((item) => item.type === 'custom_tool_call_output')!);
    expect(cellId).toBeDefined();
    const event = await done;
    expect(event).toEqual({ type: 'background-complete', callId: 'exec-1', cellId, status: 'completed', item: expect.objectContaining({ type: 'custom_tool_call_output', call_id: 'exec-1' }) });
    // the event's item is the very output the next request carries
    expect(outputText(event.item)).toMatch(/^Script completed\nWall time [\d.]+ seconds\nOutput:\n\nreport ready$/);

    const second = createScriptedModel([[callItem('wait-1', 'wait', { cell_id: cellId })], [say('ok')]]);
    await session.runTurn({ model: second, input: 'is it done?' });
    expect(outputsCarrying(second.requests[0], 'exec-1', 'report ready')).toHaveLength(1);
    // exactly once: the second request still has it once (history), nothing new was added
    expect(outputsCarrying(second.requests[1], 'exec-1', 'report ready')).toHaveLength(1);
    const waited = second.requests[1].input.find((item) => (item as { call_id?: string }).call_id === 'wait-1' && item.type === 'function_call_output')!;
    // the wall time is the wait's own (near 0 s, more on a loaded machine)
    expect(outputText(waited)).toMatch(new RegExp(`^Script failed\nWall time \\d+\\.\\d seconds\nOutput:\n\nScript error:\nexec cell ${cellId} not found$`));
    expect(session.history.filter((item) => outputText(item).includes('report ready'))).toHaveLength(1);
  });

  it('a wait takes the cell over from the watcher, with what yield_control() handed it; nothing is delivered besides', async () => {
    const session = openSleepySession();
    const completions: BackgroundCompleteEvent[] = [];
    session.on('background-complete', (event) => completions.push(event));
    const cell = `// @exec: {"yield_time_ms": 50}\nawait new Promise((r) => setTimeout(r, 200));\ntext('before-yield');\nyield_control();\nawait new Promise((r) => setTimeout(r, 1500));\ntext('after');`;
    const model = createScriptedModel([
      [execItem('exec-1', cell)],
      [callItem('sleepy-1', 'sleepy', {})],
      (request) => [callItem('wait-1', 'wait', { cell_id: cellIdOf(request.input.find((item) => item.type === 'custom_tool_call_output')!) })],
      [say('done')],
    ]);
    await session.runTurn({ model, input: 'go' });
    const waited = model.requests[3].input.find((item) => (item as { call_id?: string }).call_id === 'wait-1' && item.type === 'function_call_output')!;
    expect(outputText(waited)).toMatch(/^Script completed\nWall time [\d.]+ seconds\nOutput:\n\nbefore-yield\nafter$/);
    expect(model.requests[3].input.filter((item) => outputText(item).includes('before-yield'))).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(completions).toEqual([]);
  });

  it('a failed cell reports failed, with its error under the usual budget', async () => {
    const session = openSleepySession();
    const done = backgroundComplete(session);
    await session.runTurn({ model: createScriptedModel([[execItem('exec-1', `// @exec: {"yield_time_ms": 30}\nawait new Promise((r) => setTimeout(r, 200));\nthrow new Error('disk full');`)], [say('started')]]), input: 'go' });
    expect((await done).status).toBe('failed');
    const next = createScriptedModel([[say('saw it')]]);
    await session.runTurn({ model: next, input: 'and?' });
    expect(outputsCarrying(next.requests[0], 'exec-1', 'Script failed')).toHaveLength(1);
    expect(outputsCarrying(next.requests[0], 'exec-1', 'Error: disk full')).toHaveLength(1);
  });

  it('wake(): an idle session resumes by itself when its cell completes, with no request while nothing changed', async () => {
    const session = openSleepySession();
    await session.runTurn({ model: createScriptedModel([[execItem('exec-1', slowCell(500, 'build green'))], [say('building')]]), input: 'build' });
    const waker = createScriptedModel([[say('the build is green')]]);
    const ended = new Promise<unknown>((resolve) => session.on('turn-end', (event) => resolve(event.result)));
    session.wake({ model: waker });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(waker.requests).toHaveLength(0);
    expect(((await ended) as { finalText?: string }).finalText).toBe('the build is green');
    expect(waker.requests).toHaveLength(1);
    expect(outputsCarrying(waker.requests[0], 'exec-1', 'build green')).toHaveLength(1);
  });

  it('a completion arriving during the turn’s last request is not buried in the history: the wake turn’s request carries it', async () => {
    const session = openSleepySession();
    const model = createScriptedModel([
      [execItem('exec-1', slowCell(200, 'late result'))],
      // the model is still answering when the cell completes
      async () => (await new Promise((resolve) => setTimeout(resolve, 800)), [say('started')]),
      [say('got the late result')],
    ]);
    let turns = 0;
    const woke = new Promise<void>((resolve) => session.on('turn-end', () => ++turns === 2 && resolve()));
    session.wake({ model });
    await session.runTurn({ model, input: 'go' });
    await woke;
    expect(model.requests).toHaveLength(3);
    expect(outputsCarrying(model.requests[1], 'exec-1', 'late result')).toHaveLength(0);
    expect(outputsCarrying(model.requests[2], 'exec-1', 'late result')).toHaveLength(1);
    expect(session.history.filter((item) => outputText(item).includes('late result'))).toHaveLength(1);
  });

  it('maxUnobservedMs terminates a cell left running unobserved and says so', async () => {
    const session = openSleepySession({ background: { maxUnobservedMs: 200 } });
    const done = backgroundComplete(session);
    await session.runTurn({ model: createScriptedModel([[execItem('exec-1', `// @exec: {"yield_time_ms": 30}\ntext('partial');\nawait new Promise(() => {});`)], [say('left it')]]), input: 'go' });
    expect((await done).status).toBe('terminated');
    const next = createScriptedModel([[say('ok')]]);
    await session.runTurn({ model: next, input: 'and?' });
    const [item] = outputsCarrying(next.requests[0], 'exec-1', 'Script terminated');
    expect(outputText(item)).toMatch(/^Script terminated\nWall time [\d.]+ seconds\nOutput:\n\n(partial\n)?\[exec cell terminated: it ran 200 ms in the background without anyone observing it \(the host's limit\)\]$/);
  });

  it('the exec description says polling is unnecessary only with the option', async () => {
    const description = async (session: Session) => {
      const step = await session.beginTurn().step();
      return (step.tools.find((tool) => (tool as { name?: string }).name === 'exec') as { description: string }).description;
    };
    expect(await description(openSleepySession())).toContain('You do not need to poll it with `wait`');
    expect(await description(openSleepySession({ background: false }))).not.toContain('poll');
  });

  it('wake without the background option, and a bad option, are CONFIG errors', async () => {
    const plain = openSleepySession({ background: undefined });
    expect(await configError(() => plain.wake({ model: createScriptedModel([]) }))).toBe(
      'session.wake: needs the `background` option of createSession (background work must deliver its completions)',
    );
    expect(await configError(() => createSession({ tools: [], background: { maxUnobservedMs: -1 } }))).toBe(
      'createSession: option `background.maxUnobservedMs` must be an integer from 0 to 9007199254740991; got -1',
    );
  });
});
