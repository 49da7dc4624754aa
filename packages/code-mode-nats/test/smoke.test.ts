import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNatsRuntime, serveRuntimeOverNats, type NatsRuntimeHost } from '../src/index';
import { countingHost, startDeployment, type Deployment } from './helpers';

let deployment: Deployment;
let host: NatsRuntimeHost;
beforeAll(async () => {
  deployment = await startDeployment();
  host = await serveRuntimeOverNats({ servers: deployment.server.url, auth: { nkeySeed: deployment.runtimeSeed }, name: 'in-test' });
});
afterAll(async () => {
  await host?.close();
  await deployment?.server.stop();
});

describe('smoke', () => {
  it('runs a cell with nested calls and stored values', async () => {
    const runtime = createNatsRuntime({ servers: deployment.server.url, auth: deployment.agentA, agentId: 'a' });
    const counting = countingHost((tool, input) => ({ tool, input }));
    const session = runtime.openSession(counting.host);
    const tools = [{ name: 'echo', description: 'Echo.', kind: 'function' as const }];
    const first = await session.createCell({ source: `const r = await tools.echo({ n: 1 }); store('k', r); text(JSON.stringify(r));`, tools, yieldTimeMs: 30_000 });
    expect(first.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: '{"tool":"echo","input":{"n":1}}' }] });
    const second = await session.createCell({ source: `text(JSON.stringify(load('k')))`, tools, yieldTimeMs: 30_000 });
    expect(second.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: '{"tool":"echo","input":{"n":1}}' }] });
    expect([...counting.calls.values()]).toEqual([1]);
    await runtime.shutdown();
  });
});

describe('a runtime host decides its limits', () => {
  it('caps what a session asks for (no CPU limit asked, 500 ms given) and declines sessions beyond maxSessions', async () => {
    const prefix = 'capped';
    const spy = { user: deployment.spy.user, pass: deployment.spy.pass };
    const capped = await serveRuntimeOverNats({ servers: deployment.server.url, auth: spy, subjectPrefix: prefix, name: 'small', limits: { cpuTimeMs: 500, maxSessions: 1 } });
    const runtime = createNatsRuntime({ servers: deployment.server.url, auth: spy, subjectPrefix: prefix, cpuTimeMs: false, placement: { attempts: 2, timeoutMs: 5_000 } });
    try {
      const first = runtime.openSession(countingHost().host);
      const spin = await first.createCell({ source: `for (;;) {}`, tools: [], yieldTimeMs: 60_000 });
      expect(spin.observation).toMatchObject({ kind: 'completed', error: 'exec cell exceeded its CPU time limit of 500 ms' });
      // The first session still holds its placement (sticky): a second one finds the host full.
      const hold = first.createCell({ source: `yield_control(); await new Promise(() => {})`, tools: [], yieldTimeMs: 60_000 });
      await hold;
      expect(capped.stats()).toEqual({ connections: 1, sessions: 1 });
      const second = runtime.openSession(countingHost().host);
      await expect(second.createCell({ source: `text('x')`, tools: [], yieldTimeMs: 60_000 })).rejects.toThrow(
        /^exec runtime failed to start: no runtime host accepted the session after 2 placement request\(s\) on capped\.place\.\w+ \(runtime host small declined: runtime host is full \(1 of 1 sessions\)\)$/,
      );
    } finally {
      await runtime.shutdown();
      await capped.close();
    }
  });
});
