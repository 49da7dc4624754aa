import { readFileSync, readdirSync } from 'node:fs';
import type { RuntimeAdmittedEvent, RuntimeQueuedEvent } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { AdmissionEvent } from './admission-queue';
import { workerSettings, type ProcessWorkerOptions } from './process-runtime';
import type { EngineSessionOptions } from './protocol';
import type { RuntimeLease } from './remote-session';
import { WorkerPool } from './worker-pool';
import { running, workerChildren } from '../test/proc';
import { sleep, until } from '../test/helpers';

// The pool with real worker processes and sessions that hold leases without cells: where each
// lease lands (leases on one worker share its client), which waiting session gets a freed place,
// and which processes exist (/proc). Each test's pool is its own; tests run one after another, so
// the workers of a test are the children of this process.
const pools: WorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.shutdown()));
});

function openPool(options: ProcessWorkerOptions) {
  const pool = new WorkerPool(workerSettings({ prewarm: false, ...options }, { heapMb: 128 } as EngineSessionOptions));
  pools.push(pool);
  const lost: Array<{ name: string; cause: string }> = [];
  const events = new Map<string, AdmissionEvent[]>();
  const acquire = (name: string, tenant: string, alone = false): Promise<RuntimeLease> => {
    events.set(name, []);
    const sink = { onEvent() {}, onLost: (cause: string) => lost.push({ name, cause }) };
    return pool.acquire(sink, { tenant, alone, report: (event) => events.get(name)!.push(event) });
  };
  return { pool, acquire, lost, events };
}

/** Groups lease names by the worker (client) holding them, in first-seen order. */
function byWorker(leases: Record<string, RuntimeLease>): string[][] {
  const groups = new Map<unknown, string[]>();
  for (const [name, lease] of Object.entries(leases)) groups.set(lease.client, [...(groups.get(lease.client) ?? []), name]);
  return [...groups.values()];
}

