import { ProtocolError, ProtocolErrorCode, type Server, type Tool, type Transport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import { connectionWire } from './serve-wire';
import { BoundedStdioServerTransport } from './stdio-transports';

/** Where and how this package's MCP servers serve (`serveCodeModeOverMcp`, `serveToolsOverMcp`). */
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

/** Default of {@link McpServeTransportOptions.maxMessageBytes}. */
export const DEFAULT_SERVE_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Default of {@link McpServeTransportOptions.maxResultBytes}. */
export const DEFAULT_SERVE_MAX_RESULT_BYTES = 8 * 1024 * 1024;

/** The revision family of a connection: `legacy` (up to 2025-11-25, with `initialize`) or `modern` (2026-07-28). */
export type McpEra = 'legacy' | 'modern';

/** A running MCP server of this package (one client connection). */
export interface ServedMcpServer {
  /** The revision family the client opened with, once it did: `legacy` (up to 2025-11-25) or `modern` (2026-07-28). */
  readonly protocol: () => McpEra | undefined;
  /** Resolves once the connection has closed (stdin ended, the client went away, or `close()`). */
  readonly closed: Promise<void>;
  /** Closes the connection. Idempotent. */
  close(): Promise<void>;
}

/** One server instance of a connection's era; `dispose` releases what it holds once it closed. */
export interface EraInstance {
  readonly era: McpEra;
  readonly server: Server;
  dispose?(): void;
}

/** A served connection, with the instances serving it. */
export interface EraConnection<I extends EraInstance> extends ServedMcpServer {
  /** The instance serving the connection now, once the client opened. */
  current(): I | undefined;
  /** Every instance not yet closed (a `server/discover` probe may precede the pinned one). */
  instances(): ReadonlySet<I>;
}

/**
 * Serves one connection (stdio by default, ending with stdin) from `build`, called once per
 * protocol era the client's opening asks for (the SDK's stdio entry pins the connection to one
 * instance). A 2026-07-28 request claiming another revision is answered `-32022` (see
 * `connectionWire`). `onClose` runs first when the connection closes.
 */
export function serveEras<I extends EraInstance>(options: McpServeTransportOptions, build: (era: McpEra) => I, onClose?: () => void): EraConnection<I> {
  const instances = new Set<I>();
  let current: I | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  const reportError = (error: Error) => {
    try {
      options.onError?.(error);
    } catch {
      // A broken error listener must not take the server down.
    }
  };
  const open = (era: McpEra): Server => {
    const instance = build(era);
    instances.add(instance);
    current = instance;
    instance.server.onclose = () => {
      instance.dispose?.();
      instances.delete(instance);
      if (current === instance) current = undefined;
    };
    instance.server.onerror = reportError;
    return instance.server;
  };
  let closing: Promise<void> | undefined;
  const stdio = options.transport ? undefined : stdioTransport(options, () => void close());
  const wire = connectionWire(options.transport ?? stdio!.transport, { onClose: () => void close(), era: () => current?.era });
  const handle = serveStdio(({ era }) => open(era), { transport: wire, onerror: reportError });

  function close(): Promise<void> {
    closing ??= (async () => {
      onClose?.();
      stdio?.detach();
      await handle.close().catch(() => undefined);
      for (const instance of instances) instance.dispose?.();
      resolveClosed();
    })();
    return closing;
  }

  return { protocol: () => current?.era, closed, close, current: () => current, instances: () => instances };
}

/** The default stdio transport; `onEnd` runs when stdin ends or closes, until `detach()`. */
function stdioTransport(options: McpServeTransportOptions, onEnd: () => void): { transport: Transport; detach(): void } {
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

/** Refuses a request of a 2025-11-25 client that has not initialized (the SDK would serve it anyway). */
export function requireInitialized(server: Server, era: McpEra, method: string): void {
  if (era === 'legacy' && server.getClientVersion() === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `${method} before initialize: send \`initialize\` first`);
}

const ListParams = z.looseObject({ cursor: z.string().optional() }).optional();

/**
 * Answers `tools/list` with `list()`, for an initialized client. Params are checked here: the
 * SDK's own parse failure would answer -32603 for the client's mistake (-32602).
 */
export function handleToolsList(server: Server, era: McpEra, list: () => Tool[] | Promise<Tool[]>): void {
  server.setRequestHandler('tools/list', { params: z.unknown() }, async (params) => {
    requireInitialized(server, era, 'tools/list');
    const parsed = ListParams.safeParse(params);
    if (!parsed.success) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid tools/list request: ${z.prettifyError(parsed.error)}`);
    return { tools: await list() };
  });
}
