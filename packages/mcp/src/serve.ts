import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult, type Transport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { TASKS_EXTENSION_ID_V2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { ApprovalDecision, ApprovalRequest, ToolCallItem, ToolOutputItem, WireTool } from '@switchyard/protocol';
import { z } from 'zod';
import { ApprovalDesk, type CellApprovalSource } from './serve-approvals';
import { createToolsCallHandler, runOnHost } from './serve-calls';
import { capCallToolResult, codeModeMcpToolDefinitions, toolOutputToCallToolResult } from './serve-results';
import { LEGACY_TASKS_CAPABILITY, handleLegacyTasks, handleModernTasks, legacyTask } from './serve-task-wire';
import { CodeModeTaskEngine } from './serve-tasks';
import { BoundedStdioServerTransport } from './stdio-transports';
import { connectionWire } from './serve-wire';
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

/** Options of {@link serveCodeModeOverMcp}. */
export interface ServeCodeModeOverMcpOptions {
  host: CodeModeMcpHost;
  /** Where to serve. Default: stdio over `stdin` / `stdout`, closing when `stdin` ends. */
  transport?: Transport;
  /** Streams of the default stdio transport. Default `process.stdin` / `process.stdout`. */
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  /** Server name in the `initialize` answer. Default `switchyard-code-mode`. */
  name?: string;
  /** Server instructions in the `initialize` answer. */
  instructions?: string;
  /** Receives transport and protocol errors (a bad line from the client, a failed send). */
  onError?: (error: Error) => void;
  /**
   * Largest request read over the default stdio transport, in bytes; a larger one is answered with
   * a JSON-RPC `Invalid Request` error and the server keeps serving. Default 4 MiB (requests carry
   * a script's source).
   */
  maxMessageBytes?: number;
  /**
   * Largest `tools/call` result sent, in bytes of its JSON; a larger one has its images replaced by
   * notes, then its longest texts cut in the middle, and ends with a note. Default 8 MiB: the
   * official SDK client closes the connection on a message over 10 MiB.
   */
  maxResultBytes?: number;
}

/** Default of {@link ServeCodeModeOverMcpOptions.maxMessageBytes}. */
export const DEFAULT_SERVE_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Default of {@link ServeCodeModeOverMcpOptions.maxResultBytes}. */
export const DEFAULT_SERVE_MAX_RESULT_BYTES = 8 * 1024 * 1024;

/** A running Code Mode MCP server (one client connection). */
export interface CodeModeMcpServer {
  /** The revision family the client opened with, once it did: `legacy` (up to 2025-11-25) or `modern` (2026-07-28). */
  readonly protocol: () => 'legacy' | 'modern' | undefined;
  /** Resolves once the connection has closed (stdin ended, the client went away, or `close()`). */
  readonly closed: Promise<void>;
  /** Closes the connection. Idempotent. */
  close(): Promise<void>;
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

const ListParams = z.looseObject({ cursor: z.string().optional() }).optional();

/** One instance of the server: built per connection era by the SDK's stdio entry. */
interface Instance {
  readonly era: 'legacy' | 'modern';
  readonly server: Server;
  readonly desk: ApprovalDesk;
  readonly engine: CodeModeTaskEngine;
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
  const instances = new Set<Instance>();
  let current: Instance | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));

  const reportError = (error: Error) => {
    try {
      options.onError?.(error);
    } catch {
      // A broken error listener must not take the server down.
    }
  };

  const context: InstanceContext = {
    options,
    host,
    dispatch,
    capResult,
    run,
    reportError,
    opened: (instance) => {
      instances.add(instance);
      current = instance;
    },
    closed: (instance) => {
      instances.delete(instance);
      if (current === instance) current = undefined;
    },
  };
  const stopWatching = host.onToolsChanged?.(() => {
    for (const instance of instances) instance.server.sendToolListChanged().catch(() => undefined);
  });
  let closing: Promise<void> | undefined;
  const stdio = options.transport ? undefined : stdioTransport(options, () => void close());
  const wire = connectionWire(options.transport ?? stdio!.transport, { onClose: () => void close(), era: () => current?.era });
  const handle = serveStdio(({ era }) => buildInstance(era, context), { transport: wire, onerror: reportError });

  function close(): Promise<void> {
    closing ??= (async () => {
      stopWatching?.();
      stdio?.detach();
      await handle.close().catch(() => undefined);
      for (const instance of instances) {
        instance.engine.close();
        instance.desk.close();
      }
      resolveClosed();
    })();
    return closing;
  }

  return {
    protocol: () => current?.era,
    closed,
    close,
    requestApproval: (request, source) => (current ? current.desk.request(request, source) : Promise.resolve('denied')),
  };
}

