import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nkeys, type NatsConnection, type Status } from '@nats-io/transport-node';
import { startNatsServer, type NatsServer } from '@switchyard/config/nats-server';
import { serveRuntimeOverNats, type NatsRuntimeHost } from '../src/index';

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = join(here, '..');

/** Credentials of the test deployment: two agent hosts (user/password), runtime hosts (an NKey). */
export interface Deployment {
  server: NatsServer;
  agentA: { user: string; pass: string };
  agentB: { user: string; pass: string };
  spy: { user: string; pass: string };
  runtimeSeed: string;
}

/**
 * A nats-server whose permissions scope subjects per agent host: agent `a` may publish only to
 * its placement subject and its own connections' subjects and subscribe only to its own inbox
 * space; so may `b`; runtime hosts (one NKey) serve everyone. `spy` may do anything (the tests
 * use it to learn another agent host's subjects, as an attacker might).
 */
export async function startDeployment(): Promise<Deployment> {
  const runtime = nkeys.createUser();
  const runtimeSeed = new TextDecoder().decode(runtime.getSeed());
  const agent = (id: string, pass: string) =>
    `{ user: agent-${id}, password: ${pass}, permissions: { publish: { allow: ["switchyard.place.${id}", "switchyard.rt.*.${id}.>"] }, subscribe: { allow: ["switchyard.agent.${id}.>"] } } }`;
  const config = `authorization {
  users = [
    ${agent('a', 'secret-a')}
    ${agent('b', 'secret-b')}
    { user: spy, password: secret-spy }
    { nkey: ${runtime.getPublicKey()}, permissions: { publish: { allow: ["switchyard.agent.>"] }, subscribe: { allow: ["switchyard.place.*", "switchyard.rt.*.>"] } } }
  ]
}`;
  const server = await startNatsServer(config);
  return { server, agentA: { user: 'agent-a', pass: 'secret-a' }, agentB: { user: 'agent-b', pass: 'secret-b' }, spy: { user: 'spy', pass: 'secret-spy' }, runtimeSeed };
}

/** A runtime host in its own process (test/fixtures/runtime-host.ts through tsx). */
export interface HostProcess {
  child: ChildProcess;
  id: string;
  name: string;
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

/** Starts a runtime host process; rejects with its error line when it fails to start. */
export async function startHost(url: string, auth: unknown, name: string, limits?: unknown, timeoutMs = 120_000): Promise<HostProcess> {
  const child = spawn(process.execPath, ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', join(here, 'fixtures', 'runtime-host.ts')], {
    cwd: packageRoot,
    env: { PATH: process.env.PATH ?? '', NATS_URL: url, NATS_AUTH: JSON.stringify(auth ?? null), HOST_NAME: name, HOST_LIMITS: limits ? JSON.stringify(limits) : '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      process.removeListener('exit', kill);
      resolve({ code, signal });
    }),
  );
  let stderr = '';
  child.stderr!.on('data', (text: Buffer) => (stderr = (stderr + text.toString('utf8')).slice(-8_000)));
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      kill();
      reject(new Error(`runtime host ${name} did not start within ${timeoutMs} ms; stderr:\n${stderr}`));
    }, timeoutMs);
    child.stdout!.on('data', (text: Buffer) => {
      out += text.toString('utf8');
      const newline = out.indexOf('\n');
      if (newline >= 0) {
        clearTimeout(timer);
        resolve(out.slice(0, newline));
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      if (!out.includes('\n')) reject(new Error(`runtime host ${name} exited (${signal ?? code}) before it served; stderr:\n${stderr}`));
    });
  });
  const report = JSON.parse(line) as { ready: boolean; id?: string; name?: string; pid?: number; error?: string };
  if (!report.ready) {
    await exited;
    throw Object.assign(new Error(report.error), { exitCode: (await exited).code });
  }
  return {
    child,
    id: report.id!,
    name: report.name!,
    pid: report.pid!,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/** A cell host that counts nested calls by cell and call id. */
export function countingHost(run: (tool: string, input: unknown) => Promise<unknown> | unknown = (_tool, input) => input ?? null) {
  const calls = new Map<string, number>();
  const closed: string[] = [];
  const events: unknown[] = [];
  return {
    calls,
    closed,
    events,
    host: {
      invokeTool: async (request: { cellId: string; runtimeToolCallId: string; tool: string; input: unknown }) => {
        const key = `${request.cellId}/${request.runtimeToolCallId}`;
        calls.set(key, (calls.get(key) ?? 0) + 1);
        return (await run(request.tool, request.input)) as never;
      },
      notify: () => {},
      cellClosed: (cellId: string) => closed.push(cellId),
      runtimeEvent: (event: unknown): void => void events.push(event),
    },
  };
}

/** Errors the server reports on a connection (permission violations arrive asynchronously). */
export function serverErrors(nc: NatsConnection): string[] {
  const seen: string[] = [];
  void (async () => {
    for await (const status of nc.status() as AsyncIterable<Status>) {
      if (status.type === 'error') seen.push(String((status as { error?: Error }).error?.message ?? status));
    }
  })();
  return seen;
}

/** The test deployment and one runtime host named `name` serving on it (its NKey). */
export async function startDeploymentWithHost(name: string): Promise<{ deployment: Deployment; host: NatsRuntimeHost }> {
  const deployment = await startDeployment();
  const host = await serveRuntimeOverNats({ servers: deployment.server.url, auth: { nkeySeed: deployment.runtimeSeed }, name });
  return { deployment, host };
}

/** Stops what `startDeploymentWithHost` started (either may be missing when the start failed). */
export async function stopDeploymentWithHost(parts: { deployment?: Deployment; host?: NatsRuntimeHost }): Promise<void> {
  await parts.host?.close();
  await parts.deployment?.server.stop();
}
