import type { ChildProcess } from 'node:child_process';
import { createNatsRuntime } from '@switchyard/code-mode-nats';
import { startNatsServer, type NatsServer } from '@switchyard/config/nats-server';
import { CONFORMANCE_LIMITS, describeRuntimeConformance } from './conformance/runtime-conformance';
import { spawnRuntimeHost } from './nats-runtime-host';

// The NATS placement: a real nats-server and two runtime hosts, each in its own process (the crash
// case ends one of them; the next session is placed on the other).
let server: NatsServer | undefined;
const hosts: ChildProcess[] = [];

describeRuntimeConformance('NATS runtime hosts', {
  async createRuntime(overrides) {
    if (!server) {
      server = await startNatsServer();
      for (const name of ['conformance-1', 'conformance-2']) hosts.push((await spawnRuntimeHost({ servers: server.url, name })).host);
    }
    return createNatsRuntime({ servers: server.url, agentId: 'conformance', ...CONFORMANCE_LIMITS, ...overrides });
  },
  containsCrashes: true,
  async cleanup() {
    for (const host of hosts) host.kill('SIGKILL');
    await server?.stop();
  },
});
