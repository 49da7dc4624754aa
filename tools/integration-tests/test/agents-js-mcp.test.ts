// OpenAI Agents JS (@openai/agents, pinned) as the MCP client of `switchyard mcp serve` over stdio:
// its own MCPServerStdio connects (while a downstream server of the config never starts), lists
// exec and wait, and calls them (a script calling a built-in tool and a downstream MCP tool, a
// background cell finished through wait). No model is involved: the server API is used directly.
// Closing ends serve and every downstream process (/proc).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MCPServerStdio } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processesWith, processInfo } from '@switchyard/config/proc';
import { becomes } from '@switchyard/test-helpers';

const require = createRequire(import.meta.url);
const SERVE = fileURLToPath(new URL('../../../packages/cli/test/fixtures/serve.ts', import.meta.url));
const CATALOG = fileURLToPath(new URL('../../../packages/mcp/test/fixtures/catalog-server.mjs', import.meta.url));
const TSX = pathToFileURL(require.resolve('tsx')).href;
const MARKER = `switchyard-agents-js-${process.pid}-${Date.now()}`;

type Block = { type: string; text?: string };
const blocksText = (content: unknown): string => (content as Block[]).map((block) => block.text ?? `[${block.type}]`).join('\n');

let workspace: string;
let server: MCPServerStdio;
let connectMs: number;

beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), 'switchyard-agents-js-'));
  writeFileSync(join(workspace, 'note.txt'), 'agents js was here\n');
  const slow = { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1e9)', MARKER], startupTimeoutMs: 300_000 };
  const shop = { command: process.execPath, args: [CATALOG, MARKER], startupTimeoutMs: 120_000 };
  writeFileSync(join(workspace, 'servers.json'), JSON.stringify({ servers: { slow, shop } }));
  server = new MCPServerStdio({
    name: 'switchyard',
    command: process.execPath,
    args: ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', TSX, SERVE, '--cwd', workspace, '--config', join(workspace, 'servers.json')],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    clientSessionTimeoutSeconds: 120,
  });
  const started = performance.now();
  await server.connect();
  connectMs = performance.now() - started;
}, 180_000);

afterAll(async () => {
  await server?.close();
  await becomes(() => processesWith(MARKER).length === 0, 10_000, 100);
  for (const pid of processesWith(MARKER)) process.kill(pid, 'SIGKILL');
  rmSync(workspace, { recursive: true, force: true });
});

describe('Agents JS MCPServerStdio against switchyard mcp serve', () => {
  it('connects although a downstream server never starts (well inside its 300 s startup timeout)', () => {
    expect(connectMs).toBeLessThan(120_000);
  });

  it('lists exec and wait with their input schemas', async () => {
    let tools = await server.listTools();
    for (let tries = 0; tries < 600 && !(tools[0]?.description ?? '').includes('mcp__shop__search_products'); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      tools = await server.listTools();
    }
    expect(tools.map((tool) => tool.name)).toEqual(['exec', 'wait']);
    expect(tools[0].inputSchema).toMatchObject({ type: 'object', properties: { code: { type: 'string' } }, required: ['code'] });
    expect(tools[1].inputSchema).toMatchObject({ type: 'object', required: ['cell_id'] });
    expect(tools[0].description).toContain('### `clock__curr_time`');
    expect(tools[0].description).toContain('### `mcp__shop__search_products`');
  }, 90_000);

  it('calls exec: a script using a built-in tool and a downstream MCP tool', async () => {
    const content = await server.callTool('exec', {
      code: 'const now = await tools.clock__curr_time();\nconst r = await tools.mcp__shop__search_products({ query: "lamp" });\ntext(typeof now.iso + " " + r.structuredContent.products.map((p) => p.sku).join(","));',
    });
    const text = blocksText(content);
    expect(text).toMatch(/^Script completed\nWall time \d+\.\d seconds\nOutput:\n/);
    expect(text).toMatch(/\nstring [A-Z0-9-]+(,[A-Z0-9-]+)*$/);
  }, 60_000);

  it('finishes a yielded cell through wait', async () => {
    const first = blocksText(await server.callTool('exec', { code: 'text("before");\nyield_control();\nawait new Promise((resolve) => setTimeout(resolve, 200));\ntext("after");' }));
    const cellId = /Script running with cell ID (\S+)/.exec(first)?.[1];
    expect(cellId, first).toBeDefined();
    const done = blocksText(await server.callTool('wait', { cell_id: cellId!, yield_time_ms: 30_000 }));
    expect(done).toMatch(/^Script completed\n/);
    expect(done).toContain('after');
  }, 60_000);

  it('a failing script is an error result, not a broken connection', async () => {
    const result = await server.callToolResult('exec', { code: 'throw new Error("boom from agents js")' });
    expect(result.isError).toBe(true);
    expect(blocksText(result.content)).toContain('boom from agents js');
    expect((await server.listTools()).map((tool) => tool.name)).toEqual(['exec', 'wait']);
  }, 60_000);

  it('close ends serve and every downstream server', async () => {
    expect(processesWith(MARKER).length).toBeGreaterThan(0);
    await server.close();
    await becomes(() => processesWith(MARKER).length === 0, 15_000, 100);
    expect(processesWith(MARKER).map((pid) => processInfo(pid)?.cmdline.join(' '))).toEqual([]);
  }, 30_000);
});
