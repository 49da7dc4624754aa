import type { FunctionToolSpec, NamespaceToolSpec, ToolSpec } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { defaultNamespaceDescription, mergeNamespaces } from './namespaces';

const member = (name: string): FunctionToolSpec => ({ type: 'function', name, description: name, parameters: { type: 'object' } });
const namespace = (name: string, description: string, ...members: string[]): NamespaceToolSpec => ({
  type: 'namespace',
  name,
  description,
  tools: members.map(member),
});

describe('mergeNamespaces', () => {
  it('merges same-named namespaces at the first occurrence and keeps other specs in order', () => {
    const merged = mergeNamespaces([
      namespace('agents', '', 'wait_agent', 'spawn_agent'),
      member('read_file'),
      namespace('agents', 'Tools for spawning and managing sub-agents.', 'send_input', 'close_agent'),
      namespace('agents', 'Ignored: a description was already found.', 'resume_agent'),
      member('write_file'),
    ]);
    expect(merged.map((spec) => (spec as { name: string }).name)).toEqual(['agents', 'read_file', 'write_file']);
    const agents = merged[0] as NamespaceToolSpec;
    expect(agents.description).toBe('Tools for spawning and managing sub-agents.');
    expect(agents.tools.map((tool) => tool.name)).toEqual(['close_agent', 'resume_agent', 'send_input', 'spawn_agent', 'wait_agent']);
  });

  it('sorts members by byte order, not locale', () => {
    const [merged] = mergeNamespaces([namespace('ns', 'x', 'b', 'a', 'B', '_z', 'a2')]) as NamespaceToolSpec[];
    expect(merged.tools.map((tool) => tool.name)).toEqual(['B', '_z', 'a', 'a2', 'b']);
  });

  it('gives a blank namespace the default description', () => {
    const [merged] = mergeNamespaces([namespace('mcp__docs__', '   ', 'search')]) as NamespaceToolSpec[];
    expect(merged.description).toBe('Tools in the mcp__docs__ namespace.');
    expect(defaultNamespaceDescription('clock')).toBe('Tools in the clock namespace.');
  });

  it('never mutates its input', () => {
    const input: ToolSpec[] = [namespace('ns', '', 'b'), namespace('ns', 'd', 'a')];
    const copy = JSON.parse(JSON.stringify(input));
    mergeNamespaces(input);
    expect(input).toEqual(copy);
  });
});
