/**
 * What keeping a session in a store costs (issue 44): the same turn (user input, one function call,
 * its output, the answer) with no store, a SQLite file (`synchronous` normal and full) and NATS
 * JetStream key-value on a real nats-server (loopback), sampled in alternation; the bytes each turn
 * commits; and the time to resume a session of 1,000 history items from each store beside
 * `createSession({ history })` of the same items. `BENCH_STORE_TURNS` sets the turns per sample.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResponseItem, SessionCommit, SessionStore } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession, createSqliteStore } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { createNatsSessionStore } from '@switchyard/code-mode-nats';
import { startNatsServer } from '@switchyard/config/nats-server';
import { alternatingMedians, compare, type Bench, type BenchFigure } from '../harness';

const TURNS = Number(process.env.BENCH_STORE_TURNS ?? 20);
const HISTORY_ITEMS = 1_000;

const lookup = defineFunctionTool({
  name: 'lookup',
  description: 'Looks a word up.',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
  handle: ({ args }) => ({ word: args.word, meaning: `the meaning of ${args.word}` }),
});
const script = (turn: number): ResponseItem[][] => [
  [{ type: 'function_call', call_id: `c${turn}`, name: 'lookup', arguments: JSON.stringify({ word: `word-${turn}` }) }],
  [{ type: 'message', role: 'assistant', content: `It means what it means (${turn}).` }],
];

/** A store that counts the bytes of JSON its commits carry. */
function counting(store: SessionStore & { close(): Promise<void> }): SessionStore & { bytes: number; commits: number; close(): Promise<void> } {
  const counted = {
    bytes: 0,
    commits: 0,
    lease: store.lease.bind(store),
    load: store.load.bind(store),
    close: store.close.bind(store),
    async commit(sessionId: string, commit: SessionCommit) {
      counted.commits++;
      counted.bytes += JSON.stringify({ state: commit.state, history: commit.history?.append, journal: commit.journal?.append }).length;
      return store.commit(sessionId, commit);
    },
  };
  return counted;
}

/** 1,000 history items as a long conversation has them: user messages, calls, outputs, answers. */
function longHistory(): ResponseItem[] {
  const items: ResponseItem[] = [];
  for (let turn = 0; items.length < HISTORY_ITEMS; turn++) {
    items.push({ type: 'message', role: 'user', content: `question ${turn}: ${'context '.repeat(10)}` });
    items.push({ type: 'function_call', call_id: `h${turn}`, name: 'lookup', arguments: JSON.stringify({ word: `w${turn}` }) });
    items.push({ type: 'function_call_output', call_id: `h${turn}`, output: JSON.stringify({ word: `w${turn}`, meaning: 'x'.repeat(120) }) });
    items.push({ type: 'message', role: 'assistant', content: `answer ${turn}: ${'reasoning '.repeat(15)}` });
  }
  return items.slice(0, HISTORY_ITEMS);
}

const bench: Bench = {
  name: 'session store',
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-store-'));
    const nats = await startNatsServer(`jetstream { store_dir: "${join(dir, 'js')}" }`);
    const stores = {
      'SQLite (synchronous normal)': counting(createSqliteStore(join(dir, 'normal.db'))),
      'SQLite (synchronous full)': counting(createSqliteStore(join(dir, 'full.db'), { synchronous: 'full' })),
      'NATS JetStream KV': counting(createNatsSessionStore({ servers: nats.url, bucket: 'bench' })),
    };
    let run = 0;
    // a fresh session per sample: the history (sent whole with every request) stays the same size
    const turns = (store: SessionStore | undefined) => async () => {
      const session = createSession({ tools: [lookup], ...(store ? { store, sessionId: `bench-${run++}` } : {}) });
      for (let turn = 0; turn < TURNS; turn++) await session.runTurn({ model: createScriptedModel(script(turn)), input: `what is word-${turn}?` });
      await session.shutdown();
    };
    const subjects: Array<[string, SessionStore | undefined]> = [['no store', undefined], ...Object.entries(stores)];
    const before = Object.values(stores).map((store) => [store.bytes, store.commits]);
    const medians = await alternatingMedians(subjects.map(([, store]) => turns(store)), 7, 1);
    const figures: BenchFigure[] = [];
    const perTurn = (ms: number) => ms / TURNS;
    const reference = { name: 'the same turn, no store', value: perTurn(medians[0]) };
    Object.entries(stores).forEach(([label, store], index) => {
      const samples = 8 * TURNS;
      const bytes = (store.bytes - before[index][0]) / samples;
      const commits = (store.commits - before[index][1]) / samples;
      figures.push(compare(`turn with one call, ${label}`, perTurn(medians[index + 1]), 'ms', reference, { note: `${bytes.toFixed(0)} bytes in ${commits.toFixed(1)} commits per turn; ${TURNS} turns per session, median of 7 alternating runs` }));
    });

    // resume a session of 1,000 items: load + lease, beside createSession({ history })
    const history = longHistory();
    const seeded = await Promise.all(
      Object.entries(stores).map(async ([, store]) => {
        const session = createSession({ tools: [lookup], store, sessionId: 'long', history });
        await session.ready;
        await session.shutdown();
        return store;
      }),
    );
    const resume = (store: SessionStore | undefined) => async () => {
      const session = createSession({ tools: [lookup], ...(store ? { store, sessionId: 'long' } : { history }) });
      await session.ready;
      if (session.history.length !== HISTORY_ITEMS) throw new Error(`resumed ${session.history.length} items`);
      await session.shutdown();
    };
    const resumed = await alternatingMedians([resume(undefined), ...seeded.map(resume)], 9, 2);
    const bytes = JSON.stringify(history).length;
    Object.keys(stores).forEach((label, index) => {
      figures.push(compare(`resume a session of ${HISTORY_ITEMS} history items, ${label}`, resumed[index + 1], 'ms', { name: 'createSession({ history }) of the same items', value: resumed[0] }, { note: `${(bytes / 1024).toFixed(0)} KiB of history; lease, load, the resume's commit and the release; median of 9 alternating runs` }));
    });
    for (const store of Object.values(stores)) await store.close();
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
    return figures;
  },
};

export default bench;
