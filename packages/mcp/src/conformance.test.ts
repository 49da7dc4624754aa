import { afterAll, expect, it } from 'vitest';
import type { ToolExecutor } from '@switchyard/protocol';
import { testExecutor } from '@switchyard/registry/testing';
import { executor, fixtureServer } from '../test/helpers';
import { mcpTools, type McpTools } from './mcp-tools';

// The MCP executors against the fixture server (a real MCP server over stdio), one connection per
// suite: each suite's lifecycle check disposes what its executor holds.
const opened: McpTools[] = [];
afterAll(() => Promise.all(opened.map((mcp) => mcp.close())));

function connector(name: string, flatName: string, options: Parameters<typeof fixtureServer>[1] = {}) {
  return async () => {
    const mcp = await mcpTools({ servers: { [name]: fixtureServer({}, options) } });
    opened.push(mcp);
    return executor(mcp, flatName);
  };
}

let echoTools: McpTools | undefined;
testExecutor({
  name: 'mcp__fx__echo (MCP tool over stdio)',
  executor: async () => {
    const found: ToolExecutor = await connector('fx', 'mcp__fx__echo')();
    echoTools = opened.at(-1);
    return found;
  },
  sample: { message: 'conformance' },
  invalid: [{ message: 7 }, {}],
  additionalTests: ({ invoke, executor: current }) => {
    // MCP connections end with McpTools.close (the executors hold no dispose of their own).
    it('close: may run twice; a call afterwards is answered with its call_id, not a crash', async () => {
      expect(current().dispose).toBeUndefined();
      await echoTools!.close();
      await echoTools!.close();
      const after = await invoke({ message: 'late' }, { callId: 'after-close' });
      expect(after.item.call_id).toBe('after-close');
      expect(after.success).toBe(false);
    });
  },
});

testExecutor({
  name: 'mcp__lazy__sleep (deferred, parallel-safe MCP tool; a cancel reaches the server)',
  executor: connector('lazy', 'mcp__lazy__sleep', { exposure: 'deferred', parallel: true }),
  sample: { ms: 300 },
  // The fixture's `ms` has no maximum and defaults to 5 s: generated inputs are bounded so the
  // results and schema checks run short sleeps (the handler's reads still checked against `ms`).
  generatedParameters: { type: 'object', properties: { ms: { type: 'number', minimum: 0, maximum: 100 } }, required: ['ms'] },
  invalid: [{ ms: 'long' }],
});
