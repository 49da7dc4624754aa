// Pieces of the texts a failed MCP request turns into.

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
