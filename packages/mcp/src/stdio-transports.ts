import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { ProtocolErrorCode, deserializeMessage, serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { DEFAULT_MAX_MESSAGE_BYTES, JsonLineReader, recoverMessageId, salvageFirstText, type OversizedLine } from './json-lines';

/** Characters of a dropped result's first text block passed on to the model. */
const SALVAGED_TEXT_CHARS = 64 * 1024;
const CLOSE_GRACE_MS = 2000;

type MessageId = string | number;

function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: MessageId } {
  return 'id' in message && ('result' in message || 'error' in message);
}

function isRequest(message: JSONRPCMessage): message is JSONRPCMessage & { id: MessageId; method: string } {
  return 'id' in message && 'method' in message;
}

/** Parses one line as a JSON-RPC message; a malformed line goes to `onerror` (it affects no request). */
function parseLine(text: string, onerror: ((error: Error) => void) | undefined): JSONRPCMessage | undefined {
  try {
    return deserializeMessage(text);
  } catch (error) {
    onerror?.(error instanceof Error ? error : new Error(String(error)));
    return undefined;
  }
}

/** Writes one message as a line, resolving once the stream accepted it (waits for `drain`). */
function writeMessage(stream: NodeJS.WritableStream, message: JSONRPCMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    const ok = stream.write(serializeMessage(message), (error) => {
      if (error) reject(error);
    });
    if (ok) resolve();
    else stream.once('drain', resolve);
  });
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB (${bytes} bytes)` : `${bytes} bytes`;
}

/** The model-visible note on a result dropped for its size (also used by tests). */
export function oversizedResultNote(bytes: number, limit: number): string {
  return (
    `tool call error: the MCP server's result is ${formatBytes(bytes)}, over this client's message limit of ${formatBytes(limit)} ` +
    '(the `maxMessageBytes` option), so it was not read. Ask for less (a range, a page, a filter).'
  );
}

/** Options of {@link BoundedStdioClientTransport}. */
export interface BoundedStdioClientTransportOptions {
  command: string;
  args?: readonly string[];
  /** Added to the SDK's default inherited environment (`HOME`, `PATH`, …). */
  env?: Record<string, string>;
  cwd?: string;
  /** Largest message read from the server, in bytes. Default 32 MiB. */
  maxMessageBytes?: number;
}

/**
 * An MCP client transport over a child process's stdin/stdout, like the SDK's
 * `StdioClientTransport` but with a bounded reader: a message over `maxMessageBytes` does not
 * close the connection. A `tools/call` result that large is answered with an error result carrying
 * an honest note and the start of its first text block; a larger answer to any other request
 * becomes a JSON-RPC error for that request; an oversized notification is dropped (`onerror`).
 */
export class BoundedStdioClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The server's stderr (available before `start`, so nothing written early is lost). */
  readonly stderr = new PassThrough();
  private child: ChildProcess | undefined;
  private readonly maxMessageBytes: number;
  private readonly reader: JsonLineReader;
  /** The method of every request sent and not yet answered, by id. */
  private readonly pending = new Map<MessageId, string>();

  constructor(private readonly options: BoundedStdioClientTransportOptions) {
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.reader = new JsonLineReader(this.maxMessageBytes, {
      line: (text) => this.receive(text),
      oversized: (line) => this.receiveOversized(line),
    });
  }

  /** The server's process id once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('BoundedStdioClientTransport already started');
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.command, [...(this.options.args ?? [])], {
        env: { ...getDefaultEnvironment(), ...this.options.env },
        cwd: this.options.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
      });
      this.child = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      child.on('close', () => {
        this.child = undefined;
        this.reader.reset();
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.reader.push(chunk));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stderr?.pipe(this.stderr);
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin) throw new Error('Not connected');
    if (isRequest(message)) this.pending.set(message.id, message.method);
    await writeMessage(stdin, message);
  }

  /** Ends stdin, then SIGTERM after 2 s, then SIGKILL after 2 s more (the SDK transport's order). */
  async close(): Promise<void> {
    await this.stop(true);
  }

  /**
   * Ends the server without the stdin grace period: SIGTERM at once, SIGKILL after the grace. For
   * a server that never answered `initialize` (it holds no session worth a clean exit, and may not
   * read stdin at all): its owner's own shutdown may be cut short (an MCP client SIGKILLs
   * `mcp serve` 4 s after ending its stdin), and the server must not outlive it.
   */
  async terminate(): Promise<void> {
    await this.stop(false);
  }

  private async stop(graceful: boolean): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.pending.clear();
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const grace = () => new Promise<void>((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref());
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    if (graceful) await Promise.race([exited, grace()]);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, grace()]);
    }
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }

  private receive(text: string): void {
    const message = parseLine(text, this.onerror);
    if (!message) return;
    if (isResponse(message)) this.pending.delete(message.id);
    this.onmessage?.(message);
  }

  private receiveOversized(line: OversizedLine): void {
    let id = recoverMessageId(line);
    // A response whose id is in neither end: with one request waiting it can only be that one's.
    if (id === undefined && /^\s*\{\s*"(?:result|error)"/.test(line.head) && this.pending.size === 1) id = [...this.pending.keys()][0];
    const method = id === undefined ? undefined : this.pending.get(id);
    if (id === undefined || method === undefined) {
      this.onerror?.(new Error(`dropped a ${line.bytes}-byte message from the MCP server, over the ${this.maxMessageBytes}-byte limit`));
      return;
    }
    this.pending.delete(id);
    if (method === 'tools/call') {
      const content: Array<{ type: 'text'; text: string }> = [{ type: 'text', text: oversizedResultNote(line.bytes, this.maxMessageBytes) }];
      const salvaged = salvageFirstText(line.head, SALVAGED_TEXT_CHARS);
      if (salvaged) content.push({ type: 'text', text: `The result's first text began (truncated):\n${salvaged}` });
      this.onmessage?.({ jsonrpc: '2.0', id, result: { content, isError: true } });
      return;
    }
    this.onmessage?.({
      jsonrpc: '2.0',
      id,
      error: { code: ProtocolErrorCode.InternalError, message: `the answer to ${method} is ${line.bytes} bytes, over this client's message limit of ${this.maxMessageBytes} bytes (maxMessageBytes)` },
    });
  }
}

