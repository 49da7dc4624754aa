// Pieces of the texts a failed MCP request turns into.

import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { errorMessage } from '@switchyard/protocol';
import { isStdioConfig, type McpServerConfig } from './config';
import { authorizationProblem } from './oauth';
import { urlOrigin, withoutUrlSecrets } from './server-url';
import { CallTimeoutError } from './tool-calls';

/**
 * An error message without a doubled prefix: a server built on the 1.x SDK sends its own error
 * message (`MCP error -32602: …`) as the JSON-RPC message, and this client prefixes the code
 * again (`MCP error -32602: MCP error -32602: …`).
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
  if (error instanceof CallTimeoutError) return new McpTimeoutError(`timed out awaiting ${method} after ${formatDuration(error.ms)}`, { cause: error });
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) return new McpTimeoutError(`timed out awaiting ${method} after ${formatDuration(timeout)}`, { cause: error });
  if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) {
    return new Error(`MCP server \`${name}\` closed the connection during the call`, { cause: error });
  }
  // The code leads the text, once: `MCP error -32602: …` (a server on the 1.x SDK already sent it so).
  if (error instanceof ProtocolError) error.message = withoutRepeatedPrefix(`MCP error ${error.code}: ${error.message}`);
  const described = withFetchCause(error);
  if (!isStdioConfig(config)) {
    const problem = authorizationProblem(described, config.url, hasAuth);
    if (problem) return new Error(`MCP server \`${name}\` ${problem}`, { cause: described });
    if (described instanceof Error) described.message = withoutUrlSecrets(described.message, config.url);
  }
  return described;
}

/** fetch says only "fetch failed"; its cause says what (a refused connection, a reset, a timeout). */
function withFetchCause(error: unknown): unknown {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (!(error instanceof TypeError) || error.message !== 'fetch failed' || !cause) return error;
  return new Error(`fetch failed: ${[cause.code, cause.message].filter((part) => typeof part === 'string').join(' ')}`, { cause: error });
}
