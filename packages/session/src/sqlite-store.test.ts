import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { SESSION_STORE_CHECKS } from './testing';
import { createSqliteStore } from './sqlite-store';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-sqlite-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('createSqliteStore: the SessionStore checks on a real SQLite file', () => {
  const store = createSqliteStore(join(dir, 'checks.db'));
  afterAll(() => store.close());
  for (const check of SESSION_STORE_CHECKS) it(check.name, () => check.run(store));
});

describe('createSqliteStore: the file', () => {
  it('is in WAL mode, and a second store on the same file sees the first one’s commits and leases', async () => {
    const path = join(dir, 'shared.db');
    const a = createSqliteStore(path);
    const b = createSqliteStore(path);
    const lease = await a.lease('s1', { owner: 'a', ttlMs: 60_000 });
    await a.commit('s1', { lease, state: { n: 1 }, history: { keep: 0, append: ['x'] } });
    expect((await b.load('s1'))?.state).toEqual({ n: 1 });
    await expect(b.lease('s1', { owner: 'b', ttlMs: 1000 })).rejects.toMatchObject({ code: 'LEASE_HELD' });
    await a.close();
    await b.close();
    const mode = spawnSync(process.execPath, ['-e', `const {DatabaseSync}=require('node:sqlite');console.log(new DatabaseSync(${JSON.stringify(path)}).prepare('PRAGMA journal_mode').get().journal_mode)`], { encoding: 'utf8' });
    expect(mode.stdout.trim()).toBe('wal');
  });

  it('options are checked: an unknown one is a CONFIG error naming it; a closed store fails STORE_FAILED naming the session', async () => {
    expect(() => createSqliteStore(join(dir, 'x.db'), { synchronus: 'full' } as never)).toThrow(/createSqliteStore: unknown option `synchronus`/);
    expect(() => createSqliteStore('')).toThrow(expect.objectContaining({ code: 'CONFIG' }));
    const store = createSqliteStore(':memory:');
    await store.close();
    await expect(store.load('gone')).rejects.toMatchObject({ code: 'STORE_FAILED', message: expect.stringContaining('session gone') });
  });

  it('without node:sqlite (as on Node 20) the package still imports and creating a store is a CONFIG error saying what is needed', () => {
    const script = `import(${JSON.stringify(new URL('./index.ts', import.meta.url).href)}).then((m) => { try { m.createSqliteStore('x.db'); console.log('created'); } catch (e) { console.log(e.code + ' ' + e.message); } })`;
    const run = spawnSync(process.execPath, ['--no-experimental-sqlite', '--conditions=@switchyard/source', '--import', 'tsx', '-e', script], { encoding: 'utf8' });
    expect(run.stdout.trim(), run.stderr).toMatch(/^CONFIG createSqliteStore needs node:sqlite, built into Node 22\.13\+ and 24; this is Node \d+/);
  });

  it('a file written by a newer schema is refused at creation with STORE_VERSION', async () => {
    const path = join(dir, 'future.db');
    await createSqliteStore(path).close();
    const bump = spawnSync(process.execPath, ['-e', `const {DatabaseSync}=require('node:sqlite');new DatabaseSync(${JSON.stringify(path)}).prepare("UPDATE switchyard_meta SET value='9' WHERE key='schema'").run()`], { encoding: 'utf8' });
    expect(bump.status).toBe(0);
    expect(() => createSqliteStore(path)).toThrow(expect.objectContaining({ code: 'STORE_VERSION', message: expect.stringContaining('schema version 9') }));
  });
});
