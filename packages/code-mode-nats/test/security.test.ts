import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, nkeys } from '@nats-io/transport-node';
import { createCodeMode } from '@switchyard/code-mode';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession } from '@switchyard/session';
import { createNatsRuntime, serveRuntimeOverNats, type NatsRuntimeHost } from '../src/index';
import { countingHost, serverErrors, startDeploymentWithHost, startHost, stopDeploymentWithHost, type Deployment } from './helpers';
import { until } from '@switchyard/test-helpers';

let deployment: Deployment;
let host: NatsRuntimeHost;
beforeAll(async () => void ({ deployment, host } = await startDeploymentWithHost('r1')), 60_000);
afterAll(() => stopDeploymentWithHost({ deployment, host }));

const tools = [{ name: 'wait_for_me', description: 'Answers when the test says so.', kind: 'function' as const }];

describe('credentials', () => {
  it('refuses a runtime host whose NKey the server does not know, and one with a wrong password', async () => {
    const stranger = new TextDecoder().decode(nkeys.createUser().getSeed());
    for (const auth of [{ nkeySeed: stranger }, { user: 'agent-a', pass: 'not-the-password' }]) {
      const failure = await startHost(deployment.server.url, auth, 'intruder').then(
        (started) => {
          void started.stop();
          return undefined;
        },
        (error: Error & { exitCode?: number }) => error,
      );
      expect(failure?.message).toMatch(/^could not connect to NATS at nats:\/\/127\.0\.0\.1:\d+: .*Authorization Violation/i);
      expect(failure?.exitCode).toBe(1);
    }
  }, 90_000);

  it('fails the cell of an agent host with wrong credentials with a clear message, and runs nothing', async () => {
    const runtime = createNatsRuntime({ servers: deployment.server.url, auth: { user: 'agent-a', pass: 'wrong' }, agentId: 'a' });
    const counting = countingHost();
    const session = runtime.openSession(counting.host);
    await expect(session.createCell({ source: `await tools.wait_for_me({})`, tools, yieldTimeMs: 10_000 })).rejects.toMatchObject({
      code: 'RESPOND_TO_MODEL',
      message: expect.stringMatching(/^could not connect to NATS at .*Authorization Violation/i),
    });
    expect(counting.calls.size).toBe(0);
    await runtime.shutdown();
  });

  it('CONFIG errors name the option', () => {
    expect(() => createNatsRuntime({ servers: [] })).toThrow(/createNatsRuntime option servers must be a NATS URL/);
    expect(() => createNatsRuntime({ servers: 'nats://127.0.0.1:1', agentId: 'a.b' })).toThrow(/createNatsRuntime option agentId must be 1-64 characters/);
    expect(() => createNatsRuntime({ servers: 'nats://127.0.0.1:1', auth: { user: 'x' } as never })).toThrow(/createNatsRuntime option auth must be/);
    expect(() => createNatsRuntime({ servers: 'nats://127.0.0.1:1', heapMb: -1 })).toThrow(/heapMb/);
    expect(() => createNatsRuntime({ servers: 'nats://127.0.0.1:1', heartbeat: { intervalMs: 0 } })).toThrow(/heartbeat.intervalMs must be a number >= 10/);
    return expect(serveRuntimeOverNats({ servers: 'nats://127.0.0.1:1', limits: { maxSessions: 0 } })).rejects.toThrow(/limits.maxSessions must be a number >= 1/);
  });
});

