// The real model clients in the whole loop, against streams replayed from a loopback server (the
// openai package's replay server: every request body is type-checked against the official types).
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mcpTools } from '@switchyard/mcp';
import { chatCompletions, openaiResponses } from '@switchyard/openai';
import { toChatTools } from '../../../packages/openai/src/chat-conversion';
import type { ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession } from '@switchyard/session';
import { closeReplayServers, startReplayServer } from '../../../packages/openai/test/replay-server';
import { outputOf } from '@switchyard/test-helpers';

const require = createRequire(import.meta.url);
const MEMORY_SERVER = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');

afterEach(closeReplayServers);
const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

describe('Responses API: a hosted tool_search stream (recorded from gpt-5.4)', () => {
  it('runs the loaded function although the call names it as its own namespace', async () => {
    const server = await startReplayServer([{ fixture: 'third-party/ai-sdk-openai-tool-search.sse' }, { fixture: 'responses/final-message.sse' }]);
    const seen: unknown[] = [];
    const weather = defineFunctionTool({
      name: 'get_weather',
      description: 'Get the current weather at a specific location',
      parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string' } }, required: ['location', 'unit'] },
      handle: ({ args }) => {
        seen.push(args);
        return { temperature: 61, unit: 'fahrenheit' };
      },
    });
    const session = createSession({ toolMode: 'direct', tools: [weather] });
    try {
      const model = openaiResponses({ baseURL: `${server.url}/v1`, model: 'gpt-5.4', apiKey: 'sk-test', maxAttempts: 1 });
      const result = await session.runTurn({ model, input: 'Weather in San Francisco?' });
      expect(seen).toEqual([{ location: 'San Francisco, CA', unit: 'fahrenheit' }]);
      expect(outputOf(result.items, 'call_pddfxhfOx4gY56zn4vIIEbFp')).toBe('{"temperature":61,"unit":"fahrenheit"}');
      expect(result.finalText).toBe('Done.');
    } finally {
      await session.shutdown();
    }
  });
});

describe('Chat Completions: an MCP server with a long name', () => {
  it('sends function names of at most 64 characters and dispatches the shortened name to the real server-memory', async () => {
    const root = mkdtempSync(join(tmpdir(), 'switchyard-long-names-'));
    roots.push(root);
    const serverName = 'knowledge-graph-memory-for-the-customer-support-team-of-acme-corporation';
    const mcp = await mcpTools({ servers: { [serverName]: { command: process.execPath, args: [MEMORY_SERVER], env: { MEMORY_FILE_PATH: join(root, 'memory.jsonl') }, startupTimeoutMs: 60_000 } } });
    const session = createSession({ toolMode: 'direct', tools: () => mcp.executors() });
    const bodies: string[] = [];
    try {
      // The stream calls the name the client sends for create_entities (toChatTools is its mapping).
      const turn = session.beginTurn();
      const step = await turn.step();
      await turn.end();
      const createName = [...toChatTools(step.tools).targets].find(([, target]) => target.name === 'create_entities')?.[0];
      expect(createName).toMatch(/^mcp__knowledge_graph_memory_for_the_c_[0-9a-f]{10}_create_entities$/);

      const args = JSON.stringify({ entities: [{ name: 'Ada', entityType: 'person', observations: ['likes tea'] }] });
      const call = {
        id: 'chatcmpl-long-names',
        object: 'chat.completion.chunk',
        model: 'local',
        choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_long', type: 'function', function: { name: createName, arguments: args } }] }, finish_reason: 'tool_calls' }],
      };
      const server = await startReplayServer([{ body: `data: ${JSON.stringify(call)}\n\ndata: [DONE]\n\n`, headers: { 'content-type': 'text/event-stream' } }, { fixture: 'chat/final-message.sse' }]);
      const model = chatCompletions({ baseURL: `${server.url}/v1`, model: 'local', maxAttempts: 1 });
      const result = await session.runTurn({ model, input: 'Remember Ada.' });
      bodies.push(...server.requests.map((request) => request.body));
      const names = (JSON.parse(bodies[0]) as { tools: Array<{ function: { name: string } }> }).tools.map((tool) => tool.function.name);
      expect(names).toContain(createName);
      for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_]{1,64}$/);
      expect(new Set(names).size).toBe(names.length);
      expect(outputOf(result.items, 'call_long')).toContain('likes tea');
      const echoed = (JSON.parse(bodies[1]) as { messages: Array<{ tool_calls?: Array<{ function: { name: string } }> }> }).messages.find((message) => message.tool_calls);
      expect(echoed?.tool_calls?.[0].function.name).toBe(createName);
      expect(result.finalText).toBe('Done.');
    } finally {
      await session.shutdown();
      await mcp.close();
    }
  });
});
