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
      expect(tools[0].description).not.toContain('mcp__slow__');
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
});
