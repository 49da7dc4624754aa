import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processesWith } from '@switchyard/config/proc';
import { becomes, contentTexts } from '@switchyard/test-helpers';
import { readMcpServeConfig } from './mcp-command';

const CLI_ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVE = fileURLToPath(new URL('../test/fixtures/serve.ts', import.meta.url));
const CATALOG = fileURLToPath(new URL('../../mcp/test/fixtures/catalog-server.mjs', import.meta.url));
const NODE_ARGS = ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', SERVE];
const RED_DOT = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

type Content = Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
const HEADER = (status: string) => new RegExp(`^${status}\\nWall time \\d+\\.\\d seconds\\nOutput:\\n$`);

let workspace: string;
beforeAll(() => {
  workspace = mkdtempSync(join(tmpdir(), 'switchyard-mcp-serve-'));
  writeFileSync(join(workspace, 'servers.json'), JSON.stringify({ servers: { shop: { command: process.execPath, args: [CATALOG], parallel: true } } }));
});
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

describe('switchyard mcp serve, driven by the SDK client over stdio', () => {
  let client: Client;
  let transport: StdioClientTransport;
  const stderr: string[] = [];

  beforeAll(async () => {
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [...NODE_ARGS, '--cwd', workspace, '--config', join(workspace, 'servers.json')],
      cwd: CLI_ROOT,
      env: process.env as Record<string, string>,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
    client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(transport);
  }, 30_000);
  afterAll(() => client?.close());

  it('lists exec (one code argument) and wait; exec describes the built-ins and the downstream tools', async () => {
    // `initialize` is answered before the downstream servers are up; their tools follow (tools/list_changed).
    let { tools } = await client.listTools();
    for (let tries = 0; tries < 300 && !(tools[0].description ?? '').includes('### `mcp__shop__'); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      ({ tools } = await client.listTools());
    }
    expect(tools.map((tool) => tool.name)).toEqual(['exec', 'wait']);
    expect(tools[0].inputSchema).toMatchObject({ type: 'object', properties: { code: { type: 'string' } }, required: ['code'] });
    expect(tools[1].inputSchema).toMatchObject({ type: 'object', required: ['cell_id'], properties: { cell_id: { type: 'string' }, terminate: { type: 'boolean' } } });
    const description = tools[0].description ?? '';
    expect(description).toContain('### `clock__curr_time`');
    expect(description).toContain('### `mcp__shop__search_products`');
    expect(description).toContain('Shared MCP Types:');
    expect(description).toMatch(/mcp__shop__list_inventory\(args: .*\): Promise<CallToolResult<\{/);
    expect(stderr.join('')).toBe('');
  });

  it('runs a script that calls a built-in tool', async () => {
    const result = await client.callTool({ name: 'exec', arguments: { code: 'const now = await tools.clock__curr_time();\ntext(typeof now.iso + " " + Number.isInteger(now.unix_ms));' } });
    expect(result.isError).toBeUndefined();
    expect(contentTexts(result)[0]).toMatch(HEADER('Script completed'));
    expect(contentTexts(result).slice(1)).toEqual(['string true']);
  });

  it('runs a script that calls a downstream MCP tool and filters its result', async () => {
    const result = await client.callTool({
      name: 'exec',
      arguments: { code: 'const r = await tools.mcp__shop__search_products({ query: "lamp" });\ntext(r.structuredContent.products.filter((p) => !p.name.includes("sponsored")).map((p) => p.sku).join(","));' },
    });
    expect(contentTexts(result).slice(1)).toEqual(['P-01,P-02,P-05,P-08']);
  });

  it('yields, keeps the cell running between calls, and wait returns the rest', async () => {
    const first = await client.callTool({
      name: 'exec',
      arguments: { code: 'text("before");\nyield_control();\nawait new Promise((resolve) => setTimeout(resolve, 300));\nconst now = await tools.clock__curr_time();\ntext("after " + typeof now.iso);' },
    });
    const running = /^Script running with cell ID (\S+)\n/.exec(contentTexts(first)[0]);
    expect(running).not.toBeNull();
    expect(first.isError).toBeUndefined();
    expect(contentTexts(first).slice(1)).toEqual(['before']);
    const cellId = running![1];
    const done = await client.callTool({ name: 'wait', arguments: { cell_id: cellId, yield_time_ms: 10_000 } });
    expect(contentTexts(done)[0]).toMatch(HEADER('Script completed'));
    expect(contentTexts(done).slice(1)).toEqual(['after string']);
    const gone = await client.callTool({ name: 'wait', arguments: { cell_id: cellId } });
    expect(gone.isError).toBe(true);
    expect(contentTexts(gone)).toEqual([expect.stringMatching(HEADER('Script failed')), `Script error:\nexec cell ${cellId} not found`]);
  });

  it('runs a yielding cell as an MCP task when the client asks for one (2025-11-25 Tasks)', async () => {
    const statuses: string[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => void statuses.push(`${notification.params.status}:${notification.params.statusMessage ?? ''}`));
    // 2.5 s: the server follows the cell with several 1 s waits; one notification, one result.
    const code = 'text("before");\nyield_control();\nawait new Promise((resolve) => setTimeout(resolve, 2500));\nconst now = await tools.clock__curr_time();\ntext("after " + typeof now.iso);';
    const { task } = await client.request({ method: 'tools/call', params: { name: 'exec', arguments: { code } } }, CreateTaskResultSchema, { task: { ttl: 60_000 } });
    expect(task.status).toBe('working');
    const running = await client.experimental.tasks.getTask(task.taskId);
    expect(running.status).toBe('working');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBeUndefined();
    expect(contentTexts(result)[0]).toMatch(HEADER('Script completed'));
    expect(contentTexts(result).slice(1)).toEqual(['before', 'after string']);
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    expect(statuses).toEqual([expect.stringMatching(/^working:Script running with cell ID \S+$/), 'completed:Script completed']);
    client.removeNotificationHandler('notifications/tasks/status');
  });

  it('tasks/cancel terminates the task\'s cell', async () => {
    const code = 'text("spinning");\nyield_control();\nwhile (true) {}';
    const { task } = await client.request({ method: 'tools/call', params: { name: 'exec', arguments: { code } } }, CreateTaskResultSchema, { task: { ttl: 60_000 } });
    let message = '';
    for (let tries = 0; tries < 100 && !message.startsWith('Script running'); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      message = (await client.experimental.tasks.getTask(task.taskId)).statusMessage ?? '';
    }
    const cellId = /^Script running with cell ID (\S+)$/.exec(message)![1];
    // serve runs calls one at a time: another call waits behind a follow-up wait (1 s), not the cell.
    const started = Date.now();
    const other = await client.callTool({ name: 'exec', arguments: { code: 'text("other")' } });
    expect(contentTexts(other).slice(1)).toEqual(['other']);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await client.experimental.tasks.cancelTask(task.taskId)).toMatchObject({ status: 'cancelled' });
    let gone = await client.callTool({ name: 'wait', arguments: { cell_id: cellId, yield_time_ms: 5_000 } });
    // The terminate may still be on its way: a wait that catches the cell first sees it end terminated.
    if (/^Script terminated/.test(contentTexts(gone)[0])) gone = await client.callTool({ name: 'wait', arguments: { cell_id: cellId } });
    expect(contentTexts(gone)).toEqual([expect.stringMatching(HEADER('Script failed')), `Script error:\nexec cell ${cellId} not found`]);
  });

  it('terminates a busy cell through wait', async () => {
    const first = await client.callTool({ name: 'exec', arguments: { code: '// @exec: {"yield_time_ms": 100}\ntext("spinning");\nwhile (true) {}' } });
    const cellId = /cell ID (\S+)/.exec(contentTexts(first)[0])![1];
    const stopped = await client.callTool({ name: 'wait', arguments: { cell_id: cellId, terminate: true } });
    expect(stopped.isError).toBeUndefined();
    expect(contentTexts(stopped)).toEqual([expect.stringMatching(HEADER('Script terminated'))]);
  });

  it('serves a yielded cell\'s nested calls while no MCP call is running', async () => {
    const first = await client.callTool({
      name: 'exec',
      arguments: { code: 'yield_control();\nawait tools.apply_patch("*** Begin Patch\\n*** Add File: background.txt\\n+written between calls\\n*** End Patch");\ntext("patched");' },
    });
    const cellId = /^Script running with cell ID (\S+)\n/.exec(contentTexts(first)[0])![1];
    // No MCP call is in flight now; the cell's apply_patch still runs.
    await expect.poll(() => existsSync(join(workspace, 'background.txt')), { timeout: 10_000 }).toBe(true);
    expect(readFileSync(join(workspace, 'background.txt'), 'utf8')).toBe('written between calls\n');
    const done = await client.callTool({ name: 'wait', arguments: { cell_id: cellId } });
    expect(contentTexts(done)[0]).toMatch(HEADER('Script completed'));
    expect(contentTexts(done).slice(1)).toEqual(['patched']);
  });

  it('answers concurrent calls, each cell calling its own tools', async () => {
    const [slow, quick] = await Promise.all([
      client.callTool({ name: 'exec', arguments: { code: 'await new Promise((resolve) => setTimeout(resolve, 300));\nconst now = await tools.clock__curr_time();\ntext("slow " + typeof now.iso);' } }),
      client.callTool({ name: 'exec', arguments: { code: 'const budget = await tools.get_context_remaining();\ntext("quick " + typeof budget);' } }),
    ]);
    expect(contentTexts(slow)[0]).toMatch(HEADER('Script completed'));
    expect(contentTexts(slow).slice(1)).toEqual(['slow string']);
    expect(contentTexts(quick)[0]).toMatch(HEADER('Script completed'));
    expect(contentTexts(quick).slice(1)).toEqual(['quick object']);
  });

  it('turns image() into MCP image content', async () => {
    const result = await client.callTool({ name: 'exec', arguments: { code: `text("a red dot");\nimage("data:image/png;base64,${RED_DOT}");` } });
    expect((result.content as Content).slice(1)).toEqual([
      { type: 'text', text: 'a red dot' },
      { type: 'image', data: RED_DOT, mimeType: 'image/png', _meta: { 'codex/imageDetail': 'high' } },
    ]);
  });

  it('reports a failed script and a pragma error as error results, then keeps serving', async () => {
    const failed = await client.callTool({ name: 'exec', arguments: { code: 'throw new Error("boom")' } });
    expect(failed.isError).toBe(true);
    expect(contentTexts(failed)[0]).toMatch(HEADER('Script failed'));
    expect(contentTexts(failed)[1]).toMatch(/^Script error:\nError: boom/);
    const pragma = await client.callTool({ name: 'exec', arguments: { code: '// @exec: {"bad": 1}\ntext(1)' } });
    expect(pragma).toEqual({ content: [{ type: 'text', text: 'exec pragma only supports `yield_time_ms` and `max_output_tokens`; got `bad`' }], isError: true });
    const notified = await client.callTool({ name: 'exec', arguments: { code: 'notify("heads up");\ntext(6 * 7);' } });
    expect(contentTexts(notified).slice(1)).toEqual(['42', 'heads up']);
  });

  it('answers a 20 MiB request with a JSON-RPC error and keeps serving, its session and stored values intact', async () => {
    const stored = await client.callTool({ name: 'exec', arguments: { code: 'store("kept", 42); text("stored")' } });
    expect(contentTexts(stored).slice(1)).toEqual(['stored']);
    const huge = `text(${JSON.stringify('x'.repeat(20 * 1024 * 1024))})`;
    await expect(client.callTool({ name: 'exec', arguments: { code: huge } })).rejects.toMatchObject({
      code: -32600,
      message: expect.stringMatching(/request of \d+ bytes exceeds this server's message limit of 4194304 bytes/),
    });
    const after = await client.callTool({ name: 'exec', arguments: { code: 'text("still serving: " + load("kept"))' } });
    expect(contentTexts(after).slice(1)).toEqual(['still serving: 42']);
  }, 60_000);

  it('caps a 12 MB reply so the official client stays connected', async () => {
    const big = await client.callTool({ name: 'exec', arguments: { code: '// @exec: {"max_output_tokens": 100000000}\ntext("y".repeat(12_000_000));' } });
    const body = contentTexts(big).slice(1).join('');
    expect(body.length).toBeGreaterThan(300_000);
    expect(body.length).toBeLessThan(500_000);
    expect(body).toMatch(/…\d+ tokens truncated…/);
    // a budget the image fits (12M URL bytes ≈ 47k tokens): it reaches serve's own result cap
    const picture = await client.callTool({ name: 'exec', arguments: { code: '// @exec: {"max_output_tokens": 100000000}\nimage("data:image/png;base64," + "A".repeat(12_000_000));' } });
    const blocks = picture.content as Content;
    expect(blocks.some((block) => block.type === 'image')).toBe(false);
    expect(blocks.map((block) => block.text)).toContain('[image omitted: 12000000 characters of base64 over the result cap]');
    expect(blocks.at(-1)?.text).toMatch(/^\[this result was \d+ bytes, over the 8388608-byte cap of the server \(maxResultBytes\); it was shortened\]$/);
    const after = await client.callTool({ name: 'exec', arguments: { code: 'text("connected")' } });
    expect(contentTexts(after).slice(1)).toEqual(['connected']);
  }, 60_000);
});

/** Spawns the serve fixture without a client; resolves with its exit code and stderr. */
function spawnServe(args: string[], input?: (stdin: NodeJS.WritableStream, stdout: NodeJS.ReadableStream) => void, started?: (child: ReturnType<typeof spawn>) => void) {
  const child = spawn(process.execPath, [...NODE_ARGS, '--cwd', workspace, ...args], { cwd: CLI_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  started?.(child);
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  input?.(child.stdin, child.stdout);
  return new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => child.on('exit', (code) => resolve({ code, stderr, stdout })));
}

describe.concurrent('switchyard mcp serve as a process', () => {
  it('answers initialize and exits 0 once stdin closes', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    const result = await spawnServe([], (stdin, stdout) => {
      stdin.write(`${JSON.stringify(initialize)}\n`);
      stdout.once('data', () => stdin.end());
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout.split('\n')[0])).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'switchyard' }, capabilities: { tools: { listChanged: true } } } });
    expect(result.stderr).toBe('');
  }, 30_000);

  it('SIGTERM ends serve and a downstream server still starting (one that never reads stdin) with it', async () => {
    const marker = `switchyard-serve-sigterm-${process.pid}-${Date.now()}`;
    const config = join(workspace, 'sigterm-servers.json');
    writeFileSync(config, JSON.stringify({ servers: { slow: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1e9)', marker], startupTimeoutMs: 300_000 } } }));
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    let serve: ReturnType<typeof spawn> | undefined;
    const result = spawnServe(['--config', config], (stdin, stdout) => {
      stdin.write(`${JSON.stringify(initialize)}\n`);
      stdout.once('data', () => void becomes(() => processesWith(marker).length === 1, 20_000, 50).then(() => serve?.kill('SIGTERM')));
    }, (child) => (serve = child));
    try {
      await result;
      expect(await becomes(() => processesWith(marker).length === 0, 10_000, 100)).toBe(true);
    } finally {
      for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
    }
  }, 60_000);

  it('SIGTERM: serve exits 0 only after its downstream server finished its own cleanup (the built-ins leave the exit to serve)', async () => {
    const marker = `switchyard-serve-cleanup-${process.pid}-${Date.now()}`;
    const cleaned = join(workspace, `${marker}.closed`);
    // A server still starting (it never answers) whose shutdown takes a second: it writes `cleaned` on SIGTERM, then exits.
    const slow = "const fs = require('node:fs'); process.on('SIGTERM', () => setTimeout(() => { fs.writeFileSync(process.argv[2], 'closed'); process.exit(0); }, 1000)); setInterval(() => {}, 1e9);";
    const config = join(workspace, 'cleanup-servers.json');
    writeFileSync(config, JSON.stringify({ servers: { slow: { command: process.execPath, args: ['-e', slow, marker, cleaned], startupTimeoutMs: 300_000 } } }));
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    let serve: ReturnType<typeof spawn> | undefined;
    // What is on disk and in /proc at the moment serve's exit is seen.
    let atExit: { cleaned: boolean; downstream: number[]; signal: NodeJS.Signals | null } | undefined;
    const result = spawnServe(['--config', config], (stdin, stdout) => {
      stdin.write(`${JSON.stringify(initialize)}\n`);
      stdout.once('data', () => void becomes(() => processesWith(marker).length === 1, 20_000, 50).then(() => serve?.kill('SIGTERM')));
    }, (child) => {
      serve = child;
      child.once('exit', (_code, signal) => (atExit = { cleaned: existsSync(cleaned), downstream: processesWith(marker), signal }));
    });
    try {
      const { code } = await result;
      expect({ code, ...atExit }).toEqual({ code: 0, cleaned: true, downstream: [], signal: null });
      expect(readFileSync(cleaned, 'utf8')).toBe('closed');
    } finally {
      for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
    }
  }, 60_000);

  it('refuses requests before initialize and answers bad params with -32602', async () => {
    const send = (stdin: NodeJS.WritableStream, message: object) => stdin.write(`${JSON.stringify(message)}\n`);
    const initialize = { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    const result = await spawnServe([], (stdin, stdout) => {
      let seen = 0;
      send(stdin, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
      stdout.on('data', (chunk: Buffer) => {
        seen += chunk.toString('utf8').split('\n').filter(Boolean).length;
        if (seen === 1) {
          send(stdin, initialize);
        } else if (seen === 2) {
          send(stdin, { jsonrpc: '2.0', method: 'notifications/initialized' });
          send(stdin, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 5 } });
          send(stdin, { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { cursor: 7 } });
          send(stdin, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'nope', arguments: {} } });
        } else if (seen === 5) stdin.end();
      });
    });
    expect(result.code).toBe(0);
    const answers = result.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line));
    expect(answers[0]).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'tools/list before initialize: send `initialize` first' } });
    expect(answers[1]).toMatchObject({ id: 2, result: { serverInfo: { name: 'switchyard' } } });
    const byId = new Map(answers.slice(2).map((answer) => [answer.id, answer]));
    expect(byId.get(3)).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/^Invalid tools\/call request: /) } });
    expect(byId.get(4)).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/^Invalid tools\/list request: /) } });
    expect(byId.get(5)).toMatchObject({ error: { code: -32602, message: 'unknown tool: nope (this server has exec and wait)' } });
  }, 30_000);

  it('refuses a bad configuration with exit code 2 and a clear message', async () => {
    const bad = join(workspace, 'bad.json');
    writeFileSync(bad, JSON.stringify({ servers: { broken: { command: 'x', url: 'http://127.0.0.1:1/mcp' } } }));
    const result = await spawnServe(['--config', bad]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('switchyard: invalid MCP server configuration:\nservers.broken: set exactly one of `command` (stdio) or `url` (streamable HTTP)\n');
    expect(result.stdout).toBe('');
  }, 30_000);
});

