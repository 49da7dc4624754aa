import { afterEach, describe, expect, it } from 'vitest';
import { isSwitchyardError, type ModelClient, type ModelRequest, type ModelStreamEvent, type ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createScriptedModel } from './testing';
import { createSession } from './session';
import type { Session } from './session-types';
import { say, sleep } from '@switchyard/test-helpers';

// One turn at a time per session: a second runTurn / streamTurn / wake turn waits for the running
// one, in the order they were asked for, and the history never interleaves.


/** A model that answers `text` after `ms` (so a turn is still sampling when the next one is asked for). */
function slowModel(text: string, ms: number): ModelClient {
  return {
    async *stream(): AsyncIterable<ModelStreamEvent> {
      await sleep(ms);
      yield { type: 'output-item', item: say(text) };
      yield { type: 'completed' };
    },
  };
}

/** Items as `role:text` of each message. */
const transcriptOf = (items: readonly ResponseItem[]) =>
  items.map((item) => {
    const message = item as { role?: string; content?: unknown };
    return `${message.role}:${String(message.content)}`;
  });
/** The history as `role:text` of each message. */
const transcript = (session: Session) => transcriptOf(session.history);
/** The outputs of call `x1` in a request that carry the cell's final text `late`. */
const carriesLate = (request: ModelRequest) =>
  request.input.filter((item) => item.type === 'custom_tool_call_output' && (item as { call_id?: string }).call_id === 'x1' && JSON.stringify((item as { output?: unknown }).output).includes('late'));

const sessions: Session[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.shutdown()));
});
function openBareSession(): Session {
  const session = createSession({ tools: [], background: true });
  sessions.push(session);
  return session;
}

