import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startNatsServer, type NatsServer } from '@switchyard/config/nats-server';

/**
 * Starts `serveRuntimeOverNats(options)` in a child process (an attack that kills it must not take
 * the test runner down) and resolves with the process and the runtime host's id, once it serves.
 */
export async function spawnRuntimeHost(options: Record<string, unknown>): Promise<{ host: ChildProcess; hostId: string }> {
  const script = `import('@switchyard/code-mode-nats').then(({ serveRuntimeOverNats }) => serveRuntimeOverNats(${JSON.stringify(options)}))
    .then((h) => process.stdout.write(h.id + '\\n'), (e) => { console.error(e.message); process.exit(1); });`;
  const host = spawn(process.execPath, ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', '--input-type=module', '-e', script], {
    // From this package's folder, where the workspace links @switchyard/code-mode-nats (whatever folder vitest runs in).
    cwd: join(dirname(fileURLToPath(import.meta.url)), '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const hostId = await new Promise<string>((resolve, reject) => {
    host.stdout!.once('data', (text: Buffer) => resolve(text.toString('utf8').trim()));
    host.once('exit', (code) => reject(new Error(`runtime host exited with ${code}`)));
  });
  return { host, hostId };
}

/** A nats-server, a runtime host served on it in a child process, and a raw client speaking as agent host `x`. */
export interface HostOverNats {
  server: NatsServer;
  host: ChildProcess;
  hostId: string;
  raw: NatsConnection;
}

/** Starts a nats-server, `spawnRuntimeHost({ servers, ...options })` on it, and a raw agent-side connection. */
export async function startHostOverNats(options: Record<string, unknown>): Promise<HostOverNats> {
  const server = await startNatsServer();
  const { host, hostId } = await spawnRuntimeHost({ servers: server.url, ...options });
  const raw = await connect({ servers: server.url, inboxPrefix: 'switchyard.agent.x.inbox' });
  return { server, host, hostId, raw };
}

/** Stops what `startHostOverNats` started (any part may be missing when the start failed). */
export async function stopHostOverNats(parts: Partial<HostOverNats>): Promise<void> {
  await parts.raw?.close();
  parts.host?.kill('SIGKILL');
  await parts.server?.stop();
}
