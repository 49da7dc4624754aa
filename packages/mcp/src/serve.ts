import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type ContentBlock,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, type ContentItem, type JsonObject, type ToolCallItem, type ToolOutputItem, type WireTool } from '@switchyard/protocol';
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
}

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
 * Converts an `exec` / `wait` output item into an MCP `CallToolResult`: text becomes text content,
 * `input_image` data URLs become image content (other URLs a `resource_link`). `isError` is set
 * when `success` is false, or, when `success` is not given, when {@link isFailedCodeModeOutput}.
 */
export function toolOutputToCallToolResult(item: ToolOutputItem, success?: boolean): CallToolResult {
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

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * Serves Code Mode as an MCP server: `exec` (input `{ code }`) and `wait` (the host's wait
 * parameters) as MCP tools, each call dispatched through `host`. Serves stdio by default and
 * stops when stdin ends. A failing host call becomes an error result; it never closes the server.
 */
export async function serveCodeModeOverMcp(options: ServeCodeModeOverMcpOptions): Promise<CodeModeMcpServer> {
  const { host } = options;
  const server = new Server(
    { name: options.name ?? 'switchyard-code-mode', version: VERSION },
    { capabilities: { tools: { listChanged: true } }, ...(options.instructions ? { instructions: options.instructions } : {}) },
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

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: codeModeMcpToolDefinitions(await host.describe()) }));

  let sequence = 0;
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    const callId = `mcp-${String(extra.requestId)}-${++sequence}`;
    let item: ToolCallItem;
    if (name === 'exec') {
      if (typeof args.code !== 'string') return errorResult('exec expects a `code` argument holding the JavaScript source as a string');
      item = { type: 'custom_tool_call', call_id: callId, name: 'exec', input: args.code };
    } else if (name === 'wait') {
      item = { type: 'function_call', call_id: callId, name: 'wait', arguments: JSON.stringify(args) };
    } else {
      throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${name} (this server has exec and wait)`);
    }
    try {
      const answer = await host.dispatch(item, { signal: extra.signal });
      return 'item' in answer ? toolOutputToCallToolResult(answer.item, answer.success) : toolOutputToCallToolResult(answer);
    } catch (error) {
      return errorResult(`${name} failed: ${errorMessage(error)}`);
    }
  });

  const stopWatching = host.onToolsChanged?.(() => {
    server.sendToolListChanged().catch(() => undefined);
  });

  let transport = options.transport;
  let detachStdin: (() => void) | undefined;
  if (!transport) {
    const stdin = (options.stdin ?? process.stdin) as NodeJS.ReadStream;
    const stdout = (options.stdout ?? process.stdout) as NodeJS.WriteStream;
    transport = new StdioServerTransport(stdin, stdout);
    const onEnd = () => void close();
    stdin.once('end', onEnd);
    stdin.once('close', onEnd);
    detachStdin = () => {
      stdin.off('end', onEnd);
      stdin.off('close', onEnd);
    };
  }

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= (async () => {
      stopWatching?.();
      detachStdin?.();
      await server.close().catch(() => undefined);
      resolveClosed();
    })();
    return closing;
  }

  await server.connect(transport);
  return { server, closed, close };
}
