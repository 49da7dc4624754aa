// Pieces of the texts a failed MCP request turns into.

import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '@switchyard/protocol';
import { isStdioConfig, type McpServerConfig } from './config';
import { authorizationProblem } from './oauth';
import { urlOrigin, withoutUrlSecrets } from './server-url';

/**
 * An SDK error message without the doubled prefix: a server built on the SDK sends its own
 * `McpError` message (`MCP error -32602: …`) as the JSON-RPC message, and the client's `McpError`
 * prefixes it again (`MCP error -32602: MCP error -32602: …`).
 */
export function withoutRepeatedPrefix(message: string): string {
  const prefix = /^(MCP error -?\d+: )/.exec(message)?.[1];
  if (!prefix) return message;
  let rest = message.slice(prefix.length);
  while (rest.startsWith(prefix)) rest = rest.slice(prefix.length);
  return prefix + rest;
}

/** A request that ran out of time (its `toolTimeoutMs` or `maxCallTimeMs`). */
export class McpTimeoutError extends Error {}

/** Milliseconds in the short style of the timeout message (`500ms`, `1.5s`). */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${Number((ms / 1000).toFixed(3))}s`;
}

/** The server a request went to: its name, its configuration, whether it signs in with OAuth. */
export interface RequestTarget {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly hasAuth: boolean;
}

/**
 * Why a start failed, as the sentence after "MCP server `name` ": 401/403 and OAuth said as such;
 * an HTTP server is named by its URL's origin, never its path or query (they may hold secrets).
 */
export function startFailure(error: unknown, { config, hasAuth }: RequestTarget): string {
  if (isStdioConfig(config)) return `failed to start (command: ${config.command}): ${errorMessage(error)}`;
  return authorizationProblem(error, config.url, hasAuth) ?? `failed to start (${urlOrigin(config.url)}): ${withoutUrlSecrets(errorMessage(error), config.url)}`;
}

/**
 * A failed request's error as the model reads it: a timeout names the limit, a closed connection
 * the server, 401/403 the authorization it wants; an HTTP server's error never carries its URL's
 * path, query or user info.
 */
export function describeRequestError(error: unknown, { name, config, hasAuth }: RequestTarget, method: string, timeout: number): unknown {
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    const limit = /total timeout/i.test(error.message) && config.maxCallTimeMs ? config.maxCallTimeMs : timeout;
    return new McpTimeoutError(`timed out awaiting ${method} after ${formatDuration(limit)}`, { cause: error });
  }
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
    return new Error(`MCP server \`${name}\` closed the connection during the call`, { cause: error });
  }
  if (error instanceof McpError) error.message = withoutRepeatedPrefix(error.message);
  if (!isStdioConfig(config)) {
    const problem = authorizationProblem(error, config.url, hasAuth);
    if (problem) return new Error(`MCP server \`${name}\` ${problem}`, { cause: error });
    if (error instanceof Error) error.message = withoutUrlSecrets(error.message, config.url);
  }
  return error;
}
