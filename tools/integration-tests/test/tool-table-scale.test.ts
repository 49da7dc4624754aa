import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ToolExecutor } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { estimateTokens } from '@switchyard/kit/internal';
import { createSession, type Session } from '@switchyard/session';
import { exec, texts, useSessions } from './helpers';

const session = useSessions();

const ENTITIES = ['invoice', 'customer', 'order', 'ticket', 'shipment', 'payment', 'contract', 'product', 'report', 'project'];

/** A host's catalog: `count` tools over 10 namespaces, each with a 3-field input schema and a small output schema. */
function largeCatalog(count: number, calls: unknown[] = []): ToolExecutor[] {
  return Array.from({ length: count }, (_, index) => {
    const entity = ENTITIES[index % ENTITIES.length];
    return defineFunctionTool({
      name: `get_${entity}_${index}`,
      namespace: `svc${index % 10}__`,
      namespaceDescription: `Service ${index % 10}: ${entity} records.`,
      description: `Fetch one ${entity} record of a customer account by its identifier, with its current status, totals and history.`,
      parameters: {
        type: 'object',
        properties: {
          account_id: { type: 'string', description: 'The customer account identifier.' },
          [`${entity}_id`]: { type: 'integer', description: `The ${entity} number.` },
          include_history: { type: 'boolean', description: 'Whether to include the change history.' },
        },
        required: ['account_id', `${entity}_id`],
        additionalProperties: false,
      },
      outputSchema: { type: 'object', properties: { status: { type: 'string' }, total: { type: 'number' } }, required: ['status', 'total'] },
      handle: ({ args }) => {
        calls.push({ tool: `svc${index % 10}__get_${entity}_${index}`, args });
        return { status: 'open', total: index };
      },
    });
  });
}

const o200k = (value: unknown) => countTokens(JSON.stringify(value));

describe('a tool table that stays small at any scale (o200k tokens of step.tools)', () => {
  it.each([1_000, 10_000])('code-mode-only with %i tools stays under 2,500 tokens', async (count) => {
    const s = session({ toolMode: 'code-mode-only', tools: largeCatalog(count) });
    const turn = s.beginTurn();
    const step = await turn.step();
    expect(step.tools.map((tool) => (tool as { name: string }).name)).toEqual(['exec', 'wait']);
    expect(o200k(step.tools)).toBeLessThan(2_500);
    const description = (step.tools[0] as { description: string }).description;
    expect(description).toMatch(new RegExp(`Tool catalog: \\d+ of ${count} nested tools are described below`));
    expect(step.plan.codeModeSurface?.tools).toHaveLength(count);
    await turn.end();
  });

  it.each([1_000, 10_000])('direct with toolSearch and %i tools stays under 2,500 tokens', async (count) => {
    const s = session({ toolMode: 'direct', tools: largeCatalog(count), provider: { toolSearch: true } });
    const turn = s.beginTurn();
    const step = await turn.step();
    expect(o200k(step.tools)).toBeLessThan(2_500);
    expect(step.tools.at(-1)).toMatchObject({ type: 'tool_search' });
    expect(step.plan.deferredByBudget.length).toBeGreaterThan(count - 30);
    // a deferred-by-budget tool is found by tool_search and then called by its namespace and name
    const found = await step.dispatch({ type: 'tool_search_call', call_id: 's1', execution: 'client', arguments: { query: `invoice ${count - 10}` } });
    const namespaces = (found as { tools: Array<{ name: string; tools: Array<{ name: string }> }> }).tools;
    expect(namespaces.flatMap((namespace) => namespace.tools.map((tool) => namespace.name + tool.name))).toContain(`svc0__get_invoice_${count - 10}`);
    const out = await step.dispatch({
      type: 'function_call',
      call_id: 'f1',
      namespace: 'svc0__',
      name: `get_invoice_${count - 10}`,
      arguments: JSON.stringify({ account_id: 'a-1', invoice_id: 7 }),
    });
    expect(out).toMatchObject({ type: 'function_call_output', call_id: 'f1' });
    expect(texts(out)).toEqual([JSON.stringify({ status: 'open', total: count - 10 })]);
    await turn.end();
  });

  it('a table that fits says its catalog is complete (code-mode-only) or how much is upfront (direct with deferred tools)', async () => {
    const only = session({ toolMode: 'code-mode-only', tools: largeCatalog(3) });
    const turn = only.beginTurn();
    const description = ((await turn.step()).tools[0] as { description: string }).description;
    expect(description).toContain('\n\nTool catalog: complete (3 tools).\n\n');
    expect(description).not.toContain('left out to save space');
    await turn.end();

    const tools = largeCatalog(3);
    tools[2] = { ...tools[2], exposure: 'deferred' };
    const direct = session({ toolMode: 'direct', tools, provider: { toolSearch: true } });
    const directTurn = direct.beginTurn();
    const step = await directTurn.step();
    expect(step.plan.deferredByBudget).toEqual([]);
    expect((step.tools.at(-1) as { description: string }).description.endsWith('\n\nTool catalog: 2 of 3 tools are loaded upfront.')).toBe(true);
    await directTurn.end();
  });

  it('plans are byte-identical across steps and turns, with the budget cutting and without', async () => {
    for (const [toolMode, count] of [
      ['code-mode-only', 2_000],
      ['direct', 2_000],
      ['code-mode', 2_000],
      ['code-mode-only', 3],
      ['direct', 3],
    ] as const) {
      const s = session({ toolMode, tools: () => largeCatalog(count), provider: { toolSearch: true } });
      const first = s.beginTurn();
      const one = JSON.stringify((await first.step()).tools);
      const two = JSON.stringify((await first.step()).tools);
      await first.end();
      const second = s.beginTurn();
      const three = JSON.stringify((await second.step()).tools);
      await second.end();
      expect(two).toBe(one);
      expect(three).toBe(one);
    }
  });

  it.each(['left out by the budget', 'deferred by the host'])('a cell reads the declaration of a tool %s and calls it with the right arguments', async (how) => {
    const calls: unknown[] = [];
    const tools = largeCatalog(1_000, calls);
    if (how === 'deferred by the host') tools[984] = { ...tools[984], exposure: 'deferred' };
    const s = session({ toolMode: 'code-mode-only', tools });
    const turn = s.beginTurn();
    const step = await turn.step();
    const description = (step.tools[0] as { description: string }).description;
    expect(description).not.toContain('svc4__get_shipment_984');
    expect(step.plan.codeModeSurface?.tools.find((tool) => tool.codeModeName === 'svc4__get_shipment_984')?.deferred).toBe(how === 'deferred by the host');
    const out = await step.dispatch(
      exec(
        'e1',
        [
          'const entry = ALL_TOOLS.find((tool) => tool.name === "svc4__get_shipment_984");',
          'const declaration = entry.declaration;',
          'text(declaration);',
          // take the argument names from the declaration: the required ones, typed as written there
          'const fields = [...declaration.matchAll(/^  (\\w+)(\\??): (\\w+);$/gm)].filter((m) => m[2] === "").map((m) => [m[1], m[3]]);',
          'const args = Object.fromEntries(fields.map(([name, type]) => [name, type === "string" ? "acct-42" : 984]));',
          'text(JSON.stringify(await tools.svc4__get_shipment_984(args)));',
        ].join('\n'),
      ),
    );
    const [header, declaration, result] = texts(out);
    expect(header).toMatch(/^Script completed\n/);
    expect(declaration).toMatch(/^declare const tools: \{ svc4__get_shipment_984\(args: \{\n/);
    expect(declaration).toMatch(/\}\): Promise<\{ status: string; total: number; \}>; \};$/);
    expect(declaration).toContain('  account_id: string;');
    expect(declaration).toContain('  shipment_id: number;');
    expect(declaration).toContain('  include_history?: boolean;');
    expect(result).toBe('{"status":"open","total":984}');
    expect(calls).toEqual([{ tool: 'svc4__get_shipment_984', args: { account_id: 'acct-42', shipment_id: 984 } }]);
    await turn.end();
  });
});

