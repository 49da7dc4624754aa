/** Deterministic tool corpora shared by the benches. */
import type { ToolExecutor } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';

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
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` deferred tools over 100 MCP-like namespaces, 3 string parameters each, random words (seed 42). */
export function searchCorpus(count: number): ToolExecutor[] {
  const next = random(42);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
  const sentence = (length: number) => Array.from({ length }, () => pick(WORDS)).join(' ');
  return Array.from({ length: count }, (_, index) => {
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


const ENTITIES = ['invoice', 'customer', 'order', 'ticket', 'shipment', 'payment', 'contract', 'product', 'report', 'project'];

/**
 * The catalog: `count` function tools over 10 namespaces (`svc0__` … `svc9__`, no
 * namespace descriptions), each with a 3-field input schema and a small output schema.
 */
export function catalogCorpus(count: number, exposure?: 'deferred'): ToolExecutor[] {
  return Array.from({ length: count }, (_, index) => {
    const entity = ENTITIES[index % ENTITIES.length];
    return defineFunctionTool({
      name: `get_${entity}_${index}`,
      namespace: `svc${index % 10}__`,
      description: `Fetch one ${entity} record of a customer account by its identifier, with its current status, totals and history.`,
      parameters: {
        type: 'object',
        properties: {
          account_id: { type: 'string', description: 'The customer account identifier.' },
          [`${entity}_id`]: { type: 'integer', description: `The ${entity} number.` },
          include_history: { type: 'boolean', description: 'Whether to include the change history.' },
        },
        required: ['account_id', `${entity}_id`],
      },
      outputSchema: { type: 'object', properties: { status: { type: 'string' }, total: { type: 'number' } }, required: ['status', 'total'] },
      exposure,
      handle: ({ args }) => ({ status: 'open', total: 1, echo: args }),
    });
  });
}
