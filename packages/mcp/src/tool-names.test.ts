import { describe, expect, it } from 'vitest';
import { createToolNamer, mcpNamespace, sanitizeToolName } from './tool-names';

describe('tool names', () => {
  it('sanitizes server namespaces and tool names to [A-Za-z0-9_]', () => {
    expect(mcpNamespace('docs')).toBe('mcp__docs__');
    expect(mcpNamespace('my-server.v2')).toBe('mcp__my_server_v2__');
    expect(sanitizeToolName('get.file-contents')).toBe('get_file_contents');
    expect(sanitizeToolName('')).toBe('_');
    expect(sanitizeToolName('naïve')).toBe('na_ve');
  });

  it('keeps names unique and within 64 characters with a stable hash suffix', () => {
    const name = createToolNamer();
    expect(name('a.b')).toBe('a_b');
    const second = name('a_b');
    expect(second).toMatch(/^a_b_[0-9a-f]{10}$/);
    const third = name('a-b');
    expect(third).toMatch(/^a_b_[0-9a-f]{10}$/);
    expect(new Set(['a_b', second, third]).size).toBe(3);
    const long = name('x'.repeat(100));
    expect(long).toHaveLength(64);
    expect(long).toBe(createToolNamer()('x'.repeat(100)));
    expect(long).toMatch(/^x{53}_[0-9a-f]{10}$/);
  });

  it('keeps a long server namespace within 64 characters, stable and distinct', () => {
    const long = 'a-very-long-server-name-that-someone-configured-for-their-ticket-system';
    const namespace = mcpNamespace(long);
    expect(namespace).toHaveLength(64);
    expect(namespace).toMatch(/^mcp__a_very_long_server_name_that_someone_configure_[0-9a-f]{10}__$/);
    expect(mcpNamespace(long)).toBe(namespace);
    expect(mcpNamespace(`${long}-2`)).not.toBe(namespace);
    expect(mcpNamespace('x'.repeat(57))).toBe(`mcp__${'x'.repeat(57)}__`);
  });
});
