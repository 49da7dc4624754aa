// A server that fails to start is never silent: a process warning by default, a CONFIG error when
// the server is `required`, and a `comand` typo gets "did you mean".
import { afterEach, describe, expect, it } from 'vitest';
import { hasErrorCode } from '@switchyard/protocol';
import { fixtureServer } from '../test/helpers';
import { mcpTools } from './mcp-tools';

const warnings: Error[] = [];
const onProcessWarning = (warning: Error) => void warnings.push(warning);
afterEach(() => {
  process.off('warning', onProcessWarning);
  warnings.length = 0;
});

/** Process warnings seen once the event loop has turned (they are emitted on the next tick). */
async function processWarnings(): Promise<Array<Error & { code?: string }>> {
  await new Promise((resolve) => setImmediate(resolve));
  return warnings;
}

describe('MCP servers that fail to start', () => {
  it('warn through process.emitWarning when no onWarning is given', async () => {
    process.on('warning', onProcessWarning);
    const mcp = await mcpTools({ servers: { fs: { command: 'mcp-server-filesystm' } } });
    await mcp.close();
    expect(mcp.executors()).toEqual([]);
    const seen = (await processWarnings()).filter((warning) => warning.code === 'SWITCHYARD_MCP_SERVER_FAILED');
    expect(seen).toHaveLength(1);
    expect(seen[0].message).toMatch(/^MCP server `fs` failed to start \(command: mcp-server-filesystm\): .*ENOENT/);
  });

  it('go to onWarning alone when it is given', async () => {
    process.on('warning', onProcessWarning);
    const seen: string[] = [];
    const mcp = await mcpTools({ servers: { fs: { command: 'mcp-server-filesystm' } }, onWarning: (warning) => seen.push(warning.kind) });
    await mcp.close();
    expect(seen).toEqual(['server-failed']);
    expect((await processWarnings()).filter((warning) => warning.code === 'SWITCHYARD_MCP_SERVER_FAILED')).toEqual([]);
  });

  it('throw a CONFIG error naming the server when it is required (the others are closed)', async () => {
    const failure = await mcpTools({
      servers: { fs: { command: 'mcp-server-filesystm', required: true }, fx: fixtureServer() },
      onWarning: () => undefined,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(hasErrorCode(failure, 'CONFIG')).toBe(true);
    expect((failure as Error).message).toMatch(/^mcpTools: a required MCP server failed to start:\nservers\.fs \(required: true\): MCP server `fs` failed to start \(command: mcp-server-filesystm\): .*ENOENT/);
  });

  it('a required server is awaited even with waitForServers: false', async () => {
    const mcp = await mcpTools({ servers: { fx: fixtureServer({}, { required: true }) }, waitForServers: false });
    try {
      expect(mcp.servers()[0].state).toBe('ready');
      expect(mcp.executors().length).toBeGreaterThan(0);
    } finally {
      await mcp.close();
    }
  });

  it('a `comand` typo gets "did you mean `command`"', async () => {
    await expect(mcpTools({ servers: { fs: { comand: 'npx' } as never } })).rejects.toThrow(
      'invalid MCP server configuration:\nservers.fs: set exactly one of `command` (stdio) or `url` (streamable HTTP)\nservers.fs: unknown option `comand`; did you mean `command`?',
    );
  });
});
