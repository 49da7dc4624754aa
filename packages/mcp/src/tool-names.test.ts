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

  it('keeps names unique and within 64 characters with a stable SHA-1 suffix', () => {
    const name = createToolNamer();
    expect(name('a.b')).toBe('a_b');
    const second = name('a_b');
    expect(second).toMatch(/^a_b[0-9a-f]{40}$/);
    const long = name('x'.repeat(100));
    expect(long).toHaveLength(64);
    expect(long).toBe(createToolNamer()('x'.repeat(100)));
  });
});
