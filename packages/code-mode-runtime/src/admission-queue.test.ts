import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AdmissionQueue, QUEUE_REPORT_MS, type AdmissionEvent, type AdmissionTicket } from './admission-queue';

// The admission queue alone, with fake timers: which waiting session gets a freed place, what each
// hears while it waits, and what it is refused with at a bound.
interface Ticket extends AdmissionTicket {
  name: string;
  events: AdmissionEvent[];
}

const POOL = "the pool's 2 places (workers.max 1 × workers.sessionsPerWorker 2) are held by 2 sessions";

function admissionQueue(bounds = { maxQueued: 100, admissionMs: 60_000 }) {
  const queue = new AdmissionQueue<Ticket, string>(bounds, () => POOL);
  const admitted: string[] = [];
  const refused = new Map<string, unknown>();
  const ticket = (tenant: string, name: string, urgent = false): Ticket => {
    const events: AdmissionEvent[] = [];
    return { tenant, name, urgent, events, report: (event) => events.push(event) };
  };
  const enqueue = (t: Ticket) => {
    queue.wait(t).then(
      (place) => admitted.push(`${t.name}@${place}`),
      (error: unknown) => refused.set(t.name, error),
    );
    return t;
  };
  /** Frees `n` places, one after another; each goes to whoever the queue serves next. */
  const free = async (n: number) => {
    for (let i = 0; i < n; i++) {
      let given = false;
      queue.admit(() => (given ? undefined : ((given = true), `place${i}`)));
    }
    await Promise.resolve();
  };
  return { queue, ticket, enqueue, free, admitted, refused };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('admission queue', () => {
  it('serves tenants round robin and each tenant first come first served', async () => {
    const { ticket, enqueue, free, admitted } = admissionQueue();
    // a floods first, then b and c arrive
    for (const name of ['a1', 'a2', 'a3', 'a4']) enqueue(ticket('a', name));
    enqueue(ticket('b', 'b1'));
    enqueue(ticket('b', 'b2'));
    enqueue(ticket('c', 'c1'));
    await free(7);
    expect(admitted.map((entry) => entry.split('@')[0])).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
  });

  it('a tenant served goes to the back: a newcomer waits behind tenants already waiting, not behind all their sessions', async () => {
    const { ticket, enqueue, free, admitted } = admissionQueue();
    for (const name of ['a1', 'a2', 'a3']) enqueue(ticket('a', name));
    enqueue(ticket('b', 'b1'));
    await free(1); // a1
    enqueue(ticket('c', 'c1'));
    await free(4);
    expect(admitted.map((entry) => entry.split('@')[0])).toEqual(['a1', 'b1', 'a2', 'c1', 'a3']);
  });

  it('urgent tickets (lone leases) go first, in their order', async () => {
    const { ticket, enqueue, free, admitted } = admissionQueue();
    enqueue(ticket('a', 'a1'));
    enqueue(ticket('x', 'lone1', true));
    enqueue(ticket('b', 'b1'));
    enqueue(ticket('y', 'lone2', true));
    await free(4);
    expect(admitted.map((entry) => entry.split('@')[0])).toEqual(['lone1', 'lone2', 'a1', 'b1']);
  });

  it('passes over a tenant whose first ticket fits no place now, without reordering it', async () => {
    const { queue, ticket, enqueue, admitted } = admissionQueue();
    enqueue(ticket('isolated', 'i1'));
    enqueue(ticket('isolated', 'i2'));
    enqueue(ticket('b', 'b1'));
    // a shared place frees: the isolated tenant cannot take it, b can
    queue.admit((t) => (t.tenant === 'isolated' ? undefined : 'shared'));
    await Promise.resolve();
    expect(admitted).toEqual(['b1@shared']);
    expect(queue.order().map((t) => t.name)).toEqual(['i1', 'i2']);
    queue.admit(() => 'empty');
    await Promise.resolve();
    expect(admitted).toEqual(['b1@shared', 'i1@empty', 'i2@empty']);
  });

  it('reports the position when a session starts waiting and every second after, then its admission', async () => {
    const { ticket, enqueue, free } = admissionQueue();
    const a1 = enqueue(ticket('a', 'a1'));
    const a2 = enqueue(ticket('a', 'a2'));
    const b1 = enqueue(ticket('b', 'b1'));
    expect(a1.events).toEqual([{ type: 'runtime-queued', position: 1, waiting: 1, waitedMs: 0 }]);
    expect(a2.events).toEqual([{ type: 'runtime-queued', position: 2, waiting: 2, waitedMs: 0 }]);
    // b1 arrived third but is served second (round robin)
    expect(b1.events).toEqual([{ type: 'runtime-queued', position: 2, waiting: 3, waitedMs: 0 }]);
    await vi.advanceTimersByTimeAsync(QUEUE_REPORT_MS);
    expect(a2.events.at(-1)).toEqual({ type: 'runtime-queued', position: 3, waiting: 3, waitedMs: QUEUE_REPORT_MS });
    expect(b1.events.at(-1)).toEqual({ type: 'runtime-queued', position: 2, waiting: 3, waitedMs: QUEUE_REPORT_MS });
    await vi.advanceTimersByTimeAsync(500);
    await free(1);
    expect(a1.events.at(-1)).toEqual({ type: 'runtime-admitted', waitedMs: QUEUE_REPORT_MS + 500 });
    await vi.advanceTimersByTimeAsync(QUEUE_REPORT_MS);
    expect(b1.events.at(-1)).toMatchObject({ type: 'runtime-queued', position: 1, waiting: 2 });
    expect(a1.events.filter((event) => event.type === 'runtime-queued')).toHaveLength(2);
  });

  it('refuses a session that waited admissionMs, with the model-visible text and an event', async () => {
    const { queue, ticket, enqueue, refused } = admissionQueue({ maxQueued: 100, admissionMs: 5_000 });
    const a1 = enqueue(ticket('a', 'a1'));
    enqueue(ticket('b', 'b1'));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(refused.size).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    const message = `no Code Mode worker became free within 5000 ms (workers.admissionMs): ${POOL}, and 1 other session waits`;
    expect(refused.get('a1')).toMatchObject({ code: 'RESPOND_TO_MODEL', message });
    expect(a1.events.at(-1)).toEqual({ type: 'runtime-refused', reason: 'wait-timeout', message, waitedMs: 5_000 });
    expect(refused.get('b1')).toMatchObject({ message: `no Code Mode worker became free within 5000 ms (workers.admissionMs): ${POOL}, and no other session waits` });
    expect(queue.size).toBe(0);
  });

  it('refuses at once a session beyond maxQueued; the ones waiting keep their places', async () => {
    const { queue, ticket, enqueue, free, refused, admitted } = admissionQueue({ maxQueued: 2, admissionMs: 60_000 });
    enqueue(ticket('a', 'a1'));
    enqueue(ticket('b', 'b1'));
    const c1 = enqueue(ticket('c', 'c1'));
    await Promise.resolve();
    const message = `no Code Mode worker is free and 2 sessions already wait for one: ${POOL}; the queue holds at most 2 sessions (workers.maxQueued)`;
    expect(refused.get('c1')).toMatchObject({ code: 'RESPOND_TO_MODEL', message });
    expect(c1.events).toEqual([{ type: 'runtime-refused', reason: 'queue-full', message, waitedMs: 0 }]);
    expect(queue.size).toBe(2);
    await free(2);
    expect(admitted.map((entry) => entry.split('@')[0])).toEqual(['a1', 'b1']);
  });

  it('with admissionMs 0 nobody waits: refused on the next turn unless a place frees at once', async () => {
    const { ticket, enqueue, refused } = admissionQueue({ maxQueued: 10, admissionMs: 0 });
    enqueue(ticket('a', 'a1'));
    await vi.advanceTimersByTimeAsync(0);
    expect(refused.get('a1')).toMatchObject({ code: 'RESPOND_TO_MODEL' });
  });

  it('a throwing listener never breaks the queue', async () => {
    const { queue, free } = admissionQueue();
    const placed = queue.wait({ tenant: 'a', urgent: false, name: 'a1', events: [], report: () => { throw new Error('host bug'); } });
    await free(1);
    await expect(placed).resolves.toBe('place0');
  });

  it('refuseAll (shutdown) rejects every waiting session and stops reporting', async () => {
    const { queue, ticket, enqueue, refused } = admissionQueue();
    enqueue(ticket('a', 'a1'));
    enqueue(ticket('x', 'lone', true));
    queue.refuseAll(new Error('shutting down'));
    await Promise.resolve();
    expect([...refused.keys()].sort()).toEqual(['a1', 'lone']);
    expect(queue.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