describe('one turn at a time per session', () => {
  it('two concurrent runTurn never interleave: the second waits for the first, in order', async () => {
    const session = openBareSession();
    const first = session.runTurn({ model: slowModel('first', 200), input: 'one' });
    const second = session.runTurn({ model: slowModel('second', 10), input: 'two' });
    const [a, b] = await Promise.all([first, second]);
    expect(transcript(session)).toEqual(['user:one', 'assistant:first', 'user:two', 'assistant:second']);
    expect(a.finalText).toBe('first');
    expect(b.finalText).toBe('second');
  });

  it('three queued turns (runTurn, streamTurn, runTurn) run in the order they were asked for', async () => {
    const session = openBareSession();
    const order: string[] = [];
    session.on('turn-start', () => order.push('start'));
    session.on('turn-end', (event) => order.push(`end ${event.result?.finalText}`));
    const a = session.runTurn({ model: slowModel('a', 120), input: 'A' });
    const streamed = (async () => {
      const seen: string[] = [];
      for await (const event of session.streamTurn({ model: slowModel('b', 5), input: 'B' })) seen.push(event.type);
      return seen;
    })();
    const c = session.runTurn({ model: slowModel('c', 5), input: 'C' });
    const [, seen] = await Promise.all([a, streamed, c]);
    expect(transcript(session)).toEqual(['user:A', 'assistant:a', 'user:B', 'assistant:b', 'user:C', 'assistant:c']);
    expect(order).toEqual(['start', 'end a', 'start', 'end b', 'start', 'end c']);
    // the streamed turn yields its own events only
    expect(seen[0]).toBe('turn-start');
    expect(seen.at(-1)).toBe('turn-end');
    expect(seen.filter((type) => type === 'turn-start')).toHaveLength(1);
  });

  it("ifBusy: 'fail' rejects at once with BUSY while a turn runs, and leaves the history alone", async () => {
    const session = openBareSession();
    const first = session.runTurn({ model: slowModel('first', 150), input: 'one' });
    const refused = await session.runTurn({ model: slowModel('never', 1), input: 'two', ifBusy: 'fail' }).catch((error: unknown) => error);
    expect(isSwitchyardError(refused) && refused.code).toBe('BUSY');
    expect((refused as Error).message).toContain(`session ${session.id}`);
    await first;
    expect(transcript(session)).toEqual(['user:one', 'assistant:first']);
    // once idle, ifBusy: 'fail' runs at once
    await session.runTurn({ model: slowModel('third', 1), input: 'three', ifBusy: 'fail' });
    expect(transcript(session).slice(-2)).toEqual(['user:three', 'assistant:third']);
  });

  it('a queued turn whose signal aborts while it waits leaves no trace and does not block the next', async () => {
    const session = openBareSession();
    const first = session.runTurn({ model: slowModel('first', 150), input: 'one' });
    const controller = new AbortController();
    const queued = session.runTurn({ model: slowModel('never', 1), input: 'two', signal: controller.signal });
    const third = session.runTurn({ model: slowModel('third', 1), input: 'three' });
    controller.abort();
    const error = await queued.catch((caught: unknown) => caught);
    expect(isSwitchyardError(error) && error.code).toBe('ABORTED');
    await Promise.all([first, third]);
    expect(transcript(session)).toEqual(['user:one', 'assistant:first', 'user:three', 'assistant:third']);
  });

  it('beginTurn while a loop turn runs or waits throws BUSY; a runTurn asked while a host-driven turn is open waits for its end', async () => {
    const session = openBareSession();
    const running = session.runTurn({ model: slowModel('first', 100), input: 'one' });
    expect(() => session.beginTurn()).toThrow(expect.objectContaining({ code: 'BUSY', message: expect.stringContaining(session.id) }));
    await running;
    const turn = session.beginTurn();
    let ran = false;
    const waiting = session.runTurn({ model: slowModel('after', 1), input: 'later' }).then(() => (ran = true));
    await sleep(50);
    expect(ran).toBe(false);
    await turn.end();
    await waiting;
    expect(transcript(session)).toEqual(['user:one', 'assistant:first', 'user:later', 'assistant:after']);
  });

  it('wake turns take their place in the queue: a completion during a turn wakes the session after it, and a turn asked meanwhile waits for the wake turn', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const hold = defineFunctionTool({ name: 'hold', description: 'Waits until the test releases it.', parameters: { type: 'object' }, handle: async () => (await held, 'released') });
    const session = createSession({ toolMode: 'code-mode-only', tools: [hold], background: true, codeMode: { runtimeOptions: { isolation: 'in-process' } } });
    sessions.push(session);
    const order: string[] = [];
    let running = 0;
    let overlap = 0;
    session.on('turn-start', () => {
      running++;
      overlap = Math.max(overlap, running);
      order.push('start');
    });
    session.on('turn-end', (event) => {
      running--;
      order.push(`end ${event.result?.finalText}`);
    });
    const completed = new Promise<void>((resolve) => session.on('background-complete', () => resolve()));
    // a cell that yields at once and ends when the test releases its call
    const cell = '// @exec: {"yield_time_ms": 10}\nawait tools.hold({});\ntext("late");';
    await session.runTurn({ model: createScriptedModel([[{ type: 'custom_tool_call', call_id: 'x1', name: 'exec', input: cell }], [say('yielded')]]), input: 'start' });
    // the wake turn asks for a host turn while it runs: that turn waits for it
    let askedOther!: (turn: Promise<unknown>) => void;
    const otherAsked = new Promise<Promise<unknown>>((resolve) => (askedOther = resolve));
    const otherModel = createScriptedModel([[say('other')]]);
    const waker = createScriptedModel([
      async () => {
        askedOther(session.runTurn({ model: otherModel, input: 'other' }));
        await sleep(100);
        return [say('woke')];
      },
    ]);
    session.wake({ model: waker });
    // the cell ends while this turn's only request is out: no request of the turn can carry it
    const slowRequests: ModelRequest[] = [];
    const slow: ModelClient = {
      async *stream(request) {
        slowRequests.push(request);
        release();
        await completed;
        yield { type: 'output-item', item: say('slow') };
        yield { type: 'completed' };
      },
    };
    await session.runTurn({ model: slow, input: 'slow one' });
    await (await otherAsked);
    expect(overlap).toBe(1);
    expect(order).toEqual(['start', 'end yielded', 'start', 'end slow', 'start', 'end woke', 'start', 'end other']);
    // on the wire: the slow turn's request lacks the completion, the wake request ends with it, the
    // waiting turn's request has it once, then the wake turn's answer, then its own input
    expect(carriesLate(slowRequests[0])).toHaveLength(0);
    expect(waker.requests).toHaveLength(1);
    const woken = waker.requests[0].input;
    expect(carriesLate(waker.requests[0])).toEqual([woken.at(-1)]);
    expect(transcriptOf(woken.slice(-3, -1))).toEqual(['user:slow one', 'assistant:slow']);
    const next = otherModel.requests[0].input;
    expect(carriesLate(otherModel.requests[0])).toEqual([next.at(-3)]);
    expect(transcriptOf(next.slice(-2))).toEqual(['assistant:woke', 'user:other']);
    const texts = transcript(session).filter((text) => text.startsWith('user:') || text.startsWith('assistant:'));
    // the turns asked for run in order, each user input followed by its own answer, the wake turn between
    const slowAt = texts.indexOf('user:slow one');
    expect(texts.slice(slowAt)).toEqual(['user:slow one', 'assistant:slow', 'assistant:woke', 'user:other', 'assistant:other']);
  });
});
