import type { ToolExecutor } from '@switchyard/protocol';
import { checkOptions, createEventHub, optionRules as rule, warnListenerError, type OptionsShape } from '@switchyard/kit/internal';
import { SwitchyardError } from '@switchyard/protocol';
import { resolveServerConfigs, type McpServerConfig, type ResolvedServerConfig } from './config';
import { createResourceTools } from './resource-tools';
import type { McpElicitationHandler } from './elicitation';
import type { McpAuthOptions } from './oauth';
import { McpServerConnection, type McpLogMessage, type McpProgress, type McpServerState, type McpTaskEvent, type McpWarning } from './server-connection';

/** Options of {@link mcpTools}. */
export interface McpToolsOptions {
  /** Servers keyed by name; the name becomes the namespace `mcp__<name>__` (sanitized). */
  servers: Record<string, McpServerConfig>;
  /** Token budget of one direct output before the ×1.2 margin. Default 10 000. */
  maxOutputTokens?: number;
  /**
   * Largest message read from a stdio server, in bytes. A larger `tools/call` result becomes an
   * error result with a note and the start of its text; the server stays connected. Default 32 MiB.
   */
  maxMessageBytes?: number;
  /**
   * Receives every warning as it happens. Without it, a server that fails to start is reported
   * through `process.emitWarning` (code `SWITCHYARD_MCP_SERVER_FAILED`), so a typo in a command
   * is never silent; other warnings are then only kept in `warnings`.
   */
  onWarning?: (warning: McpWarning) => void;
  /**
   * Wait for every server to start (or fail) before resolving. Default true. With false,
   * `mcpTools` resolves at once with no executors; each server's tools appear as it comes up,
   * announced by a `tools-changed` event for that server (what `switchyard mcp serve` uses to
   * answer `initialize` at once).
   */
  waitForServers?: boolean;
  /**
   * OAuth 2.1 for streamable HTTP servers (those without `bearerTokenEnvVar`), with the MCP SDK's
   * client flow: discovery, dynamic or pre-registered clients, PKCE, refresh and scope step-up.
   * The host provides the token store and, for a user's consent, `authorize`.
   */
  auth?: McpAuthOptions;
  /**
   * Receives servers' `elicitation/create` requests (form or URL mode) and answers for the user.
   * Only with it does the client declare the `elicitation` capability; without it a server that
   * asks anyway gets a `decline`.
   */
  onElicitation?: McpElicitationHandler;
}

/** Events of {@link McpTools}, discriminated on `type`. */
export type McpToolsEvent =
  | ({ readonly type: 'warning' } & McpWarning)
  | { readonly type: 'tools-changed'; readonly server: string }
  | ({ readonly type: 'progress' } & McpProgress)
  | ({ readonly type: 'log' } & McpLogMessage)
  | ({ readonly type: 'task-status' } & McpTaskEvent);

/** The state of one configured server. */
export interface McpServerStatus {
  readonly name: string;
  readonly namespace: string;
  readonly state: McpServerState;
  /** The protocol family the connection settled on (`legacy`: up to 2025-11-25; `modern`: 2026-07-28), once started. */
  readonly protocol?: 'legacy' | 'modern';
  readonly toolCount: number;
  /** Why it failed, when `state` is `failed`. */
  readonly error?: string;
}

/** MCP servers as a changing list of executors. */
export interface McpTools {
  /**
   * The executors of every ready server, in configuration order, then `list_mcp_resources` and
   * `read_mcp_resource` when a ready server offers resources. Read it when planning each step:
   * servers that failed are gone, and `list_changed` updates appear once re-listed.
   */
  executors(): readonly ToolExecutor[];
  /** Waits until every re-list triggered by `notifications/tools/list_changed` so far has finished. */
  refresh(): Promise<void>;
  /** Every server and its state. */
  servers(): readonly McpServerStatus[];
  /** Every warning so far (server failures are reported once each). */
  readonly warnings: readonly McpWarning[];
  /** Subscribes to `warning`, `tools-changed`, `progress`, `log` or `task-status`; returns the unsubscribe function. */
  on<T extends McpToolsEvent['type']>(type: T, listener: (event: Extract<McpToolsEvent, { type: T }>) => void): () => void;
  /** Closes every connection (stdio servers are ended). Idempotent; never throws. */
  close(): Promise<void>;
}

