import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { defineFunctionTool } from '@switchyard/kit';
import type { ModelClient, ModelRequest, ResponseItem, SessionCommit, SessionStore, ToolExecutor } from '@switchyard/protocol';
import { createScriptedModel } from './testing';
import { createSession } from './session';
import { createSqliteStore } from './sqlite-store';
import type { Session, SessionOptions } from './session-types';
import { callItem, outputsOf, say } from '@switchyard/test-helpers';

// A session kept in a real SQLite file: committed turns, resume by id, the lease, bad records,
// budgets, export / restore.

const dir = mkdtempSync(join(tmpdir(), 'switchyard-session-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileCounter = 0;
const freshFile = () => join(dir, `s${fileCounter++}.db`);

const historyLines = (items: readonly ResponseItem[]) => items.map((item) => `${(item as { role?: string }).role ?? item.type}:${JSON.stringify((item as { content?: unknown; output?: unknown }).content ?? (item as { output?: unknown }).output)}`);

const echo = defineFunctionTool({ name: 'echo', description: 'Echoes.', parameters: { type: 'object', properties: { text: { type: 'string' } } }, handle: ({ args }) => ({ echoed: args.text }) });

const open: Array<{ shutdown(): Promise<void> } | { close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await ('shutdown' in item ? item.shutdown() : item.close()).catch(() => undefined);
});
function storedSession(options: Partial<SessionOptions> & { store?: SessionStore }): Session {
  const created = createSession({ tools: [echo], ...options });
  open.push(created);
  return created;
}
function store(path = freshFile()) {
  const created = createSqliteStore(path);
  open.push(created);
  return created;
}

describe('a session with a SQLite store', () => {
  it('commits every turn; after shutdown another session with the same id and file continues the conversation', async () => {
    const path = freshFile();
    const first = storedSession({ store: store(path), sessionId: 'conv-1' });
    await first.runTurn({ model: createScriptedModel([[callItem('c1', 'echo', { text: 'hi' })], [say('echoed')]]), input: 'say hi' });
    const history = JSON.parse(JSON.stringify(first.history));
    await first.shutdown();
    const second = storedSession({ store: store(path), sessionId: 'conv-1' });
    await second.ready;
    expect(second.history).toEqual(history);
    const model = createScriptedModel([[say('still here')]]);
    await second.runTurn({ model, input: 'again' });
    expect(historyLines(model.requests[0].input).slice(0, 4)).toEqual(historyLines(history));
    expect(second.history).toHaveLength(history.length + 2);
  });

  it('a call’s item is in the store before the tool runs (write-ahead), whatever comes after it in the response', async () => {
    const path = freshFile();
    const reader = store(path);
    const seen: Array<{ callId: string; stored: string[] }> = [];
    const probe = defineFunctionTool({
      name: 'probe',
      description: 'Reads the store.',
      parameters: { type: 'object' },
      handle: async ({ invocation }) => {
        const stored = await reader.load('ahead');
        seen.push({ callId: invocation.callId, stored: (stored?.history ?? []).map((item) => String((item as unknown as { call_id?: string; type: string }).call_id ?? (item as unknown as { type: string }).type)) });
        return 'probed';
      },
    });
    const writer = storedSession({ tools: [probe], store: store(path), sessionId: 'ahead' });
    await writer.runTurn({ model: createScriptedModel([[say('first I probe'), callItem('p1', 'probe', {}), callItem('p2', 'probe', {})], [say('done')]]), input: 'go' });
    expect(seen.map((probe) => probe.callId).sort()).toEqual(['p1', 'p2']);
    // each call found the user's input, the text before it and its own item already in the store
    for (const probe of seen) expect(probe.stored.slice(0, 3)).toEqual(['message', 'message', 'p1']);
    for (const probe of seen) expect(probe.stored).toContain(probe.callId);
  });

  it('a lease held by a live session fails the second opener with LEASE_HELD naming the session and the holder; its other sessions open', async () => {
    const path = freshFile();
    const holder = storedSession({ store: store(path), sessionId: 'busy', storeOptions: { owner: 'host-a' } });
    await holder.ready;
    const intruder = storedSession({ store: store(path), sessionId: 'busy', storeOptions: { owner: 'host-b' } });
    await expect(intruder.ready).rejects.toMatchObject({ code: 'LEASE_HELD', message: expect.stringMatching(/session busy: held by host-a/) });
    // every turn reports the same error, and nothing is written
    await expect(intruder.runTurn({ model: createScriptedModel([[say('no')]]), input: 'x' })).rejects.toMatchObject({ code: 'LEASE_HELD' });
    const other = storedSession({ store: store(path), sessionId: 'free', storeOptions: { owner: 'host-b' } });
    await other.runTurn({ model: createScriptedModel([[say('fine')]]), input: 'y' });
    expect(historyLines(other.history)).toEqual(['user:"y"', 'assistant:"fine"']);
  });

  it('a live session renews its lease: past its TTL another opener is still refused, after shutdown it opens at once', async () => {
    const path = freshFile();
    const holder = storedSession({ store: store(path), sessionId: 'renewed', storeOptions: { owner: 'host-a', leaseTtlMs: 300 } });
    await holder.ready;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const early = storedSession({ store: store(path), sessionId: 'renewed', storeOptions: { owner: 'host-b' } });
    await expect(early.ready).rejects.toMatchObject({ code: 'LEASE_HELD' });
    await holder.shutdown();
    const late = storedSession({ store: store(path), sessionId: 'renewed', storeOptions: { owner: 'host-b' } });
    await late.ready;
  });

  it('a session whose host stopped renewing is taken over once the lease expires (leaseWaitMs); the old one’s next turn fails LEASE_HELD and writes nothing', async () => {
    const path = freshFile();
    // a store that loses the old holder's renewals: its lease expires while it still runs
    const inner = store(path);
    const deaf: SessionStore = { ...inner, lease: (id, request) => (request.renew ? Promise.resolve(request.renew) : inner.lease(id, request)), load: inner.load, commit: inner.commit };
    const old = storedSession({ store: deaf, sessionId: 'moved', storeOptions: { owner: 'old-host', leaseTtlMs: 300 } });
    await old.runTurn({ model: createScriptedModel([[say('one')]]), input: 'first' });
    const taker = storedSession({ store: store(path), sessionId: 'moved', storeOptions: { owner: 'new-host', leaseWaitMs: 5_000 } });
    await taker.ready;
    expect(historyLines(taker.history)).toEqual(['user:"first"', 'assistant:"one"']);
    await expect(old.runTurn({ model: createScriptedModel([[say('zombie')]]), input: 'second' })).rejects.toMatchObject({
      code: 'LEASE_HELD',
      message: expect.stringContaining('new-host'),
    });
    await taker.runTurn({ model: createScriptedModel([[say('two')]]), input: 'after' });
    const check = storedSession({ restore: taker.export() });
    await check.ready;
    expect(historyLines(check.history)).toEqual(['user:"first"', 'assistant:"one"', 'user:"after"', 'assistant:"two"']);
  });

  it('a process a tool kept running is reported lost to the model once, in the next request of the session that took over', async () => {
    const path = freshFile();
    const running = new Map<string, { callId: string; processId: number; command: string }>();
    const starter: ToolExecutor = {
      ...defineFunctionTool({ name: 'start', description: 'Starts a server.', parameters: { type: 'object' }, handle: ({ invocation }) => (running.set(invocation.callId, { callId: invocation.callId, processId: 1000, command: 'npm run dev' }), 'Process running with session ID 1000') }),
      runningWork: () => [...running.values()],
    };
    const inner = store(path);
    const deaf: SessionStore = { ...inner, lease: (id, request) => (request.renew ? Promise.resolve(request.renew) : inner.lease(id, request)), load: inner.load, commit: inner.commit };
    const old = storedSession({ tools: [starter], store: deaf, sessionId: 'proc', storeOptions: { leaseTtlMs: 200 } });
    await old.runTurn({ model: createScriptedModel([[callItem('start-1', 'start', {})], [say('started')]]), input: 'start it' });
    const next = storedSession({ tools: [starter], store: store(path), sessionId: 'proc', storeOptions: { leaseWaitMs: 5_000 } });
    const model = createScriptedModel([[say('it was lost')], [say('ok')]]);
    await next.runTurn({ model, input: 'is it up?' });
    const lost = outputsOf(model.requests[0].input, 'start-1');
    expect(lost.map((item) => (item as { output: string }).output)).toEqual([
      'Process running with session ID 1000',
      'Process 1000 was lost: the host restarted while it was running `npm run dev`. It is not running any more, its output since the last read is gone, and write_stdin cannot reach it; run the command again if it is still needed.',
    ]);
    await next.runTurn({ model, input: 'and now?' });
    // once: the report is part of the history now, never injected again
    expect(outputsOf(model.requests[1].input, 'start-1')).toHaveLength(2);
  });

  it('a corrupted record fails that session’s resume with STORE_CORRUPT naming it; the store’s other sessions resume', async () => {
    const path = freshFile();
    for (const id of ['good', 'bad']) {
      const writer = storedSession({ store: store(path), sessionId: id });
      await writer.runTurn({ model: createScriptedModel([[say(`answer of ${id}`)]]), input: `question of ${id}` });
      await writer.shutdown();
    }
    const cut = spawnSync(process.execPath, ['-e', `const {DatabaseSync}=require('node:sqlite');new DatabaseSync(${JSON.stringify(path)}).prepare("UPDATE switchyard_history SET item = substr(item, 1, length(item) - 7) WHERE session = 'bad' AND idx = 1").run()`], { encoding: 'utf8' });
    expect(cut.status).toBe(0);
    const bad = storedSession({ store: store(path), sessionId: 'bad' });
    await expect(bad.ready).rejects.toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringMatching(/^session bad: history item 1 is corrupted/) });
    const good = storedSession({ store: store(path), sessionId: 'good' });
    await good.ready;
    expect(historyLines(good.history)).toEqual(['user:"question of good"', 'assistant:"answer of good"']);
  });

  it('a history past maxHistoryBytes fails the turn with LIMIT_EXCEEDED; the store keeps the last commit', async () => {
    const path = freshFile();
    const small = storedSession({ store: store(path), sessionId: 'small', storeOptions: { maxHistoryBytes: 400 } });
    await small.runTurn({ model: createScriptedModel([[say('short')]]), input: 'hi' });
    await expect(small.runTurn({ model: createScriptedModel([[say('x'.repeat(500))]]), input: 'long' })).rejects.toMatchObject({
      code: 'LIMIT_EXCEEDED',
      message: expect.stringMatching(/^session small: its history would be \d+ bytes, over maxHistoryBytes \(400\)/),
    });
    await small.shutdown();
    const reread = storedSession({ store: store(path), sessionId: 'small' });
    await reread.ready;
    expect(historyLines(reread.history)).toEqual(['user:"hi"', 'assistant:"short"']);
  });

  it('the history budget is a running count: commits after the first never encode the stored history again, and the count is exact', async () => {
    // a model that answers without encoding its request (the scripted model encodes it to count tokens)
    const answer = (text: string): ModelClient => ({
      async *stream() {
        yield { type: 'output-item', item: say(text) };
        yield { type: 'completed' };
      },
    });
    const user = (text: string): ResponseItem => ({ type: 'message', role: 'user', content: text });
    const earlier = Array.from({ length: 100 }, (_, index) => say(`earlier answer ${index}`));
    const turns = [1, 2, 3, 4, 5].flatMap((n) => [user(`question ${n}`), say(`answer ${n}`)]);
    // exactly what the history takes after five turns: the fifth fits, a sixth does not
    const size = JSON.stringify([...earlier, ...turns]).length;
    const counted = storedSession({ history: earlier, store: store(), sessionId: 'budget', storeOptions: { maxHistoryBytes: size } });
    // opening commits the 100 earlier items (nothing kept: nothing to encode twice)
    await counted.ready;
    const encode = vi.spyOn(JSON, 'stringify');
    try {
      for (let n = 1; n <= 5; n++) await counted.runTurn({ model: answer(`answer ${n}`), input: `question ${n}` });
      // the largest array any commit encoded: a turn's few new items, never the history before them
      const largest = Math.max(0, ...encode.mock.calls.map(([value]) => (Array.isArray(value) ? value.length : 0)));
      expect(largest).toBeLessThanOrEqual(2);
    } finally {
      encode.mockRestore();
    }
    expect(counted.history).toEqual([...earlier, ...turns]);
    const over = JSON.stringify([...earlier, ...turns, user('question 6'), say('answer 6')]).length;
    await expect(counted.runTurn({ model: answer('answer 6'), input: 'question 6' })).rejects.toMatchObject({
      code: 'LIMIT_EXCEEDED',
      message: expect.stringContaining(`session budget: its history would be ${over} bytes, over maxHistoryBytes (${size})`),
    });
  });
});