describe('worker pool placement', { timeout: 120_000 }, () => {
  it('packs sessions of different tenants on a worker up to sessionsPerWorker, then starts the next', async () => {
    const { pool, acquire } = openPool({ sessionsPerWorker: 3, max: 3 });
    const leases: Record<string, RuntimeLease> = {};
    for (const name of ['a', 'b', 'c', 'd']) leases[name] = await acquire(name, `tenant ${name}`);
    expect(byWorker(leases)).toEqual([['a', 'b', 'c'], ['d']]);
    expect(workerChildren()).toHaveLength(2);
    expect(pool.stats()).toEqual({ started: 2, workers: 2, sessions: 4, waiting: 0 });
  });

  it('a session beyond the pool waits and takes the place a released session leaves on the warm worker: no process ended or started', async () => {
    const { pool, acquire, events } = openPool({ sessionsPerWorker: 1, max: 1 });
    const first = await acquire('first', 'tenant a');
    const [pid] = workerChildren();
    let second: RuntimeLease | undefined;
    const waiting = acquire('second', 'tenant b').then((lease) => (second = lease));
    await until(() => pool.stats().waiting === 1, '1 waiting for a worker', 10_000);
    await sleep(1_100);
    expect(second).toBeUndefined();
    const queued = events.get('second')!.filter((event): event is RuntimeQueuedEvent => event.type === 'runtime-queued');
    expect(queued[0]).toEqual({ type: 'runtime-queued', position: 1, waiting: 1, waitedMs: 0 });
    expect(queued.at(-1)!.waitedMs).toBeGreaterThanOrEqual(900);
    first.release();
    await waiting;
    expect(second!.client).toBe(first.client);
    expect(events.get('second')!.at(-1)).toMatchObject({ type: 'runtime-admitted' });
    expect((events.get('second')!.at(-1) as RuntimeAdmittedEvent).waitedMs).toBeGreaterThanOrEqual(1_000);
    expect(pool.stats().started).toBe(1);
    expect(workerChildren()).toEqual([pid]);
  });

  it('perSession: true ends the idle worker of another tenant and starts a fresh one for the waiting session', async () => {
    const { pool, acquire } = openPool({ sessionsPerWorker: 1, max: 1, perSession: true });
    const first = await acquire('first', 'tenant a');
    const [pid] = workerChildren();
    const waiting = acquire('second', 'tenant b');
    await until(() => pool.stats().waiting === 1, '1 waiting for a worker', 10_000);
    first.release();
    const second = await waiting;
    expect(second.client).not.toBe(first.client);
    expect(pool.stats().started).toBe(2);
    await until(() => !running(pid!), 'the worker to end', 10_000);
  });

  it('serves waiting sessions round robin across tenants, first come first served within one', async () => {
    const { pool, acquire } = openPool({ sessionsPerWorker: 1, max: 1 });
    let holder = await acquire('holder', 'tenant h');
    const admitted: string[] = [];
    const waiting = ['a1', 'a2', 'a3', 'b1', 'c1'].map((name) =>
      acquire(name, `tenant ${name[0]}`).then((lease) => {
        admitted.push(name);
        return lease;
      }),
    );
    await until(() => pool.stats().waiting === 5, '5 waiting for a worker', 10_000);
    for (let served = 0; served < 5; served++) {
      holder.release();
      await until(() => admitted.length === served + 1, 'the next admission', 10_000);
      holder = await waiting[['a1', 'a2', 'a3', 'b1', 'c1'].indexOf(admitted[served]!)]!;
    }
    expect(admitted).toEqual(['a1', 'b1', 'c1', 'a2', 'a3']);
    expect(pool.stats().started).toBe(1);
  });

  it("after isolateTenant(t), t's sessions never share a worker with another tenant's (checked by killing each worker)", async () => {
    const { pool, acquire, lost } = openPool({ sessionsPerWorker: 2, max: 4 });
    pool.isolateTenant('tenant t');
    const leases: Record<string, RuntimeLease> = {};
    for (const [name, tenant] of [['o1', 'tenant o1'], ['o2', 'tenant o2'], ['t1', 'tenant t'], ['o3', 'tenant o3'], ['t2', 'tenant t'], ['o4', 'tenant o4']] as const) {
      leases[name] = await acquire(name, tenant);
    }
    // o3 would fit beside t1 by room; it goes elsewhere, and so does o4 beside o3
    expect(byWorker(leases)).toEqual([['o1', 'o2'], ['t1', 't2'], ['o3', 'o4']]);
    const pids = workerChildren();
    expect(pids).toHaveLength(3);
    // Each worker's death reaches exactly the sessions placed on it: t's never with another tenant's.
    const casualties: string[][] = [];
    for (const pid of pids) {
      const before = lost.length;
      process.kill(pid, 'SIGKILL');
      await until(() => lost.length > before && !running(pid), 'the worker to end', 10_000);
      await sleep(100);
      casualties.push(lost.slice(before).map((entry) => entry.name).sort());
    }
    expect(casualties.sort()).toEqual([['o1', 'o2'], ['o3', 'o4'], ['t1', 't2']]);
  });

  it('an isolated tenant waiting behind a full pool gets the worker that empties first; nobody else is placed on that worker meanwhile', async () => {
    const { pool, acquire } = openPool({ sessionsPerWorker: 2, max: 1 });
    const o1 = await acquire('o1', 'tenant o1');
    const o2 = await acquire('o2', 'tenant o2');
    pool.isolateTenant('tenant t');
    let t1: RuntimeLease | undefined;
    const waitingT = acquire('t1', 'tenant t').then((lease) => (t1 = lease));
    await until(() => pool.stats().waiting === 1, '1 waiting for a worker', 10_000);
    o1.release();
    // the freed place is kept for the emptying: a new tenant waits instead of filling it
    let o3: RuntimeLease | undefined;
    const waitingO = acquire('o3', 'tenant o3').then((lease) => (o3 = lease));
    await until(() => pool.stats().waiting === 2, '2 waiting for a worker', 10_000);
    o2.release();
    await waitingT;
    expect(t1!.client).toBe(o1.client);
    await sleep(200);
    expect(o3).toBeUndefined();
    t1!.release();
    await waitingO;
    expect(pool.stats().started).toBe(1);
  });

  it('a lone lease gets a worker of its own, beyond max by at most max(2, max/4) workers, which ends with the lease', async () => {
    const { pool, acquire } = openPool({ sessionsPerWorker: 4, max: 1 });
    const shared = await acquire('shared', 'tenant a');
    const lone1 = await acquire('lone1', 'tenant a', true);
    const lone2 = await acquire('lone2', 'tenant b', true);
    expect(new Set([shared.client, lone1.client, lone2.client]).size).toBe(3);
    // a third lone lease waits: max 1 + 2 extra are alive
    let lone3: RuntimeLease | undefined;
    const waiting = acquire('lone3', 'tenant c', true).then((lease) => (lone3 = lease));
    // a shared session goes beside the other shared one, never onto a lone lease's worker
    const other = await acquire('other', 'tenant d');
    expect(other.client).toBe(shared.client);
    expect(pool.stats()).toMatchObject({ workers: 3, waiting: 1 });
    expect(lone3).toBeUndefined();
    expect(workerChildren()).toHaveLength(3);
    lone1.release();
    await waiting;
    // lone1's worker went to lone3 (it was alone), or ended and lone3 started one: never more than 3
    expect(pool.stats().workers).toBe(3);
    lone2.release();
    lone3!.release();
    await until(() => pool.stats().workers === 1 && workerChildren().length === 1, 'one worker', 10_000);
  });
});