/** The checks of {@link mcpTools}'s options (a typo gets "did you mean"). */
const MCP_TOOLS_OPTIONS = {
  servers: rule.required(rule.object()),
  maxOutputTokens: rule.number({ min: 1, integer: true }),
  maxMessageBytes: rule.number({ min: 1, integer: true }),
  onWarning: rule.function(),
  waitForServers: rule.boolean(),
  auth: rule.shape<McpAuthOptions>({
    store: rule.required(rule.object()),
    authorize: rule.function(),
    redirectUrl: rule.string(),
    clientName: rule.string(),
    clientMetadataUrl: rule.string(),
    scope: rule.string(),
    provider: rule.function(),
  }),
  onElicitation: rule.function(),
} satisfies OptionsShape<McpToolsOptions>;

/**
 * Connects to every configured server (stdio or streamable HTTP) concurrently, lists its tools
 * (following pagination) and returns them as executors. Throws a `SwitchyardError` with code
 * `CONFIG` for an invalid configuration; a server that fails to start only produces a warning.
 */
export async function mcpTools(options: McpToolsOptions): Promise<McpTools> {
  checkOptions('mcpTools', options, MCP_TOOLS_OPTIONS);
  const resolved = resolveServerConfigs(options.servers);
  const warnings: McpWarning[] = [];
  // a throwing listener is reported (process warning SWITCHYARD_LISTENER) and never breaks the connection that reported the event
  const events = createEventHub<McpToolsEvent>({ name: 'mcp' });
  const emit = (event: McpToolsEvent): void => events.emit(event);

  const connections = resolved.map(
    (server) =>
      new McpServerConnection(
        server,
        {
          warning(warning) {
            warnings.push(warning);
            try {
              if (options.onWarning) options.onWarning(warning);
              else if (warning.kind === 'server-failed') process.emitWarning(warning.message, { code: 'SWITCHYARD_MCP_SERVER_FAILED' });
            } catch (error) {
              // same rule as for `on` listeners: reported, never breaking the connection
              warnListenerError({ hub: 'mcp', type: 'onWarning', error });
            }
            emit({ type: 'warning', ...warning });
          },
          toolsChanged(name) {
            emit({ type: 'tools-changed', server: name });
          },
          progress(progress) {
            emit({ type: 'progress', ...progress });
          },
          log(message) {
            emit({ type: 'log', ...message });
          },
          task(event) {
            emit({ type: 'task-status', ...event });
          },
        },
        { maxOutputTokens: options.maxOutputTokens, maxMessageBytes: options.maxMessageBytes, auth: options.auth, onElicitation: options.onElicitation },
      ),
  );
  await startConnections(connections, resolved, options.waitForServers !== false, emit);
  const resourceTools = createResourceTools(() => connections, options.maxOutputTokens);

  let closed: Promise<void> | undefined;
  return {
    executors: () => {
      const executors = connections.flatMap((connection) => connection.executors());
      return connections.some((connection) => connection.offersResources) ? [...executors, ...resourceTools] : executors;
    },
    refresh: async () => {
      await Promise.all(connections.map((connection) => connection.settle()));
    },
    servers: () =>
      connections.map((connection) => ({
        name: connection.name,
        namespace: connection.namespace,
        state: connection.state,
        ...(connection.protocol !== undefined ? { protocol: connection.protocol } : {}),
        toolCount: connection.executors().length,
        ...(connection.error ? { error: connection.error } : {}),
      })),
    warnings,
    on: (type, listener) => events.on(type, listener),
    close: () => {
      closed ??= Promise.all(connections.map((connection) => connection.close())).then(() => undefined);
      return closed;
    },
  };
}

/**
 * Starts every connection: awaits them all when `wait`, else only the `required` ones (the others
 * announce their tools with `tools-changed` as they come up). A required server that failed closes
 * every connection and throws a `CONFIG` error naming it.
 */
async function startConnections(
  connections: readonly McpServerConnection[],
  resolved: readonly ResolvedServerConfig[],
  wait: boolean,
  emit: (event: McpToolsEvent) => void,
): Promise<void> {
  const started = connections.map((connection, index) => {
    const start = connection.start();
    const required = resolved[index].config.required === true;
    if (wait || required) return start;
    void start.then(() => emit({ type: 'tools-changed', server: connection.name }));
    return Promise.resolve();
  });
  await Promise.all(started);
  const failed = connections.filter((connection, index) => resolved[index].config.required === true && connection.state === 'failed');
  if (failed.length === 0) return;
  await Promise.all(connections.map((connection) => connection.close()));
  const lines = failed.map((connection) => `servers.${connection.name} (required: true): MCP server \`${connection.name}\` ${connection.error ?? 'failed to start'}`);
  throw new SwitchyardError('CONFIG', `mcpTools: a required MCP server failed to start:\n${lines.join('\n')}`);
}
