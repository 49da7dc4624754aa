import { describe, expect, it } from 'vitest';
import { DEFAULT_CPU_TIME_MS, createCodeModeRuntime } from './index';
import { createRemoteRuntime } from './protocol-entry';
import { createTestHost, isolation, recordingPlacement } from '../test/helpers';
import { configError } from '@switchyard/config/config-error';

describe('runtime options are strict', () => {
  it('createCodeModeRuntime names an unknown option and the closest valid one, workers.* included', async () => {
    expect(await configError(() => createCodeModeRuntime({ cpuTimeMS: 5 } as never))).toBe('createCodeModeRuntime: unknown option `cpuTimeMS`; did you mean `cpuTimeMs`?');
    expect(await configError(() => createCodeModeRuntime({ heap: 64 } as never))).toBe('createCodeModeRuntime: unknown option `heap`; did you mean `heapMb`?');
    expect(await configError(() => createCodeModeRuntime({ workers: { maxWorkers: 4 } } as never))).toBe(
      'createCodeModeRuntime: unknown option `workers.maxWorkers`; did you mean `workers.max`?',
    );
    expect(await configError(() => createCodeModeRuntime({ isolate: 'process' } as never))).toBe('createCodeModeRuntime: unknown option `isolate`; did you mean `isolation`?');
  });

  it('createCodeModeRuntime names an invalid value', async () => {
    expect(await configError(() => createCodeModeRuntime({ isolation: 'in_process' as never }))).toBe(
      'createCodeModeRuntime: option `isolation` must be one of "process", "in-process"; got "in_process" (did you mean "in-process"?)',
    );
    expect(await configError(() => createCodeModeRuntime({ cpuTimeMs: true as never }))).toBe('createCodeModeRuntime: option `cpuTimeMs` must be a number ≥ 1 or false; got true');
    expect(await configError(() => createCodeModeRuntime({ heapMb: '64' as never }))).toBe('createCodeModeRuntime: option `heapMb` must be a number ≥ 8; got "64"');
    expect(await configError(() => createCodeModeRuntime({ storedValues: 'no' as never }))).toBe('createCodeModeRuntime: option `storedValues` must be a boolean; got "no"');
    expect(await configError(() => createCodeModeRuntime({ workers: { prewarm: 1 as never } }))).toBe('createCodeModeRuntime: option `workers.prewarm` must be a boolean; got 1');
    expect(await configError(() => createCodeModeRuntime({ workers: 4 as never }))).toBe('createCodeModeRuntime: option `workers` must be an object; got 4');
    expect(await configError(() => createCodeModeRuntime(null as never))).toBe('createCodeModeRuntime: options must be an object; got null');
  });

  it('createRemoteRuntime: the same limits, a required placement, unknown keys named', async () => {
    const { placement } = recordingPlacement();
    expect(await configError(() => createRemoteRuntime({ placement, maxCell: 3 } as never))).toBe('createRemoteRuntime: unknown option `maxCell`; did you mean `maxCells`?');
    expect(await configError(() => createRemoteRuntime({ placement, isolation: 'process' } as never))).toMatch(/^createRemoteRuntime: unknown option `isolation`; the options are /);
    expect(await configError(() => createRemoteRuntime({} as never))).toBe('createRemoteRuntime: option `placement` is required');
    expect(await configError(() => createRemoteRuntime({ placement: {} as never }))).toBe('createRemoteRuntime: option `placement` must be a RuntimePlacement (an object with acquire())');
    expect(await configError(() => createRemoteRuntime({ placement, wallTimeMs: 0 }))).toBe('createRemoteRuntime: option `wallTimeMs` must be a number ≥ 1 or false; got 0');
  });
});

describe('the default CPU time limit', () => {
  it('is applied when cpuTimeMs is not set: the runtime sends 60,000 ms with the session', async () => {
    expect(DEFAULT_CPU_TIME_MS).toBe(60_000);
    const { placement, sent } = recordingPlacement();
    const runtime = createRemoteRuntime({ placement });
    try {
      const session = runtime.openSession(createTestHost().host);
      const { observation } = await session.createCell({ source: `text('ok')`, tools: [], yieldTimeMs: 10_000 });
      expect(observation).toMatchObject({ kind: 'completed', items: [{ text: 'ok' }] });
      const opened = sent.find((message) => (message as { t: string }).t === 'open-session') as { options: { cpuTimeMs?: number } };
      expect(opened.options.cpuTimeMs).toBe(DEFAULT_CPU_TIME_MS);
    } finally {
      await runtime.shutdown();
    }
  });

  it('stops while (true) {} with a clear message (a lowered limit, default options otherwise)', async () => {
    const runtime = createCodeModeRuntime({ isolation, cpuTimeMs: 200 });
    try {
      const session = runtime.openSession(createTestHost().host);
      const { observation } = await session.createCell({ source: `text('spinning'); while (true) {}`, tools: [], yieldTimeMs: 30_000 });
      expect(observation).toMatchObject({ kind: 'completed', items: [{ text: 'spinning' }], error: 'exec cell exceeded its CPU time limit of 200 ms' });
      // well before the yield time: the limit ended it, not the observer
      expect(observation.wallTimeMs).toBeLessThan(30_000);
    } finally {
      await runtime.shutdown();
    }
  });
});
