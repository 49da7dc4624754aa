import { describe, expect, it } from 'vitest';
import { elapsedMs } from './elapsed';

describe('elapsedMs', () => {
  it('rounds to the microsecond, so the JSON of an event has at most three decimals', () => {
    for (let i = 0; i < 200; i++) {
      const startedAt = performance.now() - Math.random() * 100;
      const text = JSON.stringify({ durationMs: elapsedMs(startedAt) });
      expect(text).toMatch(/^\{"durationMs":\d+(\.\d{1,3})?\}$/);
    }
  });
});
