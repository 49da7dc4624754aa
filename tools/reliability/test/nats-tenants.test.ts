/**
 * A runtime host shared by two tenants (agent hosts `ta` and `tb`) on a real nats-server: tenant
 * A's model runs a one-line V8 fatal error (`"x".repeat(2 ** 28).split("")`). With the runtime
 * host's default isolation (each agent host's cells in a worker process of its own), only A's
 * cell fails, tenant B's cell that was running at that moment completes, the runtime host stays
 * up and A's next exec runs. With `isolation: 'in-process'` the same line ends the runtime host
 * and B's cell with it (the attack is real). Runtime hosts run in child processes; every cell and
 * wait is bounded.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNatsRuntime } from '@switchyard/code-mode-nats';
import type { CellHost, CellObservation, CodeModeRuntime } from '@switchyard/protocol';
import { startNatsServer, type NatsServer } from '@switchyard/config/nats-server';
import { spawnRuntimeHost } from './nats-runtime-host';

const FATAL = 'text("x".repeat(2 ** 28).split("").length)';

let server: NatsServer;
const hosts: ChildProcess[] = [];
const runtimes: CodeModeRuntime[] = [];

beforeAll(async () => {
  server = await startNatsServer();
}, 60_000);
afterAll(async () => {
  await Promise.all(runtimes.map((runtime) => runtime.shutdown()));
  for (const host of hosts) host.kill('SIGKILL');
  await server?.stop();
});

/** An agent host `agentId` placing on the runtime host of `queue`; its `slow` tool answers when `release` is called. */
function natsTenant(agentId: string, queue: string) {
  const runtime = createNatsRuntime({ servers: server.url, agentId, subjectPrefix: queue, placement: { attempts: 20 } });
  runtimes.push(runtime);
  let called!: () => void;
  const slowCalled = new Promise<void>((resolve) => (called = resolve));
  let release!: (value: number) => void;
  const released = new Promise<number>((resolve) => (release = resolve));
  const host: CellHost = {
    invokeTool: async () => {
      called();
      return released;
    },
    notify: () => {},
    cellClosed: () => {},
  };
  const session = runtime.openSession(host);
  const tools = [{ name: 'slow', description: 'Answers when the test says so.', kind: 'function' as const }];
  const run = (source: string) => session.createCell({ source, tools, yieldTimeMs: 90_000 }).then((created) => created.observation);
  return { run, slowCalled, release };
}

const itemsJson = (observation: CellObservation) => JSON.stringify(observation.items);

async function sharedHost(queue: string, isolation: 'process' | 'in-process'): Promise<ChildProcess> {
  const { host } = await spawnRuntimeHost({ servers: server.url, subjectPrefix: queue, name: `shared-${isolation}`, isolation, workers: isolation === 'process' ? { max: 4 } : undefined });
  hosts.push(host);
  return host;
}

describe('a tenant\'s V8 fatal error on a shared runtime host', () => {
  it('with worker isolation (the default) costs only that tenant\'s cell: the other tenant\'s running cell completes, the host stays up', async () => {
    const host = await sharedHost('wk', 'process');
    const a = natsTenant('ta', 'wk');
    const b = natsTenant('tb', 'wk');
    // B's cell is running (waiting on its nested call) when A's cell crashes V8.
    const bCell = b.run('const n = await tools.slow({}); text("b done " + n)');
    await b.slowCalled;
    const crashed = await a.run(FATAL);
    expect(crashed.kind).toBe('completed');
    expect(crashed.kind === 'completed' && crashed.error).toMatch(/^exec runtime ended unexpectedly: the runtime worker (crashed|was killed|exceeded)/);
    b.release(42);
    const finished = await bCell;
    expect(finished).toMatchObject({ kind: 'completed' });
    expect(finished.kind === 'completed' && finished.error).toBeFalsy();
    expect(itemsJson(finished)).toContain('b done 42');
    expect(host.exitCode).toBeNull();
    expect(host.signalCode).toBeNull();
    // A's next exec gets a fresh worker.
    const again = await a.run('text("a again")');
    expect(itemsJson(again)).toContain('a again');
  }, 180_000);

  it('with isolation: in-process the same line ends the runtime host and the other tenant\'s cell with it', async () => {
    const host = await sharedHost('ip', 'in-process');
    const exited = new Promise<void>((resolve) => host.once('exit', () => resolve()));
    const a = natsTenant('ta2', 'ip');
    const b = natsTenant('tb2', 'ip');
    const bCell = b.run('const n = await tools.slow({}); text("b done " + n)');
    await b.slowCalled;
    const crashed = await a.run(FATAL);
    expect(crashed.kind === 'completed' && crashed.error).toMatch(/^exec runtime ended unexpectedly: runtime host shared-in-process/);
    await exited;
    b.release(42);
    const lost = await bCell;
    expect(lost.kind === 'completed' && lost.error).toMatch(/^exec runtime ended unexpectedly: runtime host shared-in-process/);
  }, 180_000);
});
