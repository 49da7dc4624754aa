import { describe, expect, it } from 'vitest';
import type { JournalCall } from '@switchyard/protocol';
import { CellReplay, type ReplayJournal } from './cell-replay';
import { argumentsHash, chainItem } from './journal/hashing';

/** A replay over a recording port: what it entered, and how it ended. */
function replay(journal: Partial<ReplayJournal>) {
  const log: string[] = [];
  const port = {
    sync: (n: number) => void log.push(`sync ${n}`),
    deliverResult: (id: string, tool: string) => void log.push(`result ${id} ${tool}`),
    deliverTimers: (ids: readonly number[]) => void log.push(`timers ${ids.join('.')}`),
    live: () => void log.push('live'),
    diverge: (reason: string) => void log.push(`diverged: ${reason}`),
  };
  const full: ReplayJournal = { entries: '', calls: [], observed: { items: 0, itemsHash: '', notifies: 0, notifiesHash: '' }, committed: false, ...journal };
  return { replay: new CellReplay('c1', full, port), log };
}

const journalCall = (id: string, tool: string, args = '{}', result: JournalCall['result'] | null = { ok: true, json: '1' }): JournalCall =>
  result === null ? { id, tool, hash: argumentsHash(args) } : { id, tool, hash: argumentsHash(args), result };

describe('replaying a cell from its journal (the runtime side)', () => {
  it('enters each journaled delivery once the cell has made what it needs, a barrier between each, then goes live', () => {
    const { replay: r, log } = replay({ entries: 'd5*2,r1,t1,r2', calls: [journalCall('tool-1', 'a'), journalCall('tool-2', 'b', '{"x":1}')] });
    expect(r.times).toEqual([5, 2]);
    r.begin();
    expect(r.call('tool-1', 'a', '{}')).toBe('journal');
    r.synced(1);
    expect(r.setTimer(1, 50)).toBe('journal');
    r.synced(2);
    expect(r.call('tool-2', 'b', '{"x":1}')).toBe('journal');
    r.synced(3);
    r.synced(4);
    expect(log).toEqual(['sync 1', 'result tool-1 a', 'sync 2', 'timers 1', 'sync 3', 'result tool-2 b', 'sync 4', 'live']);
    expect(r.isLive).toBe(true);
    // past the journal: new calls go to the host, new timers start
    expect(r.call('tool-3', 'a', '{}')).toBe('host');
    expect(r.setTimer(2, 10)).toBe('start');
  });

  it('a call journaled without a delivered result goes to the host (it is joined there); timers not fired wait for live', () => {
    const { replay: r, log } = replay({ entries: 'r1', calls: [journalCall('tool-1', 'a'), journalCall('tool-2', 'a', '{}', null)] });
    r.begin();
    expect(r.call('tool-1', 'a', '{}')).toBe('journal');
    expect(r.call('tool-2', 'a', '{}')).toBe('host');
    expect(r.setTimer(1, 100)).toBe('deferred');
    const entered: string[] = [];
    r.whenLive(() => entered.push('tool-2 result'));
    r.synced(1);
    expect(entered).toEqual([]);
    r.synced(2);
    expect(entered).toEqual(['tool-2 result']);
    expect(r.takeDeferredTimers()).toEqual([[1, 100]]);
    expect(log.at(-1)).toBe('live');
  });

  it.each([
    ['another tool', 'tool-1', 'b', '{}', 'it called tools.b where its journal has tools.a (tool-1)'],
    ['other arguments', 'tool-1', 'a', '{"n":2}', 'it called tools.a (tool-1) with other arguments than its journal has'],
    ['a call the journal lacks while deliveries remain', 'tool-9', 'a', '{}', 'it called tools.a (tool-9), which its journal does not have'],
  ])('fails on %s', (_what, id, tool, args, reason) => {
    const { replay: r, log } = replay({ entries: 'r1', calls: [journalCall('tool-1', 'a')] });
    r.begin();
    expect(r.call(id, tool, args)).toBe('diverged');
    expect(log.at(-1)).toBe(`diverged: ${reason}`);
  });

  it('fails when the journal delivers a result of a call never made, or fires a timer never set, or the cell ends early', () => {
    const never = replay({ entries: 'r1', calls: [journalCall('tool-1', 'a')] });
    never.replay.begin();
    never.replay.synced(1);
    expect(never.log.at(-1)).toBe('diverged: its journal has the result of tools.a (tool-1), a call it did not make');
    const timer = replay({ entries: 't3' });
    timer.replay.begin();
    timer.replay.setTimer(1, 0);
    timer.replay.synced(1);
    expect(timer.log.at(-1)).toBe('diverged: its journal fires timer 3, which it did not set');
    const early = replay({ entries: 'r1', calls: [journalCall('tool-1', 'a')] });
    expect(early.replay.ended()).toBe('it completed where its journal has 1 more deliveries');
  });

  it('drops output already observed and checks its hash chain; a different output is a divergence', () => {
    const item = { type: 'input_text' as const, text: 'seen' };
    const same = replay({ observed: { items: 1, itemsHash: chainItem('', item), notifies: 0, notifiesHash: '' } });
    expect(same.replay.keepItem(item)).toBe(false);
    expect(same.replay.keepItem({ type: 'input_text', text: 'new' })).toBe(true);
    expect(same.log).toEqual([]);
    const other = replay({ observed: { items: 1, itemsHash: chainItem('', item), notifies: 0, notifiesHash: '' } });
    other.replay.keepItem({ type: 'input_text', text: 'not seen' });
    expect(other.log.at(-1)).toBe('diverged: its output differs from the 1 output items already observed');
  });

  it('refuses a journal that does not hold together (INVALID_JOURNAL)', () => {
    expect(() => replay({ entries: 'r1' })).toThrow('cannot resume cell c1: its journal is invalid (the result of tool-1 is delivered, but the journal has no such call)');
    expect(() => replay({ entries: 'r1', calls: [journalCall('tool-1', 'a', '{}', null)] })).toThrow('the result of tool-1 is delivered, but the journal has none');
    expect(() => replay({ entries: 'r1,x9' })).toThrow('its journal is invalid (entry 2 is "x9")');
  });
});
