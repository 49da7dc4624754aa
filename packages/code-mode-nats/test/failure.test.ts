import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { createNatsRuntime, serveRuntimeOverNats, type NatsRuntimeHost } from '../src/index';
import { countingHost, startDeployment, startHost, type Deployment, type HostProcess } from './helpers';
import { sleep } from '@switchyard/test-helpers';

let deployment: Deployment;
beforeAll(async () => {
  deployment = await startDeployment();
}, 60_000);
afterAll(async () => {
  await deployment?.server.stop();
});

const tools = [{ name: 'tick', description: 'Takes 50 ms.', kind: 'function' as const }];

describe('a silent runtime host (stopped, or cut off)', () => {
  it('is detected within interval + timeout; its cell is replayed on a live host and completes, the next cell goes there too, and the old host runs no call after it was lost', async () => {
    const hosts: HostProcess[] = [];
    try {
      hosts.push(await startHost(deployment.server.url, { nkeySeed: deployment.runtimeSeed }, 'quiet'));
      const runtime = createNatsRuntime({
        servers: deployment.server.url,
        auth: deployment.agentA,
        agentId: 'a',
        heartbeat: { intervalMs: 200, timeoutMs: 5_000 },
        placement: { timeoutMs: 5_000, attempts: 20 },
      });
      let lostAt = 0;
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      // After its third call the cell waits until its host is stopped: it is mid-run when that happens.
      const counting = countingHost(async () => {
        if (counting.calls.size > 3) await stopped;
        await sleep(50);
        return 1;
      });
      const events: Array<{ type: string; cause?: string }> = [];
      counting.host.runtimeEvent = (event: unknown) => {
        events.push(event as { type: string });
        if ((event as { type: string }).type === 'runtime-lost') lostAt = Date.now();
      };
      const session = runtime.openSession(counting.host);
      await session.createCell({ source: `store('v', 'kept')`, tools, yieldTimeMs: 30_000 });
      // The only host so far: the session sits on it. A second host joins, then the first goes silent.
      const running = session.createCell({ source: `let n = 0; for (let i = 0; i < 30; i++) n += await tools.tick({}); text('ticks ' + n)`, tools, yieldTimeMs: 120_000 });
      while (counting.calls.size < 3) await sleep(20);
      hosts.push(await startHost(deployment.server.url, { nkeySeed: deployment.runtimeSeed }, 'alive'));
      const stoppedAt = Date.now();
      process.kill(hosts[0].pid, 'SIGSTOP');
      stop();
      const { observation } = await running;
      // Replayed on the live host from its journal: the calls made before the loss were not made again.
      expect(observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'ticks 30' }] });
      expect(observation.kind === 'completed' && observation.error).toBeFalsy();
      // The documented bound is interval + timeout (5.2 s); a loaded machine gets a generous margin.
      expect(lostAt - stoppedAt).toBeLessThan(30_000);
      expect(events).toMatchObject([
        { type: 'runtime-lost', cause: 'runtime host quiet stopped answering (no reply to a heartbeat for 5000 ms)' },
        { type: 'cell-resumed', cause: 'runtime host quiet stopped answering (no reply to a heartbeat for 5000 ms)', attempt: 1, alone: false },
      ]);
      expect(counting.calls.size).toBe(30);
      const callsAtLoss = counting.calls.size;

      // The stopped host still holds its queue-group subscription: placement asks again until a live host answers.
      const next = await session.createCell({ source: `text(load('v'))`, tools, yieldTimeMs: 30_000 });
      expect(next.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'kept' }] });

      // Woken up, the old host learns its connection was closed: its cell makes no further call here.
      process.kill(hosts[0].pid, 'SIGCONT');
      await sleep(1_500);
      expect(counting.calls.size).toBe(callsAtLoss);
      for (const n of counting.calls.values()) expect(n).toBe(1);
      expect(lostAt).toBeGreaterThan(0);
      await runtime.shutdown();
    } finally {
      for (const host of hosts) {
        process.kill(host.pid, 'SIGCONT');
        await host.stop();
      }
    }
  }, 120_000);
});

describe('frames on the wire', () => {
  let host: NatsRuntimeHost;
  beforeAll(async () => {
    host = await serveRuntimeOverNats({ servers: deployment.server.url, auth: { nkeySeed: deployment.runtimeSeed }, name: 'r1' });
  });
  afterAll(() => host?.close());

  it('carries frames bigger than the server\'s max_payload (1 MiB here) in chunks: a 3 MB output and a 2 MB stored value', async () => {
    const runtime = createNatsRuntime({ servers: deployment.server.url, auth: deployment.agentA, agentId: 'a' });
    const session = runtime.openSession(countingHost().host);
    const first = await session.createCell({ source: `store('big', 'y'.repeat(2_000_000)); text('x'.repeat(3_000_000))`, tools, yieldTimeMs: 30_000 });
    expect(first.observation.kind).toBe('completed');
    expect((first.observation.items[0] as { text: string }).text.length).toBe(3_000_000);
    const second = await session.createCell({ source: `text(String(load('big').length))`, tools, yieldTimeMs: 30_000 });
    expect(second.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: '2000000' }] });
    await runtime.shutdown();
  });

  it('a duplicated (or lost) frame ends only its connection, clearly; its cell is replayed on a new one, the next cell too', async () => {
    const spy = await connect({ servers: deployment.server.url, user: deployment.spy.user, pass: deployment.spy.pass });
    const frames: Array<{ subject: string; data: Uint8Array }> = [];
    spy.subscribe('switchyard.agent.a.c.*.*', { callback: (_error, msg) => void frames.push({ subject: msg.subject, data: msg.data.slice() }) });
    await spy.flush();
    const runtime = createNatsRuntime({ servers: deployment.server.url, auth: deployment.agentA, agentId: 'a' });
    let lost!: () => void;
    const linkLost = new Promise<void>((resolve) => (lost = resolve));
    // The call in flight answers once its connection was lost: the cell's replay on the new connection joins it.
    const counting = countingHost(async () => {
      await linkLost;
      return 1;
    });
    counting.host.runtimeEvent = (event: unknown) => {
      counting.events.push(event);
      if ((event as { type: string }).type === 'runtime-lost') lost();
    };
    const session = runtime.openSession(counting.host);
    const running = session.createCell({ source: `text('ticked ' + await tools.tick({}))`, tools, yieldTimeMs: 60_000 });
    while (counting.calls.size < 1) await sleep(20);
    // The runtime host's first frame (its hello, sealed) delivered a second time: it opens, but its sequence number is old.
    spy.publish(frames[0].subject, frames[0].data);
    const { observation } = await running;
    expect(observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'ticked 1' }] });
    expect(observation.kind === 'completed' && observation.error).toBeFalsy();
    expect(counting.events).toMatchObject([
      { type: 'runtime-lost', cause: expect.stringMatching(/^a frame from runtime host r1 was replayed \(expected frame \d+, got 1\)$/) },
      { type: 'cell-resumed', attempt: 1 },
    ]);
    const next = await session.createCell({ source: `text('fine')`, tools, yieldTimeMs: 30_000 });
    expect(next.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'fine' }] });
    expect([...counting.calls.values()]).toEqual([1]);
    await Promise.all([runtime.shutdown(), spy.close()]);
  });
});
