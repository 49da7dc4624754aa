import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { displayName, errorMessage, executorExposure, executorPayloadKinds, isJsonObject, type HookRunner, type StepContext, type ToolExecutor, type ToolPayload } from '@switchyard/protocol';
import { createExecutorHost, type ExecutorHost } from '@switchyard/registry';
import { z } from 'zod';
import {
  DEFAULT_SERVE_MAX_MESSAGE_BYTES,
  DEFAULT_SERVE_MAX_RESULT_BYTES,
  capCallToolResult,
  errorResult,
  looseRequestSchema,
  requireInitialized,
  stdioTransport,
  toolOutputToCallToolResult,
  type CodeModeMcpServer,
  type McpServeTransportOptions,
} from './serve';
import { VERSION } from './version';

/** Options of {@link serveToolsOverMcp} (server name default `switchyard-tools`). */
export interface ServeToolsOverMcpOptions extends McpServeTransportOptions {
  /** The executors to serve (a plugin's, built with `defineFunctionTool` / `defineFreeformTool`). */
  tools: readonly ToolExecutor[];
  /** Pre/post hooks around every call (a hooks.json policy, for example). Absent: no hooks. */
  hooks?: HookRunner;
  /** The step every call runs in: `cwd`, `approvals` (a tool that asks for approval without one is refused), the clock. */
  step?: Partial<StepContext>;
}

/** The MCP tool of one executor: its display name, its parameters (a freeform tool takes `{ input }`), its object `outputSchema`. */
export function executorMcpTool(executor: ToolExecutor): Tool {
  const spec = executor.spec;
  const name = displayName(executor.name);
  if (spec.type === 'custom') {
    const grammar = spec.grammar ? `\n\nThe input follows this ${spec.grammar.syntax} grammar:\n${spec.grammar.definition}` : '';
    return {
      name,
      description: `${spec.description}${grammar}`,
      inputSchema: { type: 'object', properties: { input: { type: 'string', description: 'The raw input text of the tool.' } }, required: ['input'], additionalProperties: false },
    };
  }
  const given = spec.type === 'function' ? spec.parameters : undefined;
  const parameters = isJsonObject(given) && given.type === 'object' ? given : { type: 'object', properties: {} };
  const output = spec.type === 'function' ? spec.outputSchema : undefined;
  return {
    name,
    description: spec.description,
    inputSchema: parameters as Tool['inputSchema'],
    // MCP output schemas describe `structuredContent`, which is an object.
    ...(isJsonObject(output) && output.type === 'object' ? { outputSchema: output as Tool['outputSchema'] } : {}),
  };
}

/** The executors an MCP client may call: function and freeform tools that are not hidden. */
function servable(executor: ToolExecutor): boolean {
  const kinds = executorPayloadKinds(executor);
  return executorExposure(executor) !== 'hidden' && (kinds.includes('function') || kinds.includes('custom'));
}

/**
 * Serves executors as an MCP server: each is an MCP tool named by its display name (`sql__query`),
 * and each call runs through the registry as in a session — validated arguments, hooks, the one
 * result rule, cancellation (`notifications/cancelled` aborts the handler). A result of a tool
 * with an object `outputSchema` carries it as `structuredContent`; a failure is an `isError`
 * result with the model-visible text. Serves stdio by default and stops when stdin ends; throws
 * the registry's `CONFIG` error for a duplicate name or an incompatible executor.
 */
export async function serveToolsOverMcp(options: ServeToolsOverMcpOptions): Promise<CodeModeMcpServer> {
  const host = createExecutorHost({ tools: options.tools.filter(servable), hooks: options.hooks, step: options.step });
  const maxResultBytes = options.maxResultBytes ?? DEFAULT_SERVE_MAX_RESULT_BYTES;
  const server = new Server(
    { name: options.name ?? 'switchyard-tools', version: VERSION },
    { capabilities: { tools: {} }, ...(options.instructions ? { instructions: options.instructions } : {}) },
  );
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  server.onclose = () => resolveClosed();
  server.onerror = (error) => {
    try {
      options.onError?.(error);
    } catch {
      // A broken error listener must not take the server down.
    }
  };
  server.setRequestHandler(looseRequestSchema('tools/list'), async (request) => {
    requireInitialized(server, 'tools/list');
    const parsed = ListToolsRequestSchema.safeParse(request);
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid tools/list request: ${z.prettifyError(parsed.error)}`);
    return { tools: host.tools.map(executorMcpTool) };
  });
  server.setRequestHandler(looseRequestSchema('tools/call'), async (request, extra) => {
    requireInitialized(server, 'tools/call');
    const params = request.params as { name: string; arguments?: Record<string, unknown> };
    return capCallToolResult(await callTool(host, params.name, params.arguments ?? {}, extra.signal), maxResultBytes);
  });

  let closing: Promise<void> | undefined;
  const stdio = options.transport
    ? undefined
    : stdioTransport({ ...options, maxMessageBytes: options.maxMessageBytes ?? DEFAULT_SERVE_MAX_MESSAGE_BYTES }, () => void close());
  function close(): Promise<void> {
    closing ??= (async () => {
      stdio?.detach();
      await server.close().catch(() => undefined);
      resolveClosed();
    })();
    return closing;
  }
  await server.connect(options.transport ?? stdio!.transport);
  return { server, closed, close };
}

/** One `tools/call`: the executor's model-visible answer as a `CallToolResult`. */
async function callTool(host: ExecutorHost, name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
  const executor = host.find(name);
  if (!executor) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${name} (this server has ${host.tools.map((tool) => displayName(tool.name)).join(', ')})`);
  let payload: ToolPayload;
  if (executor.spec.type === 'custom') {
    if (typeof args.input !== 'string') return errorResult(`${name} expects an \`input\` argument holding the tool's input text as a string`);
    payload = { kind: 'custom', input: args.input };
  } else {
    payload = { kind: 'function', arguments: JSON.stringify(args) };
  }
  try {
    const result = await host.call(executor, payload, { signal });
    const success = result.success !== false && result.error === undefined;
    const answer = toolOutputToCallToolResult({ item: result.item, success });
    const structured = success && executorMcpTool(executor).outputSchema ? result.output.codeModeResult(result.payload) : undefined;
    return isJsonObject(structured) ? { ...answer, structuredContent: structured } : answer;
  } catch (error) {
    return errorResult(`${name} failed: ${errorMessage(error)}`);
  }
}
