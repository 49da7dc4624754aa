import { afterEach, describe, expect, it } from 'vitest';
import { isSwitchyardError, type ModelClient, type ModelStreamEvent, type ResponseItem } from '@switchyard/protocol';
import { createScriptedModel } from './testing';
import { createSession } from './session';
import type { Session } from './session-types';

// One turn at a time per session: a second runTurn / streamTurn / wake turn waits for the running
// one, in the order they were asked for, and the history never interleaves.

const say = (text: string): ResponseItem => ({ type: 'message', role: 'assistant', content: text });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

/** The history as `role:text` of each message. */
const transcript = (session: Session) =>
  session.history.map((item) => {
    const message = item as { role?: string; content?: unknown };
    return `${message.role}:${String(message.content)}`;
  });

const sessions: Session[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.shutdown()));
});
function open(): Session {
  const session = createSession({ tools: [], background: true });
  sessions.push(session);
  return session;
}

describe('one turn at a time per session', () => {
  it('two concurrent runTurn never interleave: the second waits for the first, in order', async () => {
    const session = open();
    const first = session.runTurn({ model: slowModel('first', 200), input: 'one' });
    const second = session.runTurn({ model: slowModel('second', 10), input: 'two' });
    const [a, b] = await Promise.all([first, second]);
    expect(transcript(session)).toEqual(['user:one', 'assistant:first', 'user:two', 'assistant:second']);
    expect(a.finalText).toBe('first');
    expect(b.finalText).toBe('second');
  });

  it('three queued turns (runTurn, streamTurn, runTurn) run in the order they were asked for', async () => {
    const session = open();
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
    const session = open();
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
    const session = open();
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
    const session = open();
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

  it('wake turns take their place in the queue: a completion during a turn never starts a turn beside it', async () => {
    const session = createSession({ toolMode: 'code-mode-only', tools: [], background: true, codeMode: { runtimeOptions: { isolation: 'in-process' } } });
    sessions.push(session);
    const starts: number[] = [];
    let running = 0;
    let overlap = 0;
    session.on('turn-start', () => {
      running++;
      overlap = Math.max(overlap, running);
      starts.push(Date.now());
    });
    session.on('turn-end', () => running--);
    // the wake model answers each wake turn
    session.wake({ model: createScriptedModel([[say('woke')], [say('woke again')]]) });
    // a cell yields at once and ends 100 ms later, while the next (slow) turn samples
    const cell = '// @exec: {"yield_time_ms": 10}\nawait new Promise((resolve) => setTimeout(resolve, 100));\ntext("late");';
    const model = createScriptedModel([[{ type: 'custom_tool_call', call_id: 'x1', name: 'exec', input: cell }], [say('yielded')]]);
    await session.runTurn({ model, input: 'start' });
    const slow = session.runTurn({ model: slowModel('slow', 400), input: 'slow one' });
    const other = session.runTurn({ model: slowModel('other', 5), input: 'other' });
    await Promise.all([slow, other]);
    await sleep(200);
    expect(overlap).toBe(1);
    const texts = transcript(session).filter((text) => text.startsWith('user:') || text.startsWith('assistant:'));
    // the turns asked for run in order, each user input followed by its own answer; the completion
    // went into one of their requests (no wake turn was needed) or a wake turn ran after them
    const slowAt = texts.indexOf('user:slow one');
    expect(texts.slice(slowAt, slowAt + 4)).toEqual(['user:slow one', 'assistant:slow', 'user:other', 'assistant:other']);
  });
});
