// The wire boundaries of @switchyard/mcp and @switchyard/openai under abuse: a hand-written MCP
// server that puts hostile bytes on stdio (a real child process), and recorded provider streams
// cut into random chunks.
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpTools, type McpTools } from '@switchyard/mcp';
import { chatCompletions } from '@switchyard/openai';
import { toWireTools, type JsonObject, type ModelStreamEvent, type ToolExecutor } from '@switchyard/protocol';
import { invokeTool } from '@switchyard/registry/testing';
import { byProfile, report } from '../src/profile';
import { typecheckRequestBodies } from '../../../packages/openai/test/request-body-types';

const HOSTILE = fileURLToPath(new URL('./fixtures/hostile-mcp-server.mjs', import.meta.url));
const THIRD_PARTY = fileURLToPath(new URL('../../../packages/openai/test/fixtures/third-party/', import.meta.url));
const LIMIT = 1024 * 1024;

describe('a hostile MCP server on stdio', () => {
  let mcp: McpTools;
  let flood: ToolExecutor;
  let echo: ToolExecutor;
  beforeAll(async () => {
    mcp = await mcpTools({ servers: { hostile: { command: process.execPath, args: [HOSTILE], toolTimeoutsMs: { flood: 2000 } } }, maxMessageBytes: LIMIT });
    flood = mcp.executors().find((executor) => executor.name.name === 'flood')!;
    echo = mcp.executors().find((executor) => executor.name.name === 'echo')!;
  }, 20_000);
  afterAll(() => mcp?.close());

  const run = async (target: ToolExecutor, args: object) => {
    const answer = await invokeTool(target, args as JsonObject, { callId: 'c', hooks: false });
    if (answer.error) throw answer.error;
    const output = answer.output;
    const result = output.codeModeResult({ kind: 'function', arguments: '{}' }) as { content: Array<{ text?: string }>; isError: boolean };
    return { isError: result.isError, texts: result.content.map((block) => block.text ?? '') };
  };

  it('answers every call, keeps the connection and reads the next message after each abuse', async () => {
    const size = byProfile(4 * LIMIT, 40 * LIMIT);
    const cases: Array<[string, object, (answer: { isError: boolean; texts: string[] }) => void]> = [
      ['oversized, id last', { kind: 'oversized-id-last', bytes: size }, (answer) => {
        expect(answer.isError).toBe(true);
        expect(answer.texts[0]).toMatch(/^tool call error: the MCP server's result is .* over this client's message limit of 1\.0 MiB/);
        expect(answer.texts[1]).toMatch(/^The result's first text began \(truncated\):\nBEGIN x{1000}/);
      }],
      ['oversized, id first', { kind: 'oversized-id-first', bytes: size }, (answer) => expect(answer.texts[0]).toMatch(/over this client's message limit/)],
      ['oversized notification, then the answer', { kind: 'oversized-notification', bytes: size }, (answer) => expect(answer).toEqual({ isError: false, texts: ['after the big notification'] })],
      ['garbage lines and CRLF', { kind: 'garbage' }, (answer) => expect(answer).toEqual({ isError: false, texts: ['after garbage'] })],
      ['a line split inside multi-byte characters', { kind: 'split-utf8' }, (answer) => expect(answer).toEqual({ isError: false, texts: ['héllo ✓ 🎉 done'] })],
      // Neither end of the line shows its id: the call cannot be answered from it, so it times out.
      ['oversized, id in the middle', { kind: 'oversized-id-middle', bytes: size }, (answer) => expect(answer.texts[0]).toBe('tool call error: timed out awaiting tools/call after 2s')],
    ];
    for (const [name, args, check] of cases) {
      check(await run(flood, args));
      expect(mcp.servers()[0].state, name).toBe('ready');
      expect(await run(echo, { text: name }), name).toEqual({ isError: false, texts: [name] });
    }
    report('mcp stdio', `${cases.length} hostile framings (lines of ${size} bytes over a ${LIMIT}-byte limit): every call answered, server still ready, next call read`);
  }, 60_000);

  it('list_mcp_resources over pages that never end: bounded at 20 pages, non-resources dropped, no listener-leak warning', async () => {
    const list = mcp.executors().find((executor) => executor.name.name === 'list_mcp_resources')!;
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const all = await invokeTool(list, {}, { callId: 'all', hooks: false });
      const every = all.output.codeModeResult(all.payload) as { structuredContent: { resources: Array<{ uri: string }>; nextCursor?: string } };
      expect(every.structuredContent.resources.map((resource) => resource.uri)).toEqual(Array.from({ length: 20 }, (_, page) => `hostile://page/${page}`));
      expect(every.structuredContent).not.toHaveProperty('nextCursor');
      const one = await invokeTool(list, { server: 'hostile', cursor: '7' }, { callId: 'one', hooks: false });
      expect(one.output.codeModeResult(one.payload)).toMatchObject({ structuredContent: { resources: [{ server: 'hostile', uri: 'hostile://page/7' }], nextCursor: '8' } });
      await new Promise((resolve) => setImmediate(resolve)); // process warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
    expect(mcp.servers()[0].state).toBe('ready');
    report('mcp resources', 'endless resources/list pages: 20 pages read, 80 non-resource entries dropped, no process warning');
  }, 60_000);
});

/** The distinct request bodies the chunked fetch was sent (type-checked against the official types). */
const sentBodies = new Set<string>();

/** A fetch that answers with `body` cut at `cuts` (byte offsets), keeping the request body it was sent. */
function chunkedFetch(body: Buffer, cuts: number[]): typeof fetch {
  return (async (_url: unknown, init?: { body?: unknown }) => {
    if (typeof init?.body === 'string') sentBodies.add(init.body);
    const points = [...new Set(cuts.map((cut) => cut % (body.length + 1)))].sort((a, b) => a - b);
    const pieces: Buffer[] = [];
    let start = 0;
    for (const point of [...points, body.length]) {
      if (point > start) pieces.push(body.subarray(start, point));
      start = Math.max(start, point);
    }
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const piece of pieces) controller.enqueue(new Uint8Array(piece));
        controller.close();
      },
    });
    return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  }) as typeof fetch;
}

