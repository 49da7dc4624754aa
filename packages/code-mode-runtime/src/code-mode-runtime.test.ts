import { isSwitchyardError } from '@switchyard/protocol';
import { expect, it } from 'vitest';
import { createCodeModeRuntime } from './code-mode-runtime';

it('rejects invalid limits with a CONFIG error naming the option', () => {
  for (const options of [{ heapMb: 4 }, { maxCells: 0 }, { cpuTimeMs: Number.NaN }, { maxOutputBytes: -1 }, { maxTimers: 0 }]) {
    let caught: unknown;
    try {
      createCodeModeRuntime(options);
    } catch (error) {
      caught = error;
    }
    expect(isSwitchyardError(caught) && caught.code).toBe('CONFIG');
    expect((caught as Error).message).toContain(Object.keys(options)[0]);
  }
});

it('refuses a host without invokeTool', () => {
  const runtime = createCodeModeRuntime();
  expect(() => runtime.openSession({} as never)).toThrow('openSession expects a CellHost');
});
