import { toWireTool, type CodeModeRuntime } from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';
import { describe, expect, it } from 'vitest';
import { createCodeMode } from './index';
import { configError } from '@switchyard/config/config-error';

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
    expect(await configError(() => createCodeMode({ runtime, defaultYieldTime: 100 } as never))).toBe('createCodeMode: unknown option `defaultYieldTime`; did you mean `defaultYieldTimeMs`?');
    expect(await configError(() => createCodeMode({ runtime, yieldTimeMs: 100 } as never))).toBe('createCodeMode: unknown option `yieldTimeMs`; did you mean `maxYieldTimeMs`?');
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
    expect(await configError(() => createCodeMode({ runtime, maxYieldTimeMs: -5 }))).toBe(
      `createCodeMode: option \`maxYieldTimeMs\` must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}; got -5`,
    );
  });

  it('accepts every documented option', async () => {
    expect(typeof createCodeMode({ runtime, maxOutputTokensCap: undefined }).executors).toBe('function');
    const codeMode = createCodeMode({ runtime, defaultYieldTimeMs: 0, defaultMaxOutputTokens: 500, maxOutputTokensCap: 20_000, maxYieldTimeMs: 30_000, execHooks: false });
    expect(typeof codeMode.executors).toBe('function');
  });
});

describe('the wait tool on the wire', () => {
  it('is byte-identical to Codex\'s wait spec (description wording, property and key order)', () => {
    const [, wait] = createCodeMode({ runtime }).executors({ mode: 'code-mode-only', tools: [], hasDeferredTools: false }, createStepContext());
    expect(JSON.stringify(toWireTool(wait.spec))).toBe(
      '{"type":"function","name":"wait","description":"Waits on a yielded `exec` cell and returns new output or completion.\\n' +
        '- Use `wait` only after `exec` returns `Script running with cell ID ...`.\\n' +
        '- `cell_id` identifies the running `exec` cell to resume.\\n' +
        '- `yield_time_ms` controls how long to wait for more output before yielding again. Defaults to 10000 ms.\\n' +
        '- `max_tokens` limits how much new output this wait call returns. Defaults to 10000 tokens.\\n' +
        '- `terminate: true` stops the running cell; false or omitted waits for output.\\n' +
        '- `wait` returns only the new output since the last yield, or the final completion or termination result for that cell.\\n' +
        '- If the cell is still running, `wait` may yield again with the same `cell_id`.\\n' +
        '- If the cell has already finished, `wait` returns the completed result and closes the cell.",' +
        '"strict":false,"parameters":{"type":"object","properties":{' +
        '"cell_id":{"type":"string","description":"Identifier of the running exec cell."},' +
        '"max_tokens":{"type":"number","description":"Output token budget for this wait call. Defaults to 10000 tokens."},' +
        '"terminate":{"type":"boolean","description":"True stops the running exec cell; false or omitted waits for output."},' +
        '"yield_time_ms":{"type":"number","description":"Wait before yielding more output. Defaults to 10000 ms."}},' +
        '"required":["cell_id"],"additionalProperties":false}}',
    );
  });
});
