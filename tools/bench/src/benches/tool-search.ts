/**
 * tool_search over 10,000 deferred tools: BM25 index build time and median query time, each beside
 * a naive reference measured in the same run (lower-casing the same search texts; a substring scan
 * that counts matched query words and keeps the top 8). Also the cost of re-planning a step.
 */
import { defineFunctionTool, type ToolExecutor } from '@switchyard/protocol';
import { createToolSearchIndex, planTools, toolSearchText } from '@switchyard/planner';
import { compare, median, timeMedian, type Bench, type BenchFigure } from '../harness';

const TOOL_COUNT = 10_000;
const LIMIT = 8;

const VERBS = ['get', 'list', 'create', 'update', 'delete', 'search', 'send', 'read', 'archive', 'export', 'import', 'sync'];
const NOUNS = [
  'message', 'event', 'invoice', 'customer', 'file', 'issue', 'pull_request', 'channel', 'forecast', 'table', 'report', 'user',
  'order', 'ticket', 'document', 'folder', 'image', 'comment', 'deal', 'payment', 'shipment', 'contact', 'task', 'project',
];
const WORDS = (
  'account address amount approval attachment balance branch calendar city commit currency date deadline email filter ' +
  'history label language limit location mailbox metric note owner page period priority query range region repository ' +
  'schedule sender status subject summary tag team template thread time timezone title token total url version warehouse'
).split(' ');

/** Deterministic pseudo-random numbers (mulberry32), so every run indexes the same corpus. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function corpus(): ToolExecutor[] {
  const next = random(42);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
  const sentence = (length: number) => Array.from({ length }, () => pick(WORDS)).join(' ');
  return Array.from({ length: TOOL_COUNT }, (_, index) => {
    const properties: Record<string, { type: string; description: string }> = {};
    for (let p = 0; p < 3; p++) properties[`${pick(WORDS)}_${p}`] = { type: 'string', description: `The ${sentence(3)}.` };
    return defineFunctionTool({
      name: `${pick(VERBS)}_${pick(NOUNS)}_${index}`,
      namespace: `mcp__server${index % 100}__`,
      namespaceDescription: `Server ${index % 100}: ${sentence(6)}.`,
      description: `${sentence(12)}.`,
      parameters: { type: 'object', properties },
      exposure: 'deferred',
      handle: () => 'ok',
    });
  });
}

const QUERIES = [
  'send email message',
  'create invoice for customer',
  'list calendar events',
  'weather forecast city',
  'search repository issues by label',
  'export report summary',
  'archive old tickets',
  'update payment status',
  'delete folder',
  'sync contact timezone',
];

/** The reference: for each tool, count how many query words its lower-cased text contains. */
function naiveSearch(texts: readonly string[], query: string, limit: number): number[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const scored: Array<{ index: number; score: number }> = [];
  texts.forEach((text, index) => {
    let score = 0;
    for (const word of words) if (text.includes(word)) score++;
    if (score > 0) scored.push({ index, score });
  });
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  return scored.slice(0, limit).map((entry) => entry.index);
}

async function medianQueryTime(run: (query: string) => unknown): Promise<number> {
  const samples: number[] = [];
  for (let round = 0; round < 5; round++) {
    for (const query of QUERIES) samples.push(await timeMedian(() => run(query), 1, round === 0 ? 1 : 0));
  }
  return median(samples);
}

const bench: Bench = {
  name: 'tool_search (10,000 deferred tools)',
  async run(): Promise<BenchFigure[]> {
    const tools = corpus();
    const build = await timeMedian(() => createToolSearchIndex(tools), 5, 1);
    const naiveBuild = await timeMedian(() => tools.map((tool) => toolSearchText(tool).toLowerCase()), 5, 1);

    const index = createToolSearchIndex(tools);
    const texts = tools.map((tool) => toolSearchText(tool).toLowerCase());
    const query = await medianQueryTime((text) => index.search(text, LIMIT));
    const naiveQuery = await medianQueryTime((text) => naiveSearch(texts, text, LIMIT));

    const context = { toolMode: 'direct' as const, provider: { toolSearch: true } };
    planTools(context, { executors: tools });
    const replan = await timeMedian(() => planTools(context, { executors: tools }), 7, 1);

    return [
      compare('index build (BM25, MiniSearch)', build, 'ms', { name: 'search texts lower-cased only', value: naiveBuild }, { note: `${TOOL_COUNT} tools, median of 5` }),
      compare('query, top 8 (BM25 ranking)', query, 'ms', { name: 'naive substring scan', value: naiveQuery }, { note: `median over ${QUERIES.length} queries × 5` }),
      { name: 'planTools re-plan of the same step (tool_search reused)', value: replan, unit: 'ms', note: `${TOOL_COUNT} deferred tools, median of 7` },
    ];
  },
};

export default bench;
