import { describe, expect, it } from 'vitest';
import { createNatsRuntime, serveRuntimeOverNats } from '../src/index';
import { configError } from '@switchyard/config/config-error';
import { RUNTIME_HOST_CAPS, type EngineSessionOptions } from '@switchyard/code-mode-runtime/protocol';
import { capped } from '../src/runtime-host';

// Nothing here connects: every option is checked before the first connection.
const servers = 'nats://127.0.0.1:1';

describe('createNatsRuntime options are strict', () => {
  it('names an unknown option and the closest valid one, nested ones and the engine limits included', async () => {
    expect(await configError(() => createNatsRuntime({ servers, server: servers } as never))).toBe('createNatsRuntime: unknown option `server`; did you mean `servers`?');
    expect(await configError(() => createNatsRuntime({ servers, heartbeat: { interval: 5 } } as never))).toBe(
      'createNatsRuntime: unknown option `heartbeat.interval`; did you mean `heartbeat.intervalMs`?',
    );
    expect(await configError(() => createNatsRuntime({ servers, placement: { attempt: 2 } } as never))).toBe(
      'createNatsRuntime: unknown option `placement.attempt`; did you mean `placement.attempts`?',
    );
    expect(await configError(() => createNatsRuntime({ servers, cpuTimeMS: 5 } as never))).toBe('createNatsRuntime: unknown option `cpuTimeMS`; did you mean `cpuTimeMs`?');
    expect(await configError(() => createNatsRuntime({ servers, workers: { max: 2 } } as never))).toMatch(/^createNatsRuntime: unknown option `workers`; /);
  });

  it('names an invalid value', async () => {
    expect(await configError(() => createNatsRuntime({ servers, heapMb: 4 }))).toBe('createNatsRuntime: option `heapMb` must be a number ≥ 8; got 4');
    expect(await configError(() => createNatsRuntime({ servers, cpuTimeMs: 'none' as never }))).toBe('createNatsRuntime: option `cpuTimeMs` must be a number ≥ 1 or false; got "none"');
    expect(await configError(() => createNatsRuntime({ servers, name: 7 as never }))).toBe('createNatsRuntime: option `name` must be a string; got 7');
    expect(await configError(() => createNatsRuntime({ servers, tls: 'yes' as never }))).toBe('createNatsRuntime: option `tls` must be an object; got "yes"');
    expect(await configError(() => createNatsRuntime({ servers, placement: { timeoutMs: 0 } }))).toBe('createNatsRuntime option placement.timeoutMs must be a number >= 1 (got 0)');
    expect(await configError(() => createNatsRuntime({ servers, placement: { dropMs: -1 } }))).toBe('createNatsRuntime option placement.dropMs must be a number >= 0 (got -1)');
    expect(await configError(() => createNatsRuntime({} as never))).toBe('createNatsRuntime: option `servers` is required');
  });
});

describe('serveRuntimeOverNats options are strict', () => {
  it('names an unknown option and the closest valid one, limits.* included', async () => {
    expect(await configError(() => serveRuntimeOverNats({ servers, queueGroup: 'q' } as never))).toBe('serveRuntimeOverNats: unknown option `queueGroup`; did you mean `queue`?');
    expect(await configError(() => serveRuntimeOverNats({ servers, limits: { maxSession: 3 } } as never))).toBe(
      'serveRuntimeOverNats: unknown option `limits.maxSession`; did you mean `limits.maxSessions`?',
    );
    expect(await configError(() => serveRuntimeOverNats({ servers, onClose: () => {} } as never))).toBe('serveRuntimeOverNats: unknown option `onClose`; did you mean `onClosed`?');
    expect(await configError(() => serveRuntimeOverNats({ servers, workers: { maxWorkers: 3 } } as never))).toBe('serveRuntimeOverNats: unknown option `workers.maxWorkers`; did you mean `workers.max`?');
  });

  it('names an invalid value', async () => {
    expect(await configError(() => serveRuntimeOverNats({ servers, onClosed: 'log' as never }))).toBe('serveRuntimeOverNats: option `onClosed` must be a function; got "log"');
    expect(await configError(() => serveRuntimeOverNats({ servers, limits: { heapMb: 2 } }))).toBe('serveRuntimeOverNats option limits.heapMb must be a number >= 8 (got 2)');
    expect(await configError(() => serveRuntimeOverNats({ servers, isolation: 'thread' as never }))).toBe("serveRuntimeOverNats option isolation must be 'process' or 'in-process' (got thread)");
    expect(await configError(() => serveRuntimeOverNats({ servers, workers: { max: 0 } }))).toBe('code mode runtime option workers.max must be a number >= 1 (got 0)');
    expect(await configError(() => serveRuntimeOverNats({ servers, isolation: 'in-process', workers: { max: 2 } }))).toBe("serveRuntimeOverNats option workers needs isolation: 'process'");
  });
});

describe("a runtime host's caps come from the runtime's limits table", () => {
  it('takes a cap on every limit a runtime holds, each checked and named (no list of its own)', async () => {
    expect([...RUNTIME_HOST_CAPS.names]).toEqual(['heapMb', 'cpuTimeMs', 'wallTimeMs', 'maxCells', 'maxInFlightCalls', 'maxInFlightArgumentChars', 'maxOutputBytes', 'maxOutputItems', 'maxTimers', 'maxStoredBytes']);
    for (const name of RUNTIME_HOST_CAPS.names) {
      expect(await configError(() => serveRuntimeOverNats({ servers, limits: { [name]: -1 } }))).toMatch(new RegExp(`^serveRuntimeOverNats option limits\\.${name} must be a number >= \\d+ \\(got -1\\)$`));
    }
    expect(await configError(() => serveRuntimeOverNats({ servers, limits: { maxTimer: 5 } } as never))).toBe(
      'serveRuntimeOverNats: unknown option `limits.maxTimer`; did you mean `limits.maxTimers`?',
    );
  });

  it('caps every limit a runtime holds of an open-session asking for the most (defaults: the limits table\'s)', () => {
    const asked = { ...Object.fromEntries(RUNTIME_HOST_CAPS.names.map((name) => [name, 1e12])), maxStoredKeys: 1e12, storedValues: true } as unknown as EngineSessionOptions;
    const caps = RUNTIME_HOST_CAPS.fill({ wallTimeMs: 1_000 }, (value) => value as number);
    const session = capped(asked, { caps } as never);
    expect(Object.keys(session).sort()).toEqual([...RUNTIME_HOST_CAPS.names, 'storedValues'].sort());
    for (const name of RUNTIME_HOST_CAPS.names) expect(session[name], name).toBe(caps[name]);
    // one default per limit: the host's cap on argument characters is the runtime's default (2 × the value size limit), not a second figure
    expect(session.maxInFlightArgumentChars).toBe(32 * 1024 * 1024);
  });
});
