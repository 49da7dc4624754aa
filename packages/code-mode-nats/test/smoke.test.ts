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
