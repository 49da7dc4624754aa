/**
 * A session's own bounds against a model and a host that keep it busy (issue 47, rows 3–5), each
 * a real session (real isolates for cells) with a scripted model:
 * - `shutdown()` while a turn runs: `shutdown()` resolved and the turn then made more model requests
 *   and started a tool. `shutdown()` must abort the running turns; nothing of the session starts after it;
 * - a tool revoked (`tools: () => …`) while a yielded cell keeps calling it between turns: the
 *   background step was planned once and ran the revoked tool on. Each background call must be
 *   checked against the tools as they are at that moment;
 * - a model that, in every wake turn, starts a cell ending 20 ms later: the session woke itself
 *   without end (302 model requests in 6 s). Model requests without host input must be bounded, with
 *   a host event when the bound is hit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession, type Session, type SessionEvent } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import type { ModelRequest, ResponseItem, ToolExecutor } from '@switchyard/protocol';
import { callItem, execItem, sleep, texts } from './helpers';
import { report } from '../src/profile';

const sessions: Session[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.shutdown()));
});

const say = (text: string): ResponseItem => ({ type: 'message', role: 'assistant', content: text });
const codeMode = { runtimeOptions: { isolation: 'in-process', nodeSnapshotCheck: 'ignore' } };

/** A tool that records when each of its calls started. */
function recorder(name: string, started: number[]): ToolExecutor {
  return defineFunctionTool({
    name,
    description: `Records a call of ${name}.`,
    parameters: { type: 'object' },
    handle: () => {
      started.push(performance.now());
      return 'recorded';
    },
  });
}

describe('shutdown() while a turn runs (issue 47, row 3)', () => {
  /** A model that answers every request, 150 ms later, with another call of `step`. */
  const busyModel = () => createScriptedModel(async (_request: ModelRequest, index: number) => {
    await sleep(150);
    return [callItem(`c${index}`, 'step', {})];
  });

  it('aborts the running turn: after shutdown() resolves no model request and no tool call starts', async () => {
    const started: number[] = [];
    const session = createSession({ tools: [recorder('step', started)], maxSteps: 1000 });
    const model = busyModel();
    const turn = session.runTurn({ model, input: 'keep going' }).then(
      () => 'resolved',
      (error: { code?: string }) => error.code,
    );
    while (started.length < 2) await sleep(20);
    await session.shutdown();
    const requestsAtShutdown = model.requests.length;
    const callsAtShutdown = started.length;
    const ended = await Promise.race([turn, sleep(5_000).then(() => 'still running')]);
    await sleep(800);

    // Control: the same model and tool in a session nobody shuts down keep going meanwhile.
    const controlStarted: number[] = [];
    const control = createSession({ tools: [recorder('step', controlStarted)], maxSteps: 1000 });
    sessions.push(control);
    const controlModel = busyModel();
    void control.runTurn({ model: controlModel, input: 'keep going' }).catch(() => undefined);
    await sleep(1_200);
    expect(controlModel.requests.length).toBeGreaterThan(3);

    expect(ended).not.toBe('still running');
    expect(ended).not.toBe('resolved');
    expect(model.requests.length, 'model requests after shutdown() resolved').toBe(requestsAtShutdown);
    expect(started.length, 'tool calls after shutdown() resolved').toBe(callsAtShutdown);
    await expect(session.runTurn({ model, input: 'again' })).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
    report('session bounds', `shutdown() during a turn: the turn ended (${ended}); 0 model requests and 0 tool calls after it (a session left running made ${controlModel.requests.length} requests meanwhile)`);
  }, 30_000);
});

describe('a tool revoked while a yielded cell calls it between turns (issue 47, row 4)', () => {
  it('each background call is checked against the tools as they are then', async () => {
    const started: number[] = [];
    const secret = recorder('secret', started);
    let tools: ToolExecutor[] = [secret];
    const session = createSession({ toolMode: 'code-mode', tools: () => tools, background: true, codeMode });
    sessions.push(session);
    const completions: SessionEvent[] = [];
    session.on('background-complete', (event) => void completions.push(event));
    // a cell that yields at once, then calls `secret` every 40 ms, 40 times, counting refusals
    const cell = `// @exec: {"yield_time_ms": 20}
let refused = 0;
for (let i = 0; i < 40; i++) {
  try { await tools.secret({}); } catch { refused++; }
  await new Promise((resolve) => setTimeout(resolve, 40));
}
text("refused " + refused);`;
    const model = createScriptedModel([[execItem('exec-1', cell)], [say('started')]]);
    await session.runTurn({ model, input: 'go' });
    // between turns: the background step runs `secret` (the control: it is allowed now)
    while (started.length < 4) await sleep(20);
    tools = [];
    const revokedAt = performance.now();
    const deadline = Date.now() + 15_000;
    while (completions.length === 0 && Date.now() < deadline) await sleep(50);
    const after = started.filter((at) => at > revokedAt).length;
    const delivered = texts((completions[0] as { item?: ResponseItem } | undefined)?.item).join('\n');

    expect(completions).toHaveLength(1);
    expect(after, 'calls of the revoked tool').toBe(0);
    const refused = Number(/refused (\d+)/.exec(delivered)?.[1]);
    expect(refused).toBeGreaterThan(30);
    expect(refused + started.length).toBe(40);
    report('session bounds', `a tool revoked between turns while a yielded cell calls it: ${started.length} calls before, ${after} after (was 24 more), ${refused} refused`);
  }, 30_000);
});

describe('a model that starts a short cell in every wake turn (issue 47, row 5)', () => {
  it('wake turns without host input are bounded, and the host hears when the bound is hit', async () => {
    const session = createSession({ toolMode: 'code-mode', tools: [], background: true, codeMode });
    sessions.push(session);
    const warnings: SessionEvent[] = [];
    session.on('warning', (event) => void warnings.push(event));
    let turns = 0;
    session.on('turn-start', () => void turns++);
    // each turn: an exec whose cell yields and ends 20 ms later, then an answer; its end wakes the session
    let cells = 0;
    const model = createScriptedModel((request: ModelRequest) => {
      const last = request.input.at(-1);
      if (last?.type === 'custom_tool_call_output' && texts(last).join('').includes('Script running')) return [say('it runs')];
      cells++;
      return [execItem(`exec-${cells}`, `// @exec: {"yield_time_ms": 10}\nawait new Promise((resolve) => setTimeout(resolve, 30));\ntext("tick ${cells}");`)];
    });
    await session.runTurn({ model, input: 'start' });
    const requestsByHost = model.requests.length;
    session.wake({ model });
    await sleep(6_000);
    const wakeRequests = model.requests.length - requestsByHost;
    const wakeTurns = turns - 1;

    // Control: the session does wake itself for the first completions.
    expect(wakeTurns).toBeGreaterThan(0);
    expect(wakeTurns, 'wake turns in a row without host input').toBeLessThanOrEqual(8);
    expect(wakeRequests).toBeLessThanOrEqual(8 * 2);
    const hit = warnings.filter((event) => (event as { source?: string }).source === 'background');
    expect(hit).toHaveLength(1);
    expect((hit[0] as { message: string }).message).toMatch(/8 wake turns in a row without a turn of the host/);
    // a turn of the host re-arms it: the completion left waiting reaches the model then
    const before = model.requests.length;
    await session.runTurn({ model, input: 'go on' });
    expect(model.requests.length).toBeGreaterThan(before);
    report('session bounds', `a model starting a 20 ms cell in every wake turn: ${wakeTurns} wake turns, ${wakeRequests} model requests in 6 s without host input (was 151 turns, 302 requests), one warning`);
  }, 30_000);
});
