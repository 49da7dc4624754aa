// The official MCP servers from npm (pinned devDependencies), started once for the whole file, run
// in a direct session and in a Code Mode session through @switchyard/mcp.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpTools, type McpTools, type McpToolsEvent } from '@switchyard/mcp';
import { createSession, type Session } from '@switchyard/session';
import type { ContentItem, ResponseItem } from '@switchyard/protocol';
import { exec, texts } from './helpers';
import { callItem } from '@switchyard/test-helpers';

const require = createRequire(import.meta.url);
/** The entry script of an official server package (its `bin`). */
export const officialServer = (name: 'everything' | 'filesystem' | 'memory') => require.resolve(`@modelcontextprotocol/server-${name}/dist/index.js`);

/** Generous: four servers start at once on a busy two-core machine. */
const STARTUP_MS = 60_000;
const RED_DOT = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
/** 6,000,000 characters in 100-character lines: server-filesystem sends it twice (content and structuredContent). */
const BIG_TEXT = `${'0123456789'.repeat(9)}abcdefghi\n`.repeat(60_000);

function rawOutput(item: ResponseItem | undefined): string | ContentItem[] {
  return (item as { output: string | ContentItem[] }).output;
}

let root: string;
let mcp: McpTools;
let direct: Session;
let codeMode: Session;
const events: McpToolsEvent[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'switchyard-official-mcp-'));
  writeFileSync(join(root, 'big.txt'), BIG_TEXT);
  writeFileSync(join(root, 'dot.png'), Buffer.from(RED_DOT, 'base64'));
  writeFileSync(join(root, 'hello.txt'), 'hello from disk\n');
  mcp = await mcpTools({
    servers: {
      fs: { command: process.execPath, args: [officialServer('filesystem'), root], startupTimeoutMs: STARTUP_MS },
      everything: { command: process.execPath, args: [officialServer('everything'), 'stdio'], startupTimeoutMs: STARTUP_MS },
      // The same server declared parallel-safe (the default above is not).
      fast: { command: process.execPath, args: [officialServer('everything'), 'stdio'], parallel: true, enabledTools: ['trigger-long-running-operation'], startupTimeoutMs: STARTUP_MS },
      memory: { command: process.execPath, args: [officialServer('memory')], env: { MEMORY_FILE_PATH: join(root, 'memory.jsonl') }, startupTimeoutMs: STARTUP_MS },
    },
  });
  for (const type of ['progress', 'log', 'warning'] as const) mcp.on(type, (event) => events.push(event));
  direct = createSession({ toolMode: 'direct', tools: () => mcp.executors() });
  codeMode = createSession({ toolMode: 'code-mode-only', tools: () => mcp.executors() });
}, 90_000);

afterAll(async () => {
  await direct?.shutdown();
  await codeMode?.shutdown();
  await mcp?.close();
  rmSync(root, { recursive: true, force: true });
});

async function dispatchDirect(item: ResponseItem): Promise<ResponseItem> {
  const turn = direct.beginTurn();
  try {
    return await (await turn.step()).dispatch(item);
  } finally {
    await turn.end();
  }
}

async function runCell(code: string): Promise<string[]> {
  const turn = codeMode.beginTurn();
  try {
    return texts(await (await turn.step()).dispatch(exec('cell', code)));
  } finally {
    await turn.end();
  }
}

describe('the official MCP servers, started once', () => {
  it('all four start with their tools; a tool that requires tasks is offered, run as an MCP task (everything declares Tasks for tools/call)', () => {
    expect(mcp.servers().map((server) => [server.name, server.state]), JSON.stringify(mcp.warnings)).toEqual([
      ['fs', 'ready'],
      ['everything', 'ready'],
      ['fast', 'ready'],
      ['memory', 'ready'],
    ]);
    expect(mcp.warnings.filter((warning) => warning.kind === 'tool-skipped')).toEqual([]);
    const names = mcp.executors().map((executor) => `${executor.name.namespace ?? ''}${executor.name.name}`);
    expect(names).toContain('mcp__everything__get_resource_links');
    expect(names).toContain('mcp__everything__simulate_research_query');
    expect(names).toContain('read_mcp_resource');
  });

  it('the task-required tool runs: its MCP task is followed through its four stages to the report', async () => {
    const output = rawOutput(await dispatchDirect(callItem('research', 'simulate_research_query', { topic: 'tidal power' }, 'mcp__everything__')));
    expect(output).toContain('# Research Report: tidal power');
  }, 30_000);
});

