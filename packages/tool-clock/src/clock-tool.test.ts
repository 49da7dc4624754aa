import { describe, expect, it } from 'vitest';
import {
  fixedTimeProvider,
  isFatalError,
  toWireTool,
  type StepContext,
  type TimeProvider,
  type ToolExecutor,
  type ToolPayload,
} from '@switchyard/protocol';
import { invokeTool, testExecutor } from '@switchyard/registry/testing';
import { clockTool, formatCurrentTime } from './clock-tool';

const noArgs: ToolPayload = { kind: 'function', arguments: '' };

/** One call through the registry; resolves with the output (a fatal error rejects, as it ends the turn). */
async function clockOutput(executor: ToolExecutor, step?: Partial<StepContext>, payload: ToolPayload = noArgs) {
  const result = await invokeTool(executor, payload, { callId: 'call-1', step });
  return result.output;
}

testExecutor({ executor: clockTool({ timeProvider: fixedTimeProvider('2025-03-04T05:06:07.890Z') }), sample: {}, invalid: [{ zone: 'UTC' }] });

describe('clockTool', () => {
  it('is clock / curr_time with the reference descriptions and no parameters', () => {
    const tool = clockTool();
    expect(tool.name).toEqual({ name: 'curr_time', namespace: 'clock' });
    expect(tool.namespaceDescription).toBe('Tools for reading and waiting on time.');
    expect(toWireTool(tool.spec)).toEqual({
      type: 'function',
      name: 'curr_time',
      description: 'Return the current time in UTC.',
      strict: false,
      parameters: { type: 'object', properties: {}, additionalProperties: false },
    });
  });

  it('answers the model with the sentence and Code Mode with ISO-8601 and Unix milliseconds', async () => {
    const output = await clockOutput(clockTool({ timeProvider: fixedTimeProvider('2025-03-04T05:06:07.890Z') }));
    expect(output.success).toBe(true);
    expect(output.toResponseItem('call-1', noArgs)).toEqual({
      type: 'function_call_output',
      call_id: 'call-1',
      output: 'It is 2025-03-04 05:06:07 UTC.',
    });
    expect(output.codeModeResult(noArgs)).toEqual({ iso: '2025-03-04T05:06:07.890Z', unix_ms: Date.parse('2025-03-04T05:06:07.890Z') });
  });

  it('uses the step clock when no provider is injected, and the injected one over it', async () => {
    const step = { time: fixedTimeProvider('2001-02-03T04:05:06Z') };
    const fromStep = await clockOutput(clockTool(), step);
    expect(fromStep.codeModeResult(noArgs)).toEqual({ iso: '2001-02-03T04:05:06.000Z', unix_ms: 981173106000 });
    const injected = await clockOutput(clockTool({ timeProvider: fixedTimeProvider('1999-12-31T23:59:59Z') }), step);
    expect(injected.toResponseItem('c', noArgs)).toMatchObject({ output: 'It is 1999-12-31 23:59:59 UTC.' });
  });

  it('falls back to the system clock', async () => {
    const before = Date.now();
    const output = await clockOutput(clockTool());
    const result = output.codeModeResult(noArgs) as { unix_ms: number; iso: string };
    expect(result.unix_ms).toBeGreaterThanOrEqual(before);
    expect(result.unix_ms).toBeLessThanOrEqual(Date.now());
    expect(output.toResponseItem('c', noArgs)).toMatchObject({ output: formatCurrentTime(new Date(result.unix_ms)) });
  });

  it('accepts an async provider', async () => {
    const provider: TimeProvider = { now: async () => new Date('2030-01-01T00:00:00Z') };
    const output = await clockOutput(clockTool({ timeProvider: provider }));
    expect(output.toResponseItem('c', noArgs)).toMatchObject({ output: 'It is 2030-01-01 00:00:00 UTC.' });
  });

  it.each([
    ['a throw', { now: () => { throw new Error('ntp unreachable'); } }, 'failed to read current time: ntp unreachable'],
    ['a rejection', { now: () => Promise.reject(new Error('timeout')) }, 'failed to read current time: timeout'],
    ['an invalid date', { now: () => new Date('nope') }, 'failed to read current time: time provider returned an invalid date'],
  ] as Array<[string, TimeProvider, string]>)('turns %s of the provider into a fatal error', async (_label, provider, message) => {
    const error = await clockOutput(clockTool({ timeProvider: provider })).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(isFatalError(error)).toBe(true);
    expect((error as Error).message).toBe(message);
  });

  it('refuses a non-function payload with the reference text', async () => {
    // The registry stops a custom call before the handler (fatal INCOMPATIBLE_PAYLOAD, checked by
    // testExecutor); an executor that also declares custom payloads reaches the handler's own guard.
    const widened = { ...clockTool(), payloadKinds: ['function', 'custom'] } as const;
    const output = await clockOutput(widened, undefined, { kind: 'custom', input: 'x' });
    expect(output.success).toBe(false);
    expect(output.toResponseItem('call-1', { kind: 'custom', input: 'x' })).toMatchObject({ output: 'curr_time handler received unsupported payload' });
  });
});

describe('formatCurrentTime', () => {
  it('pads every field and drops milliseconds', () => {
    expect(formatCurrentTime(new Date('0999-01-02T03:04:05.999Z'))).toBe('It is 0999-01-02 03:04:05 UTC.');
  });
});
