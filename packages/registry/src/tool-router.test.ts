import { describe, expect, it } from 'vitest';
import { hasErrorCode, toolName, type ToolExecutor } from '@switchyard/protocol';
import { defineFreeformTool, defineFunctionTool } from '@switchyard/kit';
import { ToolSearchOutput } from '@switchyard/kit/internal';
import { ToolRegistry } from './tool-registry';
import { createToolRouter } from './tool-router';
import { routerSetup } from '../test/support';

const echo = defineFunctionTool({ name: 'echo', description: 'Echoes.', parameters: { type: 'object' }, handle: ({ args }) => args });
const patch = defineFreeformTool({ name: 'apply_patch', description: 'Patches.', handle: ({ input }) => input });

describe('createToolRouter', () => {
  it('serializes the visible specs as the request tools and keeps the registry', () => {
    const registry = ToolRegistry.from([echo, patch]);
    const router = createToolRouter({ specs: [echo.spec, patch.spec], registry });
    expect(router.registry).toBe(registry);
    expect(router.tools).toEqual([
      { type: 'function', name: 'echo', description: 'Echoes.', strict: false, parameters: { type: 'object' } },
      { type: 'custom', name: 'apply_patch', description: 'Patches.', format: { type: 'text' } },
    ]);
  });

  describe('buildToolCall', () => {
    const router = createToolRouter({ specs: [], registry: ToolRegistry.from([]) });

    it('maps a call whose namespace is its own name (hosted tool_search) to the plain tool, only when that is the one registered', () => {
      const hosted = { type: 'function_call', call_id: 'c9', name: 'echo', namespace: 'echo', arguments: '{}' } as const;
      const plain = createToolRouter({ specs: [], registry: ToolRegistry.from([echo]) });
      expect(plain.buildToolCall(hosted)?.toolName).toEqual(toolName('echo'));
      expect(router.buildToolCall(hosted)?.toolName).toEqual(toolName('echo', 'echo'));
      const namespaced = defineFunctionTool({ name: 'echo', namespace: 'echo', description: 'Echoes.', parameters: { type: 'object' }, handle: () => 'ns' });
      const both = createToolRouter({ specs: [], registry: ToolRegistry.from([echo, namespaced]) });
      expect(both.buildToolCall(hosted)?.toolName).toEqual(toolName('echo', 'echo'));
    });

    it('maps function_call (with namespace) to a function payload with the raw arguments', () => {
      expect(router.buildToolCall({ type: 'function_call', call_id: 'c1', name: 'curr_time', namespace: 'clock', arguments: '{"x":1}' })).toEqual({
        toolName: toolName('curr_time', 'clock'),
        callId: 'c1',
        payload: { kind: 'function', arguments: '{"x":1}' },
      });
      expect(router.buildToolCall({ type: 'function_call', call_id: 'c2', name: 'echo', arguments: '' })?.toolName).toEqual(toolName('echo'));
    });

    it('maps custom_tool_call to a custom payload', () => {
      expect(router.buildToolCall({ type: 'custom_tool_call', call_id: 'c3', name: 'apply_patch', input: '*** Begin Patch' })).toEqual({
        toolName: toolName('apply_patch'),
        callId: 'c3',
        payload: { kind: 'custom', input: '*** Begin Patch' },
      });
    });

    it('maps a client tool_search_call (object or JSON string arguments) and ignores server-side searches', () => {
      expect(router.buildToolCall({ type: 'tool_search_call', call_id: 's1', execution: 'client', arguments: { query: 'weather', limit: 3 } })).toEqual({
        toolName: toolName('tool_search'),
        callId: 's1',
        payload: { kind: 'tool-search', arguments: { query: 'weather', limit: 3 } },
      });
      expect(router.buildToolCall({ type: 'tool_search_call', call_id: 's2', execution: 'client', arguments: '{"query":"db"}' })?.payload).toEqual({
        kind: 'tool-search',
        arguments: { query: 'db' },
      });
      expect(router.buildToolCall({ type: 'tool_search_call', call_id: 's3', execution: 'server', arguments: { query: 'x' } })).toBeUndefined();
    });

    it('answers anything else with undefined', () => {
      expect(router.buildToolCall({ type: 'message', role: 'assistant', content: 'hi' })).toBeUndefined();
      expect(router.buildToolCall({ type: 'reasoning', summary: [] })).toBeUndefined();
      expect(router.buildToolCall({ type: 'function_call_output', call_id: 'c', output: 'x' })).toBeUndefined();
    });

    it('falls back to the item id, and refuses a call that cannot be answered with a FATAL error', () => {
      expect(router.buildToolCall({ type: 'function_call', id: 'fc_1', name: 'echo', arguments: '{}' } as never)?.callId).toBe('fc_1');
      let thrown: unknown;
      try {
        router.buildToolCall({ type: 'function_call', name: 'echo', arguments: '{}' } as never);
      } catch (error) {
        thrown = error;
      }
      expect(hasErrorCode(thrown, 'FATAL')).toBe(true);
      expect((thrown as Error).message).toBe('function_call without call_id or id');
    });
  });

  it('answers malformed tool_search arguments at dispatch, never by throwing', async () => {
    let searched = false;
    const search: ToolExecutor = {
      name: toolName('tool_search'),
      spec: { type: 'tool_search', execution: 'client', description: 'Search.', parameters: { type: 'object' } },
      async handle() {
        searched = true;
        return new ToolSearchOutput([]);
      },
    };
    const { runtime } = routerSetup([search]);
    const bad = [
      { args: '{"query":', reason: /^failed to parse tool_search arguments: .+/ },
      { args: { limit: 2 }, reason: /^failed to parse tool_search arguments: arguments\.query is required$/ },
      { args: { query: 'x', limit: 'ten' }, reason: /^failed to parse tool_search arguments: arguments\.limit must be number$/ },
    ];
    for (const [index, { args, reason }] of bad.entries()) {
      // one runtime is one response: each call gets its own id
      const result = await runtime.handleItem({ type: 'tool_search_call', call_id: `bad-${index}`, execution: 'client', arguments: args as never });
      expect(result?.item).toEqual({ type: 'tool_search_output', call_id: `bad-${index}`, status: 'completed', execution: 'client', tools: [] });
      expect(result?.success).toBe(false);
      expect(result?.output.codeModeResult(result.payload)).toMatch(reason);
      expect(result?.error?.code).toBe('INVALID_INPUT');
    }
    expect(searched).toBe(false);
    // the field rules (limit > 0, a non-blank query) belong to the tool_search handler
    await runtime.handleItem({ type: 'tool_search_call', call_id: 'zero', execution: 'client', arguments: { query: 'x', limit: 0 } });
    expect(searched).toBe(true);
  });

  it('on() returns an unsubscribe function and isolates a throwing listener', async () => {
    const { router, runtime } = routerSetup([echo]);
    const seen: string[] = [];
    router.on('tool-call-start', () => {
      throw new Error('listener bug');
    });
    const off = router.on('tool-call-start', (event) => seen.push(event.callId));
    await runtime.handleItem({ type: 'function_call', call_id: 'a', name: 'echo', arguments: '{}' });
    off();
    const result = await runtime.handleItem({ type: 'function_call', call_id: 'b', name: 'echo', arguments: '{}' });
    expect(seen).toEqual(['a']);
    expect(result?.item).toEqual({ type: 'function_call_output', call_id: 'b', output: '{}' });
  });
});
