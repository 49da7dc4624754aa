import { describe, expect, it } from 'vitest';
import { hasErrorCode } from '@switchyard/protocol';
import { ReadWriteGate } from './read-write-gate';

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('ReadWriteGate', () => {
  it('lets shared holders in together and keeps an exclusive request waiting for all of them', async () => {
    const gate = new ReadWriteGate();
    const first = await gate.acquire('shared');
    const second = await gate.acquire('shared');
    let exclusiveIn = false;
    const exclusive = gate.acquire('exclusive').then((release) => {
      exclusiveIn = true;
      return release;
    });
    first();
    await flush();
    expect(exclusiveIn).toBe(false);
    second();
    (await exclusive)();
    expect(exclusiveIn).toBe(true);
  });

  it('is fair: a shared request behind a queued exclusive one waits for it', async () => {
    const gate = new ReadWriteGate();
    const order: string[] = [];
    const holder = await gate.acquire('shared');
    const exclusive = gate.acquire('exclusive').then((release) => {
      order.push('exclusive');
      return release;
    });
    const shared = gate.acquire('shared').then((release) => {
      order.push('shared');
      return release;
    });
    await flush();
    expect(order).toEqual([]);
    holder();
    const releaseExclusive = await exclusive;
    await flush();
    expect(order).toEqual(['exclusive']);
    releaseExclusive();
    (await shared)();
    expect(order).toEqual(['exclusive', 'shared']);
  });

  it('drops an aborted waiter from the queue and lets the next one in', async () => {
    const gate = new ReadWriteGate();
    const holder = await gate.acquire('exclusive');
    const controller = new AbortController();
    const aborted = gate.acquire('exclusive', controller.signal);
    const next = gate.acquire('shared');
    controller.abort();
    await expect(aborted).rejects.toSatisfy((error: unknown) => hasErrorCode(error, 'ABORTED'));
    holder();
    const release = await next;
    release();
    release(); // idempotent
    (await gate.acquire('exclusive'))();
    await expect(gate.acquire('shared', AbortSignal.abort())).rejects.toSatisfy((error: unknown) => hasErrorCode(error, 'ABORTED'));
  });
});