describe('stored values in a store (cells in worker processes)', () => {
  const exec = (callId: string, code: string): ResponseItem => ({ type: 'custom_tool_call', call_id: callId, name: 'exec', input: code });
  const outputText = (item: ResponseItem | undefined) => JSON.stringify((item as { output?: unknown })?.output ?? null);

  it('a value stored by a cell loads in a session resumed from the store, and travels in session.export()', { timeout: 90_000 }, async () => {
    const path = freshFile();
    const first = storedSession({ toolMode: 'code-mode-only', store: store(path), sessionId: 'revenue' });
    await first.runTurn({ model: createScriptedModel([[exec('e1', 'store("lastRevenue", 4938); text("stored")')], [say('ok')]]), input: 'remember' });
    expect(first.export().state.codeMode).toMatchObject({ format: 'switchyard.code-mode', runtime: { format: 'switchyard.code-mode-session', stored: [['lastRevenue', '4938']] } });
    await first.shutdown();
    const second = storedSession({ toolMode: 'code-mode-only', store: store(path), sessionId: 'revenue' });
    const result = await second.runTurn({ model: createScriptedModel([[exec('e2', 'text(String(load("lastRevenue")))')], [say('read')]]), input: 'recall' });
    expect(outputText(result.items.find((item) => item.type === 'custom_tool_call_output'))).toContain('4938');
    const restored = storedSession({ toolMode: 'code-mode-only', restore: second.export() });
    const again = await restored.runTurn({ model: createScriptedModel([[exec('e3', 'text(String(load("lastRevenue")))')], [say('read')]]), input: 'recall' });
    expect(outputText(again.items.find((item) => item.type === 'custom_tool_call_output'))).toContain('4938');
  });
  it('a turn with cells commits only what changed: no commit without news, a journal reset only after journal entries', { timeout: 90_000 }, async () => {
    const inner = store();
    const commits: SessionCommit[] = [];
    const counting: SessionStore = { lease: inner.lease, load: inner.load, commit: (id, commit) => (commits.push(commit), inner.commit(id, commit)) };
    const cells = storedSession({ toolMode: 'code-mode-only', store: counting, sessionId: 'counted' });
    await cells.runTurn({ model: createScriptedModel([[exec('e1', 'store("a", 1); text("one")')], [exec('e2', 'text(String(load("a")))')], [say('done')]]), input: 'two cells' });
    const afterTurn = commits.length;
    await cells.shutdown();
    // the shutdown has nothing left to write
    expect(commits).toHaveLength(afterTurn);
    // each commit carries news: a state, history, journal entries, or a reset of entries written before it
    let journaled = false;
    const empty = commits.flatMap((commit, index) => {
      const appends = (commit.journal?.append?.length ?? 0) > 0;
      const news = commit.state !== undefined || commit.history !== undefined || appends || (commit.journal?.reset === true && journaled);
      if (commit.journal?.reset) journaled = false;
      if (appends) journaled = true;
      return news ? [] : [{ index, commit: { ...commit, lease: undefined } }];
    });
    expect(empty).toEqual([]);
    expect(afterTurn).toBeGreaterThan(0);
    const reread = await inner.load('counted');
    expect(reread?.journal).toEqual([]);
    expect(historyLines(reread!.history as unknown as ResponseItem[]).at(-1)).toBe('assistant:"done"');
  });
});

