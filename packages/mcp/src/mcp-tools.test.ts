import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { displayName, hasErrorCode, type FunctionToolSpec } from '@switchyard/protocol';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_SERVER, call, executor, fixtureServer, nextEvent, functionOutputText } from '../test/helpers';
import { McpToolOutput } from './call-result';
import { mcpTools, type McpTools } from './mcp-tools';

const HEADER = /^Wall time: \d+\.\d{4} seconds\nOutput:/;

describe('mcpTools over stdio', () => {
  let mcp: McpTools;

  beforeAll(async () => {
    mcp = await mcpTools({
      servers: {
        fx: fixtureServer({ FIXTURE_PAGE_SIZE: '3', FIXTURE_INSTRUCTIONS: 'Fixture tools for tests.' }, { toolTimeoutsMs: { sleep: 400, progress: 700 } }),
        lazy: fixtureServer({}, { exposure: 'deferred', parallel: true, enabledTools: ['echo', 'lookup', 'sleep', 'cancellations'] }),
      },
    });
   }, 90_000);
  afterAll(() => mcp.close());

  it('lists every page, sanitizes names into mcp__<server>__ and skips unusable schemas with a warning', () => {
    expect(mcp.executors().map((e) => displayName(e.name))).toEqual([
      'mcp__fx__echo',
      'mcp__fx__lookup',
      'mcp__fx__fail',
      'mcp__fx__image',
      'mcp__fx__sleep',
      'mcp__fx__progress',
      'mcp__fx__cancellations',
      'mcp__fx__crash',
      'mcp__fx__add_tool',
      'mcp__fx__dotted_name_tool',
      'mcp__fx__bad_output',
      'mcp__fx__no_structured',
      'mcp__lazy__echo',
      'mcp__lazy__lookup',
      'mcp__lazy__sleep',
      'mcp__lazy__cancellations',
    ]);
    const skipped = mcp.warnings.filter((w) => w.kind === 'tool-skipped');
    expect(skipped.map((w) => `${w.server}/${w.tool}`).sort()).toEqual(['fx/broken_type', 'fx/not_object']);
    expect(skipped.find((w) => w.server === 'fx' && w.tool === 'broken_type')?.message).toMatch(/^MCP server `fx`: skipped tool `broken_type`: input schema cannot be used: /);
    expect(skipped.find((w) => w.server === 'fx' && w.tool === 'not_object')?.message).toMatch(/^MCP server `fx`: skipped tool `not_object`: invalid tool definition \(inputSchema\.type: /);
    expect(mcp.servers().map((s) => [s.name, s.state, s.toolCount])).toEqual([
      ['fx', 'ready', 12],
      ['lazy', 'ready', 4],
    ]);
  });

  it('carries the schema, the CallToolResult output schema, exposure and the parallel flag', () => {
    const echo = executor(mcp, 'mcp__fx__echo');
    expect(echo.name).toEqual({ name: 'echo', namespace: 'mcp__fx__' });
    const spec = echo.spec as FunctionToolSpec;
    expect(spec).toMatchObject({ type: 'function', name: 'echo', description: 'Echoes a message back.', strict: false });
    expect(spec.parameters).toEqual({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });
    expect(spec.outputSchema).toEqual({
      'x-switchyard-mcp': true,
      type: 'object',
      properties: {
        content: { type: 'array', items: { type: 'object' } },
        structuredContent: { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'] },
        isError: { type: 'boolean' },
        _meta: { type: 'object' },
      },
      required: ['content'],
      additionalProperties: false,
    });
    expect(echo.exposure).toBe('direct');
    expect(echo.supportsParallelToolCalls).toBe(false);
    expect(echo.namespaceDescription).toBe('Fixture tools for tests.');
    // A schema without `$schema` is JSON Schema 2020-12 (MCP 2025-11-25), and says so from here on.
    expect((executor(mcp, 'mcp__fx__fail').spec as FunctionToolSpec).parameters).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {},
    });

    const lazy = executor(mcp, 'mcp__lazy__echo');
    expect(lazy.exposure).toBe('deferred');
    expect(lazy.supportsParallelToolCalls).toBe(true);
    // annotated idempotentHint: safe to run again when a resumed cell's call was in flight
    expect(executor(mcp, 'mcp__fx__lookup').idempotent).toBe(true);
    expect(echo.idempotent).toBeUndefined();
  });

  it('answers a direct call with the wall-time header and the content blocks; a cell gets the CallToolResult', async () => {
    const { output, item } = await call(executor(mcp, 'mcp__fx__echo'), { message: 'hi' }, { callId: 'c-7' });
    expect(item.type).toBe('function_call_output');
    expect(item.call_id).toBe('c-7');
    expect(functionOutputText(item)).toMatch(/^Wall time: \d+\.\d{4} seconds\nOutput:\n\[\{"type":"text","text":"echo: hi"\}\]$/);
    expect(output.success).toBe(true);
    expect(output.codeModeResult({ kind: 'function', arguments: '{}' })).toEqual({
      content: [{ type: 'text', text: 'echo: hi' }],
      structuredContent: { echo: 'hi' },
      isError: false,
    });
  });

  it('checks structured content against the output schema, as the official client does', async () => {
    const bad = await call(executor(mcp, 'mcp__fx__bad_output'));
    expect(bad.output.success).toBe(false);
    expect(bad.output.codeModeResult(bad.payload)).toEqual({
      content: [
        { type: 'text', text: "tool call error: the structured content does not match the tool's output schema: data/count must be number" },
        { type: 'text', text: 'three' },
      ],
      isError: true,
    });
    const none = await call(executor(mcp, 'mcp__fx__no_structured'));
    expect(none.output.success).toBe(false);
    expect(functionOutputText(none.item)).toContain('"text":"tool call error: the tool has an output schema but its result has no structured content"');
    // The SDK's own client refuses the same two results.
    const client = new Client({ name: 'official-client', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE_SERVER], env: { FIXTURE_VALID_ONLY: '1' }, stderr: 'pipe' }));
    try {
      await client.listTools();
      await expect(client.callTool({ name: 'bad_output', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('data/count must be number') });
      await expect(client.callTool({ name: 'no_structured', arguments: {} })).rejects.toMatchObject({ code: -32600 });
    } finally {
      await client.close();
    }
  });

  it('shows text-only content as the JSON of the content array', async () => {
    const { item } = await call(executor(mcp, 'mcp__fx__lookup'), { key: 'k' });
    expect(functionOutputText(item)).toMatch(/^Wall time: \d+\.\d{4} seconds\nOutput:\n\[\{"type":"text","text":"value-of-k"\}\]$/);
  });

  it('turns an error result into a failed output that a cell still resolves with', async () => {
    const { output, item } = await call(executor(mcp, 'mcp__fx__fail'));
    expect(functionOutputText(item)).toMatch(/^Wall time: \d+\.\d{4} seconds\nOutput:\n\[\{"type":"text","text":"something broke"\}\]$/);
    expect(output.success).toBe(false);
    expect(output.failureCode).toBeUndefined();
    expect(output).toBeInstanceOf(McpToolOutput);
    expect((output as McpToolOutput).codeModeAlwaysResolves).toBe(true);
    expect(output.codeModeResult({ kind: 'function', arguments: '{}' })).toEqual({ content: [{ type: 'text', text: 'something broke' }], isError: true });
  });

  it('sends images to the model as input_image items after the header', async () => {
    const { item } = await call(executor(mcp, 'mcp__fx__image'));
    const items = item.type === 'function_call_output' ? item.output : undefined;
    expect(Array.isArray(items)).toBe(true);
    const [header, text, image] = items as Array<{ type: string; text?: string; image_url?: string }>;
    expect(header.type).toBe('input_text');
    expect(header.text).toMatch(/^Wall time: \d+\.\d{4} seconds\nOutput:$/);
    expect(text).toEqual({ type: 'input_text', text: 'a red dot' });
    expect(image.type).toBe('input_image');
    expect(image.image_url).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
  });

  it('calls a sanitized tool by its raw MCP name', async () => {
    const { item } = await call(executor(mcp, 'mcp__fx__dotted_name_tool'));
    expect(functionOutputText(item)).toContain('"text":"dotted ok"');
  });

  it('refuses malformed arguments before calling the server', async () => {
    await expect(call(executor(mcp, 'mcp__fx__echo'), '{not json')).rejects.toSatisfy((error) => hasErrorCode(error, 'INVALID_INPUT'));
    await expect(call(executor(mcp, 'mcp__fx__echo'), '[1]')).rejects.toSatisfy((error) => hasErrorCode(error, 'INVALID_INPUT'));
  });

  it('times a call out, and the server receives notifications/cancelled', async () => {
    const started = Date.now();
    const { output, item } = await call(executor(mcp, 'mcp__fx__sleep'), { ms: 5000 });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(output.success).toBe(false);
    // what PostToolUseFailure hooks read as error_code; other error results carry none
    expect(output.failureCode).toBe('TIMEOUT');
    expect(functionOutputText(item)).toMatch(HEADER);
    expect(functionOutputText(item)).toContain('"text":"tool call error: timed out awaiting tools/call after 400ms"');
    const { output: stats } = await call(executor(mcp, 'mcp__fx__cancellations'));
    const received = (stats.codeModeResult({ kind: 'function', arguments: '{}' }) as { structuredContent: { cancellations: Array<{ tool: string; reason: string }> } }).structuredContent.cancellations;
    expect(received.some((entry) => entry.tool === 'sleep' && entry.reason.includes('Request timed out'))).toBe(true);
  });

  it('cancels through the signal: the handler stops and the server receives notifications/cancelled', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error('turn aborted')), 200);
    await expect(call(executor(mcp, 'mcp__lazy__sleep'), { ms: 10_000 }, { signal: controller.signal })).rejects.toSatisfy((error) => hasErrorCode(error, 'ABORTED'));
    expect(Date.now() - started).toBeLessThan(3000);
    const { output: stats } = await call(executor(mcp, 'mcp__lazy__cancellations'));
    const received = (stats.codeModeResult({ kind: 'function', arguments: '{}' }) as { structuredContent: { cancellations: Array<{ tool: string; reason: string }> } }).structuredContent.cancellations;
    expect(received).toContainEqual({ tool: 'sleep', reason: 'Error: turn aborted' });
  });

  it('keeps a call alive while progress notifications arrive, and times out without them', async () => {
    const alive = await call(executor(mcp, 'mcp__fx__progress'), { ms: 1500, every: 100 });
    expect(alive.output.success).toBe(true);
    expect(functionOutputText(alive.item)).toContain('"text":"done after progress"');
    const silent = await call(executor(mcp, 'mcp__fx__progress'), { ms: 1500, every: 0 });
    expect(silent.output.success).toBe(false);
    expect(functionOutputText(silent.item)).toContain('tool call error: timed out awaiting tools/call after 700ms');
  });

  it('runs calls to one server concurrently (four 600 ms calls take well under 4 × 600 ms)', async () => {
    const lookup = executor(mcp, 'mcp__lazy__lookup');
    const started = Date.now();
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((key) => call(lookup, { key, delay_ms: 600 })));
    expect(Date.now() - started).toBeLessThan(1900);
    expect(results.map((r) => functionOutputText(r.item).split('\n').at(-1))).toEqual(['a', 'b', 'c', 'd'].map((key) => `[{"type":"text","text":"value-of-${key}"}]`));
  });
});

