import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult, type Tool } from '@modelcontextprotocol/server';
import { displayName, executorExposure, executorPayloadKinds, isJsonObject, type HookRunner, type StepContext, type ToolExecutor, type ToolPayload } from '@switchyard/protocol';
import { createExecutorHost, type ExecutorHost } from '@switchyard/registry';
import { runOnHost } from './serve-calls';
import { DEFAULT_SERVE_MAX_RESULT_BYTES, handleToolsList, requireInitialized, serveEras, type McpEra, type McpServeTransportOptions, type ServedMcpServer } from './serve-eras';
import { capCallToolResult, errorResult, toolOutputToCallToolResult } from './serve-results';
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
 * result with the model-visible text. Speaks both protocol families as `serveCodeModeOverMcp`
 * does (2025-11-25 and earlier after `initialize`; 2026-07-28, stateless), without tasks. Serves
 * stdio by default and stops when stdin ends; throws the registry's `CONFIG` error for a
 * duplicate name or an incompatible executor.
 */
export async function serveToolsOverMcp(options: ServeToolsOverMcpOptions): Promise<ServedMcpServer> {
  const host = createExecutorHost({ tools: options.tools.filter(servable), hooks: options.hooks, step: options.step });
  const maxResultBytes = options.maxResultBytes ?? DEFAULT_SERVE_MAX_RESULT_BYTES;
  const connection = serveEras(options, (era) => ({ era, server: toolsServer(era, host, options, maxResultBytes) }));
  return { protocol: connection.protocol, closed: connection.closed, close: connection.close };
}

/** The server instance of one connection era: `tools/list` and `tools/call` over the executor host. */
function toolsServer(era: McpEra, host: ExecutorHost, options: ServeToolsOverMcpOptions, maxResultBytes: number): Server {
  const server = new Server(
    { name: options.name ?? 'switchyard-tools', version: VERSION },
    { capabilities: { tools: {} }, ...(options.instructions ? { instructions: options.instructions } : {}) },
  );
  handleToolsList(server, era, () => host.tools.map(executorMcpTool));
  // The SDK checks the request's params (-32602 naming the problem) before this handler runs.
  server.setRequestHandler('tools/call', async (request, ctx) => {
    requireInitialized(server, era, 'tools/call');
    const { name, arguments: args } = request.params;
    return capCallToolResult(await callTool(host, name, args ?? {}, ctx.mcpReq.signal), maxResultBytes);
  });
  return server;
}

/** One `tools/call`: the executor's model-visible answer as a `CallToolResult`. */
async function callTool(host: ExecutorHost, name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
  const executor = host.find(name);
  if (!executor) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown tool: ${name} (this server has ${host.tools.map((tool) => displayName(tool.name)).join(', ')})`);
  let payload: ToolPayload;
  if (executor.spec.type === 'custom') {
    if (typeof args.input !== 'string') return errorResult(`${name} expects an \`input\` argument holding the tool's input text as a string`);
    payload = { kind: 'custom', input: args.input };
  } else {
    payload = { kind: 'function', arguments: JSON.stringify(args) };
  }
  return runOnHost(async () => {
    const result = await host.call(executor, payload, { signal });
    const success = result.success !== false && result.error === undefined;
    const answer = toolOutputToCallToolResult({ item: result.item, success });
    const structured = success && executorMcpTool(executor).outputSchema ? result.output.codeModeResult(result.payload) : undefined;
    return isJsonObject(structured) ? { ...answer, structuredContent: structured } : answer;
  }, name);
}
