import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import type { ResponseItem } from '@switchyard/protocol';
import { startNatsServer, type NatsServer } from '@switchyard/config/nats-server';
import { processesWith } from '@switchyard/config/proc';
import { sourceArgv } from './helpers';

// Shared by the session-store restart tests: runs `fixtures/store-host.ts` as a real process, kills
// it from outside, runs the next one.

const FIXTURE = fileURLToPath(new URL('./fixtures/store-host.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface HostConfig {
  store: 'sqlite' | 'nats';
  path?: string;
  url?: string;
  sessionId: string;
  owner: string;
  log: string;
  phase: 'first' | 'second';
  scenario: 'tool' | 'cell';
  marker: string;
}

/** What the second host printed last. */
export interface Resumed {
  event: 'done';
  requests: ResponseItem[][];
  history: ResponseItem[];
  loaded: string;
}

function spawnStoreHost(config: HostConfig) {
  const child = spawn(process.execPath, sourceArgv(FIXTURE, [JSON.stringify(config)], ['--no-node-snapshot']), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data) => (stdout += data));
  child.stderr.on('data', (data) => (stderr = (stderr + data).slice(-4000)));
  const events = () =>
    stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        try {
          return JSON.parse(line) as { event: string };
        } catch {
          return { event: `unparsed: ${line}` };
        }
      });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, events, stderr: () => stderr, exited };
}

const logLines = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);

/**
 * Runs the first host until `ready(logLines)` holds (after it stored its value), then SIGKILLs it.
 * Returns the log's lines at the kill.
 */
export async function runUntilKilled(config: HostConfig, ready: (lines: string[]) => boolean, timeoutMs = 90_000): Promise<string[]> {
  const host = spawnStoreHost(config);
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (host.events().some((event) => event.event === 'prepared') && ready(logLines(config.log))) break;
      if (host.child.exitCode !== null) throw new Error(`the first host exited (${host.child.exitCode}) before the kill: ${host.stderr()}`);
      if (Date.now() > deadline) throw new Error(`the first host never got ready: ${JSON.stringify(host.events())} ${host.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return logLines(config.log);
  } finally {
    host.child.kill('SIGKILL');
    await host.exited;
  }
}

/** Runs the second host to its end (within `timeoutMs`) and returns what it printed last. */
export async function runToEnd(config: HostConfig, timeoutMs = 150_000): Promise<Resumed> {
  const host = spawnStoreHost(config);
  const timer = setTimeout(() => host.child.kill('SIGKILL'), timeoutMs);
  const code = await host.exited;
  clearTimeout(timer);
  const done = host.events().find((event) => event.event === 'done') as Resumed | undefined;
  if (process.env.STORE_RESTART_TRACE) console.log(JSON.stringify(host.events().map((event) => [event.event, (event as { ms?: number }).ms])));
  if (code !== 0 || !done) throw new Error(`the second host failed (${code}): ${JSON.stringify(host.events()).slice(0, 2000)} ${host.stderr()}`);
  return done;
}

/** The log's lines now. */
export const readLog = logLines;

/** Kills what the killed host left behind: processes whose command line carries `marker` (this test's own). */
function killMarked(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * A temporary folder and a real `nats-server -js` for a test file (started before its tests,
 * stopped after them, with whatever the killed hosts left running); `config(kind, scenario)` is a
 * first host's config with a fresh session id, store file, log and marker.
 */
export function restartFixtures(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), `switchyard-${prefix}-`));
  let nats: NatsServer | undefined;
  const markers: string[] = [];
  beforeAll(async () => {
    nats = await startNatsServer(`jetstream { store_dir: "${join(dir, 'js')}" }`);
  });
  afterAll(async () => {
    for (const marker of markers) killMarked(marker);
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    config(kind: 'sqlite' | 'nats', scenario: HostConfig['scenario']): HostConfig {
      const marker = `switchyard-${prefix}-${randomUUID()}`;
      markers.push(marker);
      return {
        store: kind,
        ...(kind === 'sqlite' ? { path: join(dir, `${marker}.db`) } : { url: nats!.url }),
        sessionId: `${prefix}-${kind}-${marker.slice(-8)}`,
        owner: 'agent-host-1',
        log: join(dir, `${marker}.log`),
        phase: 'first',
        scenario,
        marker,
      };
    },
  };
}