describe('the token estimate against o200k', () => {
  it('stays between 5 % under and 35 % over the real count on tool-catalog text', async () => {
    const s = session({ toolMode: 'code-mode-only', tools: largeCatalog(40) });
    const turn = s.beginTurn();
    const codeOnly = (await turn.step()).tools;
    await turn.end();
    const direct = session({ toolMode: 'direct', tools: largeCatalog(40), provider: { toolSearch: true } });
    const directTurn = direct.beginTurn();
    const directTools = (await directTurn.step()).tools;
    await directTurn.end();
    const samples: Record<string, string> = {
      'code-mode-only tools JSON': JSON.stringify(codeOnly),
      'direct tools JSON (budgeted)': JSON.stringify(directTools),
      'direct tools JSON (40 tools)': JSON.stringify(largeCatalog(40).map((tool) => tool.spec)),
      'exec description': (codeOnly[0] as { description: string }).description,
      'MCP-style names': JSON.stringify(Array.from({ length: 200 }, (_, index) => `mcp__server${index}__get_thing_${index * 7919}`)),
      'prose (the planner README)': readFileSync(new URL('../../../packages/planner/README.md', import.meta.url), 'utf8'),
      'TypeScript (the planner)': readFileSync(new URL('../../../packages/planner/src/plan-tools.ts', import.meta.url), 'utf8'),
      'German': 'Ruft die Rechnung eines Kunden anhand ihrer Nummer ab, einschließlich Positionen, Summen und Zahlungsstatus. '.repeat(20),
      'Russian': 'Получить счёт клиента по номеру, с позициями, суммами и статусом оплаты. '.repeat(20),
      'Japanese': '東京都の天気予報を取得します。明日の最高気温と降水確率を返します。'.repeat(20),
    };
    const ratios = Object.fromEntries(Object.entries(samples).map(([name, text]) => [name, estimateTokens(text) / countTokens(text)]));
    for (const [name, ratio] of Object.entries(ratios)) {
      expect({ name, ratio: ratio > 0.95 && ratio < 1.35 }).toEqual({ name, ratio: true });
    }
  });
});
