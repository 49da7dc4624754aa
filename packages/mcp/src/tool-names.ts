import { MAX_WIRE_NAME_LENGTH } from '@switchyard/protocol';
import { nameHash } from '@switchyard/kit/internal';

/** The Responses API's longest function (and namespace) name. */
export const MAX_TOOL_NAME_LENGTH = MAX_WIRE_NAME_LENGTH;

/**
 * Replaces every character outside `[A-Za-z0-9_]` with `_` (the Responses API accepts
 * `^[a-zA-Z0-9_-]+$`; `-` is replaced too so names are also JS identifiers in Code Mode).
 * An empty result becomes `_`.
 */
export function sanitizeToolName(raw: string): string {
  const out = raw.replace(/[^A-Za-z0-9_]/g, '_');
  return out === '' ? '_' : out;
}

/**
 * The namespace of a server's tools: `mcp__<server>__`, sanitized, at most 64 characters (a longer
 * one keeps its start and gets a stable hash of the server name before the closing `__`).
 */
export function mcpNamespace(server: string): string {
  const sanitized = sanitizeToolName(`mcp__${server}`);
  if (sanitized.length + 2 <= MAX_TOOL_NAME_LENGTH) return `${sanitized}__`;
  return `${sanitized.slice(0, MAX_TOOL_NAME_LENGTH - 13)}_${nameHash(server)}__`;
}

/**
 * Gives each raw MCP tool name of one server a unique, sanitized function name of at most 64
 * characters. A longer name keeps its start and gets `_` + a stable hash of the raw name; a name
 * colliding with an earlier tool after sanitizing gets the hash too. Names depend only on the raw
 * names (and, for a clash, on listing order), so they are stable across list refreshes.
 */
export function createToolNamer(): (raw: string) => string {
  const used = new Set<string>();
  return (raw) => {
    const sanitized = sanitizeToolName(raw);
    let candidate = sanitized.length > MAX_TOOL_NAME_LENGTH ? hashed(sanitized, raw) : sanitized;
    for (let attempt = 1; used.has(candidate); attempt++) candidate = hashed(sanitized, attempt === 1 ? raw : `${raw}#${attempt}`);
    used.add(candidate);
    return candidate;
  };
}

/** `sanitized` cut so that `_` + the stable hash of `key` fit in 64 characters. */
function hashed(sanitized: string, key: string): string {
  return `${sanitized.slice(0, MAX_TOOL_NAME_LENGTH - 11)}_${nameHash(key)}`;
}
