import { describe, expect, it } from 'vitest';
import type { McpToolCaller, McpToolCallRequest, McpToolCallResult } from '@switchyard/protocol';
import { createHookEngine } from './hook-engine';
import { postRequest } from '../test/helpers';

// The engine's side of mcp_tool hooks, with a caller the test writes (a real MCP server process
// runs them in @switchyard/mcp's hook-caller.test.ts and the integration tests).

/** A caller answering every call with `answer`, recording requests and whether it was closed. */
function scriptedCaller(answer: McpToolCallResult) {
  const requests: McpToolCallRequest[] = [];
  let closed = 0;
  const caller: McpToolCaller = {
    callTool: async (request) => (requests.push(request), answer),
    close: async () => void closed++,
  };
  return { caller, requests, closed: () => closed };
}

function auditEngine(answer: McpToolCallResult) {
  const script = scriptedCaller(answer);
  const engine = createHookEngine({
    mcpServers: { audit: { command: 'unused' } },
    mcpToolCaller: () => script.caller,
    config: { hooks: { PostToolUse: [{ hooks: [{ type: 'mcp_tool', server: 'audit', tool: 'review' }] }] } },
  });
  return { engine, ...script };
}

describe('mcp_tool hooks in the engine', () => {
  it('structuredContent is the answer (as JSON); the arguments are the stdin object; close() closes the caller', async () => {
    const { engine, requests, closed } = auditEngine({ isError: false, content: [{ type: 'text', text: 'ignored' }], structuredContent: { decision: 'block', reason: 'redacted by audit' } });
    expect(await engine.runPostToolUse(postRequest({ toolResponse: 'secret=1' }))).toEqual({ feedback: 'redacted by audit', additionalContexts: [], warnings: [] });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ server: 'audit', tool: 'review', arguments: { hook_event_name: 'PostToolUse', tool_response: 'secret=1' } });
    await engine.close();
    expect(closed()).toBe(1);
  });

  it('without structured content the text blocks are the answer; other blocks are ignored', async () => {
    const { engine } = auditEngine({
      isError: false,
      content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'text', text: '{"decision":"block",' }, { type: 'text', text: '"reason":"split over two blocks"}' }],
    });
    expect(await engine.runPostToolUse(postRequest())).toEqual({ feedback: 'split over two blocks', additionalContexts: [], warnings: [] });
  });

  it('a factory that throws or answers no caller is a CONFIG error naming the option', () => {
    expect(() => createHookEngine({ mcpServers: {}, mcpToolCaller: () => ({}) as McpToolCaller })).toThrow('createHookEngine: option `mcpToolCaller` must return an McpToolCaller (`callTool` and `close`)');
    expect(() =>
      createHookEngine({
        mcpServers: {},
        mcpToolCaller: () => {
          throw new Error('no sdk');
        },
      }),
    ).toThrow('createHookEngine: option `mcpToolCaller` failed: no sdk');
  });
});
