// Pieces of the texts a failed MCP request turns into.

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
