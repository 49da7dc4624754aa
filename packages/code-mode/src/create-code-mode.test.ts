import type { CodeModeRuntime } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { createCodeMode } from './index';
import { configError } from '../../../tools/config/config-error.ts';

const runtime: CodeModeRuntime = {
  openSession: () => {
    throw new Error('not used');
  },
  shutdown: async () => {},
};

describe('createCodeMode options are strict', () => {
  it('names an unknown option and the closest valid one', async () => {
    expect(await configError(() => createCodeMode({ runtime, maxOutputTokenCap: 100 } as never))).toBe(
      'createCodeMode: unknown option `maxOutputTokenCap`; did you mean `maxOutputTokensCap`?',
    );
    expect(await configError(() => createCodeMode({ runtime, yieldTimeMs: 100 } as never))).toBe('createCodeMode: unknown option `yieldTimeMs`; did you mean `defaultYieldTimeMs`?');
    expect(await configError(() => createCodeMode({ runtimeOptions: {} } as never))).toBe('createCodeMode: unknown option `runtimeOptions`; did you mean `runtime`?');
  });

  it('names an invalid value', async () => {
    expect(await configError(() => createCodeMode({} as never))).toBe('createCodeMode: option `runtime` is required');
    expect(await configError(() => createCodeMode({ runtime: { isolation: 'process' } as never }))).toBe(
      'createCodeMode: option `runtime` must be a CodeModeRuntime (e.g. `createCodeModeRuntime()` from @switchyard/code-mode-runtime)',
    );
    expect(await configError(() => createCodeMode({ runtime, defaultYieldTimeMs: -1 }))).toBe(
      `createCodeMode: option \`defaultYieldTimeMs\` must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}; got -1`,
    );
    expect(await configError(() => createCodeMode({ runtime, maxOutputTokensCap: 0 }))).toBe('createCodeMode: option `maxOutputTokensCap` must be an integer ≥ 1; got 0');
    expect(await configError(() => createCodeMode({ runtime, execHooks: 'no' as never }))).toBe('createCodeMode: option `execHooks` must be a boolean; got "no"');
  });

  it('accepts every documented option', async () => {
    expect(typeof createCodeMode({ runtime, maxOutputTokensCap: undefined }).executors).toBe('function');
    const codeMode = createCodeMode({ runtime, defaultYieldTimeMs: 0, defaultMaxOutputTokens: 500, maxOutputTokensCap: 20_000, execHooks: false });
    expect(typeof codeMode.executors).toBe('function');
  });
});
