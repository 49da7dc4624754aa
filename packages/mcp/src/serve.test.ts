import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCallItem, ToolOutputItem } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { isFailedCodeModeOutput, serveCodeModeOverMcp, toolOutputToCallToolResult, type CodeModeDispatchResult, type CodeModeMcpHost, type CodeModeMcpServer } from './serve';
import { header } from '../test/cell-host';

const RED_DOT = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAIT_PARAMETERS = {
  type: 'object',
  properties: { cell_id: { type: 'string' }, yield_time_ms: { type: 'number' }, max_tokens: { type: 'number' }, terminate: { type: 'boolean' } },
  required: ['cell_id'],
  additionalProperties: false,
};

/** A host whose answers the test scripts; it records every item it receives. */
function scriptedHost(answer: (item: ToolCallItem, signal: AbortSignal) => Promise<ToolOutputItem | CodeModeDispatchResult>) {
  const received: ToolCallItem[] = [];
  const changeListeners = new Set<() => void>();
  const host: CodeModeMcpHost = {
    describe: () => ({
      exec: { type: 'custom', name: 'exec', description: 'Run JavaScript to call tools.' },
      wait: { type: 'function', name: 'wait', description: 'Waits on a yielded `exec` cell.', parameters: WAIT_PARAMETERS },
    }),
    dispatch: (item, { signal }) => {
      received.push(item);
      return answer(item, signal);
    },
    onToolsChanged: (listener) => {
      changeListeners.add(listener);
      return () => changeListeners.delete(listener);
    },
  };
  return { host, received, changed: () => changeListeners.forEach((listener) => listener()) };
}

const open: Array<{ client: Client; served: CodeModeMcpServer }> = [];
afterEach(async () => {
  for (const { client, served } of open.splice(0)) {
    await client.close();
    await served.close();
  }
});

async function connectClient(host: CodeModeMcpHost) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const served = await serveCodeModeOverMcp({ host, transport: serverSide });
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  open.push({ client, served });
  return { client, served };
}