describe('session.export() and createSession({ restore })', () => {
  it('export is one versioned JSON document; restore continues the conversation in a new session', async () => {
    const first = storedSession({});
    await first.runTurn({ model: createScriptedModel([[callItem('c1', 'echo', { text: 'a' })], [say('done')]]), input: 'go' });
    const exported = first.export();
    expect(exported).toMatchObject({ format: 'switchyard.session', version: 1, sessionId: first.id, journal: [] });
    expect(exported.state).toMatchObject({ format: 'switchyard.session-state', version: 1, pending: [], work: [], cells: [] });
    const text = JSON.stringify(exported);
    const second = storedSession({ restore: JSON.parse(text) });
    await second.ready;
    expect(second.id).toBe(first.id);
    expect(second.history).toEqual(first.history);
  });

  it('a malformed document is a CONFIG error naming the option; a newer version is STORE_VERSION', () => {
    expect(() => createSession({ tools: [], restore: { format: 'nope' } as never })).toThrow(/createSession: option `restore` must be what session.export\(\) returned/);
    const newer = { format: 'switchyard.session', version: 99, sessionId: 's', history: [], journal: [], state: {} };
    expect(() => createSession({ tools: [], restore: newer as never })).toThrow(expect.objectContaining({ code: 'STORE_VERSION', message: expect.stringContaining('session s: option `restore` has export version 99') }));
  });
});