describe('mcpTools over time', () => {
  it('picks up notifications/tools/list_changed in the next step', async () => {
    const mcp = await mcpTools({ servers: { fx: fixtureServer() } });
    try {
      const step1 = mcp.executors().map((e) => displayName(e.name));
      expect(step1).not.toContain('mcp__fx__extra');
      const changed = nextEvent(mcp, 'tools-changed');
      await call(executor(mcp, 'mcp__fx__add_tool'));
      expect(await changed).toEqual({ type: 'tools-changed', server: 'fx' });
      await mcp.refresh();
      const step2 = mcp.executors().map((e) => displayName(e.name));
      expect(step2).toEqual([...step1, 'mcp__fx__extra']);
      expect(functionOutputText((await call(executor(mcp, 'mcp__fx__extra'))).item)).toContain('"text":"extra tool"');
      expect(mcp.warnings.filter((w) => w.kind === 'tool-skipped')).toHaveLength(2);
    } finally {
      await mcp.close();
    }
  });

  it("one mcpTools is one server process for all its users; one per tenant keeps each tenant's server state apart", async () => {
    const shared = await mcpTools({ servers: { fx: fixtureServer() } });
    const [acme, globex] = await Promise.all([mcpTools({ servers: { fx: fixtureServer() } }), mcpTools({ servers: { fx: fixtureServer() } })]);
    try {
      const names = (mcp: McpTools) => mcp.executors().map((e) => displayName(e.name));
      // the server's state (here: a tool it added) is its process's: whoever shares the McpTools sees it
      await call(executor(shared, 'mcp__fx__add_tool'));
      await shared.refresh();
      expect(names(shared)).toContain('mcp__fx__extra');
      await call(executor(acme, 'mcp__fx__add_tool'));
      await acme.refresh();
      await globex.refresh();
      expect(names(acme)).toContain('mcp__fx__extra');
      expect(names(globex)).not.toContain('mcp__fx__extra');
    } finally {
      await Promise.all([shared.close(), acme.close(), globex.close()]);
    }
  });

  it('reports a server that crashes mid-call once, drops its tools and keeps the others working', async () => {
    const seen: string[] = [];
    const mcp = await mcpTools({ servers: { a: fixtureServer(), b: fixtureServer() }, onWarning: (w) => w.kind === 'server-failed' && seen.push(w.message) });
    try {
      const crash = executor(mcp, 'mcp__a__crash');
      const echoA = executor(mcp, 'mcp__a__echo');
      const { output, item } = await call(crash);
      expect(output.success).toBe(false);
      expect(functionOutputText(item)).toMatch(HEADER);
      expect(functionOutputText(item)).toContain('"text":"tool call error: MCP server `a` closed the connection during the call"');

      const failures = mcp.warnings.filter((w) => w.kind === 'server-failed');
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({ server: 'a' });
      expect(failures[0].message).toBe('MCP server `a` exited: connection closed\nstderr: crashing now');
      expect(seen).toEqual([failures[0].message]);

      const names = mcp.executors().map((e) => displayName(e.name));
      expect(names.some((name) => name.startsWith('mcp__a__'))).toBe(false);
      expect(names).toContain('mcp__b__echo');
      expect(functionOutputText((await call(executor(mcp, 'mcp__b__echo'), { message: 'still here' })).item)).toContain('"text":"echo: still here"');

      const stale = await call(echoA, { message: 'x' });
      expect(functionOutputText(stale.item)).toContain('tool call error: MCP server `a` is not running (exited: connection closed)');
      expect(mcp.warnings.filter((w) => w.kind === 'server-failed')).toHaveLength(1);
      expect(mcp.servers().map((s) => [s.name, s.state])).toEqual([
        ['a', 'failed'],
        ['b', 'ready'],
      ]);
    } finally {
      await mcp.close();
    }
  }, 90_000);

  it('reports servers that fail to start and starts the rest', async () => {
    const mcp = await mcpTools({
      servers: {
        missing: { command: '/nonexistent/switchyard-mcp-server' },
        early: fixtureServer({ FIXTURE_EXIT_AT_START: '1' }),
        silent: fixtureServer({ FIXTURE_SILENT: '1' }, { startupTimeoutMs: 500 }),
        good: fixtureServer(),
      },
    });
    try {
      const messages = Object.fromEntries(mcp.warnings.filter((w) => w.kind === 'server-failed').map((w) => [w.server, w.message]));
      expect(Object.keys(messages).sort()).toEqual(['early', 'missing', 'silent']);
      expect(messages.missing).toMatch(/^MCP server `missing` failed to start \(command: \/nonexistent\/switchyard-mcp-server\): .*ENOENT/);
      expect(messages.early).toMatch(/^MCP server `early` failed to start \(command: .*\): .*Connection closed\nstderr: boom at start$/);
      expect(messages.silent).toMatch(/^MCP server `silent` failed to start \(command: .*\): timed out after 500ms/);
      expect(mcp.executors().every((e) => e.name.namespace === 'mcp__good__')).toBe(true);
      expect(mcp.executors().length).toBe(12);
      expect(mcp.servers().map((s) => s.state)).toEqual(['failed', 'failed', 'failed', 'ready']);
    } finally {
      await mcp.close();
    }
    expect(mcp.executors()).toEqual([]);
    expect(mcp.servers().every((s) => s.state === 'failed' || s.state === 'closed')).toBe(true);
  }, 90_000);
});

