import { createHash } from 'node:crypto';

/** The Responses API's longest function name. */
export const MAX_TOOL_NAME_LENGTH = 64;

/**
 * Replaces every character outside `[A-Za-z0-9_]` with `_` (the Responses API accepts
 * `^[a-zA-Z0-9_-]+$`; `-` is replaced too so names are also JS identifiers in Code Mode).
 * An empty result becomes `_`.
 */
export function sanitizeToolName(raw: string): string {
  const out = raw.replace(/[^A-Za-z0-9_]/g, '_');
  return out === '' ? '_' : out;
}

/** The namespace of a server's tools: `mcp__<server>__`, sanitized. */
export function mcpNamespace(server: string): string {
  return sanitizeToolName(`mcp__${server}__`);
}

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/**
 * Gives each raw MCP tool name of one server a unique, sanitized function name of at most 64
 * characters. A name too long, or one colliding with an earlier tool after sanitizing, keeps a
 * prefix and gets the SHA-1 of the raw name appended, so it is stable across list refreshes.
 */
export function createToolNamer(): (raw: string) => string {
  const used = new Set<string>();
  return (raw) => {
    let candidate = sanitizeToolName(raw);
    const prefixLength = MAX_TOOL_NAME_LENGTH - 40;
    if (candidate.length > MAX_TOOL_NAME_LENGTH) candidate = candidate.slice(0, prefixLength) + sha1(raw);
    if (used.has(candidate)) candidate = candidate.slice(0, prefixLength) + sha1(raw);
    used.add(candidate);
    return candidate;
  };
}
