import { describe, expect, it } from 'vitest';
import { codeModeName, normalizeIdentifier } from './code-mode';
import { toolName } from './tool-name';

describe('code-mode names', () => {
  it('joins namespace and name with __ unless a side already has an underscore', () => {
    expect(codeModeName(toolName('curr_time', 'clock'))).toBe('clock__curr_time');
    expect(codeModeName(toolName('search', 'mcp__docs__'))).toBe('mcp__docs__search');
    expect(codeModeName(toolName('_private', 'ns'))).toBe('ns_private');
    expect(codeModeName(toolName('exec'))).toBe('exec');
  });

  it('normalizes character by character', () => {
    expect(normalizeIdentifier('hidden-dynamic-tool')).toBe('hidden_dynamic_tool');
    expect(normalizeIdentifier('1abc')).toBe('_abc');
    expect(normalizeIdentifier('a.b c')).toBe('a_b_c');
    expect(normalizeIdentifier('$ok_1')).toBe('$ok_1');
    expect(normalizeIdentifier('caf\u00e9')).toBe('caf_');
    expect(normalizeIdentifier('x\u{1F600}y')).toBe('x_y');
    expect(normalizeIdentifier('')).toBe('_');
  });
});