describe('server-filesystem: a 6 MB file (a 12 MB message) does not kill the server', () => {
  it('direct: the model gets the truncated text with the truncation note, and the server keeps serving', async () => {
    const output = rawOutput(await dispatchDirect(callItem('big', 'read_text_file', { path: join(root, 'big.txt') }, 'mcp__fs__')));
    expect(typeof output).toBe('string');
    const text = output as string;
    expect(text).toMatch(/^Wall time: \d+\.\d{4} seconds\nOutput:\n\[\{"type":"text","text":"0123456789/);
    expect(text).toMatch(/…\d+ tokens truncated…/);
    expect(text.length).toBeLessThan(60_000);
    expect(mcp.servers().find((server) => server.name === 'fs')?.state).toBe('ready');
    const after = rawOutput(await dispatchDirect(callItem('hello', 'read_text_file', { path: join(root, 'hello.txt') }, 'mcp__fs__')));
    expect(after).toMatch(/\[\{"type":"text","text":"hello from disk\\n"\}\]$/);
  });

  it('Code Mode: the cell receives the whole file as structured content', async () => {
    const lines = await runCell(
      `const r = await tools.mcp__fs__read_text_file({ path: ${JSON.stringify(join(root, 'big.txt'))} });\n` +
        'text(r.isError + " " + r.structuredContent.content.length + " " + r.content[0].text.length);',
    );
    expect(lines.slice(1)).toEqual(['false 6000000 6000000']);
  });

  it('over the maxMessageBytes option: an error result with an honest note and the start of the text; the server stays', async () => {
    const small = await mcpTools({ servers: { fs: { command: process.execPath, args: [officialServer('filesystem'), root], startupTimeoutMs: STARTUP_MS } }, maxMessageBytes: 4 * 1024 * 1024 });
    const session = createSession({ toolMode: 'direct', tools: () => small.executors() });
    try {
      const turn = session.beginTurn();
      const step = await turn.step();
      const big = await step.handleItem(callItem('big', 'read_text_file', { path: join(root, 'big.txt') }, 'mcp__fs__'));
      expect(big?.success).toBe(false);
      const result = big!.output.codeModeResult(big!.payload) as { content: Array<{ text: string }>; isError: boolean };
      expect(result.isError).toBe(true);
      expect(result.content[0].text).toMatch(
        /^tool call error: the MCP server's result is 11\.\d MiB \(\d+ bytes\), over this client's message limit of 4\.0 MiB \(4194304 bytes\) \(the `maxMessageBytes` option\), so it was not read\. Ask for less/,
      );
      expect(result.content[1].text.startsWith(`The result's first text began (truncated):\n${BIG_TEXT.slice(0, 1000)}`)).toBe(true);
      // The model reads the same note and text (cut to its budget).
      expect(rawOutput(big!.item)).toContain("over this client's message limit of 4.0 MiB");
      expect(small.servers()[0].state).toBe('ready');
      const listed = await step.handleItem(callItem('list', 'list_directory', { path: root }, 'mcp__fs__'));
      expect(listed?.success).toBe(true);
      expect(rawOutput(listed!.item)).toContain('[FILE] hello.txt');
      await turn.end();
    } finally {
      await session.shutdown();
      await small.close();
    }
  });
});

describe('server-filesystem read_media_file: structured content never hides the image', () => {
  it('direct: the model gets the image as an input_image', async () => {
    const output = rawOutput(await dispatchDirect(callItem('img', 'read_media_file', { path: join(root, 'dot.png') }, 'mcp__fs__')));
    expect(Array.isArray(output)).toBe(true);
    expect((output as ContentItem[]).slice(1)).toEqual([{ type: 'input_image', image_url: `data:image/png;base64,${RED_DOT}` }]);
  });

  it('Code Mode: the cell gets the structured content', async () => {
    const lines = await runCell(
      `const r = await tools.mcp__fs__read_media_file({ path: ${JSON.stringify(join(root, 'dot.png'))} });\n` +
        'text(JSON.stringify(r.structuredContent.content.map((c) => [c.type, c.mimeType, c.data.length])));',
    );
    expect(lines.slice(1)).toEqual([JSON.stringify([['image', 'image/png', RED_DOT.length]])]);
  });
});

describe('server-everything: resource links, progress and logs', () => {
  it('direct: resource links carry a note, and read_mcp_resource reads one', async () => {
    const output = rawOutput(await dispatchDirect(callItem('links', 'get_resource_links', { count: 2 }, 'mcp__everything__')));
    expect(output).toMatch(/"type":"resource_link"/);
    expect(output).toMatch(/\nRead a linked resource with `read_mcp_resource` \(\{"server":"everything","uri":"<its uri>"\}\)\.$/);
    const read = rawOutput(await dispatchDirect({ type: 'function_call', call_id: 'read', name: 'read_mcp_resource', arguments: JSON.stringify({ server: 'everything', uri: 'demo://resource/static/document/architecture.md' }) }));
    expect(read).toMatch(/^Wall time: \d+\.\d{4} seconds\nOutput:\n\[\{"type":"text","text":"# Everything Server/);
    const unknown = rawOutput(await dispatchDirect({ type: 'function_call', call_id: 'bad', name: 'read_mcp_resource', arguments: JSON.stringify({ server: 'nope', uri: 'x' }) }));
    expect(unknown).toBe('unknown MCP server "nope"; servers with resources: `everything`, `fast`, `memory`');
  });

  it('Code Mode: a cell follows a resource link through read_mcp_resource', async () => {
    const lines = await runCell(
      'const links = await tools.mcp__everything__get_resource_links({ count: 1 });\n' +
        'const link = links.content.find((block) => block.type === "resource_link");\n' +
        'const read = await tools.read_mcp_resource({ server: "everything", uri: link.uri });\n' +
        'text(link.uri + " -> " + read.structuredContent.contents[0].uri);',
    );
    expect(lines.slice(1)).toEqual(['demo://resource/dynamic/blob/1 -> demo://resource/dynamic/blob/1']);
  });

  it('reports progress notifications of a running call as events', async () => {
    const before = events.length;
    const output = rawOutput(await dispatchDirect(callItem('long', 'trigger_long_running_operation', { duration: 0.4, steps: 2 }, 'mcp__everything__')));
    expect(output).toMatch(/Long running operation completed/);
    const progress = events.slice(before).filter((event) => event.type === 'progress');
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]).toMatchObject({ type: 'progress', server: 'everything', tool: 'trigger-long-running-operation', callId: 'long', progress: 1, total: 2 });
  });

  it('reports log notifications as events', async () => {
    const logged = new Promise<McpToolsEvent>((resolve) => {
      const off = mcp.on('log', (event) => {
        off();
        resolve(event);
      });
    });
    await dispatchDirect(callItem('log-on', 'toggle_simulated_logging', {}, 'mcp__everything__'));
    const event = await logged;
    expect(event).toMatchObject({ type: 'log', server: 'everything' });
    expect(typeof (event as { level: string }).level).toBe('string');
    await dispatchDirect(callItem('log-off', 'toggle_simulated_logging', {}, 'mcp__everything__'));
  });
});

describe("Code Mode honours a server's `parallel: false`", () => {
  async function nestedIntervals(server: string): Promise<Array<{ start: number; end: number }>> {
    const starts = new Map<string, number>();
    const intervals: Array<{ start: number; end: number }> = [];
    const offStart = codeMode.on('tool-call-start', (event) => event.source.kind === 'code-mode' && starts.set(event.callId, Date.now()));
    const offEnd = codeMode.on('tool-call-end', (event) => {
      const start = starts.get(event.callId);
      if (start !== undefined) intervals.push({ start, end: Date.now() });
    });
    try {
      const lines = await runCell(
        `const rs = await Promise.all([1, 2, 3].map(() => tools.mcp__${server}__trigger_long_running_operation({ duration: 0.5, steps: 1 })));\n` +
          'text(rs.map((r) => r.isError).join(","));',
      );
      expect(lines.slice(1)).toEqual(['false,false,false']);
    } finally {
      offStart();
      offEnd();
    }
    return intervals.sort((a, b) => a.start - b.start);
  }

  it('runs nested calls to a server that is not parallel-safe one at a time, as direct mode does', async () => {
    const serial = await nestedIntervals('everything');
    expect(serial).toHaveLength(3);
    for (let index = 1; index < serial.length; index++) expect(serial[index].start).toBeGreaterThanOrEqual(serial[index - 1].end);
  });

  it('runs nested calls to a parallel-safe server together', async () => {
    const together = await nestedIntervals('fast');
    expect(together).toHaveLength(3);
    expect(Math.max(...together.map((interval) => interval.start))).toBeLessThan(Math.min(...together.map((interval) => interval.end)));
  });
});
