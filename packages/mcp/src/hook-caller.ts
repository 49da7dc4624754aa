import { SwitchyardError, isSwitchyardError, type McpToolCaller, type McpToolCallRequest, type McpToolCallResult } from '@switchyard/protocol';
import { checkOptions, optionRules as rule, type OptionsShape } from '@switchyard/kit/internal';
import { resolveServerConfigs, type McpServerConfig, type ResolvedServerConfig } from './config';
import { McpServerConnection, type McpWarning } from './server-connection';

/** Options of {@link createMcpToolCaller}. */
export interface McpToolCallerOptions {
  /** Largest message read from a stdio server, in bytes. Default 32 MiB (as `mcpTools`). */
  maxMessageBytes?: number;
  /** Receives the connections' warnings (a server that failed, a tool definition skipped). Default: none; a failed call rejects with the cause anyway. */
  onWarning?: (warning: McpWarning) => void;
}

const MCP_TOOL_CALLER_OPTIONS = {
  maxMessageBytes: rule.number({ min: 1, integer: true }),
  onWarning: rule.function(),
} satisfies OptionsShape<McpToolCallerOptions>;

/**
 * A {@link McpToolCaller} over configured MCP servers (the `servers` map `mcpTools` takes), for
 * `mcp_tool` hooks: pass it to `createHookEngine({ mcpServers, mcpToolCaller: createMcpToolCaller })`.
 * Each server is started at its first call (with the connection code `mcpTools` uses: the bounded
 * stdio transport, OAuth-free HTTP, its timeouts), kept for later calls, and started again at the
 * next call after it died. A call resolves with the tool's result (an error result included) and
 * rejects when the server cannot be started, dies or closes the connection during the call, the
 * server's `toolTimeoutMs` runs out, or the signal aborts (the server then gets
 * `notifications/cancelled`). An invalid configuration throws a `CONFIG` error at once.
 */
export function createMcpToolCaller(servers: Readonly<Record<string, McpServerConfig>>, options: McpToolCallerOptions = {}): McpToolCaller {
  checkOptions('createMcpToolCaller', options, MCP_TOOL_CALLER_OPTIONS);
  let resolved: ResolvedServerConfig[];
  try {
    resolved = resolveServerConfigs(servers);
  } catch (error) {
    if (isSwitchyardError(error)) throw new SwitchyardError('CONFIG', `createMcpToolCaller: ${error.message}`, { cause: error });
    throw error;
  }
  const configs = new Map(resolved.map((server) => [server.name, server]));
  const connections = new Map<string, Promise<McpServerConnection>>();
  let closed = false;
  const listener = {
    warning: (warning: McpWarning) => options.onWarning?.(warning),
    toolsChanged: () => undefined,
    progress: () => undefined,
    log: () => undefined,
    task: () => undefined,
  };

  /** The running connection of `name`, started (again, after a death) when needed. */
  const connectionOf = async (name: string): Promise<McpServerConnection> => {
    const config = configs.get(name);
    if (!config) throw new Error(`MCP server \`${name}\` is not configured (configured: ${[...configs.keys()].join(', ') || 'none'})`);
    const current = connections.get(name);
    if (current) {
      const connection = await current;
      if (connection.state === 'ready') return connection;
      if (connections.get(name) === current) connections.delete(name);
    }
    let starting = connections.get(name);
    if (!starting) {
      const connection = new McpServerConnection(config, listener, { maxMessageBytes: options.maxMessageBytes });
      starting = connection.start().then(() => connection);
      connections.set(name, starting);
    }
    const connection = await starting;
    if (closed) {
      await connection.close();
      throw new Error('the MCP tool caller is closed');
    }
    if (connection.state !== 'ready') throw new Error(`MCP server \`${name}\` ${connection.error ?? 'is not running'}`);
    return connection;
  };

  return {
    async callTool(request: McpToolCallRequest): Promise<McpToolCallResult> {
      if (closed) throw new Error('the MCP tool caller is closed');
      request.signal.throwIfAborted();
      const connection = await connectionOf(request.server);
      const result = await connection.callTool(request.tool, request.arguments, request.signal);
      return { isError: result.isError, content: result.content, ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}) };
    },
    async close() {
      closed = true;
      const pending = [...connections.values()];
      connections.clear();
      await Promise.all(pending.map((starting) => starting.then((connection) => connection.close(), () => undefined)));
    },
  };
}
