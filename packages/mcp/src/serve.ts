import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult } from '@modelcontextprotocol/server';
import { TASKS_EXTENSION_ID_V2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { ApprovalDecision, ApprovalRequest, ToolCallItem, ToolOutputItem, WireTool } from '@switchyard/protocol';
import { ApprovalDesk, type CellApprovalSource } from './serve-approvals';
import { createToolsCallHandler, runOnHost } from './serve-calls';
import { DEFAULT_SERVE_MAX_RESULT_BYTES, handleToolsList, requireInitialized, serveEras, type McpEra, type McpServeTransportOptions, type ServedMcpServer } from './serve-eras';
import { capCallToolResult, codeModeMcpToolDefinitions, toolOutputToCallToolResult } from './serve-results';
import { LEGACY_TASKS_CAPABILITY, handleLegacyTasks, handleModernTasks, legacyTask } from './serve-task-wire';
import { CodeModeTaskEngine } from './serve-tasks';
import { VERSION } from './version';

export { isFailedCodeModeOutput, toolOutputToCallToolResult } from './serve-results';

/** The `exec` and `wait` tools as a Code Mode host describes them to a model (Responses-API wire JSON). */
export interface CodeModeToolDescriptions {
  /** The freeform `exec` tool (its description lists the nested tools). */
  readonly exec: WireTool;
  /** The `wait` function tool (its `parameters` become the MCP input schema). */
  readonly wait: WireTool;
}

/**
 * What {@link serveCodeModeOverMcp} needs from a Code Mode host (a Switchyard session, for example).
 * `dispatch` answers a wire call item with its wire output item, exactly as a model would receive it.
 */
export interface CodeModeMcpHost {
  /** The current `exec` / `wait` descriptions; read on every `tools/list`. */
  describe(): CodeModeToolDescriptions | Promise<CodeModeToolDescriptions>;
  /**
   * Runs one `exec` (custom_tool_call) or `wait` (function_call) item. Answer the output item, or
   * `{ item, success }` when the host knows the outcome. A rejection becomes an error result.
   */
  dispatch(item: ToolCallItem, options: { signal: AbortSignal }): Promise<ToolOutputItem | CodeModeDispatchResult>;
  /** Optional: calls `listener` whenever the descriptions change (the server sends `notifications/tools/list_changed`). */
  onToolsChanged?(listener: () => void): () => void;
}

/** A dispatched call's output with its outcome (`success: false` marks the MCP result `isError`). */
export interface CodeModeDispatchResult {
  readonly item: ToolOutputItem;
  readonly success?: boolean;
}

/** Options of {@link serveCodeModeOverMcp} (server name default `switchyard-code-mode`). */
export interface ServeCodeModeOverMcpOptions extends McpServeTransportOptions {
  host: CodeModeMcpHost;
}

/** A running Code Mode MCP server (one client connection). */
export interface CodeModeMcpServer extends ServedMcpServer {
  /**
   * Asks the client to approve something a cell's nested call wants (the host's `ApprovalProvider`
   * forwards here, naming the cell). On 2025-11-25 the client gets an `elicitation/create` at once;
   * on 2026-07-28 the task or call waiting on the cell answers `input_required`, and an approval
   * of a cell nothing waits on waits for the next `wait` on it. `accept` approves; a decline, a
   * cancel, a client without the `elicitation` capability or a closed connection deny.
   */
  requestApproval(request: ApprovalRequest, source: CellApprovalSource): Promise<ApprovalDecision>;
}

/** How long a 2025-11-25 client may take to answer an approval's `elicitation/create` (ten minutes: a person answers). */
const ELICITATION_TIMEOUT_MS = 10 * 60 * 1000;

/** One instance of the server: built per connection era by the SDK's stdio entry. */
interface Instance {
  readonly era: McpEra;
  readonly server: Server;
  readonly desk: ApprovalDesk;
  readonly engine: CodeModeTaskEngine;
  dispose(): void;
}

/**
 * Serves Code Mode as an MCP server: `exec` (input `{ code }`) and `wait` (the host's wait
 * parameters) as MCP tools, each call dispatched through `host`, to clients of either protocol
 * family (2025-11-25 and earlier with `initialize`; 2026-07-28, stateless, with `server/discover`
 * or per-request `_meta`), with MCP Tasks in each family's form. Serves stdio by default and stops
 * when stdin ends. A failing host call becomes an error result; it never closes the server.
 */
export async function serveCodeModeOverMcp(options: ServeCodeModeOverMcpOptions): Promise<CodeModeMcpServer> {
  const { host } = options;
  const maxResultBytes = options.maxResultBytes ?? DEFAULT_SERVE_MAX_RESULT_BYTES;
  const capResult = (result: CallToolResult) => capCallToolResult(result, maxResultBytes);
  const dispatch = async (item: ToolCallItem, signal: AbortSignal) => toolOutputToCallToolResult(await host.dispatch(item, { signal }));
  const run = (item: ToolCallItem, signal: AbortSignal) => runOnHost(() => dispatch(item, signal), 'name' in item ? item.name : 'call').then(capResult);
  const context: InstanceContext = { options, host, dispatch, capResult, run };
  const connection = serveEras(options, (era) => buildInstance(era, context), () => stopWatching?.());
  const stopWatching = host.onToolsChanged?.(() => {
    for (const instance of connection.instances()) instance.server.sendToolListChanged().catch(() => undefined);
  });
  return {
    protocol: connection.protocol,
    closed: connection.closed,
    close: connection.close,
    requestApproval: (request, source) => connection.current()?.desk.request(request, source) ?? Promise.resolve('denied'),
  };
}

/** What one server instance shares with {@link serveCodeModeOverMcp}. */
interface InstanceContext {
  readonly options: ServeCodeModeOverMcpOptions;
  readonly host: CodeModeMcpHost;
  dispatch(item: ToolCallItem, signal: AbortSignal): Promise<CallToolResult>;
  capResult(result: CallToolResult): CallToolResult;
  run(item: ToolCallItem, signal: AbortSignal): Promise<CallToolResult>;
}

/**
 * One server instance for a connection of `era`: its capabilities, its approval desk (2025-11-25
 * asks with `elicitation/create`; 2026-07-28 with `input_required`), its task engine and its
 * request handlers.
 */
function buildInstance(era: McpEra, context: InstanceContext): Instance {
  const { options, host, dispatch, capResult, run } = context;
  const askable = new Map<string, boolean>();
  const server = new Server(
    { name: options.name ?? 'switchyard-code-mode', version: VERSION },
    {
      capabilities:
        era === 'legacy'
          ? { tools: { listChanged: true }, tasks: LEGACY_TASKS_CAPABILITY }
          : { tools: { listChanged: true }, extensions: { [TASKS_EXTENSION_ID_V2]: {} } },
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
  );
  const desk = new ApprovalDesk(
    era === 'legacy'
      ? (approval) => server.elicitInput({ ...approval.elicitation, requestedSchema: { ...approval.elicitation.requestedSchema } }, { timeout: ELICITATION_TIMEOUT_MS })
      : undefined,
  );
  const engine = new CodeModeTaskEngine({
    generation: era,
    dispatch,
    capResult,
    desk,
    canAsk: (taskId) => (era === 'legacy' ? server.getClientCapabilities()?.elicitation !== undefined : askable.get(taskId) === true),
    ...(era === 'legacy'
      ? { onStatus: (task) => void server.notification({ method: 'notifications/tasks/status', params: legacyTask(task) }).catch(() => undefined) }
      : {}),
  });
  handleToolsList(server, era, async () => codeModeMcpToolDefinitions(await host.describe()));
  const callTool = createToolsCallHandler({ era, engine, desk, run, rememberAsking: (taskId, canAsk) => void askable.set(taskId, canAsk) });
  // Registered as the fallback: the SDK's own tools/call wrapper checks results against the
  // plain CallToolResult, which a task (2025-11-25 `{ task }`) is not.
  server.fallbackRequestHandler = async (request, ctx) => {
    if (request.method !== 'tools/call') throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
    requireInitialized(server, era, 'tools/call');
    return (await callTool(request, ctx)) as never;
  };
  if (era === 'legacy') handleLegacyTasks(server, engine);
  else handleModernTasks(server, engine);
  return {
    era,
    server,
    desk,
    engine,
    dispose: () => {
      engine.close();
      desk.close();
    },
  };
}