async function assemble(body: Buffer, cuts: number[]): Promise<{ items: unknown[]; error?: string }> {
  const client = chatCompletions({ baseURL: 'http://127.0.0.1:9/v1', model: 'm', maxAttempts: 1, fetch: chunkedFetch(body, cuts) });
  const tools = toWireTools([{ type: 'function', name: 'weather', description: 'w', parameters: { type: 'object', properties: {} } }]);
  const items: unknown[] = [];
  try {
    for await (const event of client.stream({ tools, input: [], parallelToolCalls: true, signal: new AbortController().signal }) as AsyncIterable<ModelStreamEvent>) {
      if (event.type === 'output-item') items.push(event.item);
    }
    return { items };
  } catch (error) {
    return { items, error: String(error) };
  }
}

describe('recorded Chat Completions streams cut into random chunks', () => {
  it('assemble to the same items however the bytes arrive', async () => {
    const files = readdirSync(THIRD_PARTY).filter((name) => name.endsWith('.sse') && !name.includes('tool-search'));
    const runs = byProfile(25, 500);
    for (const name of files) {
      const body = readFileSync(`${THIRD_PARTY}${name}`);
      const whole = await assemble(body, []);
      await fc.assert(
        fc.asyncProperty(fc.array(fc.nat(), { maxLength: 40 }), async (cuts) => {
          expect(await assemble(body, cuts)).toEqual(whole);
        }),
        { numRuns: runs },
      );
    }
    report('chat streams', `${files.length} recorded streams × ${runs} random chunkings each: identical items and errors`);
    // the bodies sent on the way match the official openai request types
    expect(sentBodies.size).toBeGreaterThan(0);
    const bodies = [...sentBodies].map((text) => ({ kind: 'chat' as const, label: 'chunked chat stream', body: JSON.parse(text) as unknown }));
    expect(typecheckRequestBodies(bodies)).toEqual([]);
  }, 120_000);
});
