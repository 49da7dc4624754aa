import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNatsRuntime } from '@switchyard/code-mode-nats';
import { startNatsServer, type NatsServer } from '../../../tools/config/nats-server';

// The real, built binary (`pnpm build` first) against a real nats-server on loopback.
const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin.js');
let server: NatsServer;
beforeAll(async () => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build the cli package first (pnpm --filter @switchyard/cli build)`);
  server = await startNatsServer('authorization { users = [ { user: rt, password: rt-pass }, { user: agent, password: agent-pass } ] }');
});
afterAll(() => server?.stop());

function serve(env: Record<string, string>, args: string[] = []) {
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
    const host = serve({ NATS_USER: 'rt', NATS_PASSWORD: 'rt-pass' });
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

  it('exits 1 naming the refusal when the server rejects the credentials; 2 without --nats', async () => {
    const host = serve({ NATS_USER: 'rt', NATS_PASSWORD: 'wrong' });
    expect(await host.exited).toBe(1);
    expect(host.stderr()).toMatch(/^switchyard: runtime serve: could not connect to NATS at nats:\/\/127\.0\.0\.1:\d+: .*Authorization Violation/i);
    const usage = spawn(bin, ['runtime', 'serve'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    usage.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    expect(await new Promise((resolve) => usage.once('exit', resolve))).toBe(2);
    expect(text).toMatch(/^switchyard: expected "runtime serve --nats <url>"/);
  }, 90_000);
});