describe('worker pool shutdown', { timeout: 60_000 }, () => {
  it('refuses the sessions waiting in the queue with SHUTTING_DOWN and leaves no worker behind', async () => {
    const { pool, acquire, events } = openPool({ sessionsPerWorker: 1, max: 1 });
    await acquire('holder', 'tenant a');
    const waiting = acquire('waiting', 'tenant b').then(
      () => 'placed',
      (error: { code?: string; message: string }) => `${error.code}: ${error.message}`,
    );
    await until(() => pool.stats().waiting === 1, '1 waiting for a worker', 10_000);
    const pids = workerChildren();
    await pool.shutdown();
    expect(await waiting).toBe('SHUTTING_DOWN: code mode runtime is shutting down');
    expect(events.get('waiting')!.map((event) => event.type)).toEqual(['runtime-queued']);
    for (const pid of pids) expect(running(pid)).toBe(false);
    expect(await acquire('late', 'tenant c').catch((error: { code?: string }) => error.code)).toBe('SHUTTING_DOWN');
  });
});

describe("the pool's modules on the host's main thread", () => {
  // Nothing the pool does per session or per cell may block the host's event loop: no synchronous
  // spawn, no synchronous file or /proc read, no synchronous directory walk. These modules run per
  // session and per cell; they import none of Node's synchronous process or file functions.
  const modules = ['worker-pool.ts', 'worker-process.ts', 'worker-watch.ts', 'admission-queue.ts', 'placement-rules.ts', 'process-runtime.ts'];

  it.each(modules)('%s imports no synchronous fs or child_process function', (file) => {
    const source = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
    const imports = [...source.matchAll(/import\s+(type\s+)?([^;]*?)\s+from\s+'(node:)?(fs|child_process|fs\/promises)'/g)];
    for (const [, typeOnly, names] of imports) {
      if (typeOnly) continue;
      expect(names).not.toMatch(/\*|\b\w+Sync\b|\bexistsSync\b/);
      // a default import would reach every synchronous function
      expect(names.trim().startsWith('{')).toBe(true);
    }
    expect(source).not.toMatch(/\brequire\(|\w+Sync\(/);
  });

  it('the list covers every module of the pool', () => {
    const folder = new URL('.', import.meta.url);
    const pool = readdirSync(folder).filter((file) => /^(worker-(pool|process|watch)|admission-queue|placement-rules)\.ts$/.test(file));
    expect(pool.every((file) => modules.includes(file))).toBe(true);
    expect(pool).toHaveLength(5);
  });
});
