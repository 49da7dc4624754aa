// `switchyard mcp serve` with downstream servers that are slow to start (they never answer
// `initialize`): the SDK client's `initialize` is answered at once, the ready server's tools are
// announced with `notifications/tools/list_changed`, and a client that leaves during startup
// (EPIPE on serve's stdout) ends serve cleanly with every downstream process gone (/proc).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { becomes } from '@switchyard/test-helpers';
import { processesWith } from '@switchyard/config/proc';

const CLI_ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVE = fileURLToPath(new URL('../test/fixtures/serve.ts', import.meta.url));
const CATALOG = fileURLToPath(new URL('../../mcp/test/fixtures/catalog-server.mjs', import.meta.url));
const SLOW_SERVER = fileURLToPath(new URL('../test/fixtures/slow-server.mjs', import.meta.url));
const NODE_ARGS = ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', SERVE];
const MARKER = `switchyard-slow-downstream-${process.pid}-${Date.now()}`;

/** A downstream "server" that never answers `initialize`; the marker (per test) finds it in /proc. */
const slow = (test: string) => ({ command: process.execPath, args: ['-e', 'setInterval(() => {}, 1e9)', `${MARKER}-${test}-`], startupTimeoutMs: 120_000 });

/** Pids of live processes whose command line holds the marker (of one test, or of any). */
const markedProcesses = (test = '') => processesWith(test ? `${MARKER}-${test}-` : MARKER);

let workspace: string;
beforeAll(() => {
  workspace = mkdtempSync(join(tmpdir(), 'switchyard-mcp-serve-startup-'));
  writeFileSync(join(workspace, 'servers.json'), JSON.stringify({ servers: { slow: slow('one'), shop: { command: process.execPath, args: [CATALOG] } } }));
  writeFileSync(join(workspace, 'slow.json'), JSON.stringify({ servers: { slow: slow('two'), slow2: slow('two') } }));
  // `shop` answers its first request 4 s after it started (a real server process, slow to start); `stuck` never does
  writeFileSync(join(workspace, 'starting.json'), JSON.stringify({ servers: { shop: { command: process.execPath, args: [SLOW_SERVER, '4000', CATALOG], startupTimeoutMs: 120_000 }, stuck: slow('three') } }));
});
afterAll(() => {
  for (const pid of markedProcesses()) process.kill(pid, 'SIGKILL');
  rmSync(workspace, { recursive: true, force: true });
});

describe('mcp serve startup', () => {
  it('answers initialize at once although a downstream server never starts, then announces the ready one', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...NODE_ARGS, '--cwd', workspace, '--config', join(workspace, 'servers.json')],
      cwd: CLI_ROOT,
      env: process.env as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    const started = performance.now();
    try {
      await client.connect(transport, { timeout: 60_000 });
      const connectMs = performance.now() - started;
      // The slow server's startup timeout is 120 s: answering within 60 s proves nobody waited for it.
      expect(connectMs).toBeLessThan(60_000);
      expect(await becomes(() => changed > 0, 60_000)).toBe(true);
      const { tools } = await client.listTools();
      expect(tools[0].description).toContain('mcp__shop__search_products');
      expect(tools[0].description).not.toMatch(/mcp__slow__\w/);
      expect(tools[0].description).toContain('MCP servers still starting: `slow` (`mcp__slow__*`).');
      // The catalog server's own `instructions` are its text, not serve's: left out by default.
      expect(tools[0].description).not.toContain('A product catalog and its stock.');
    } finally {
      await client.close();
    }
    // The SDK client ends serve's stdin, then SIGTERMs it after 2 s: the downstream processes go too.
    expect(await becomes(() => markedProcesses('one').length === 0, 20_000)).toBe(true);
  }, 120_000);

  it('a client that leaves during startup (EPIPE on stdout): serve exits 0 and leaves no downstream process', async () => {
    const child = spawn(process.execPath, [...NODE_ARGS, '--cwd', workspace, '--config', join(workspace, 'slow.json')], { cwd: CLI_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    expect(await becomes(() => markedProcesses('two').length === 2, 60_000)).toBe(true);
    child.stdout.destroy(); // the client is gone: serve's next write fails with EPIPE
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gone', version: '1' } } })}\n`);
    const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await exited;
    clearTimeout(kill);
    expect(stderr).not.toMatch(/Unhandled|uncaught|at .*stdio-transports/i);
    expect(code).toBe(0);
    expect(await becomes(() => markedProcesses('two').length === 0, 20_000)).toBe(true);
  }, 150_000);

  it('while a server starts, exec says so, and a script calling its tool waits for it; one that never starts is refused after the bound', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...NODE_ARGS, '--cwd', workspace, '--config', join(workspace, 'starting.json'), '--startup-wait-ms', '12000'],
      cwd: CLI_ROOT,
      env: process.env as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const text = (result: Awaited<ReturnType<typeof client.callTool>>) => (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');
    try {
      await client.connect(transport, { timeout: 60_000 });
      const starting = (await client.listTools()).tools[0].description ?? '';
      expect(starting).not.toContain('Tool catalog: complete');
      expect(starting).toContain('Tool catalog: incomplete: ');
      expect(starting).toContain('MCP servers still starting: `shop` (`mcp__shop__*`), `stuck` (`mcp__stuck__*`). Their tools are not listed yet; a script that calls one waits until its server is ready (up to 12 s).');
      expect(starting).not.toContain('mcp__shop__search_products');
      // the shop is not up yet: the script waits for it instead of failing with "is not a function"
      const result = await client.callTool({ name: 'exec', arguments: { code: "const found = await tools.mcp__shop__search_products({ query: 'lamp' });\ntext(found.structuredContent.products.map((product) => product.name).join(', '));" } }, undefined, { timeout: 120_000 });
      expect(text(result)).not.toContain('is not a function');
      expect(result.isError).not.toBe(true);
      expect(text(result)).toContain('desk lamp, floor lamp, reading lamp, lamp shade');
      const ready = (await client.listTools()).tools[0].description ?? '';
      expect(ready).toContain('mcp__shop__search_products');
      expect(ready).toContain('MCP servers still starting: `stuck` (`mcp__stuck__*`).');
      // a server that never starts: bounded, and the model reads why
      const stuck = await client.callTool({ name: 'exec', arguments: { code: 'await tools.mcp__stuck__anything({});' } }, undefined, { timeout: 120_000 });
      expect(stuck.isError).toBe(true);
      expect(text(stuck)).toMatch(/^exec was not run: the script calls tools of MCP server `stuck`, still starting after 1[12] s; run it again once it is ready$/);
      // a script naming no starting server runs at once
      const plain = await client.callTool({ name: 'exec', arguments: { code: "text('no wait')" } }, undefined, { timeout: 60_000 });
      expect(text(plain)).toContain('no wait');
    } finally {
      await client.close();
    }
  }, 180_000);
});
