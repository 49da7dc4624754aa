// The agent behind the page: a Code Mode session with three tools (one asks before it runs, one is
// slow enough to finish in the background), and a scripted model that plays the same conversation
// every time (no network, no key). A real host passes `aiSdkModel(anthropic('claude-sonnet-4-5'))`.
import { createUIApprovals, type UIApprovals } from '@switchyard/ai-sdk';
import { defineFunctionTool } from '@switchyard/kit';
import type { ModelRequest, ResponseItem } from '@switchyard/protocol';
import { createSession, type Session } from '@switchyard/session';
import { createScriptedModel, type ScriptedModel } from '@switchyard/session/testing';

const checkStock = defineFunctionTool<{ sku: string }>({
  name: 'check_stock',
  namespace: 'inventory',
  description: 'Units in stock of a SKU.',
  parameters: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'], additionalProperties: false },
  handle: ({ args }) => ({ sku: args.sku, units: args.sku === 'plum' ? 0 : 7 }),
});

/** Refunds ask the person in the page first. */
export const refunds: number[] = [];
const refund = defineFunctionTool<{ order: number; amount: number }>({
  name: 'refund',
  namespace: 'billing',
  description: 'Refunds an order.',
  parameters: { type: 'object', properties: { order: { type: 'number' }, amount: { type: 'number' } }, required: ['order', 'amount'], additionalProperties: false },
  needsApproval: true,
  handle: ({ args }) => {
    refunds.push(args.order);
    return { refunded: args.order, amount: args.amount };
  },
});

const nightlyReport = defineFunctionTool({
  name: 'nightly_report',
  namespace: 'reports',
  description: 'Builds the nightly report.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  handle: () => ({ rows: 42 }),
});

const STOCK_CELL = `const [apple, plum] = await Promise.all(['apple', 'plum'].map((sku) => tools.inventory__check_stock({ sku })));
text('apple: ' + apple.units + ', plum: ' + plum.units);`;
const REPORT_CELL = `yield_control();
await new Promise((resolve) => setTimeout(resolve, 1500));
const report = await tools.reports__nightly_report({});
text('report: ' + report.rows + ' rows');`;

const say = (content: string): ResponseItem[] => [{ type: 'message', role: 'assistant', content }];

/** The model's side of the conversation, read from the last item of each request. */
function answer(request: ModelRequest): ResponseItem[] {
  const last = request.input.at(-1) as { type: string; role?: string; content?: unknown; call_id?: string; output?: unknown };
  const id = `call-${request.input.length}`;
  const output = JSON.stringify(last.output ?? '');
  if (last.type === 'message' && last.role === 'user') {
    const text = JSON.stringify(last.content).toLowerCase();
    if (text.includes('stock')) return [...say('Let me count.'), { type: 'custom_tool_call', call_id: id, name: 'exec', input: STOCK_CELL }];
    if (text.includes('report')) return [{ type: 'custom_tool_call', call_id: id, name: 'exec', input: REPORT_CELL }];
    return say('Ask me about stock or the nightly report.');
  }
  if (last.type === 'custom_tool_call_output' && output.includes('plum: 0')) {
    return [{ type: 'function_call', call_id: id, name: 'refund', namespace: 'billing', arguments: JSON.stringify({ order: 7, amount: 120 }) }];
  }
  if (last.type === 'function_call_output') return say(output.includes('refunded') ? 'Plums are out, so I refunded order 7.' : 'The refund was not approved.');
  if (output.includes('Script running')) return say('The report runs in the background; it will show up here when it is ready.');
  if (output.includes('rows')) return say('The nightly report is ready: 42 rows.');
  return say('Done.');
}

/** One conversation: its session, the approvals the page answers, and the model. */
export interface Agent {
  readonly session: Session;
  readonly approvals: UIApprovals;
  readonly model: ScriptedModel;
}

export function createAgent(options: { approvalTimeoutMs?: number } = {}): Agent {
  const approvals = createUIApprovals({ timeoutMs: options.approvalTimeoutMs ?? 120_000 });
  const session = createSession({ toolMode: 'code-mode', tools: [checkStock, refund, nightlyReport], approvals, background: true, provider: { toolSearch: false } });
  const model = createScriptedModel(answer, { textDeltas: true });
  // results of background work start a turn of their own (the page follows it)
  session.wake({ model });
  return { session, approvals, model };
}