describe('serveCodeModeOverMcp', () => {
  it('lists exec with a single code argument and wait with the host parameters', async () => {
    const { client } = await connectClient(scriptedHost(async () => ({ type: 'custom_tool_call_output', call_id: 'x', output: [] })).host);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['exec', 'wait']);
    expect(tools[0].inputSchema).toEqual({
      type: 'object',
      properties: { code: { type: 'string', description: 'JavaScript (or TypeScript) source of the cell.' } },
      required: ['code'],
      additionalProperties: false,
    });
    expect(tools[0].description).toMatch(/^Pass the JavaScript source as the `code` argument/);
    expect(tools[0].description).toContain('\n\nRun JavaScript to call tools.');
    expect(tools[1]).toMatchObject({ name: 'wait', description: 'Waits on a yielded `exec` cell.', inputSchema: WAIT_PARAMETERS });
  });

  it('dispatches exec as a custom_tool_call and turns text and data-URL images into MCP content', async () => {
    const scripted = scriptedHost(async (item) => ({
      type: 'custom_tool_call_output',
      call_id: item.call_id,
      output: [header('Script completed'), { type: 'input_text', text: 'a red dot' }, { type: 'input_image', image_url: `data:image/png;base64,${RED_DOT}`, detail: 'high' }],
    }));
    const { client } = await connectClient(scripted.host);
    const result = await client.callTool({ name: 'exec', arguments: { code: 'image(dot)' } });
    expect(scripted.received).toEqual([{ type: 'custom_tool_call', call_id: expect.stringMatching(/^mcp-/), name: 'exec', input: 'image(dot)' }]);
    expect(result.isError).toBeUndefined();
    expect(result.content).toEqual([
      { type: 'text', text: 'Script completed\nWall time 0.1 seconds\nOutput:\n' },
      { type: 'text', text: 'a red dot' },
      { type: 'image', data: RED_DOT, mimeType: 'image/png', _meta: { 'codex/imageDetail': 'high' } },
    ]);
  });

  it('dispatches wait as a function_call with the arguments as JSON', async () => {
    const scripted = scriptedHost(async (item) => ({ type: 'function_call_output', call_id: item.call_id, output: [header('Script terminated')] }));
    const { client } = await connectClient(scripted.host);
    const result = await client.callTool({ name: 'wait', arguments: { cell_id: 'abc', terminate: true } });
    expect(scripted.received[0]).toMatchObject({ type: 'function_call', name: 'wait', arguments: '{"cell_id":"abc","terminate":true}' });
    expect(result).toEqual({ content: [{ type: 'text', text: 'Script terminated\nWall time 0.1 seconds\nOutput:\n' }] });
  });

  it('marks failed scripts, header-less errors, a missing code argument and a throwing host as error results', async () => {
    let next: () => Promise<ToolOutputItem>;
    const scripted = scriptedHost(() => next());
    const { client } = await connectClient(scripted.host);

    next = async () => ({ type: 'custom_tool_call_output', call_id: 'c', output: [header('Script failed'), { type: 'input_text', text: 'Script error:\nError: boom' }] });
    expect(await client.callTool({ name: 'exec', arguments: { code: 'throw new Error("boom")' } })).toEqual({
      content: [
        { type: 'text', text: 'Script failed\nWall time 0.1 seconds\nOutput:\n' },
        { type: 'text', text: 'Script error:\nError: boom' },
      ],
      isError: true,
    });

    next = async () => ({ type: 'custom_tool_call_output', call_id: 'c', output: 'exec pragma only supports `yield_time_ms` and `max_output_tokens`; got `bad`' });
    expect(await client.callTool({ name: 'exec', arguments: { code: '// @exec: {"bad":1}\n1' } })).toEqual({
      content: [{ type: 'text', text: 'exec pragma only supports `yield_time_ms` and `max_output_tokens`; got `bad`' }],
      isError: true,
    });

    expect(await client.callTool({ name: 'exec', arguments: { source: 'text(1)' } })).toEqual({
      content: [{ type: 'text', text: 'exec expects a `code` argument holding the JavaScript source as a string' }],
      isError: true,
    });

    next = async () => {
      throw new Error('turn exceeded its budget');
    };
    expect(await client.callTool({ name: 'exec', arguments: { code: 'text(1)' } })).toEqual({
      content: [{ type: 'text', text: 'exec failed: turn exceeded its budget' }],
      isError: true,
    });

    // the server is still serving afterwards
    next = async () => ({ type: 'custom_tool_call_output', call_id: 'c', output: [header('Script completed'), { type: 'input_text', text: '2' }] });
    expect((await client.callTool({ name: 'exec', arguments: { code: 'text(1 + 1)' } })).content).toHaveLength(2);
    expect(scripted.received.map((item) => (item as { name?: string }).name)).toEqual(['exec', 'exec', 'exec', 'exec']);
  });

  it('answers an unknown tool with an InvalidParams protocol error', async () => {
    const { client } = await connectClient(scriptedHost(async () => ({ type: 'custom_tool_call_output', call_id: 'x', output: [] })).host);
    await expect(client.callTool({ name: 'exec_command', arguments: {} })).rejects.toThrow(/unknown tool: exec_command \(this server has exec and wait\)/);
  });

  it('aborts the host call when the client cancels the request', async () => {
    let aborted: unknown;
    const scripted = scriptedHost(
      (_item, signal) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            aborted = signal.reason ?? true;
            reject(new Error('aborted'));
          }),
        ),
    );
    const { client } = await connectClient(scripted.host);
    const controller = new AbortController();
    const pending = client.callTool({ name: 'exec', arguments: { code: 'await new Promise(() => {})' } }, undefined, { signal: controller.signal });
    await expect.poll(() => scripted.received.length).toBe(1);
    controller.abort('user pressed stop');
    await expect(pending).rejects.toThrow();
    await expect.poll(() => aborted).toBeDefined();
  });

  it('sends notifications/tools/list_changed when the host reports a change', async () => {
    const scripted = scriptedHost(async () => ({ type: 'custom_tool_call_output', call_id: 'x', output: [] }));
    const { client } = await connectClient(scripted.host);
    let notified = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      notified++;
    });
    scripted.changed();
    await expect.poll(() => notified).toBe(1);
  });

  it('serves stdio by default and closes when stdin ends', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const lines: string[] = [];
    stdout.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
    const served = await serveCodeModeOverMcp({ host: scriptedHost(async () => ({ type: 'custom_tool_call_output', call_id: 'x', output: [] })).host, stdin, stdout });
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`);
    await expect.poll(() => lines.length).toBe(1);
    expect(JSON.parse(lines[0])).toMatchObject({ id: 1, result: { serverInfo: { name: 'switchyard-code-mode' }, capabilities: { tools: { listChanged: true } } } });
    stdin.end();
    await served.closed;
  });
});

describe('toolOutputToCallToolResult', () => {
  it('keeps a running cell as a success and links non-data image URLs', () => {
    expect(
      toolOutputToCallToolResult({
        type: 'custom_tool_call_output',
        call_id: 'c',
        output: [header('Script running with cell ID 0123456789abcdef'), { type: 'input_image', image_url: 'https://example.com/a.png' }],
      }),
    ).toEqual({
      content: [
        { type: 'text', text: 'Script running with cell ID 0123456789abcdef\nWall time 0.1 seconds\nOutput:\n' },
        { type: 'resource_link', uri: 'https://example.com/a.png', name: 'image' },
      ],
    });
  });
});

describe('isFailedCodeModeOutput', () => {
  it('reads the status header, whether the output is a string or content items', () => {
    const item = (output: string | Array<{ type: 'input_text'; text: string }>): ToolOutputItem => ({ type: 'function_call_output', call_id: 'w', output });
    expect(isFailedCodeModeOutput(item('Script terminated\nWall time 0.0 seconds\nOutput:\n'))).toBe(false);
    expect(isFailedCodeModeOutput(item([header('Script running with cell ID abc')]))).toBe(false);
    expect(isFailedCodeModeOutput(item([header('Script completed')]))).toBe(false);
    expect(isFailedCodeModeOutput(item([header('Script failed')]))).toBe(true);
    expect(isFailedCodeModeOutput(item('failed to parse function arguments: missing field `cell_id`'))).toBe(true);
  });

  it('gives way to the success the host reports', async () => {
    const scripted = scriptedHost(async (item) => ({ item: { type: 'function_call_output', call_id: item.call_id, output: 'feedback from a hook' }, success: true }));
    const { client } = await connectClient(scripted.host);
    expect(await client.callTool({ name: 'wait', arguments: { cell_id: 'x' } })).toEqual({ content: [{ type: 'text', text: 'feedback from a hook' }] });
  });
});
