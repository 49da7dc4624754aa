import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNatsRuntime } from '@switchyard/code-mode-nats';
import { nkeys } from '@nats-io/transport-node';
import { startNatsServer, type NatsServer } from '@switchyard/config/nats-server';

// The real, built binary (`pnpm build` first) against a real nats-server on loopback.
const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin.js');
let server: NatsServer;
beforeAll(async () => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build the cli package first (pnpm --filter @switchyard/cli build)`);
  server = await startNatsServer('authorization { users = [ { user: rt, password: rt-pass }, { user: agent, password: agent-pass } ] }');
});
afterAll(() => server?.stop());

function serveRuntime(env: Record<string, string>, args: string[] = []) {
  const child = spawn(bin, ['runtime', 'serve', '--nats', server.url, '--name', 'cli-host', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const serving = new Promise<void>((resolve) =>
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (stderr.includes('serving cells')) resolve();
    }),
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  void exited.then(() => clearTimeout(timer));
  return { child, serving, exited, stderr: () => stderr };
}

describe('switchyard runtime serve --nats', () => {
  it('serves a cell to an agent host and exits 0 on SIGTERM', async () => {
    const host = serveRuntime({ NATS_USER: 'rt', NATS_PASSWORD: 'rt-pass' });
    await Promise.race([host.serving, host.exited]);
    expect(host.stderr()).toMatch(/^switchyard: runtime host cli-host \(id [0-9a-z]{16}\) serving cells over nats:\/\/127\.0\.0\.1:\d+\n$/);
    const runtime = createNatsRuntime({ servers: server.url, auth: { user: 'agent', pass: 'agent-pass' } });
    const session = runtime.openSession({ invokeTool: async () => 41, notify: () => {}, cellClosed: () => {} });
    const { observation } = await session.createCell({ source: `text(String((await tools.n({})) + 1))`, tools: [{ name: 'n', description: '', kind: 'function' }], yieldTimeMs: 30_000 });
    expect(observation).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: '42' }] });
    await runtime.shutdown();
    host.child.kill('SIGTERM');
    expect(await host.exited).toBe(0);
  }, 90_000);

  it('--id names the host (its subjects), --trust-agent pins the key an agent id must sign with; a malformed --trust-agent exits 2', async () => {
    const api1 = nkeys.createUser();
    const seed = new TextDecoder().decode(api1.getSeed());
    const host = serveRuntime({ NATS_USER: 'rt', NATS_PASSWORD: 'rt-pass' }, ['--id', 'r7', '--trust-agent', `api1=${api1.getPublicKey()}`]);
    await Promise.race([host.serving, host.exited]);
    expect(host.stderr()).toMatch(/^switchyard: runtime host cli-host \(id r7\) serving cells over /);
    const cell = async (identity: string, agentId: string) => {
      const runtime = createNatsRuntime({ servers: server.url, auth: { user: 'agent', pass: 'agent-pass' }, agentId, identity: { seed: identity }, placement: { attempts: 2 } });
      const session = runtime.openSession({ invokeTool: async () => 1, notify: () => {}, cellClosed: () => {} });
      const outcome = await session.createCell({ source: `text('on r7')`, tools: [], yieldTimeMs: 30_000 }).then((created) => created.observation, (error: Error) => error.message);
      await runtime.shutdown();
      return outcome;
    };
    expect(await cell(seed, 'api1')).toMatchObject({ kind: 'completed', items: [{ type: 'input_text', text: 'on r7' }] });
    const stranger = new TextDecoder().decode(nkeys.createUser().getSeed());
    expect(await cell(stranger, 'api1')).toMatch(/runtime host cli-host declined: agent host api1 signed with a key this runtime host does not trust/);
    expect(await cell(seed, 'api2')).toMatch(/runtime host cli-host declined: agent host api2 is not trusted by this runtime host/);
    host.child.kill('SIGTERM');
    expect(await host.exited).toBe(0);
    const malformed = serveRuntime({}, ['--trust-agent', 'api1']);
    expect(await malformed.exited).toBe(2);
    expect(malformed.stderr()).toBe('switchyard: --trust-agent expects <agentId>=<public NKey>[,<key>…] (got "api1")\n');
  }, 90_000);

  it('exits 1 naming the refusal when the server rejects the credentials; 2 without --nats', async () => {
    const host = serveRuntime({ NATS_USER: 'rt', NATS_PASSWORD: 'wrong' });
    expect(await host.exited).toBe(1);
    expect(host.stderr()).toMatch(/^switchyard: runtime serve: could not connect to NATS at nats:\/\/127\.0\.0\.1:\d+: .*Authorization Violation/i);
    const usage = spawn(bin, ['runtime', 'serve'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    usage.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    expect(await new Promise((resolve) => usage.once('exit', resolve))).toBe(2);
    expect(text).toMatch(/^switchyard: expected "runtime serve --nats <url>"/);
  }, 90_000);
});
