import { describe, expect, it } from 'vitest';
import { createStepContext } from '@switchyard/kit';
import { ToolCallRuntime } from './tool-call-runtime';
import { concurrencyProbe, functionCall, routerSetup } from '../test/support';

describe('ToolCallRuntime: admission control', () => {
  it('never runs more than maxConcurrentCalls at once; the rest queue and all answer, in call order', async () => {
    const { tool, seen } = concurrencyProbe();
    const { router } = routerSetup([tool]);
    const runtime = new ToolCallRuntime({ router, step: createStepContext(), maxConcurrentCalls: 4 });
    const results = await Promise.all(Array.from({ length: 40 }, (_, index) => runtime.handleItem(functionCall('probe', {}, `p${index}`))));
    expect(seen.peak).toBe(4);
    expect(results.map((result) => result?.item.call_id)).toEqual(Array.from({ length: 40 }, (_, index) => `p${index}`));
    expect(results.every((result) => result?.success === true)).toBe(true);
  });

  it('defaults to 16; an invalid cap is a CONFIG error naming the option', async () => {
    const { tool, seen } = concurrencyProbe();
    const { runtime } = routerSetup([tool]);
    await Promise.all(Array.from({ length: 50 }, (_, index) => runtime.handleItem(functionCall('probe', {}, `d${index}`))));
    expect(seen.peak).toBe(16);
    const { router } = routerSetup([tool]);
    expect(() => new ToolCallRuntime({ router, step: createStepContext(), maxConcurrentCalls: 0 })).toThrow(
      'ToolCallRuntime: option `maxConcurrentCalls` must be an integer of at least 1 (or Infinity); got 0',
    );
  });
});