/** Options of {@link BoundedStdioServerTransport}. */
export interface BoundedStdioServerTransportOptions {
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  /** Largest request read from the client, in bytes. Default 32 MiB. */
  maxMessageBytes?: number;
}

/**
 * An MCP server transport over stdin/stdout, like the SDK's `StdioServerTransport` but bounded: a
 * request over `maxMessageBytes` is answered with a JSON-RPC `Invalid Request` error (-32600) for
 * its id, and the server keeps serving (the SDK transport would close and end the server).
 */
export class BoundedStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly stdin: NodeJS.ReadableStream;
  private readonly stdout: NodeJS.WritableStream;
  private readonly maxMessageBytes: number;
  private readonly reader: JsonLineReader;
  private started = false;
  private readonly onData = (chunk: Buffer | string) => this.reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  private readonly onStreamError = (error: Error) => this.onerror?.(error);
  private closed = false;
  /**
   * A write error on stdout (EPIPE: the client went away, during startup too) is reported and
   * closes the transport; without a listener it would be an uncaught error ending the process
   * before its cleanup (downstream servers would be left running).
   */
  private readonly onStdoutError = (error: Error) => {
    this.onerror?.(error);
    void this.close();
  };

  constructor(options: BoundedStdioServerTransportOptions = {}) {
    this.stdin = options.stdin ?? process.stdin;
    this.stdout = options.stdout ?? process.stdout;
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.reader = new JsonLineReader(this.maxMessageBytes, {
      line: (text) => {
        const message = parseLine(text, this.onerror);
        if (message) this.onmessage?.(message);
      },
      oversized: (line) => {
        const id = recoverMessageId(line);
        this.onerror?.(new Error(`refused a ${line.bytes}-byte request, over the ${this.maxMessageBytes}-byte limit`));
        if (id === undefined) return;
        this.send({
          jsonrpc: '2.0',
          id,
          error: { code: ProtocolErrorCode.InvalidRequest, message: `request of ${line.bytes} bytes exceeds this server's message limit of ${this.maxMessageBytes} bytes` },
        }).catch((error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))));
      },
    });
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('BoundedStdioServerTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStreamError);
    // Stays attached after close: a late write error must not become an uncaught exception.
    this.stdout.on('error', this.onStdoutError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the MCP connection is closed'));
    return writeMessage(this.stdout, message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onStreamError);
    // Let the process exit if nobody else reads stdin (what the SDK transport does).
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.reader.reset();
    this.onclose?.();
  }
}
