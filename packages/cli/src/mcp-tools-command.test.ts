import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { TOOLS_MODULE_SHAPES } from './tools-module';

// `switchyard mcp serve --tools <module>` as a plugin author runs it: the real bin, the official
// SDK client over stdio, a plugin package resolved from the working directory or a file.
const CLI_ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = fileURLToPath(new URL('./bin.ts', import.meta.url));
const PLUGIN_HOST = fileURLToPath(new URL('../../../examples/plugin-executor', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../test/fixtures', import.meta.url));
const NODE_ARGS = ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', BIN];

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function serveMcpTools(tools: string, cwd: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...NODE_ARGS, 'mcp', 'serve', '--tools', tools],
    cwd,
    env: { ...(process.env as Record<string, string>), NODE_PATH: '' },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'plugin-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

describe('switchyard mcp serve --tools', () => {
  it("serves a plugin package's executors (named exports) to the SDK client", async () => {
    const client = await serveMcpTools('@switchyard/example-weather-plugin', PLUGIN_HOST);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['weather__get_weather']);
    expect(tools[0].outputSchema).toMatchObject({ required: ['city', 'tempC', 'conditions'] });
    const result = await client.callTool({ name: 'weather__get_weather', arguments: { city: 'Oslo' } });
    expect(result.structuredContent).toEqual({ city: 'Oslo', tempC: -3, conditions: 'light snow' });
    expect(result.isError).toBeUndefined();
    const unknown = await client.callTool({ name: 'weather__get_weather', arguments: { city: 'Atlantis' } });
    expect(unknown).toMatchObject({ isError: true, content: [{ type: 'text', text: 'tool weather__get_weather failed: no reading for Atlantis' }] });
  }, 60_000);

  it('serves the executors a default-export factory returns (a file path)', async () => {
    const client = await serveMcpTools('./tools-factory.ts', FIXTURES);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['clock__curr_time']);
    const result = await client.callTool({ name: 'clock__curr_time', arguments: {} });
    expect(JSON.stringify(result.content)).toBe('[{"type":"text","text":"It is 2025-01-02 03:04:05 UTC."}]');
  }, 60_000);

  it('exits 2 with a one-line reason for a module without executors, for --tools with --config and with --approval-policy', () => {
    const none = spawnSync(process.execPath, [...NODE_ARGS, 'mcp', 'serve', '--tools', './tools-none.ts'], { cwd: FIXTURES, encoding: 'utf8', input: '', timeout: 60_000 });
    expect(none.status).toBe(2);
    expect(none.stderr).toBe(`switchyard mcp serve: --tools ./tools-none.ts: the module exports no executor; expected ${TOOLS_MODULE_SHAPES}\n`);
    const both = spawnSync(process.execPath, [...NODE_ARGS, 'mcp', 'serve', '--tools', 'x', '--config', 'y'], { cwd: CLI_ROOT, encoding: 'utf8', input: '', timeout: 60_000 });
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('mcp serve takes --tools or --config, not both');
    const policy = spawnSync(process.execPath, [...NODE_ARGS, 'mcp', 'serve', '--tools', 'x', '--approval-policy', 'on-request'], { cwd: CLI_ROOT, encoding: 'utf8', input: '', timeout: 60_000 });
    expect(policy.status).toBe(2);
    expect(policy.stderr).toBe("switchyard: mcp serve takes --approval-policy without --tools only (it sets when Code Mode's exec_command asks the MCP client; --tools serves executors)\n");
  }, 130_000);
});
