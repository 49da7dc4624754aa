import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpTools, type McpTools } from '@switchyard/mcp';
import { createSession, type Session } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { exec, say, texts } from './helpers';

// A real MCP server written with the SDK, started as a child process (packages/mcp test fixture).
const CATALOG = fileURLToPath(new URL('../../../packages/mcp/test/fixtures/catalog-server.mjs', import.meta.url));

const JOIN_AND_FILTER = `const [found, stock] = await Promise.all([
  tools.mcp__shop__search_products({ query: 'lamp', delay_ms: 500 }),
  tools.mcp__shop__list_inventory({ warehouse: 'north', delay_ms: 500 }),
]);
const counts = new Map(stock.structuredContent.items.map((item) => [item.sku, item.count]));
const inStock = found.structuredContent.products.filter((product) => (counts.get(product.sku) ?? 0) > 0);
text('in stock in north: ' + inStock.map((product) => product.name).join(', '));
text('raw result bytes: ' + (JSON.stringify(found).length + JSON.stringify(stock).length));
const a = found.structuredContent, b = stock.structuredContent;
text('overlapped: ' + (Math.max(a.started_at, b.started_at) < Math.min(a.ended_at, b.ended_at)));`;

describe('Code Mode over a real MCP server', () => {
  let mcp: McpTools;
  let session: Session;

  beforeAll(async () => {
    mcp = await mcpTools({ servers: { shop: { command: process.execPath, args: [CATALOG], parallel: true } } });
    session = createSession({ toolMode: 'code-mode-only', tools: () => mcp.executors() });
  }, 20_000);
  afterAll(async () => {
    await session?.shutdown();
    await mcp?.close();
  });

  it('describes the MCP tools to the script with CallToolResult<T> and the shared MCP types', async () => {
    expect(mcp.warnings).toEqual([]);
    const turn = session.beginTurn();
    const step = await turn.step();
    expect(step.tools.map((tool) => (tool as { name: string }).name)).toEqual(['exec', 'wait']);
    const description = (step.tools[0] as { description: string }).description;
    expect(description).toContain('Shared MCP Types:\n```ts\n');
    expect(description).toContain('## mcp__shop__\nA product catalog and its stock.');
    expect(description).toContain('### `mcp__shop__list_inventory`\nLists the stock of every product in a warehouse.');
    expect(description).toMatch(/mcp__shop__list_inventory\(args: \{ delay_ms\?: number; warehouse: string; \}\): Promise<CallToolResult<\{ ended_at: number; items: Array<\{ count: number; sku: string; \}>; started_at: number; \}>>;/);
    await turn.end();
  });

  it('a scripted model runs one cell that calls two MCP tools in parallel and filters their results', async () => {
    const nested: Array<{ tool: string; caller: string }> = [];
    const off = session.on('tool-call-start', (event) => nested.push({ tool: event.toolName, caller: event.source.kind }));
    const model = createScriptedModel([[exec('call-1', JOIN_AND_FILTER)], [say('The desk lamp and the reading lamp are in stock.')]]);
    const result = await session.runTurn({ model, input: 'Which lamps can ship from the north warehouse?' });
    off();

    expect(result.steps).toBe(2);
    expect(result.finalText).toBe('The desk lamp and the reading lamp are in stock.');
    const output = result.items.find((item) => item.type === 'custom_tool_call_output');
    const [header, filtered, raw, overlapped] = texts(output);
    expect(header).toMatch(/^Script completed\nWall time \d+\.\d seconds\nOutput:\n$/);
    expect(filtered).toBe('in stock in north: desk lamp, reading lamp');
    // The model saw one short line instead of the two large results.
    expect(Number(/^raw result bytes: (\d+)$/.exec(raw)![1])).toBeGreaterThan(30_000);
    expect(JSON.stringify(output).length).toBeLessThan(1_000);
    expect(overlapped).toBe('overlapped: true');
    expect(nested.filter((call) => call.caller === 'code-mode').map((call) => call.tool).sort()).toEqual(['mcp__shop__list_inventory', 'mcp__shop__search_products']);
  });

  it('an MCP error result resolves in the cell with isError set', async () => {
    const turn = session.beginTurn();
    const step = await turn.step();
    const out = await step.dispatch(
      exec('call-2', `const r = await tools.mcp__shop__list_inventory({ warehouse: 'east' });\ntext(JSON.stringify({ isError: r.isError, content: r.content }));`),
    );
    expect(texts(out).slice(1)).toEqual(['{"isError":true,"content":[{"type":"text","text":"unknown warehouse: east"}]}']);
    await turn.end();
  });
});
