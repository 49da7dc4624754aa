import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real `nats-server` (the Debian package that scripts/setup.mjs installs) for tests and benches:
 * loopback only, a port the server picks itself (`port: -1`, read back from its log), a config
 * file written to a temporary folder, killed on `stop()` and when this process exits.
 */
export interface NatsServer {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** The nats-server binary, or undefined when it is not installed. */
export function natsServerPath(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/** Starts nats-server with `config` (without host/port: they are added) and waits until it listens. */
export async function startNatsServer(config = '', { timeoutMs = 20_000 } = {}): Promise<NatsServer> {
  const bin = natsServerPath();
  if (!bin) throw new Error('nats-server is not installed: run `node scripts/setup.mjs` (it installs the Debian package nats-server)');
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-nats-'));
  const file = join(dir, 'nats.conf');
  writeFileSync(file, `host: 127.0.0.1\nport: -1\nmax_payload: 1048576\n${config}\n`);
  const child = spawn(bin, ['-c', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  let log = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      kill();
      reject(new Error(`nats-server did not start within ${timeoutMs} ms:\n${log}`));
    }, timeoutMs);
    const onData = (text: Buffer) => {
      log += text.toString('utf8');
      const match = /Listening for client connections on [^\s]*:(\d+)/.exec(log);
      if (match && /Server is ready/.test(log)) {
        clearTimeout(timer);
        // From here on the log is read and dropped (a long run must not grow it).
        child.stdout!.removeListener('data', onData).resume();
        child.stderr!.removeListener('data', onData).resume();
        resolve(Number(match[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`nats-server exited (${signal ?? code}) before it listened:\n${log}`));
    });
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    child,
    async stop() {
      process.removeListener('exit', kill);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
