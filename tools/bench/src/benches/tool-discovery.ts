/**
 * Prompt bytes a provider's cache can reuse while Code Mode cells discover tools. The same scripted
 * 10-step turn (9 `exec` cells, 3 of which find a new deferred tool with `tools.tool_search`, then an
 * answer) runs through a `code-mode-only` session twice:
 * - `toolDiscovery: 'tools'` (the default): found tools join the plan, so the `exec` description —
 *   early in the request — changes after each discovery;
 * - `toolDiscovery: 'conversation'`: the request's `tools` stay byte-identical and each discovery
 *   arrives as a developer message appended to the input.
 * Counted per request after the first: the longest common prefix (UTF-8 bytes) of its serialized
 * `tools` + `input` with the request before it (what a prefix cache can reuse), summed over the
 * turn, beside the bytes sent. Counts, not timings: only the `Wall time` digits of cell outputs
 * can move them, by a few bytes.
 */
import type { ModelRequest, ResponseItem, ToolExecutor } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { compare, type Bench, type BenchFigure } from '../harness';

/** A catalog a host might defer: 8 namespaces × 5 tools with plain descriptions and small schemas. */
function catalog(): ToolExecutor[] {
  const areas: Array<[string, string, string[]]> = [
    ['weather', 'weather data for a place', ['get_forecast', 'get_alerts', 'get_history', 'get_radar', 'get_air_quality']],
    ['mail', 'the user\'s mailbox', ['send', 'search', 'read', 'archive', 'label']],
    ['calendar', 'the user\'s calendar', ['add_event', 'list_events', 'move_event', 'cancel_event', 'find_free_slot']],
    ['crm', 'customer records', ['find_contact', 'update_contact', 'log_call', 'list_deals', 'close_deal']],
    ['billing', 'invoices and payments', ['create_invoice', 'refund', 'list_payments', 'get_balance', 'send_reminder']],
    ['tickets', 'the support queue', ['open_ticket', 'assign', 'comment', 'resolve', 'list_open']],
    ['deploy', 'the deployment pipeline', ['start_rollout', 'rollback', 'status', 'list_releases', 'promote']],
    ['files', 'the shared drive', ['upload', 'download', 'share', 'list_folder', 'move']],
  ];
  const tools: ToolExecutor[] = [defineFunctionTool({ name: 'note', description: 'Keeps a short note for later in the conversation.', parameters: { type: 'object', properties: { text: { type: 'string' } } }, handle: () => 'noted' })];
  for (const [namespace, subject, names] of areas) {
    for (const name of names) {
      tools.push(
        defineFunctionTool({
          name,
          namespace: `${namespace}__`,
          description: `${name.replaceAll('_', ' ')} in ${subject}. Returns a JSON object describing the result, or an error message when the request cannot be served.`,
          exposure: 'deferred',
          parameters: {
            type: 'object',
            properties: { id: { type: 'string', description: 'The record the call is about, when there is one.' }, query: { type: 'string' }, limit: { type: 'integer', minimum: 1 } },
          },
          handle: ({ args }) => ({ tool: `${namespace}__${name}`, args }),
        }),
      );
    }
  }
  return tools;
}

const exec = (callId: string, code: string): ResponseItem[] => [{ type: 'custom_tool_call', call_id: callId, name: 'exec', input: code }];

/** 9 cells (3 discover a new tool, one searches again for a known one), then the answer. */
function script(): ResponseItem[][] {
  const find = (id: string, query: string) => exec(id, `const r = await tools.tool_search({ query: ${JSON.stringify(query)}, limit: 1 }); text(r.tools[0].name);`);
  return [
    find('c1', 'weather forecast'),
    exec('c2', `text(JSON.stringify(await tools.weather__get_forecast({ query: 'Oslo' })));`),
    find('c3', 'send mail'),
    exec('c4', `text(await tools.note({ text: 'call Ana' }));`),
    find('c5', 'weather forecast'),
    find('c6', 'calendar add event'),
    exec('c7', `text(JSON.stringify(await tools.calendar__add_event({ query: 'standup 9:00' })));`),
    exec('c8', `text('thinking');`),
    exec('c9', `text(JSON.stringify(await tools.mail__send({ id: 'ana@example.com' })));`),
    [{ type: 'message', role: 'assistant', content: 'Your day is planned.' }],
  ];
}

/** The bytes two serialized prompts share from their start. */
function commonPrefixBytes(a: Buffer, b: Buffer): number {
  const length = Math.min(a.length, b.length);
  let index = 0;
  while (index < length && a[index] === b[index]) index++;
  return index;
}

interface Counts {
  requests: number;
  distinctTables: number;
  sent: number;
  cacheable: number;
}

function countPrefixes(requests: readonly ModelRequest[]): Counts {
  const prompts = requests.map((request) => Buffer.from(JSON.stringify(request.tools) + JSON.stringify(request.input)));
  let sent = 0;
  let cacheable = 0;
  for (let index = 1; index < prompts.length; index++) {
    sent += prompts[index].length;
    cacheable += commonPrefixBytes(prompts[index - 1], prompts[index]);
  }
  return { requests: requests.length, distinctTables: new Set(requests.map((request) => JSON.stringify(request.tools))).size, sent, cacheable };
}

async function turn(toolDiscovery: 'tools' | 'conversation'): Promise<Counts> {
  const session = createSession({ toolMode: 'code-mode-only', tools: catalog(), toolDiscovery, codeMode: { runtimeOptions: { isolation: 'in-process' } } });
  try {
    const model = createScriptedModel(script());
    await session.runTurn({ model, input: 'Plan my day: the weather in Oslo, a standup at 9:00, and a mail to Ana.' });
    if (model.requests.length !== 10) throw new Error(`tool-discovery bench: expected 10 requests, got ${model.requests.length}`);
    return countPrefixes(model.requests);
  } finally {
    await session.shutdown();
  }
}

const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} %`;

const bench: Bench = {
  name: 'tool discovery (prompt cache)',
  async run(): Promise<BenchFigure[]> {
    const conversation = await turn('conversation');
    const tools = await turn('tools');
    const note = `requests 2–10 of a 10-step code-mode-only turn, 3 discoveries, 41 tools (40 deferred); distinct tool tables: ${conversation.distinctTables} vs ${tools.distinctTables}`;
    return [
      compare("cacheable prompt bytes, toolDiscovery 'conversation'", conversation.cacheable, 'B', { name: "toolDiscovery 'tools'", value: tools.cacheable }, {
        higherIsBetter: true,
        note: `${note}; longest common prefix of consecutive requests' tools + input, summed`,
      }),
      compare("share of sent bytes that is cacheable, 'conversation'", (100 * conversation.cacheable) / conversation.sent, '%', { name: "'tools'", value: (100 * tools.cacheable) / tools.sent }, {
        higherIsBetter: true,
        note: `${percent(conversation.cacheable, conversation.sent)} of ${conversation.sent} B vs ${percent(tools.cacheable, tools.sent)} of ${tools.sent} B`,
      }),
      compare("uncached prompt bytes (read anew), 'conversation'", conversation.sent - conversation.cacheable, 'B', { name: "'tools'", value: tools.sent - tools.cacheable }, {
        note: 'bytes sent past the common prefix, requests 2–10',
      }),
      compare("prompt bytes sent, 'conversation'", conversation.sent, 'B', { name: "'tools'", value: tools.sent }, { note: 'requests 2–10, tools + input serialized' }),
    ];
  },
};
export default bench;
