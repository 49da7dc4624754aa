import { hasErrorCode } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { configError } from '@switchyard/config/config-error';
import { DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TOOL_TIMEOUT_MS, resolveServerConfigs } from './config';
import { mcpTools } from './mcp-tools';

describe('resolveServerConfigs', () => {
  it('applies defaults and drops disabled servers', () => {
    const resolved = resolveServerConfigs({
      docs: { command: 'node', args: ['server.js'] },
      'web-api': { url: 'https://example.com/mcp', toolTimeoutMs: 5000 },
      off: { command: 'node', enabled: false },
    });
    expect(resolved.map((server) => [server.name, server.namespace, server.startupTimeoutMs, server.toolTimeoutMs])).toEqual([
      ['docs', 'mcp__docs__', DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TOOL_TIMEOUT_MS],
      ['web-api', 'mcp__web_api__', DEFAULT_STARTUP_TIMEOUT_MS, 5000],
    ]);
  });

  it('names every problem with its path', async () => {
    const message = await configError(() => resolveServerConfigs({
      both: { command: 'node', url: 'https://example.com' },
      neither: { args: [] },
      typo: { command: 'node', timeout: 5 },
      badUrl: { url: 'not a url' },
      badTimeout: { command: 'node', toolTimeoutMs: -1 },
      list: [],
    }));
    expect(message.split('\n')[0]).toBe('invalid MCP server configuration:');
    expect(message).toContain('servers.both: set exactly one of `command` (stdio) or `url` (streamable HTTP)');
    expect(message).toContain('servers.neither: set exactly one of `command` (stdio) or `url` (streamable HTTP)');
    expect(message).toMatch(/servers\.typo: .*timeout/);
    expect(message).toMatch(/servers\.badUrl\.url: /);
    expect(message).toMatch(/servers\.badTimeout\.toolTimeoutMs: /);
    expect(message).toContain('servers.list: expected an object');
  });

  it('refuses two servers that share a namespace after sanitizing', async () => {
    expect(await configError(() => resolveServerConfigs({ 'a.b': { command: 'x' }, a_b: { command: 'y' } }))).toBe(
      'invalid MCP server configuration: servers `a.b` and `a_b` share the namespace `mcp__a_b__`',
    );
  });

  it('makes mcpTools reject before starting anything', async () => {
    await expect(mcpTools({ servers: { bad: { command: '' } } })).rejects.toSatisfy((error) => hasErrorCode(error, 'CONFIG'));
  });
});
