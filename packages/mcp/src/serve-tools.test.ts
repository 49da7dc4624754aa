import { Client as ModernClient, InMemoryTransport as ModernInMemoryTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { defineFreeformTool, defineFunctionTool } from '@switchyard/kit';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServedMcpServer } from './serve-eras';
import { serveToolsOverMcp, type ServeToolsOverMcpOptions } from './serve-tools';

const query = defineFunctionTool({
  name: 'query',
  namespace: 'sql',
  description: 'Runs a read-only query.',
  parameters: { type: 'object', properties: { sql: { type: 'string' } }, required: ['sql'], additionalProperties: false },
  outputSchema: { type: 'object', properties: { rows: { type: 'array' } }, required: ['rows'] },
  handle: ({ args }) => ({ rows: [{ sql: args.sql }] }),
});
const exec = defineFreeformTool({ name: 'sql_exec', description: 'Runs a statement.', handle: ({ input }) => `ran ${input}` });
let abortedSeen = false;
const slow = defineFunctionTool({
  name: 'slow',
  description: 'Waits until cancelled.',
  parameters: { type: 'object', properties: {} },
  handle: ({ signal }) =>
    new Promise((_, reject) =>
      signal.addEventListener('abort', () => {
        abortedSeen = true;
        reject(signal.reason);
      }),
    ),
});
const broken = defineFunctionTool({ name: 'broken', description: 'Returns a Map.', parameters: { type: 'object', properties: {} }, handle: () => ({ index: new Map() }) });

const open: Array<{ client: Client; served: ServedMcpServer }> = [];
afterEach(async () => {
  for (const { client, served } of open.splice(0)) {
    await client.close();
    await served.close();
  }
});

async function connectToolsClient(options: Omit<ServeToolsOverMcpOptions, 'transport'>) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const served = await serveToolsOverMcp({ ...options, transport: serverSide });
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  open.push({ client, served });
  return client;
}

describe('serveToolsOverMcp', () => {
  it('lists executors by display name with their schemas; freeform tools take { input }', async () => {
    const client = await connectToolsClient({ tools: [query, exec] });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['sql__query', 'sql_exec']);
    expect(tools[0]).toMatchObject({ description: 'Runs a read-only query.', inputSchema: { required: ['sql'] }, outputSchema: { required: ['rows'] } });
    expect(tools[1].inputSchema).toEqual({ type: 'object', properties: { input: { type: 'string', description: 'The raw input text of the tool.' } }, required: ['input'], additionalProperties: false });
  });

  it('runs calls through the registry: structured results, validation, the result rule, freeform input', async () => {
    const client = await connectToolsClient({ tools: [query, exec, broken] });
    const ok = await client.callTool({ name: 'sql__query', arguments: { sql: 'select 1' } });
    expect(ok).toEqual({ content: [{ type: 'text', text: '{"rows":[{"sql":"select 1"}]}' }], structuredContent: { rows: [{ sql: 'select 1' }] } });
    const invalid = await client.callTool({ name: 'sql__query', arguments: { sql: 1 } });
    expect(invalid.isError).toBe(true);
    expect((invalid.content as Array<{ text: string }>)[0].text).toContain('sql');
    expect(await client.callTool({ name: 'sql_exec', arguments: { input: 'vacuum' } })).toEqual({ content: [{ type: 'text', text: 'ran vacuum' }] });
    const refused = await client.callTool({ name: 'broken', arguments: {} });
    expect(refused).toEqual({
      content: [{ type: 'text', text: 'tool result is not JSON-serializable: result.index is a Map: return a plain object (Object.fromEntries(map)) or an array of entries' }],
      isError: true,
    });
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow('unknown tool: nope (this server has sql__query, sql_exec, broken)');
  });

  it('a cancelled request aborts the handler', async () => {
    abortedSeen = false;
    const client = await connectToolsClient({ tools: [slow] });
    const controller = new AbortController();
    const pending = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort('stop');
    await expect(pending).rejects.toThrow();
    await expect.poll(() => abortedSeen, { timeout: 10_000 }).toBe(true);
  });

  it('speaks 2026-07-28 to a client that pins it, and 2025-11-25 to one that initializes', async () => {
    const legacy = await connectToolsClient({ tools: [query] });
    await legacy.listTools();
    expect(open[0].served.protocol()).toBe('legacy');

    const [clientSide, serverSide] = ModernInMemoryTransport.createLinkedPair();
    const served = await serveToolsOverMcp({ tools: [query, exec, broken], transport: serverSide });
    const client = new ModernClient({ name: 'modern', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    try {
      await client.connect(clientSide);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['sql__query', 'sql_exec', 'broken']);
      expect(served.protocol()).toBe('modern');
      expect(await client.callTool({ name: 'sql__query', arguments: { sql: 'select 2' } })).toMatchObject({
        content: [{ type: 'text', text: '{"rows":[{"sql":"select 2"}]}' }],
        structuredContent: { rows: [{ sql: 'select 2' }] },
      });
      expect(await client.callTool({ name: 'sql_exec', arguments: {} })).toMatchObject({
        content: [{ type: 'text', text: "sql_exec expects an `input` argument holding the tool's input text as a string" }],
        isError: true,
      });
      await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow('unknown tool: nope (this server has sql__query, sql_exec, broken)');
    } finally {
      await client.close();
      await served.close();
    }
  });

  it('refuses bad requests on the wire with a JSON-RPC error and keeps serving', async () => {
    const [clientSide, serverSide] = ModernInMemoryTransport.createLinkedPair();
    const served = await serveToolsOverMcp({ tools: [query], transport: serverSide });
    try {
      const answers = new Map<number, (message: Record<string, any>) => void>();
      clientSide.onmessage = (message) => answers.get((message as { id: number }).id)?.(message as Record<string, any>);
      await clientSide.start();
      let sequence = 0;
      const request = (method: string, params: Record<string, unknown>) =>
        new Promise<Record<string, any>>((resolve) => {
          const id = ++sequence;
          answers.set(id, resolve);
          void clientSide.send({ jsonrpc: '2.0', id, method, params });
        });

      // A 2025-11-25 connection (no revision claimed) that skips initialize.
      expect((await request('tools/call', { name: 'sql__query', arguments: { sql: 'x' } })).error).toMatchObject({ code: -32600, message: 'tools/call before initialize: send `initialize` first' });
      expect((await request('tools/list', {})).error).toMatchObject({ code: -32600, message: 'tools/list before initialize: send `initialize` first' });
      await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
      await clientSide.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      expect((await request('tools/list', { cursor: 7 })).error).toMatchObject({ code: -32602, message: expect.stringContaining('Invalid tools/list request') });
      expect((await request('tools/call', { arguments: {} })).error).toMatchObject({ code: -32602, message: expect.stringContaining('Invalid tools/call request') });
      expect((await request('tools/call', { name: 'sql__query', arguments: { sql: 'ok' } })).result).toEqual({
        content: [{ type: 'text', text: '{"rows":[{"sql":"ok"}]}' }],
        structuredContent: { rows: [{ sql: 'ok' }] },
      });
      expect(served.protocol()).toBe('legacy');
    } finally {
      await served.close();
    }
  });
});
