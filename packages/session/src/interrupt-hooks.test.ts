import { describe, expect, it } from 'vitest';
import type { ModelClient, ModelStreamEvent, ResponseItem } from '@switchyard/protocol';
import { createHookEngine, type LifecycleHookInput } from '@switchyard/hooks';
import { createScriptedModel } from './testing';
import { createSession } from './session';
import type { SessionEvent } from './session-events';
import { say } from '@switchyard/test-helpers';

/** A model that answers nothing until the request's signal aborts (a turn stuck in sampling). */
function stuckModel(started: () => void): ModelClient {
  return {
    async *stream(request): AsyncGenerator<ModelStreamEvent> {
      started();
      await new Promise<void>((resolve) => (request.signal?.aborted ? resolve() : request.signal?.addEventListener('abort', () => resolve(), { once: true })));
      throw request.signal?.reason ?? new Error('aborted');
    },
  };
}

/** A session whose Interrupt and SessionEnd hooks record what they read, in order, with the session's events. */
function recordingSession() {
  const seen: Array<LifecycleHookInput | { hook_event_name: string }> = [];
  const hooks = createHookEngine({
    functionHooks: [
      { event: 'Interrupt', name: 'log', run: (input) => void seen.push(input as unknown as LifecycleHookInput) },
      // a blocking answer changes nothing: Interrupt decides nothing
      { event: 'Interrupt', name: 'blocker', run: () => ({ decision: 'block', reason: 'keep going' }) },
      { event: 'SessionEnd', name: 'end', run: (input) => void seen.push({ hook_event_name: (input as unknown as LifecycleHookInput).hook_event_name }) },
    ],
  });
  const session = createSession({ tools: [], hooks, sessionId: 'session-i', cwd: '/tmp' });
  const events: SessionEvent[] = [];
  session.on('hook-end', (event) => events.push(event));
  session.on('turn-end', (event) => events.push(event));
  return { session, seen, events };
}

const interrupts = (seen: ReadonlyArray<{ hook_event_name: string }>) => seen.filter((input) => input.hook_event_name === 'Interrupt');

describe('Interrupt hooks through a session', () => {
  it("fires once when the host's signal aborts a turn, with the reason and its text, before turn-end", async () => {
    const { session, seen, events } = recordingSession();
    const controller = new AbortController();
    const turn = session.runTurn({ model: stuckModel(() => controller.abort(new Error('user pressed Esc'))), input: 'go', signal: controller.signal });
    await expect(turn).rejects.toMatchObject({ code: 'ABORTED' });
    expect(interrupts(seen)).toEqual([
      { session_id: 'session-i', turn_id: expect.any(String), transcript_path: null, cwd: '/tmp', model: '', permission_mode: 'default', hook_event_name: 'Interrupt', reason: 'signal', detail: 'user pressed Esc' },
    ]);
    const order = events.map((event) => (event.type === 'hook-end' ? `hook-end ${event.event} ${event.hook}` : event.type));
    expect(order.slice(-1)).toEqual(['turn-end']);
    expect(order.filter((entry) => entry.startsWith('hook-end Interrupt')).sort()).toEqual(['hook-end Interrupt function hook blocker (<function:blocker>)', 'hook-end Interrupt function hook log (<function:log>)']);
    // the session goes on: the next turn runs and fires nothing
    expect((await session.runTurn({ model: createScriptedModel([[say('fine')]]), input: 'again' })).finalText).toBe('fine');
    expect(interrupts(seen)).toHaveLength(1);
    await session.shutdown();
  });

  it('fires once for turn.abort() however often it is called, and never for a turn that ends normally', async () => {
    const { session, seen } = recordingSession();
    const turn = session.beginTurn();
    turn.abort(new Error('changed my mind'));
    turn.abort(new Error('again'));
    await turn.end();
    const normal = session.beginTurn();
    await normal.end();
    expect(interrupts(seen)).toMatchObject([{ reason: 'abort', detail: 'changed my mind' }]);
    await session.shutdown();
  });

  it('fires with stream-closed when the host stops reading streamTurn', async () => {
    const { session, seen } = recordingSession();
    let started!: () => void;
    const sampling = new Promise<void>((resolve) => (started = resolve));
    const stream = session.streamTurn({ model: stuckModel(() => started()), input: 'go' })[Symbol.asyncIterator]();
    const first = await stream.next();
    expect(first.value).toMatchObject({ type: 'turn-start' });
    await sampling;
    await stream.return?.(undefined);
    expect(interrupts(seen)).toMatchObject([{ reason: 'stream-closed', detail: 'the host stopped reading the turn' }]);
    await session.shutdown();
  });

  it('fires with shutdown for a turn still running at shutdown(), before SessionEnd; the turn rejects ABORTED', async () => {
    const { session, seen } = recordingSession();
    let started!: () => void;
    const sampling = new Promise<void>((resolve) => (started = resolve));
    const turn = session.runTurn({ model: stuckModel(() => started()), input: 'go' });
    turn.catch(() => undefined);
    await sampling;
    await session.shutdown();
    await expect(turn).rejects.toMatchObject({ code: 'ABORTED' });
    expect(seen.map((input) => input.hook_event_name)).toEqual(['Interrupt', 'SessionEnd']);
    expect(interrupts(seen)).toMatchObject([{ reason: 'shutdown', detail: 'the session is shutting down' }]);
  });

  it('does not fire for a turn that fails on its own (a model error)', async () => {
    const { session, seen } = recordingSession();
    await expect(session.runTurn({ model: createScriptedModel([new Error('model exploded')]), input: 'go' })).rejects.toThrow();
    expect(interrupts(seen)).toEqual([]);
    await session.shutdown();
  });
});
