import { SwitchyardError, type CellObservation, type SwitchyardErrorCode } from '@switchyard/protocol';
import {
  DEFAULT_MAX_FRAME_BYTES,
  RUNTIME_PROTOCOL_VERSION,
  createConnection,
  parseRuntimeMessage,
  type Connection,
  type HostMessage,
  type RuntimeMessage,
  type RuntimeTransport,
} from './runtime-protocol';

/** A host message that expects a reply, without its `id` (the client numbers requests). */
export type HostRequest = HostMessage extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never;

/** What the runtime sends on its own: nested calls, notifications, commits, closings, events. */
export type RuntimeEventMessage = Exclude<RuntimeMessage, { t: 'hello' } | { t: 'reply' } | { t: 'fatal' }>;

/** The runtime's `hello`. */
export type RuntimeHello = Extract<RuntimeMessage, { t: 'hello' }>;

/** A request that could not be answered because the runtime ended; `cause` is what ended it. */
export class RuntimeLostError extends Error {
  /** What ended the runtime (a signal, an exit code, a limit, a protocol violation). */
  readonly reason: string;
  constructor(reason: string) {
    super(`exec runtime ended unexpectedly: ${reason}`);
    this.reason = reason;
    this.name = 'RuntimeLostError';
  }
}

const ERROR_CODES = new Set<string>([
  'RESPOND_TO_MODEL', 'TOOL_NOT_FOUND', 'INVALID_INPUT', 'HOOK_BLOCKED', 'ABORTED', 'FATAL', 'INCOMPATIBLE_PAYLOAD',
  'CELL_NOT_FOUND', 'LIMIT_EXCEEDED', 'SANDBOX_UNAVAILABLE', 'APPROVAL_DENIED', 'SHUTTING_DOWN', 'CONFIG', 'MODEL_ERROR', 'INTERNAL',
]);

/** Options of {@link connectRuntime}. */
export interface ConnectRuntimeOptions {
  transport: RuntimeTransport;
  /** The biggest frame this host accepts (bytes). Default 64 MiB. */
  maxFrameBytes?: number;
  /** How long the runtime may take to answer `hello` (ms). Default 30,000. */
  handshakeTimeoutMs?: number;
  /**
   * Decides the cause of a lost connection from the transport's reason (a worker pool waits for
   * the process's exit status here). Default: the reason, or "the connection to the runtime closed".
   */
  decideCause?(reason: string | undefined): Promise<string> | string;
  /** Messages the runtime sends on its own, in order. */
  onEvent(message: RuntimeEventMessage): void;
  /** Called once with the cause when the connection is lost (not after `close()`). */
  onLost?(cause: string): void;
}

/** The host side of one connection to a runtime. */
export interface RuntimeClient {
  readonly hello: RuntimeHello;
  /** Sends a request; resolves with the reply's value, rejects with a `SwitchyardError` or a {@link RuntimeLostError}. */
  request(message: HostRequest, signal?: AbortSignal): Promise<CellObservation | undefined>;
  /** Sends a message that has no reply (`stored`, `call-result`). Throws when it is bigger than the runtime accepts. */
  post(message: HostMessage): void;
  /** The encoded size of a message (bytes of its frame). */
  sizeOf(message: HostMessage): number;
  /** The biggest frame the runtime accepts. */
  readonly maxFrameBytes: number;
  /** Requests sent and not yet answered. */
  readonly pending: number;
  /** True once the connection ended (lost or closed). */
  readonly ended: boolean;
  /** Ends the connection on purpose; pending requests reject with `cause`. */
  close(cause?: string): void;
  /** Ends the connection because the runtime broke a rule (or a limit): pending requests reject with `cause`. */
  lose(cause: string): void;
}

/**
 * Opens a connection over `transport`: sends `hello`, waits for the runtime's `hello` (same
 * version) and returns the client. Rejects with an Error naming the problem (a version mismatch,
 * a `fatal` from the runtime, a closed transport, the handshake timeout).
 */