describe('mcpTools over streamable HTTP', () => {
  it('lists and calls the tools of an HTTP server', async () => {
    const child = spawn(process.execPath, [FIXTURE_SERVER], { env: { ...process.env, FIXTURE_HTTP: '1' }, stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`fixture exited with ${code}`)));
        createInterface({ input: child.stdout! }).on('line', (line) => {
          const match = /^PORT (\d+)$/.exec(line);
          if (match) resolve(Number(match[1]));
        });
      });
      const deletes: string[] = [];
      createInterface({ input: child.stdout! }).on('line', (line) => line.startsWith('DELETE ') && deletes.push(line.slice('DELETE '.length)));
      const mcp = await mcpTools({ servers: { web: { url: `http://127.0.0.1:${port}/mcp` } } });
      try {
        expect(mcp.warnings.filter((w) => w.kind === 'server-failed')).toEqual([]);
        expect(mcp.executors().map((e) => displayName(e.name))).toContain('mcp__web__echo');
        const { item } = await call(executor(mcp, 'mcp__web__echo'), { message: 'over http' });
        expect(functionOutputText(item)).toMatch(/^Wall time: \d+\.\d{4} seconds\nOutput:\n\[\{"type":"text","text":"echo: over http"\}\]$/);
      } finally {
        await mcp.close();
      }
      // close() ended the session with the DELETE of the streamable HTTP transport (once).
      await expect.poll(() => deletes.length).toBe(1);
      expect(deletes[0]).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      child.kill();
    }
  });
});
