import type { Client, ElicitRequestParams, JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, type JsonRpcResponse, type TaskEnabledSession, type ToolDeclaration } from '@modelcontextprotocol/ext-tasks/client';
import { isJsonObject } from '@switchyard/protocol';
import type { ElicitationAnswerer } from './elicitation';
import { VERSION } from './version';

/**
 * A raw request path beside the SDK client on the same transport. The SDK client refuses the
 * 2026-07-28 Tasks extension's wire shapes (a `tools/call` answered with `resultType: "task"`),
 * so `@modelcontextprotocol/ext-tasks` sends those requests itself through a host-owned dispatch:
 * this one. Its requests go out through the client's transport (the same stdio pipe, or the same
 * HTTP endpoint with the transport's headers and credentials), and their answers are taken off the
 * transport before the SDK client sees them.
 */
export class RawChannel {
  private readonly pending = new Map<string, (message: JSONRPCMessage) => void>();
  private transport: Transport | undefined;
  private sequence = 0;

  /** `transport` as the SDK client should get it: answers to raw requests never reach the client. */
  wrap(transport: Transport): Transport {
    this.transport = transport;
    const pending = this.pending;
    return new Proxy(transport, {
      set(target, property, value) {
        if (property !== 'onmessage') return Reflect.set(target, property, value);
        const listener = value as Transport['onmessage'];
        target.onmessage = (message, extra) => {
          const id = (message as { id?: unknown }).id;
          const answer = typeof id === 'string' && !('method' in message) ? pending.get(id) : undefined;
          if (answer) return answer(message);
          listener?.(message, extra);
        };
        return true;
      },
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** Sends one request and resolves with its answer; a `signal` abort cancels it (`notifications/cancelled`). */
  async dispatch(request: unknown, signal?: AbortSignal): Promise<JsonRpcResponse> {
    const transport = this.transport;
    if (!transport) throw new Error('not connected');
    if (!isJsonObject(request) || typeof request.method !== 'string') throw new Error('a raw MCP request needs a method');
    signal?.throwIfAborted();
    const id = `switchyard-raw-${++this.sequence}`;
    const answered = new Promise<JSONRPCMessage>((resolve, reject) => {
      this.pending.set(id, resolve);
      signal?.addEventListener(
        'abort',
        () => {
          if (!this.pending.delete(id)) return;
          void transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(signal.reason ?? 'cancelled') } } as JSONRPCMessage).catch(() => undefined);
          reject(signal.reason);
        },
        { once: true },
      );
    });
    try {
      await transport.send({ ...request, jsonrpc: '2.0', id } as JSONRPCMessage);
      const answer = (await answered) as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
      return (answer.error ? { kind: 'error', error: answer.error } : { kind: 'result', result: answer.result ?? {} }) as JsonRpcResponse;
    } finally {
      this.pending.delete(id);
    }
  }
}

/** What a server's task session needs. */
export interface TaskSessionOptions {
  /** The configured server name (scopes the session's task references). */
  readonly server: string;
  /** The declaration of a tool by raw name, from this client's own `tools/list`. */
  readonly declaration: (name: string) => ToolDeclaration | undefined;
  /** Answers a task's elicitation input requests; without one they are declined. */
  readonly answerer?: ElicitationAnswerer;
  /** Receives the session's background errors. */
  readonly onError: (error: Error) => void;
}

/**
 * The MCP Tasks session of a connected client (`@modelcontextprotocol/ext-tasks`), or `undefined`
 * when the server runs no tasks: the 2026-07-28 extension (`capabilities.extensions`) through the
 * raw channel, the 2025-11-25 revision (`capabilities.tasks.requests.tools.call`) through the SDK.
 */
export function createTaskSession(client: Client, channel: RawChannel, capabilities: Record<string, unknown>, options: TaskSessionOptions): TaskEnabledSession | undefined {
  const modern = client.getProtocolEra() === 'modern';
  const extensions = client.getServerCapabilities()?.extensions as Record<string, unknown> | undefined;
  const tasks = client.getServerCapabilities()?.tasks as { requests?: { tools?: { call?: unknown } } } | undefined;
  const supported = modern ? isJsonObject(extensions?.['io.modelcontextprotocol/tasks']) : tasks?.requests?.tools?.call !== undefined;
  if (!supported) return undefined;
  const answerer = options.answerer;
  const common = {
    endpointId: `switchyard-mcp:${options.server}`,
    tools: { currentTool: options.declaration },
    onError: options.onError,
    onInputRequest: (async (request: { kind: 'elicitation' | 'sampling' | 'roots'; params?: unknown }, context: { signal?: AbortSignal }) => {
      if (request.kind !== 'elicitation' || !answerer) return defaultAnswer(request.kind);
      return answerer(request.params as ElicitRequestParams, context.signal ?? new AbortController().signal);
    }) as never,
  };
  if (!modern) return createTaskSessionFromClient(client, common);
  return createTaskSessionFromClient(client, {
    ...common,
    rawDispatch: (request, dispatchOptions) => channel.dispatch(request, dispatchOptions?.signal),
    v2RequestFraming: { protocolVersion: client.getNegotiatedProtocolVersion() ?? '2026-07-28', clientInfo: { name: 'switchyard', version: VERSION }, clientCapabilities: capabilities as never },
  });
}

/** What a task's input request this client does not serve gets: a declined elicitation, an empty roots list, a refused sampling. */
function defaultAnswer(kind: 'elicitation' | 'sampling' | 'roots'): never {
  if (kind === 'elicitation') return { action: 'decline' } as never;
  if (kind === 'roots') return { roots: [] } as never;
  throw new Error('this client does not sample for servers');
}
