import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type ContentBlock, type CreateTaskResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, type ContentItem, type JsonObject, type ToolCallItem, type ToolOutputItem, type WireTool } from '@switchyard/protocol';
import { truncateMiddle } from '@switchyard/kit';
import { z } from 'zod';
import { CODE_MODE_TASKS_CAPABILITY, CodeModeTasks } from './serve-tasks';
import { BoundedStdioServerTransport } from './stdio-transports';
import { VERSION } from './version';

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

/** Where and how this package's MCP servers serve ({@link serveCodeModeOverMcp}, `serveToolsOverMcp`). */
export interface McpServeTransportOptions {
  /** Where to serve. Default: stdio over `stdin` / `stdout`, closing when `stdin` ends. */
  transport?: Transport;
  /** Streams of the default stdio transport. Default `process.stdin` / `process.stdout`. */
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  /** Server name in the `initialize` answer (each server has its default). */
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

/** Options of {@link serveCodeModeOverMcp} (server name default `switchyard-code-mode`). */
export interface ServeCodeModeOverMcpOptions extends McpServeTransportOptions {
  host: CodeModeMcpHost;
}

/** Default of {@link ServeCodeModeOverMcpOptions.maxMessageBytes}. */
export const DEFAULT_SERVE_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Default of {@link ServeCodeModeOverMcpOptions.maxResultBytes}. */
export const DEFAULT_SERVE_MAX_RESULT_BYTES = 8 * 1024 * 1024;

/** A running Code Mode MCP server. */
export interface CodeModeMcpServer {
  /** The SDK server (for adding handlers or sending notifications). */
  readonly server: Server;
  /** Resolves once the connection has closed (stdin ended, the client went away, or `close()`). */
  readonly closed: Promise<void>;
  /** Closes the connection. Idempotent. */
  close(): Promise<void>;
}

const EXEC_PREAMBLE =
  'Pass the JavaScript source as the `code` argument (raw source; its first line may be the `// @exec:` pragma). ' +
  'The result is the script output: a status header ("Script completed", "Script failed", "Script terminated" or "Script running with cell ID …"), then the text and images the script produced.';

/** Parses a base64 `data:` URL into its MIME type and payload. */
function parseDataUrl(url: string): { mimeType: string; data: string } | undefined {
  const match = /^data:([^;,]*)((?:;[^;,]*)*);base64,([\s\S]*)$/i.exec(url);
  if (!match) return undefined;
  return { mimeType: match[1] || 'application/octet-stream', data: match[3] };
}

function contentItemToBlock(item: ContentItem): ContentBlock {
  if (item.type === 'input_text') return { type: 'text', text: item.text };
  const parsed = parseDataUrl(item.image_url);
  if (!parsed) return { type: 'resource_link', uri: item.image_url, name: 'image' };
  return {
    type: 'image',
    data: parsed.data,
    mimeType: parsed.mimeType,
    ...(item.detail ? { _meta: { 'codex/imageDetail': item.detail } } : {}),
  };
}

const FAILED_HEADER = 'Script failed';
const OK_HEADERS = ['Script completed', 'Script terminated', 'Script running with cell ID '];

/**
 * Whether an `exec` / `wait` output reports a failure, read from its wire shape: the `Script failed`
 * header, or a text without any status header (Code Mode's error surfaces that skip the header:
 * pragma, argument and service errors).
 */
export function isFailedCodeModeOutput(item: ToolOutputItem): boolean {
  if (item.type === 'tool_search_output') return false;
  const first = typeof item.output === 'string' ? item.output : item.output[0]?.type === 'input_text' ? item.output[0].text : '';
  if (first.startsWith(FAILED_HEADER)) return true;
  return !OK_HEADERS.some((header) => first.startsWith(header));
}

/**
 * Converts an `exec` / `wait` answer (an output item, or `{ item, success }`) into an MCP
 * `CallToolResult`: text becomes text content, `input_image` data URLs become image content (other
 * URLs a `resource_link`). `isError` is set when `success` is false, or, when `success` is not
 * given, when {@link isFailedCodeModeOutput}.
 */
export function toolOutputToCallToolResult(answer: ToolOutputItem | CodeModeDispatchResult): CallToolResult {
  const { item, success } = 'item' in answer ? answer : { item: answer, success: undefined };
  const failed = success === undefined ? isFailedCodeModeOutput(item) : !success;
  let content: ContentBlock[];
  if (item.type === 'tool_search_output') content = [{ type: 'text', text: JSON.stringify(item.tools) }];
  else if (typeof item.output === 'string') content = [{ type: 'text', text: item.output }];
  else content = item.output.map(contentItemToBlock);
  return failed ? { content, isError: true } : { content };
}

/** The `exec` and `wait` MCP tool definitions for a host's current descriptions. */
export function codeModeMcpToolDefinitions(descriptions: CodeModeToolDescriptions): Tool[] {
  const execDescription = typeof descriptions.exec.description === 'string' ? descriptions.exec.description : '';
  const waitDescription = typeof descriptions.wait.description === 'string' ? descriptions.wait.description : '';
  const waitParameters = (descriptions.wait as { parameters?: JsonObject }).parameters;
  return [
    {
      name: 'exec',
      description: `${EXEC_PREAMBLE}\n\n${execDescription}`,
      // A client that supports MCP Tasks may run a cell as a task (see serve-tasks.ts).
      execution: { taskSupport: 'optional' },
      inputSchema: {
        type: 'object',
        properties: { code: { type: 'string', description: 'JavaScript (or TypeScript) source of the cell.' } },
        required: ['code'],
        additionalProperties: false,
      },
    },
    {
      name: 'wait',
      description: waitDescription,
      inputSchema: (waitParameters?.type === 'object' ? waitParameters : { type: 'object', properties: {} }) as Tool['inputSchema'],
    },
  ];
}

/** A request schema that only fixes the method, so a bad `params` reaches the handler. */
export function looseRequestSchema<M extends string>(method: M) {
  return z.looseObject({ method: z.literal(method), params: z.unknown().optional() });
}

export function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/**
 * Caps a result at `maxBytes` of JSON: images are replaced by one-line notes (last first), then
 * the longest text is cut in the middle (with the `…N tokens truncated…` marker) until it fits, and
 * a closing note says so. A result that fits is returned unchanged.
 */
export function capCallToolResult(result: CallToolResult, maxBytes: number): CallToolResult {
  let size = jsonBytes(result);
  if (size <= maxBytes) return result;
  const note = `[this result was ${size} bytes, over the ${maxBytes}-byte cap of the server (maxResultBytes); it was shortened]`;
  const content: ContentBlock[] = [...result.content, { type: 'text', text: note }];
  const measure = () => jsonBytes({ ...result, content });
  for (let index = content.length - 1; index >= 0 && size > maxBytes; index--) {
    const block = content[index];
    if (block.type !== 'image' && block.type !== 'audio') continue;
    content[index] = { type: 'text', text: `[${block.type} omitted: ${block.data.length} characters of base64 over the result cap]` };
    size = measure();
  }
  for (let round = 0; size > maxBytes && round < 16; round++) {
    let longest = -1;
    for (let index = 0; index < content.length - 1; index++) {
      const block = content[index];
      if (block.type === 'text' && (longest < 0 || block.text.length > (content[longest] as { text: string }).text.length)) longest = index;
    }
    if (longest < 0) break;
    const text = (content[longest] as { text: string }).text;
    const raw = Buffer.byteLength(text);
    // JSON escaping makes a text longer on the wire; shrink by the excess scaled by that factor.
    const expansion = Buffer.byteLength(JSON.stringify(text)) / Math.max(1, raw);
    const keepBytes = Math.max(0, raw - Math.ceil((size - maxBytes + 256) / expansion));
    content[longest] = { type: 'text', text: truncateMiddle(text, Math.floor(keepBytes / 4)).text };
    size = measure();
  }
  return { ...result, content };
}

/**
 * Serves Code Mode as an MCP server: `exec` (input `{ code }`) and `wait` (the host's wait
 * parameters) as MCP tools, each call dispatched through `host`. Serves stdio by default and
 * stops when stdin ends. A failing host call becomes an error result; it never closes the server.
 */
export async function serveCodeModeOverMcp(options: ServeCodeModeOverMcpOptions): Promise<CodeModeMcpServer> {
  const { host } = options;
  const maxResultBytes = options.maxResultBytes ?? DEFAULT_SERVE_MAX_RESULT_BYTES;
  const tasks = new CodeModeTasks({ host, toResult: toolOutputToCallToolResult, capResult: (result) => capCallToolResult(result, maxResultBytes) });
  const server = new Server(
    { name: options.name ?? 'switchyard-code-mode', version: VERSION },
    {
      capabilities: { tools: { listChanged: true }, tasks: CODE_MODE_TASKS_CAPABILITY },
      taskStore: tasks.store,
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
  );
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  server.onclose = () => {
    tasks.close();
    resolveClosed();
  };
  server.onerror = (error) => {
    try {
      options.onError?.(error);
    } catch {
      // A broken error listener must not take the server down.
    }
  };
  handleToolsList(server, host);
  handleToolsCall(server, host, maxResultBytes, tasks);
  const stopWatching = host.onToolsChanged?.(() => {
    server.sendToolListChanged().catch(() => undefined);
  });

  let closing: Promise<void> | undefined;
  const stdio = options.transport ? undefined : stdioTransport(options, () => void close());
  function close(): Promise<void> {
    closing ??= (async () => {
      stopWatching?.();
      stdio?.detach();
      tasks.close();
      await server.close().catch(() => undefined);
      resolveClosed();
    })();
    return closing;
  }

  await server.connect(options.transport ?? stdio!.transport);
  return { server, closed, close };
}

// Requests are registered with loose schemas and checked by their handlers: the SDK's own parse
// failure would answer -32603 (internal error) for what is the client's mistake (-32602).

export function requireInitialized(server: Server, method: string): void {
  if (server.getClientVersion() === undefined) {
    throw new McpError(ErrorCode.InvalidRequest, `${method} before initialize: send \`initialize\` first`);
  }
}

function handleToolsList(server: Server, host: CodeModeMcpHost): void {
  server.setRequestHandler(looseRequestSchema('tools/list'), async (request) => {
    requireInitialized(server, 'tools/list');
    const parsed = ListToolsRequestSchema.safeParse(request);
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid tools/list request: ${z.prettifyError(parsed.error)}`);
    return { tools: codeModeMcpToolDefinitions(await host.describe()) };
  });
}

function handleToolsCall(server: Server, host: CodeModeMcpHost, maxResultBytes: number, tasks: CodeModeTasks): void {
  let sequence = 0;
  // The SDK wraps a tools/call handler: it checks the request (-32602 when invalid) and the result.
  server.setRequestHandler(looseRequestSchema('tools/call'), async (request, extra): Promise<CallToolResult | CreateTaskResult> => {
    requireInitialized(server, 'tools/call');
    const params = request.params as { name: string; arguments?: Record<string, unknown>; task?: { ttl?: number | null } };
    const call = toCallItem(params.name, params.arguments ?? {}, `mcp-${String(extra.requestId)}-${++sequence}`);
    // A client that sent `task` (MCP Tasks) gets the task at once; one that did not, the result.
    if (params.task && extra.taskStore) {
      // Only `exec` declares taskSupport; a task-augmented call of another tool is refused (-32601).
      if (params.name !== 'exec') throw new McpError(ErrorCode.MethodNotFound, `${params.name} cannot run as a task: only exec supports MCP Tasks`);
      return tasks.start(call, params.task.ttl, extra.taskStore);
    }
    if ('content' in call) return call; // a wrong argument's error result
    let result: CallToolResult;
    try {
      result = toolOutputToCallToolResult(await host.dispatch(call, { signal: extra.signal }));
    } catch (error) {
      result = errorResult(`${params.name} failed: ${errorMessage(error)}`);
    }
    return capCallToolResult(result, maxResultBytes);
  });
}

/**
 * The wire call item of an MCP `tools/call`, or the error result a wrong `exec` argument gets (the
 * model's to fix: a tool error it can read, not a protocol error). Throws `InvalidParams` for a
 * tool this server does not have.
 */
function toCallItem(name: string, args: Record<string, unknown>, callId: string): ToolCallItem | CallToolResult {
  if (name === 'exec') {
    if (typeof args.code !== 'string') return errorResult('exec expects a `code` argument holding the JavaScript source as a string');
    return { type: 'custom_tool_call', call_id: callId, name: 'exec', input: args.code };
  }
  if (name === 'wait') return { type: 'function_call', call_id: callId, name: 'wait', arguments: JSON.stringify(args) };
  throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${name} (this server has exec and wait)`);
}

/** The default stdio transport; `onEnd` runs when stdin ends or closes, until `detach()`. */
export function stdioTransport(options: Pick<ServeCodeModeOverMcpOptions, 'stdin' | 'stdout' | 'maxMessageBytes'>, onEnd: () => void): { transport: Transport; detach(): void } {
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
