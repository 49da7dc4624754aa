import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createRemoteRuntime } from './process-runtime';
import type { RuntimeLease, RuntimePlacement, RuntimeSink } from './remote-session';
import { connectRuntime } from './runtime-client';
import { createStreamTransport } from './protocol';
import { serveRuntime } from './runtime-server';
import { createTestHost } from '../test/helpers';

/** A placement onto an in-process runtime server; `lose` decides whether to report the link lost before resolving. */
function inProcessPlacement(lose: (attempt: number) => string | undefined) {
  let attempts = 0;
  const released: number[] = [];
  const placement: RuntimePlacement = {
    async acquire(sink: RuntimeSink): Promise<RuntimeLease> {
      const attempt = ++attempts;
      const toRuntime = new PassThrough();
      const toHost = new PassThrough();
      serveRuntime({ transport: createStreamTransport({ readable: toRuntime, writable: toHost, maxFrameBytes: 1 << 20 }), maxFrameBytes: 1 << 20 });
      const client = await connectRuntime({
        transport: createStreamTransport({ readable: toHost, writable: toRuntime, maxFrameBytes: 1 << 20 }),
        maxFrameBytes: 1 << 20,
        onEvent: (message) => sink.onEvent(message),
        onLost: (cause) => sink.onLost(cause),
      });
      // The link ends after its handshake, before this acquisition has resolved.
      const cause = lose(attempt);
      if (cause !== undefined) sink.onLost(cause);
      return { client, key: `s${attempt}`, hold: () => () => {}, release: () => released.push(attempt) };
    },
  };
  return { placement, released };
}

describe('a remote placement', () => {
  it('that reports its link lost before the lease arrives fails that exec with the cause; the lease is given back and the next cell runs', async () => {
    const { placement, released } = inProcessPlacement((attempt) => (attempt === 1 ? 'the connection to runtime host h1 closed' : undefined));
    const runtime = createRemoteRuntime({ placement });
    const session = runtime.openSession(createTestHost().host);
    try {
      await expect(session.createCell({ source: 'text("first")', tools: [], yieldTimeMs: 10_000 })).rejects.toThrow(
        /^exec runtime failed to start: the connection to runtime host h1 closed$/,
      );
      expect(released).toEqual([1]);
      const { observation } = await session.createCell({ source: 'text("second")', tools: [], yieldTimeMs: 10_000 });
      expect(observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'second' }] });
    } finally {
      await runtime.shutdown();
    }
  });
});
