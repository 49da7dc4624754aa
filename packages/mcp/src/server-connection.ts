import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type LoggingLevel,
  type OAuthClientProvider,
  type Transport,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import type { TaskEnabledSession } from '@modelcontextprotocol/ext-tasks/client';
import { FatalToolError, SwitchyardError, displayName, errorMessage, type JsonObject, type ToolExecutor, type ToolInvocation, type ToolOutput } from '@switchyard/protocol';
import { invocationArguments } from '@switchyard/kit/internal';
import { z } from 'zod';
import { ElicitationPause } from './call-timer';
import { McpToolOutput, checkStructuredContent, errorCallToolResult, normalizeCallToolResult, type McpCallToolResult, type StructuredContentCheck } from './call-result';
import { isStdioConfig, type ResolvedServerConfig } from './config';
import { answerElicitations, createElicitationAnswerer, elicitationCapabilities, type ElicitationAnswerer, type McpElicitationHandler } from './elicitation';
import { createElicitationGate } from './elicitation-gate';
import { StoreOAuthProvider, type McpAuthOptions } from './oauth';
import { BoundedStdioClientTransport } from './stdio-transports';
import { McpTimeoutError, describeRequestError, formatDuration, startFailure, type RequestTarget } from './request-errors';
import { RawChannel, createTaskSession } from './task-session';
import { callToolOnServer, type McpTaskStatus } from './tool-calls';
import { buildListedTools, type ListedTool } from './tool-executors';
import { VERSION } from './version';

/** Lifecycle of one server: `starting` → `ready` → `failed` (start failure or death) or `closed`. */
export type McpServerState = 'starting' | 'ready' | 'failed' | 'closed';

/** Something a host should know about; MCP problems never throw after configuration. */
export interface McpWarning {
  /** `server-failed`: a server failed to start or died (reported once); `tool-skipped`: a tool definition is unusable; `list-failed`: a re-list after `list_changed` failed (the previous list is kept); `elicitation-failed`: `onElicitation` threw or answered nonsense (the server got a decline); `elicitation-refused`: an elicitation was declined before the host heard of it (no call in flight, too many at once, a URL that is not `https:`; once per reason). */
  readonly kind: 'server-failed' | 'tool-skipped' | 'list-failed' | 'elicitation-failed' | 'elicitation-refused';
  /** The configured server name. */
  readonly server: string;
  /** The raw MCP tool name, for `tool-skipped`. */
  readonly tool?: string;
  /** A full sentence naming the server (and tool). */
  readonly message: string;
}

/** A `notifications/progress` of a running call. */
export interface McpProgress {
  /** The configured server name. */
  readonly server: string;
  /** The raw MCP tool name. */
  readonly tool: string;
  /** The Switchyard call id of the call. */
  readonly callId: string;
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** A `notifications/message` (log line) a server sent. */
export interface McpLogMessage {
  /** The configured server name. */
  readonly server: string;
  readonly level: LoggingLevel;
  readonly logger?: string;
  /** The log payload as the server sent it (any JSON). */
  readonly data: unknown;
}

/** A status change of a call that runs as an MCP task. */
export interface McpTaskEvent extends McpTaskStatus {
  /** The configured server name. */
  readonly server: string;
  /** The raw MCP tool name. */
  readonly tool: string;
  /** The Switchyard call id of the call. */
  readonly callId: string;
}

/** What a connection reports to its owner. */
export interface ServerConnectionListener {
  warning(warning: McpWarning): void;
  toolsChanged(server: string): void;
  progress(progress: McpProgress): void;
  log(message: McpLogMessage): void;
  task(event: McpTaskEvent): void;
}

/** Limits of one connection. */
export interface ServerConnectionLimits {
  /** Token budget of one direct output before the ×1.2 margin. */
  readonly maxOutputTokens?: number;
  /** Largest stdio message read from the server, in bytes. */
  readonly maxMessageBytes?: number;
  /** OAuth for streamable HTTP servers. */
  readonly auth?: McpAuthOptions;
  /** Receives the server's `elicitation/create` requests; without it they are declined. */
  readonly onElicitation?: McpElicitationHandler;
}

/**
 * Attempts of one connect or call, each but the last after an authorization (401 → the user's
 * consent → tokens): two authorizations happen when the resource moves to another authorization
 * server between the connection's first requests, or asks for more scope.
 */
const MAX_AUTHORIZATIONS = 3;

const ListToolsPageSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
const LooseResultSchema = z.looseObject({});
const MAX_LIST_PAGES = 1000;
const STDERR_TAIL_CHARS = 2000;

/** How the client opens a connection: stdio servers speak 2025-11-25 unless told; HTTP ones are asked (`server/discover`). */
function negotiationMode(resolved: ResolvedServerConfig): VersionNegotiationMode {
  const protocol = resolved.config.protocol ?? (isStdioConfig(resolved.config) ? 'legacy' : 'auto');
  return protocol === '2026-07-28' ? { pin: '2026-07-28' } : protocol;
}

/** One configured server: its client, its current executors, its failure. Never throws to the host. */
export class McpServerConnection {
  readonly name: string;
  readonly namespace: string;
  private currentState: McpServerState = 'starting';
  private client: Client | undefined;
  private session: TaskEnabledSession | undefined;
  private tools: readonly ToolExecutor[] = [];
  private listed = new Map<string, ListedTool>();
  private failure: string | undefined;
  private stderrTail = '';
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private listChangedWhileStarting = false;
  private readonly reportedSkips = new Set<string>();
  private transport: Transport | undefined;
  private authProvider: OAuthClientProvider | undefined;
  /** The server's elicitations waiting for the user: they pause its calls' time limits. */
  private readonly pause = new ElicitationPause();
  private readonly answerer: ElicitationAnswerer | undefined;
  /** `tools/call` requests running (elicitations are answered only while one is). */
  private callsInFlight = 0;