describe('one agent host cannot reach another agent host\'s cells', () => {
  it('the server refuses b on a\'s subjects; frames b sends on its own subjects for a\'s connection are dropped; a\'s cell completes untouched', async () => {
    // The spy learns a's subjects, as an attacker might: b is then given them.
    const spy = await connect({ servers: deployment.server.url, user: deployment.spy.user, pass: deployment.spy.pass });
    const seen: string[] = [];
    spy.subscribe('switchyard.rt.>', { callback: (_error, msg) => void seen.push(msg.subject) });
    await spy.flush();

    let release!: (value: unknown) => void;
    const gate = new Promise((resolve) => (release = resolve));
    const runtimeA = createNatsRuntime({ servers: deployment.server.url, auth: deployment.agentA, agentId: 'a', heartbeat: { intervalMs: 100 } });
    const a = countingHost(() => gate);
    const sessionA = runtimeA.openSession(a.host);
    const created = sessionA.createCell({ source: `const r = await tools.wait_for_me({}); text('a got ' + r); store('secret', 'only-a');`, tools, yieldTimeMs: 30_000 });
    await until(() => a.calls.size === 1, "a's nested call");
    const frameSubject = seen.find((subject) => /^switchyard\.rt\.[^.]+\.a\.[^.]+$/.test(subject))!;
    expect(frameSubject).toBeDefined();
    const [, , runtimeId, , connA] = frameSubject.split('.');
    const [cellId] = [...a.calls.keys()][0].split('/');

    const b = await connect({ servers: deployment.server.url, user: deployment.agentB.user, pass: deployment.agentB.pass, inboxPrefix: 'switchyard.agent.b.inbox' });
    const errors = serverErrors(b);
    // A terminate and a forged call result in a's connection's own envelope format.
    const forged = JSON.stringify([{ t: 'terminate', id: 1, session: 's1', cellId }, { t: 'call-result', call: 1, ok: true, value: 'forged' }]);
    b.publish(frameSubject, `F1 ${forged}`);
    b.publish(`switchyard.place.a`, JSON.stringify({ v: 1, conn: 'zzzz', heartbeatMs: 1000 }));
    const sub = b.subscribe('switchyard.agent.a.>', { callback: () => {} });
    await b.flush();
    await until(() => errors.length >= 3, 'three permission violations');
    expect(errors.join('\n')).toMatch(new RegExp(`Permissions Violation for Publish to "${frameSubject.replace(/\./g, '\\.')}"`));
    expect(errors.join('\n')).toMatch(/Permissions Violation for Publish to "switchyard\.place\.a"/);
    expect(errors.join('\n')).toMatch(/Permissions Violation for Subscription to "switchyard\.agent\.a\.>"/);
    sub.unsubscribe();
    // On b's own subjects (which b may use) the runtime host serves only connections b placed: dropped.
    b.publish(`switchyard.rt.${runtimeId}.b.${connA}`, `F1 ${forged}`);
    await b.flush();

    // b's own runtime works, on its own session: a's cell and stored values are not there.
    const runtimeB = createNatsRuntime({ servers: deployment.server.url, auth: deployment.agentB, agentId: 'b' });
    const sessionB = runtimeB.openSession(countingHost().host);
    const probe = await sessionB.createCell({ source: `text(String(load('secret')))`, tools: [], yieldTimeMs: 30_000 });
    expect(probe.observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'undefined' }] });
    await expect(sessionB.observe(cellId, { yieldTimeMs: 100 })).rejects.toMatchObject({ code: 'CELL_NOT_FOUND' });

    release(42);
    const { observation } = await created;
    expect(observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'a got 42' }] });
    expect(observation).not.toHaveProperty('error');
    expect([...a.calls.values()]).toEqual([1]);
    await Promise.all([runtimeA.shutdown(), runtimeB.shutdown(), b.close(), spy.close()]);
  }, 60_000);
});

describe('what another bus client sees', () => {
  it('ciphertext only: none of the tool descriptors, sources, results or secrets a cell handles, in either direction', async () => {
    const spy = await connect({ servers: deployment.server.url, user: deployment.spy.user, pass: deployment.spy.pass });
    const toRuntime: string[] = [];
    const toAgent: string[] = [];
    spy.subscribe('switchyard.rt.*.a.*', { callback: (_error, msg) => void toRuntime.push(msg.string()) });
    spy.subscribe('switchyard.agent.a.c.*.*', { callback: (_error, msg) => void toAgent.push(msg.string()) });
    await spy.flush();
    const API_KEY = 'sk-agent-host-only-7f3a';
    const vault = defineFunctionTool({
      name: 'vault',
      description: 'Reads the vault.',
      parameters: { type: 'object', properties: {} },
      async handle() {
        return { secret: `VAULT-${API_KEY.length}` };
      },
    });
    const echo = defineFunctionTool({
      name: 'echo',
      description: 'Echoes.',
      parameters: { type: 'object', properties: { v: { type: 'string' } } },
      async handle({ args }) {
        void API_KEY;
        return args;
      },
    });
    const runtime = createNatsRuntime({ servers: deployment.server.url, auth: deployment.agentA, agentId: 'a' });
    const codeMode = createCodeMode({ runtime });
    const session = createSession({ toolMode: 'code-mode-only', tools: [vault, echo], codeMode });
    const step = await session.beginTurn().step();
    const out = await step.dispatch({ type: 'custom_tool_call', call_id: 'c1', name: 'exec', input: `text(JSON.stringify(await tools.echo({ v: 'hi' })))` });
    expect(JSON.stringify(out)).toContain('{\\"v\\":\\"hi\\"}');
    // Frames went both ways (hello, open-session, create-cell, the call and its result, the completion) …
    expect(toRuntime.length).toBeGreaterThanOrEqual(3);
    expect(toAgent.length).toBeGreaterThanOrEqual(3);
    const seen = [...toRuntime, ...toAgent].join('\n');
    // … and none of them can be read: what the runtime host receives in clear (descriptors, the
    // source, the call's input and result) is sealed on the bus.
    for (const clear of ['"name":"vault"', 'Reads the vault', 'tools.echo', '"v":"hi"', '"t":"hello"', 'open-session', 'create-cell', API_KEY, 'VAULT-']) {
      expect(seen).not.toContain(clear);
    }
    await session.shutdown();
    await codeMode.shutdown();
    await runtime.shutdown();
    await spy.close();
  });
});
