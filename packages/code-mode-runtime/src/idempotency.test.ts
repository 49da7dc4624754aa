import { afterEach, describe, expect, it } from 'vitest';
import type { CellObservation } from '@switchyard/protocol';
import { fnDescriptor, rejection, setup } from '../test/helpers';
import { cellTexts } from '@switchyard/test-helpers';


let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe('idempotency keys (the engine, in the project isolation)', () => {
  it('a retried create repeats the answer; a different source under the same key is a new cell; a key of 257 characters is refused', async () => {
    let runs = 0;
    const env = setup({ count: () => ++runs });
    cleanup.push(() => env.runtime.shutdown());
    const create = (source: string, key: string) => env.session.createCell({ source, tools: [fnDescriptor('count')], yieldTimeMs: 10_000, idempotencyKey: key });
    const first = await create(`text('n=' + await tools.count({}))`, 'k1');
    const again = await create(`text('n=' + await tools.count({}))`, 'k1');
    expect(again.cellId).toBe(first.cellId);
    expect(cellTexts(again.observation)).toEqual(['n=1']);
    const other = await create(`text('m=' + await tools.count({}))`, 'k1');
    expect(other.cellId).not.toBe(first.cellId);
    expect(cellTexts(other.observation)).toEqual(['m=2']);
    expect(await rejection(create('1', 'x'.repeat(257)))).toEqual({ code: 'INVALID_INPUT', message: 'createCell expects `idempotencyKey` to be a string of 1-256 characters' });
  }, 60_000);

  it('a retried create whose first observation was cancelled observes that cell instead of starting another', async () => {
    let runs = 0;
    const env = setup({ count: () => ++runs });
    cleanup.push(() => env.runtime.shutdown());
    const source = `await tools.count({}); text('started'); yield_control(); text('later');`;
    const cancel = new AbortController();
    const first = env.session.createCell({ source, tools: [fnDescriptor('count')], yieldTimeMs: 10_000, idempotencyKey: 'k', signal: cancel.signal });
    cancel.abort();
    const { cellId } = (await first.catch((error: unknown) => error)) as { cellId: string };
    const retry = await env.session.createCell({ source, tools: [fnDescriptor('count')], yieldTimeMs: 10_000, idempotencyKey: 'k' });
    expect(retry.cellId).toBe(cellId);
    expect(runs).toBe(1);
    // Everything the cell wrote reaches the retry or the next observation, once.
    const rest = retry.observation.kind === 'completed' ? [] : cellTexts(await env.session.observe(cellId, { yieldTimeMs: 10_000 }));
    expect([...cellTexts(retry.observation), ...rest]).toEqual(['started', 'later']);
  }, 60_000);
});