  constructor(
    private readonly resolved: ResolvedServerConfig,
    private readonly listener: ServerConnectionListener,
    private readonly limits: ServerConnectionLimits = {},
  ) {
    this.name = resolved.name;
    this.namespace = resolved.namespace;
    const handler = limits.onElicitation;
    const warn = (kind: McpWarning['kind']) => (message: string) => listener.warning({ kind, server: this.name, message: `MCP server \`${this.name}\`: ${message}` });
    // the gate admits an elicitation before the host hears of it; an admitted one pauses the calls' time
    const gate = createElicitationGate(() => this.callsInFlight, warn('elicitation-refused'));
    this.answerer = handler ? createElicitationAnswerer(this.name, handler, warn('elicitation-failed'), this.pause, gate) : undefined;
  }

  get state(): McpServerState {
    return this.currentState;
  }

  /** Why the server failed, when it did. */
  get error(): string | undefined {
    return this.failure;
  }

  /** The protocol family the connection settled on once started: `legacy` (up to 2025-11-25) or `modern` (2026-07-28). */
  get protocol(): 'legacy' | 'modern' | undefined {
    return this.client?.getProtocolEra();
  }

  /** The executors of the current tool list; empty unless the server is ready. */
  executors(): readonly ToolExecutor[] {
    return this.currentState === 'ready' ? this.tools : [];
  }

