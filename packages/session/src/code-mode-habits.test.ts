import { afterAll, describe, expect, it } from 'vitest';
import type { ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession } from './session';
import { configError } from '@switchyard/config/config-error';
import { outputTranscript } from '@switchyard/test-helpers';

// What a model's cells see of a failed nested call, of console and of a spinning cell, through a
// whole session (router, broker, runtime), with cells in worker processes and in this process.

const fail = defineFunctionTool({
  name: 'fail',
  description: 'Always fails.',
  parameters: { type: 'object' },
  handle: () => {
    throw new Error('disk on fire');
  },
});

/** The failure text a failed `fail()` call has reached the cell with since nested calls rejected with a bare string. */
const FAILURE = 'tool fail failed: disk on fire';

for (const isolation of ['process', 'in-process'] as const) {
  describe(`Code Mode habits through a session, cells ${isolation === 'process' ? 'in worker processes' : 'in this process'}`, () => {
    const session = createSession({
      toolMode: 'code-mode-only',
      tools: [fail],
      codeMode: { runtimeOptions: { isolation, cpuTimeMs: 300, workers: { shared: false } } },
    });
    afterAll(() => session.shutdown());
    const exec = async (code: string) => {
      const step = await session.beginTurn().step();
      return outputTranscript(await step.dispatch({ type: 'custom_tool_call', call_id: 'x1', name: 'exec', input: code }));
    };

    it('a failed nested call rejects with an Error whose message and String(e) are the failure text', async () => {
      expect(
        await exec(`try { await tools.fail() } catch (e) { text([e instanceof Error, e.message, String(e)].join(' | ')); text(String(e)); text(e?.message ?? String(e)); }`),
      ).toBe(`Script completed\nWall time …\nOutput:\n\ntrue | ${FAILURE} | ${FAILURE}\n${FAILURE}\n${FAILURE}`);
    });

    it('uncaught, a failed nested call fails the script with exactly the text it always had', async () => {
      expect(await exec(`text('before'); await tools.fail()`)).toBe(`Script failed\nWall time …\nOutput:\n\nbefore\nScript error:\n${FAILURE}`);
    });

    it('console.log / warn / error append to the output like text()', async () => {
      expect(await exec(`console.log('rows', 3, { ok: true }); text('then'); console.warn('careful'); console.error(new RangeError('bad'));`)).toBe(
        'Script completed\nWall time …\nOutput:\n\nrows 3 {"ok":true}\nthen\ncareful\nRangeError: bad',
      );
    });

    it('while (true) {} ends at the CPU time limit with a clear message', async () => {
      expect(await exec(`text('spinning'); while (true) {}`)).toBe(
        'Script failed\nWall time …\nOutput:\n\nspinning\nScript error:\nexec cell exceeded its CPU time limit of 300 ms',
      );
    });
  });
}

describe('options a Code Mode host passes are checked', () => {
  it('createSession accepts `tracer` and names it for a typo or a wrong value', async () => {
    expect(createSession({ tools: [], tracer: { startSpan: () => undefined } as never })).toBeDefined();
    expect(await configError(() => createSession({ tools: [], tracers: {} } as never))).toBe('createSession: unknown option `tracers`; did you mean `tracer`?');
    expect(await configError(() => createSession({ tools: [], tracer: 'otel' as never }))).toBe('createSession: option `tracer` must be an object; got "otel"');
  });

  it('a typo in codeMode.runtimeOptions is a CONFIG error naming it when the runtime is made (the first code-mode step)', async () => {
    const session = createSession({ toolMode: 'code-mode', tools: [], codeMode: { runtimeOptions: { cpuTimeMS: 1000 } } });
    try {
      expect(await configError(() => session.beginTurn().step())).toBe('createCodeModeRuntime: unknown option `cpuTimeMS`; did you mean `cpuTimeMs`?');
    } finally {
      await session.shutdown();
    }
  });
});
