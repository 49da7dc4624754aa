import { describe, expect, it } from 'vitest';
import { VERSION, isSwitchyardError, toolName, type ToolExecutor } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { ToolRegistry } from './tool-registry';

const namedTool = (name: string, namespace?: string): ToolExecutor =>
  defineFunctionTool({ name, namespace, description: name, parameters: { type: 'object' }, handle: () => name });

describe('ToolRegistry', () => {
  it('looks executors up by exact ToolName', () => {
    const plain = namedTool('search');
    const namespaced = namedTool('search', 'mcp__docs__');
    const registry = ToolRegistry.from([plain, namespaced]);
    expect(registry.get(toolName('search'))).toBe(plain);
    expect(registry.get(toolName('search', 'mcp__docs__'))).toBe(namespaced);
    expect(registry.get(toolName('search', 'other__'))).toBeUndefined();
    expect(registry.has(toolName('mcp__docs__search'))).toBe(false);
    expect(registry.has(toolName('search'))).toBe(true);
    expect(registry.list()).toEqual([plain, namespaced]);
  });

  it('refuses a second executor with the same name with a CONFIG error', () => {
    let thrown: unknown;
    try {
      ToolRegistry.from([namedTool('curr_time', 'clock'), namedTool('curr_time', 'clock')]);
    } catch (error) {
      thrown = error;
    }
    expect(isSwitchyardError(thrown) && thrown.code).toBe('CONFIG');
    expect((thrown as Error).message).toBe('tool registry: duplicate tool name clock__curr_time (namespace clock, name curr_time)');
    expect(() => ToolRegistry.from([namedTool('echo'), namedTool('echo')])).toThrow('tool registry: duplicate tool name echo');
  });

  it('refuses a malformed executor with a CONFIG error', () => {
    const broken = { name: toolName('broken'), spec: namedTool('broken').spec } as unknown as ToolExecutor;
    expect(() => ToolRegistry.from([broken])).toThrow('tool registry: executor broken has no handle() function');
    expect(() => ToolRegistry.from([{} as ToolExecutor])).toThrow('tool registry: every executor needs a `name` ToolName');
  });
});

describe('ToolRegistry and the protocol version an executor was built against', () => {
  it('stamps the version of the protocol copy defineFunctionTool used and accepts it', () => {
    const stamped = namedTool('echo');
    expect(stamped.protocolVersion).toBe(VERSION);
    expect(ToolRegistry.from([stamped]).list()).toEqual([stamped]);
  });

  it('refuses an executor of another contract line with a CONFIG error naming both versions', () => {
    const other = VERSION.startsWith('0.') ? `0.${Number(VERSION.split('.')[1]) + 1}.0` : `${Number(VERSION.split('.')[0]) + 1}.0.0`;
    const foreign: ToolExecutor = { ...namedTool('query', 'sql'), protocolVersion: other };
    let thrown: unknown;
    try {
      ToolRegistry.from([namedTool('echo'), foreign]);
    } catch (error) {
      thrown = error;
    }
    expect(isSwitchyardError(thrown) && thrown.code).toBe('CONFIG');
    expect((thrown as Error).message).toMatch(
      new RegExp(`^tool registry: tool sql__query was built against @switchyard/protocol ${other.replaceAll('.', '\\.')}, and this host runs @switchyard/protocol ${VERSION.replaceAll('.', '\\.')};`),
    );
  });
});