describe('switchyard mcp serve under 4,000 sequential calls (child process, --expose-gc)', () => {
  it('keeps a flat heap and prints no warning', async () => {
    const HEAP = fileURLToPath(new URL('../test/fixtures/serve-heap.ts', import.meta.url));
    const child = spawn(process.execPath, ['--expose-gc', '--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', HEAP, '4000', workspace], {
      cwd: CLI_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const report = JSON.parse(stdout.trim()) as { calls: number; growthMb: number; warnings: string[]; exitCode: number };
    expect(report.calls).toBe(4000);
    expect(report.warnings).toEqual([]);
    expect(report.exitCode).toBe(0);
    expect(report.growthMb).toBeLessThan(10);
  }, 180_000);
});

describe('readMcpServeConfig', () => {
  it('reads servers and resolves a relative cwd against the file; a server without cwd runs in the file\'s folder', () => {
    const path = join(workspace, 'relative.json');
    writeFileSync(
      path,
      JSON.stringify({ servers: { docs: { command: 'node', args: ['docs.js'], cwd: 'servers/docs' }, shop: { command: 'node', args: ['./shop.mjs'] }, web: { url: 'http://127.0.0.1:9/mcp' } } }),
    );
    expect(readMcpServeConfig(path)).toEqual({
      docs: { command: 'node', args: ['docs.js'], cwd: join(workspace, 'servers/docs'), description: '' },
      shop: { command: 'node', args: ['./shop.mjs'], cwd: workspace, description: '' },
      web: { url: 'http://127.0.0.1:9/mcp', description: '' },
    });
  });

  it('relative args of a server are relative to the config file, wherever serve was started', async () => {
    const folder = join(workspace, 'conf');
    mkdirSync(folder, { recursive: true });
    // a relative script beside the config (it loads the fixture server, which needs the workspace's modules)
    writeFileSync(join(folder, 'catalog.mjs'), `await import(${JSON.stringify(pathToFileURL(CATALOG).href)});\n`);
    writeFileSync(join(folder, 'servers.json'), JSON.stringify({ servers: { cat: { command: process.execPath, args: ['./catalog.mjs'] } } }));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...NODE_ARGS, '--cwd', workspace, '--config', join(folder, 'servers.json')],
      cwd: CLI_ROOT,
      env: process.env as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'relative-args', version: '1.0.0' });
    await client.connect(transport);
    try {
      // the downstream server may report in after initialize: ask until its tools are described
      let description = '';
      for (let attempt = 0; attempt < 100 && !description.includes('mcp__cat__search_products'); attempt++) {
        const { tools } = await client.listTools();
        description = tools.find((tool) => tool.name === 'exec')?.description ?? '';
        if (!description.includes('mcp__cat__search_products')) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(description).toContain('### `mcp__cat__search_products`');
    } finally {
      await client.close();
    }
  }, 60_000);

  it('names the problem with a missing file, bad JSON, unknown keys and a non-object servers', () => {
    const write = (name: string, text: string) => {
      writeFileSync(join(workspace, name), text);
      return join(workspace, name);
    };
    expect(() => readMcpServeConfig(join(workspace, 'missing.json'))).toThrow(`cannot read ${join(workspace, 'missing.json')}: ENOENT`);
    expect(() => readMcpServeConfig(write('broken.json', '{ servers: '))).toThrow(/broken\.json is not valid JSON: /);
    expect(() => readMcpServeConfig(write('extra.json', '{ "servers": {}, "mcpServers": {} }'))).toThrow(/extra\.json: unknown key "mcpServers" \(only "servers" is read\)$/);
    expect(() => readMcpServeConfig(write('list.json', '{ "servers": [] }'))).toThrow(/list\.json: "servers" must be an object keyed by server name$/);
  });
});