/** What one server instance shares with {@link serveCodeModeOverMcp}. */
interface InstanceContext {
  readonly options: ServeCodeModeOverMcpOptions;
  readonly host: CodeModeMcpHost;
  dispatch(item: ToolCallItem, signal: AbortSignal): Promise<CallToolResult>;
  capResult(result: CallToolResult): CallToolResult;
  run(item: ToolCallItem, signal: AbortSignal): Promise<CallToolResult>;
  reportError(error: Error): void;
  /** The instance now serves the connection. */
  opened(instance: Instance): void;
  /** The instance's connection closed. */
  closed(instance: Instance): void;
}

/**
 * One server instance for a connection of `era`: its capabilities, its approval desk (2025-11-25
 * asks with `elicitation/create`; 2026-07-28 with `input_required`), its task engine and its
 * request handlers.
 */
function buildInstance(era: 'legacy' | 'modern', context: InstanceContext): Server {
  const { options, host, dispatch, capResult, run, reportError } = context;
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
  const instance: Instance = { era, server, desk, engine };
  context.opened(instance);
  server.onclose = () => {
    engine.close();
    desk.close();
    context.closed(instance);
  };
  server.onerror = reportError;
  // A 2025-11-25 client must initialize first (the SDK would serve it anyway).
  const requireInitialized = (method: string) => {
    if (era === 'legacy' && server.getClientVersion() === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `${method} before initialize: send \`initialize\` first`);
  };
  // Params are checked here: the SDK's own parse failure would answer -32603 for the client's mistake.
  server.setRequestHandler('tools/list', { params: z.unknown() }, async (params) => {
    requireInitialized('tools/list');
    const parsed = ListParams.safeParse(params);
    if (!parsed.success) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid tools/list request: ${z.prettifyError(parsed.error)}`);
    return { tools: codeModeMcpToolDefinitions(await host.describe()) };
  });
  const callTool = createToolsCallHandler({ era, engine, desk, run, rememberAsking: (taskId, canAsk) => void askable.set(taskId, canAsk) });
  // Registered as the fallback: the SDK's own tools/call wrapper checks results against the
  // plain CallToolResult, which a task (2025-11-25 `{ task }`) is not.
  server.fallbackRequestHandler = async (request, ctx) => {
    if (request.method !== 'tools/call') throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
    requireInitialized('tools/call');
    return (await callTool(request, ctx)) as never;
  };
  if (era === 'legacy') handleLegacyTasks(server, engine);
  else handleModernTasks(server, engine);
  return server;
}

/** The default stdio transport; `onEnd` runs when stdin ends or closes, until `detach()`. */
function stdioTransport(options: ServeCodeModeOverMcpOptions, onEnd: () => void): { transport: Transport; detach(): void } {
  const stdin = (options.stdin ?? process.stdin) as NodeJS.ReadStream;
  const stdout = (options.stdout ?? process.stdout) as NodeJS.WriteStream;
  const transport = new BoundedStdioServerTransport({ stdin, stdout, maxMessageBytes: options.maxMessageBytes ?? DEFAULT_SERVE_MAX_MESSAGE_BYTES });
  stdin.once('end', onEnd);
  stdin.once('close', onEnd);
  return {
    transport,
    detach: () => {
      stdin.off('end', onEnd);
      stdin.off('close', onEnd);
    },
  };
}