export function connectRuntime(options: ConnectRuntimeOptions): Promise<RuntimeClient> {
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const pending = new Map<number, { resolve(value: CellObservation | undefined): void; reject(error: unknown): void }>();
  let sequence = 0;
  let hello: RuntimeHello | undefined;
  let ended = false;
  let lostCause: string | undefined;
  let settleHandshake!: { resolve(client: RuntimeClient): void; reject(error: Error): void };
  /** Set when this side ends the connection itself: that cause is final. */
  let ownCause: string | undefined;
  const violate = (cause: string) => {
    ownCause ??= cause;
    connection.fail(cause);
  };

  const end = (cause: string, lost: boolean) => {
    if (ended) return;
    ended = true;
    lostCause = cause;
    const waiting = [...pending.values()];
    pending.clear();
    for (const entry of waiting) entry.reject(new RuntimeLostError(cause));
    if (!hello) settleHandshake.reject(new Error(`exec runtime failed to start: ${cause}`));
    else if (lost) options.onLost?.(cause);
  };

  const connection: Connection<HostMessage> = createConnection<RuntimeMessage, HostMessage>({
    transport: options.transport,
    parse: parseRuntimeMessage,
    onMessage(message) {
      if (!hello) {
        if (message.t === 'fatal') return violate(message.message);
        if (message.t !== 'hello') return violate('protocol violation: the runtime did not start with hello');
        if (message.version !== RUNTIME_PROTOCOL_VERSION) {
          return violate(`the runtime speaks runtime protocol version ${message.version}; this host speaks version ${RUNTIME_PROTOCOL_VERSION}`);
        }
        hello = message;
        connection.peerMaxFrameBytes = message.maxFrameBytes;
        settleHandshake.resolve(client);
        return;
      }
      switch (message.t) {
        case 'hello':
          return violate('protocol violation: a second hello');
        case 'fatal':
          return violate(`the runtime gave up: ${message.message}`);
        case 'reply': {
          const entry = pending.get(message.id);
          if (!entry) return violate(`protocol violation: a reply to request ${message.id}, which is not pending`);
          pending.delete(message.id);
          if (message.ok) entry.resolve(message.value);
          else {
            const code = (ERROR_CODES.has(message.error.code) ? message.error.code : 'INTERNAL') as SwitchyardErrorCode;
            const error = new SwitchyardError(code, message.error.message);
            entry.reject(message.error.cellId === undefined ? error : Object.assign(error, { cellId: message.error.cellId }));
          }
          return;
        }
        default:
          options.onEvent(message);
      }
    },
    onClose(reason) {
      if (ended) return;
      if (ownCause !== undefined) return end(ownCause, true);
      void Promise.resolve(options.decideCause ? options.decideCause(reason) : reason ?? 'the connection to the runtime closed').then(
        (cause) => end(cause, true),
        () => end(reason ?? 'the connection to the runtime closed', true),
      );
    },
  });

  const client: RuntimeClient = {
    get hello() {
      return hello!;
    },
    request(message, signal) {
      if (ended) return Promise.reject(new RuntimeLostError(lostCause ?? 'the connection to the runtime closed'));
      const id = ++sequence;
      return new Promise((resolve, reject) => {
        try {
          connection.post({ ...message, id } as HostMessage);
        } catch (error) {
          reject(new SwitchyardError('LIMIT_EXCEEDED', `exec request could not be sent: ${(error as Error).message}`));
          return;
        }
        pending.set(id, { resolve, reject });
        if (signal) {
          const onAbort = () => {
            if (pending.has(id)) connection.post({ t: 'cancel', id });
          };
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        }
      });
    },
    post(message) {
      connection.post(message);
    },
    sizeOf: (message) => connection.sizeOf(message),
    get maxFrameBytes() {
      return connection.peerMaxFrameBytes;
    },
    get pending() {
      return pending.size;
    },
    get ended() {
      return ended;
    },
    close(cause = 'the exec runtime was shut down') {
      if (ended) return;
      end(cause, false);
      connection.close();
    },
    lose(cause) {
      if (ended) return;
      violate(cause);
    },
  };

  return new Promise<RuntimeClient>((resolve, reject) => {
    settleHandshake = { resolve, reject };
    const timeoutMs = options.handshakeTimeoutMs ?? 30_000;
    const timer = setTimeout(() => client.lose(`the runtime did not answer hello within ${timeoutMs} ms`), timeoutMs);
    timer.unref?.();
    const clear = () => clearTimeout(timer);
    const original = settleHandshake;
    settleHandshake = {
      resolve: (value) => {
        clear();
        original.resolve(value);
      },
      reject: (error) => {
        clear();
        original.reject(error);
      },
    };
    connection.post({ t: 'hello', version: RUNTIME_PROTOCOL_VERSION, maxFrameBytes });
  });
}