  /** Connects, initializes and lists tools within the startup timeout. Never throws. */
  async start(): Promise<void> {
    const { startupTimeoutMs } = this.resolved;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Error(`timed out after ${formatDuration(startupTimeoutMs)}`));
      }, startupTimeoutMs);
    });
    try {
      const work = this.connectAndList(controller.signal, startupTimeoutMs);
      work.catch(() => undefined);
      await Promise.race([work, timedOut]);
      if (this.currentState !== 'starting') return;
      this.currentState = 'ready';
      if (this.listChangedWhileStarting) this.scheduleRefresh();
    } catch (error) {
      this.fail(startFailure(error, this.target()));
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Connects and lists the tools. An OAuth authorization the host granted during the attempt
   * (`auth.authorize` answered) is finished with the SDK's `finishAuth` and the connection made
   * again with the new tokens.
   */
  private async connectAndList(signal: AbortSignal, timeout: number): Promise<void> {
    for (let round = 0; ; round++) {
      const transport = this.createTransport();
      this.transport = transport;
      const channel = new RawChannel();
      const capabilities = elicitationCapabilities(this.limits.onElicitation);
      const client = this.createClient(capabilities);
      this.client = client;
      try {
        await client.connect(channel.wrap(transport), { signal, timeout });
        this.session = createTaskSession(client, channel, capabilities, {
          server: this.name,
          declaration: (rawName) => this.listed.get(rawName)?.declaration,
          ...(this.answerer ? { answerer: this.answerer } : {}),
          onError: () => undefined, // a task's own failure reaches its call
        });
        await this.applyList(await this.listTools(signal, timeout));
        return;
      } catch (error) {
        if (!(await this.finishAuthorization(error, round))) throw error;
        await client.close().catch(() => undefined);
      }
    }
  }

  /** After an `UnauthorizedError` with an answer from the host: exchanges it for tokens; true when the request may be made again. */
  private async finishAuthorization(error: unknown, round: number): Promise<boolean> {
    const provider = this.authProvider;
    const transport = this.transport;
    if (!(error instanceof UnauthorizedError) || !(provider instanceof StoreOAuthProvider) || !(transport instanceof StreamableHTTPClientTransport)) return false;
    const callback = provider.takeAuthorizationCallback();
    if (callback === undefined || round + 1 >= MAX_AUTHORIZATIONS) return false;
    await transport.finishAuth(callback);
    await provider.forgetDiscovery();
    return true;
  }

  private createClient(capabilities: ReturnType<typeof elicitationCapabilities>): Client {
    const client = new Client(
      { name: 'switchyard', version: VERSION },
      {
        capabilities,
        versionNegotiation: { mode: negotiationMode(this.resolved) },
        // 2025-11-25: notifications/tools/list_changed; 2026-07-28: a subscriptions/listen stream the SDK opens.
        listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged: () => this.scheduleRefresh() } },
      },
    );
    answerElicitations(client, this.answerer);
    client.setNotificationHandler('notifications/message', (notification) => {
      const { level, logger, data } = notification.params;
      this.listener.log({ server: this.name, level: level as LoggingLevel, ...(logger !== undefined ? { logger } : {}), data });
    });
    client.onclose = () => {
      if (this.client === client) this.handleClose();
    };
    client.onerror = () => {
      // Transport noise (a malformed line, a failed cancellation send) affects one request at most;
      // the request itself reports it. Death is detected through onclose.
    };
    return client;
  }

  private createTransport(): Transport {
    const config = this.resolved.config;
    if (isStdioConfig(config)) {
      const transport = new BoundedStdioClientTransport({
        command: config.command,
        args: config.args,
        env: config.env,
        cwd: config.cwd,
        maxMessageBytes: this.limits.maxMessageBytes,
      });
      transport.stderr.on('data', (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
      });
      return transport;
    }
    const headers: Record<string, string> = { ...config.headers };
    if (config.bearerTokenEnvVar) {
      const token = process.env[config.bearerTokenEnvVar];
      if (!token) throw new Error(`environment variable ${config.bearerTokenEnvVar} is not set`);
      headers.Authorization = `Bearer ${token}`;
    }
    const auth = this.limits.auth;
    if (auth && !config.bearerTokenEnvVar) {
      this.authProvider ??= auth.provider?.(this.name) ?? new StoreOAuthProvider(this.name, config.url, auth);
    }
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers }, ...(this.authProvider ? { authProvider: this.authProvider } : {}) });
  }

  private handleClose(): void {
    // During startup the pending request fails and start() reports it with more context.
    if (this.currentState === 'ready') this.fail('exited: connection closed');
  }

  /** Marks the server failed, reports it once and drops its tools. */
  private fail(reason: string): void {
    if (this.currentState === 'failed' || this.currentState === 'closed') return;
    const hadTools = this.currentState === 'ready' && this.tools.length > 0;
    const stderr = this.stderrTail.trim();
    this.failure = stderr ? `${reason}\nstderr: ${stderr.split('\n').slice(-5).join('\n')}` : reason;
    this.currentState = 'failed';
    this.tools = [];
    this.listed.clear();
    this.listener.warning({ kind: 'server-failed', server: this.name, message: `MCP server \`${this.name}\` ${this.failure}` });
    if (hadTools) this.listener.toolsChanged(this.name);
    const client = this.client;
    this.client = undefined;
    void this.session?.close().catch(() => undefined);
    this.session = undefined;
    client?.close().catch(() => undefined);
  }

  /** Every page of the raw `tools/list` (a loose schema: one bad tool must not hide the others). */
  private async listTools(signal: AbortSignal | undefined, timeout: number): Promise<unknown[]> {
    const client = this.client;
    if (!client) throw new Error('not connected');
    const raw: unknown[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      const result = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ListToolsPageSchema, { signal, timeout });
      raw.push(...result.tools);
      if (result.nextCursor === undefined) break;
      if (seen.has(result.nextCursor) || page + 1 >= MAX_LIST_PAGES) throw new Error(`tools/list pagination does not end (cursor ${JSON.stringify(result.nextCursor)})`);
      seen.add(result.nextCursor);
      cursor = result.nextCursor;
    }
    return raw;
  }

  /** Builds the executors of a raw list and makes them current. */
  private async applyList(rawTools: readonly unknown[]): Promise<void> {
    const listed = buildListedTools(rawTools, {
      name: this.name,
      namespace: this.namespace,
      resolved: this.resolved,
      instructions: this.client?.getInstructions(),
      checksHeaders: !isStdioConfig(this.resolved.config) && this.client?.getProtocolEra() === 'modern',
      runsTasks: this.session !== undefined,
      skip: (tool, reason) => this.skip(tool, reason),
      handleCall: (rawName, invocation, checkOutput) => this.handleCall(rawName, invocation, checkOutput),
    });
    this.listed = new Map(listed.map((tool) => [tool.definition.name, tool]));
    this.tools = listed.map((tool) => tool.executor);
  }

  private skip(tool: string, reason: string): void {
    const key = `${tool}\u0000${reason}`;
    if (this.reportedSkips.has(key)) return;
    this.reportedSkips.add(key);
    this.listener.warning({ kind: 'tool-skipped', server: this.name, tool, message: `MCP server \`${this.name}\`: skipped tool \`${tool}\`: ${reason}` });
  }

  private async handleCall(rawName: string, invocation: ToolInvocation, checkOutput: StructuredContentCheck | undefined): Promise<ToolOutput> {
    const started = performance.now();
    const payload = invocation.payload;
    if (payload.kind !== 'function') {
      throw new FatalToolError(`tool ${displayName(invocation.toolName)} invoked with incompatible payload`, { code: 'INCOMPATIBLE_PAYLOAD' });
    }
    const args: JsonObject = invocationArguments(invocation, rawName);
    let result: McpCallToolResult;
    let timedOut = false;
    try {
      result = await this.callTool(
        rawName,
        args,
        invocation.signal,
        (progress) => {
          this.listener.progress({ server: this.name, tool: rawName, callId: invocation.callId, ...progress });
          invocation.emit?.({ type: 'tool-notification', callId: invocation.callId, name: 'mcp-progress', data: { server: this.name, tool: rawName, ...progress } });
        },
        (task) => {
          this.listener.task({ server: this.name, tool: rawName, callId: invocation.callId, ...task });
          invocation.emit?.({ type: 'tool-notification', callId: invocation.callId, name: 'mcp-task-status', data: { server: this.name, tool: rawName, ...task } });
        },
      );
      result = checkStructuredContent(result, checkOutput);
    } catch (error) {
      if (invocation.signal.aborted) throw new SwitchyardError('ABORTED', `MCP call to \`${rawName}\` was cancelled`, { cause: error });
      timedOut = error instanceof McpTimeoutError;
      result = errorCallToolResult(`tool call error: ${errorMessage(error)}`);
    }
    return new McpToolOutput(result, {
      wallTimeMs: performance.now() - started,
      ...(timedOut ? { failureCode: 'TIMEOUT' as const } : {}),
      maxOutputTokens: this.limits.maxOutputTokens,
      ...(this.offersResources ? { resourceServer: this.name } : {}),
    });
  }

  /**
   * Calls a tool by its raw MCP name, as an MCP task when the server runs it as one. Resolves with
   * the normalized result (an error result included); rejects when the server is not running, the
   * call times out (`toolTimeoutMs` without progress, `maxCallTimeMs` in all; neither counts the
   * time an elicitation of the server waits for the user), the connection closes or `signal`
   * aborts (the server then receives `notifications/cancelled`, or `tasks/cancel`).
   * `onProgress` receives the call's `notifications/progress`, `onTaskStatus` a task's status changes
   * (each also restarts the timeout).
   */
  async callTool(
    rawName: string,
    args: JsonObject,
    signal: AbortSignal,
    onProgress?: (progress: { progress: number; total?: number; message?: string }) => void,
    onTaskStatus?: (status: McpTaskStatus) => void,
  ): Promise<McpCallToolResult> {
    const client = this.runningClient();
    signal.throwIfAborted();
    const config = this.resolved.config;
    const timeout = config.toolTimeoutsMs?.[rawName] ?? this.resolved.toolTimeoutMs;
    const listed = this.listed.get(rawName);
    this.callsInFlight++;
    try {
      const raw = await this.withAuthorization(() =>
        callToolOnServer(
          { client, session: this.session, pause: this.pause },
          {
            rawName,
            args,
            signal,
            idleMs: timeout,
            ...(config.maxCallTimeMs ? { totalMs: config.maxCallTimeMs } : {}),
            ...(listed ? { definition: listed.definition, declaration: listed.declaration } : {}),
            ...(onProgress ? { onProgress } : {}),
            ...(onTaskStatus ? { onTaskStatus } : {}),
          },
        ),
      );
      return normalizeCallToolResult(raw);
    } catch (error) {
      throw this.describeRequestError(error, signal, 'tools/call', timeout);
    } finally {
      this.callsInFlight--;
    }
  }

  /**
   * Runs a request; when the server asked for more (a 403 `insufficient_scope` step-up or a 401
   * after the tokens expired) and the host's `authorize` granted it, finishes that authorization
   * and makes the request again.
   */
  private async withAuthorization<T>(request: () => Promise<T>): Promise<T> {
    for (let round = 0; ; round++) {
      try {
        return await request();
      } catch (error) {
        if (!(await this.finishAuthorization(error, round))) throw error;
      }
    }
  }

  /** Whether the server offers resources (`resources` capability), once ready. */
  get offersResources(): boolean {
    return this.currentState === 'ready' && this.client?.getServerCapabilities()?.resources !== undefined;
  }

  /** `resources/read` of one URI; rejects like {@link callTool}. */
  async readResource(uri: string, signal: AbortSignal): Promise<JsonObject> {
    const client = this.runningClient();
    try {
      return (await client.request({ method: 'resources/read', params: { uri } }, LooseResultSchema, { signal, timeout: this.resolved.toolTimeoutMs })) as JsonObject;
    } catch (error) {
      throw this.describeRequestError(error, signal, 'resources/read', this.resolved.toolTimeoutMs);
    }
  }

  /** One page of `resources/list`; rejects like {@link callTool}. */
  async listResources(cursor: string | undefined, signal: AbortSignal): Promise<JsonObject> {
    const client = this.runningClient();
    try {
      const params = cursor === undefined ? {} : { cursor };
      return (await client.request({ method: 'resources/list', params }, LooseResultSchema, { signal, timeout: this.resolved.toolTimeoutMs })) as JsonObject;
    } catch (error) {
      throw this.describeRequestError(error, signal, 'resources/list', this.resolved.toolTimeoutMs);
    }
  }

  private runningClient(): Client {
    const client = this.client;
    if (this.currentState !== 'ready' || !client) {
      throw new Error(`MCP server \`${this.name}\` is not running${this.failure ? ` (${this.failure.split('\n')[0]})` : ''}`);
    }
    return client;
  }

  private describeRequestError(error: unknown, signal: AbortSignal, method: string, timeout: number): unknown {
    return signal.aborted ? error : describeRequestError(error, this.target(), method, timeout);
  }

  private target(): RequestTarget {
    return { name: this.name, config: this.resolved.config, hasAuth: this.authProvider !== undefined };
  }

  private scheduleRefresh(): void {
    if (this.currentState === 'starting') this.listChangedWhileStarting = true;
    if (this.currentState !== 'ready') return;
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        try {
          const raw = await this.listTools(undefined, this.resolved.startupTimeoutMs);
          if (this.currentState !== 'ready') return;
          await this.applyList(raw);
          this.listener.toolsChanged(this.name);
        } catch (error) {
          if (this.currentState !== 'ready') return;
          this.listener.warning({ kind: 'list-failed', server: this.name, message: `MCP server \`${this.name}\`: tools/list after list_changed failed: ${errorMessage(error)}` });
        }
      } while (this.refreshAgain);
    })().finally(() => {
      this.refreshing = undefined;
    });
  }

  /** Resolves once every re-list triggered by `list_changed` so far has finished. */
  async settle(): Promise<void> {
    while (this.refreshing) await this.refreshing;
  }

  /**
   * Closes the client: a stdio server's process is ended (at once while it is still starting); an HTTP session is ended with the
   * `DELETE` the streamable HTTP transport defines (a server that does not support it answers 405,
   * which is fine). Idempotent; never throws.
   */
  async close(): Promise<void> {
    const client = this.client;
    const transport = this.transport;
    const session = this.session;
    const starting = this.currentState === 'starting';
    this.client = undefined;
    this.transport = undefined;
    this.session = undefined;
    this.currentState = 'closed';
    // still starting: no session to end cleanly, and it may never read stdin
    if (starting && transport instanceof BoundedStdioClientTransport) await transport.terminate();
    this.tools = [];
    this.listed.clear();
    await session?.close().catch(() => undefined);
    if (client && transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
      await transport.terminateSession().catch(() => undefined);
    }
    await client?.close().catch(() => undefined);
  }
}
