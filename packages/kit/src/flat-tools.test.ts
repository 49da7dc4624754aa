import { describe, expect, it } from 'vitest';
import { flattenWireTools } from './flat-tools';
import type { WireTool } from '@switchyard/protocol';

describe('flattenWireTools', () => {
  it('keeps functions and custom tools, flattens namespace members, drops tool_search and hosted, first flat name wins', () => {
    const tools: WireTool[] = [
      { type: 'function', name: 'lookup', description: 'a', strict: false, parameters: { type: 'object' } },
      { type: 'namespace', name: 'clock', description: 'b', tools: [{ type: 'function', name: 'curr_time', description: 'c', strict: false, parameters: { type: 'object' } }, { type: 'custom', name: 'set_alarm', description: 'h', format: { type: 'text' } }] },
      { type: 'namespace', name: 'mcp__docs__', description: 'd', tools: [{ type: 'function', name: 'search-all', description: 'e', strict: false, parameters: { type: 'object' } }] },
      { type: 'custom', name: 'exec', description: 'f', format: { type: 'text' } },
      { type: 'tool_search', execution: 'client', description: 'g', parameters: { type: 'object' } },
      { type: 'web_search' },
      { type: 'function', name: 'clock__curr_time', description: 'shadowed', strict: false, parameters: { type: 'object' } },
    ];
    const flat = flattenWireTools(tools);
    expect(flat.map(({ flatName, kind, name, namespace }) => ({ flatName, kind, name, namespace }))).toEqual([
      { flatName: 'lookup', kind: 'function', name: 'lookup', namespace: undefined },
      { flatName: 'clock__curr_time', kind: 'function', name: 'curr_time', namespace: 'clock' },
      { flatName: 'clock__set_alarm', kind: 'custom', name: 'set_alarm', namespace: 'clock' },
      { flatName: 'mcp__docs__search_all', kind: 'function', name: 'search-all', namespace: 'mcp__docs__' },
      { flatName: 'exec', kind: 'custom', name: 'exec', namespace: undefined },
    ]);
    expect(flat[1]!.spec.description).toBe('c');
  });
});
