import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
