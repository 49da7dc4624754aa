import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, nkeyAuthenticator, nkeys } from '@nats-io/transport-node';
import { createNatsRuntime, serveRuntimeOverNats, type NatsRuntimeHost } from '../src/index';
import { startNatsServer, type NatsServer } from '@switchyard/config/nats-server';
import { serverErrors } from './helpers';

/**
 * The deployment of the README (N runtime hosts, M agent hosts, one identity each, scoped to its
 * own subjects) on a real nats-server with exactly that configuration: cells run; a runtime host's
 * identity cannot read another runtime host's frames nor speak on its connections; agent hosts
 * pin the runtime hosts' keys and runtime hosts pin the agent hosts'.
 */
const runtimeUser = (id: string, key: string) =>
  `{ nkey: ${key}, permissions: { publish: { allow: ["switchyard.agent.*.c.${id}.*"] }, subscribe: { allow: ["switchyard.place.*", "switchyard.rt.${id}.>"] }, allow_responses: true } }`;
const agentUser = (id: string, key: string) =>
  `{ nkey: ${key}, permissions: { publish: { allow: ["switchyard.place.${id}", "switchyard.rt.*.${id}.>"] }, subscribe: { allow: ["switchyard.agent.${id}.>"] } } }`;

const seedOf = (pair: ReturnType<typeof nkeys.createUser>) => new TextDecoder().decode(pair.getSeed());
const r1 = nkeys.createUser();
const r2 = nkeys.createUser();
const a = nkeys.createUser();
let server: NatsServer;
let hosts: NatsRuntimeHost[] = [];
beforeAll(async () => {
  server = await startNatsServer(`authorization {
  users = [
    ${runtimeUser('r1', r1.getPublicKey())}
    ${runtimeUser('r2', r2.getPublicKey())}
    ${agentUser('a', a.getPublicKey())}
  ]
}`);
  const trustedAgentHosts = { a: a.getPublicKey() };
  hosts = await Promise.all(
    [['r1', r1], ['r2', r2]].map(([id, pair]) =>
      serveRuntimeOverNats({ servers: server.url, auth: { nkeySeed: seedOf(pair as typeof r1) }, id: id as string, name: id as string, trustedAgentHosts }),
    ),
  );
}, 60_000);
afterAll(async () => {
  await Promise.all(hosts.map((host) => host.close()));
  await server?.stop();
});

describe('the README deployment: one NKey per runtime host and per agent host, each scoped to its own subjects', () => {
  it('runs cells on both runtime hosts; r1 can neither read r2\'s frames nor speak on r2\'s connections', async () => {
    const runtime = createNatsRuntime({ servers: server.url, auth: { nkeySeed: seedOf(a) }, agentId: 'a', trustedRuntimeHosts: [r1.getPublicKey(), r2.getPublicKey()] });
    const used = new Set<string>();
    for (let i = 0; i < 8 && used.size < 2; i++) {
      const session = runtime.openSession({ invokeTool: async (request: { input: unknown }) => request.input as never, notify: () => {}, cellClosed: () => {} });
      const { observation } = await session.createCell({ source: `text(String((await tools.echo({ n: ${i} })).n))`, tools: [{ name: 'echo', description: '', kind: 'function' }], yieldTimeMs: 30_000 });
      expect(observation).toMatchObject({ kind: "completed", items: [{ type: "input_text", text: String(i) }] });
      for (const host of hosts) if (host.stats().sessions > 0) used.add(host.id);
      await session.shutdown();
    }
    expect(used.size).toBeGreaterThanOrEqual(1);

    // r1's identity, as a rogue client: r2's subjects are refused by the server.
    const rogue = await connect({ servers: server.url, authenticator: nkeyAuthenticator(new TextEncoder().encode(seedOf(r1))) });
    const errors = serverErrors(rogue);
    rogue.subscribe('switchyard.rt.r2.>', { callback: () => {} });
    rogue.subscribe('switchyard.agent.>', { callback: () => {} });
    rogue.publish('switchyard.agent.a.c.r2.someconn', 'F1 []');
    await rogue.flush().catch(() => undefined);
    const end = Date.now() + 10_000;
    while (errors.length < 3 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
    const text = errors.join('\n');
    expect(text).toMatch(/Permissions Violation for Subscription to "switchyard\.rt\.r2\.>"/);
    expect(text).toMatch(/Permissions Violation for Subscription to "switchyard\.agent\.>"/);
    expect(text).toMatch(/Permissions Violation for Publish to "switchyard\.agent\.a\.c\.r2\.someconn"/);
    await rogue.close();
    await runtime.shutdown();
  }, 90_000);

  it('a runtime host refuses an agent host whose key it does not pin, naming it', async () => {
    const stranger = createNatsRuntime({ servers: server.url, auth: { nkeySeed: seedOf(a) }, agentId: 'a', identity: { seed: seedOf(nkeys.createUser()) }, placement: { attempts: 2 } });
    const session = stranger.openSession({ invokeTool: async () => 1 as never, notify: () => {}, cellClosed: () => {} });
    const error = await session.createCell({ source: `text('x')`, tools: [], yieldTimeMs: 30_000 }).then(() => 'ran', (e: Error) => e.message);
    expect(error).toMatch(/runtime host r[12] declined: agent host a signed with a key this runtime host does not trust/);
    await stranger.shutdown();
  }, 60_000);
});
