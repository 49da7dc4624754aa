import { SwitchyardError } from '@switchyard/protocol';
import { closestName } from '@switchyard/kit/internal';
import { z } from 'zod';
import { mcpNamespace } from './tool-names';

/** Default time allowed to start a server, initialize and list its tools. */
export const DEFAULT_STARTUP_TIMEOUT_MS = 10_000;
/** Default time allowed for one tool call without progress. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

const timeout = z.number().int().positive();

const common = {
  /** `direct` (default): the model sees the tools; `deferred`: found through `tool_search`. */
  exposure: z.enum(['direct', 'deferred']).optional(),
  /** The server's tools may run concurrently with other parallel-safe calls. Default false. */
  parallel: z.boolean().optional(),
  /** Set to false to keep the server configured but not started. Default true. */
  enabled: z.boolean().optional(),
  /** Only these raw MCP tool names are exposed. */
  enabledTools: z.array(z.string()).optional(),
  /** These raw MCP tool names are never exposed. */
  disabledTools: z.array(z.string()).optional(),
  /** Time for spawn/connect + initialize + the first tools/list. Default 10 000 ms. */
  startupTimeoutMs: timeout.optional(),
  /** Time for one tools/call; progress notifications restart it. Default 60 000 ms. */
  toolTimeoutMs: timeout.optional(),
  /** Per-tool override of `toolTimeoutMs`, keyed by raw MCP tool name. */
  toolTimeoutsMs: z.record(z.string(), timeout).optional(),
  /** Hard cap on one call even while progress keeps arriving. Default none. */
  maxCallTimeMs: timeout.optional(),
  /**
   * The protocol family to open with: `legacy` (the `initialize` handshake of 2025-11-25 and
   * earlier), `2026-07-28` (stateless, per-request `_meta`; nothing else), or `auto` (ask with
   * `server/discover`, fall back to `initialize`). Default: `legacy` for stdio servers (asking
   * would cost a probe, and some servers exit on an unknown first request), `auto` over HTTP.
   */
  protocol: z.enum(['auto', 'legacy', '2026-07-28']).optional(),
  /** Namespace description shown to the model; defaults to the server's `instructions`. */
  description: z.string().optional(),
  /**
   * A server that fails to start makes `mcpTools` throw (a `CONFIG` error naming it) instead of
   * warning. Always awaited, even with `waitForServers: false`. Default false.
   */
  required: z.boolean().optional(),
};

const stdioServer = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  ...common,
});

const httpServer = z.strictObject({
  url: z.url(),
  headers: z.record(z.string(), z.string()).optional(),
  /** Name of an environment variable holding a bearer token sent as `Authorization`. */
  bearerTokenEnvVar: z.string().optional(),
  ...common,
});


/** A server started as a child process speaking MCP over stdin/stdout. */
export type McpStdioServerConfig = z.input<typeof stdioServer>;
/** A server reached over MCP streamable HTTP. */
export type McpHttpServerConfig = z.input<typeof httpServer>;
/** One configured MCP server (stdio when it has `command`, HTTP when it has `url`). */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** A validated server entry, with its sanitized namespace. */
export interface ResolvedServerConfig {
  readonly name: string;
  readonly namespace: string;
  readonly config: McpServerConfig;
  readonly startupTimeoutMs: number;
  readonly toolTimeoutMs: number;
}

/** True for a stdio entry. */
/** `unknown option` lines (with the closest valid key) for keys neither server form has: a `comand` typo. */
function unknownKeyProblems(where: string, keys: readonly string[]): string[] {
  const known = [...new Set([...Object.keys(stdioServer.shape), ...Object.keys(httpServer.shape)])];
  return keys
    .filter((key) => !known.includes(key))
    .map((key) => {
      const suggestion = closestName(key, known);
      return `${where}: unknown option \`${key}\`${suggestion !== undefined ? `; did you mean \`${suggestion}\`?` : ''}`;
    });
}

export function isStdioConfig(config: McpServerConfig): config is McpStdioServerConfig {
  return 'command' in config;
}

/**
 * Validates the `servers` map. Throws a `SwitchyardError` with code `CONFIG` naming every problem
 * (unknown keys, a server with both or neither of `command` / `url`, two names that sanitize to
 * the same namespace). Disabled servers are dropped.
 */
export function resolveServerConfigs(servers: unknown): ResolvedServerConfig[] {
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw new SwitchyardError('CONFIG', 'invalid MCP server configuration: `servers` must be an object keyed by server name');
  }
  const problems: string[] = [];
  const entries: Array<[string, McpServerConfig]> = [];
  for (const [name, raw] of Object.entries(servers)) {
    const where = `servers.${name}`;
    if (name.trim() === '') {
      problems.push(`${where}: a server name must not be empty`);
      continue;
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      problems.push(`${where}: expected an object`);
      continue;
    }
    const hasCommand = 'command' in raw;
    const hasUrl = 'url' in raw;
    if (hasCommand === hasUrl) {
      problems.push(`${where}: set exactly one of \`command\` (stdio) or \`url\` (streamable HTTP)`);
      problems.push(...unknownKeyProblems(where, Object.keys(raw)));
      continue;
    }
    const schema = hasCommand ? stdioServer : httpServer;
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        if (issue.code === 'unrecognized_keys' && issue.path.length === 0) {
          // a typo names the closest valid key, as every other options object does
          const known = Object.keys(schema.shape);
          for (const key of issue.keys) {
            const suggestion = closestName(key, known);
            problems.push(`${where}: unknown option \`${key}\`${suggestion !== undefined ? `; did you mean \`${suggestion}\`?` : ''}`);
          }
          continue;
        }
        problems.push(`${[where, ...issue.path.map(String)].join('.')}: ${issue.message}`);
      }
      continue;
    }
    entries.push([name, parsed.data]);
  }
  if (problems.length > 0) throw new SwitchyardError('CONFIG', `invalid MCP server configuration:\n${problems.join('\n')}`);

  const byNamespace = new Map<string, string>();
  const resolved: ResolvedServerConfig[] = [];
  for (const [name, config] of entries) {
    const namespace = mcpNamespace(name);
    const previous = byNamespace.get(namespace);
    if (previous !== undefined) {
      throw new SwitchyardError('CONFIG', `invalid MCP server configuration: servers \`${previous}\` and \`${name}\` share the namespace \`${namespace}\``);
    }
    byNamespace.set(namespace, name);
    if (config.enabled === false) continue;
    resolved.push({
      name,
      namespace,
      config,
      startupTimeoutMs: config.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS,
      toolTimeoutMs: config.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    });
  }
  return resolved;
}
