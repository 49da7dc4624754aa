import { SwitchyardError, type CellObservation } from '@switchyard/protocol';
import {
  DEFAULT_MAX_FRAME_BYTES,
  RUNTIME_PROTOCOL_VERSION,
  createConnection,
  fromWireError,
  parseRuntimeMessage,
  type Connection,
  type HostMessage,
  type RuntimeMessage,
  type RuntimeTransport,
} from './protocol';

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

/**
 * A request whose reply did not come within the time the caller gave it (the reply, or the
 * request, was lost on the link). The request was cancelled and its reply, if it still comes, is
 * dropped.
 */
export class ReplyTimeoutError extends Error {
  constructor(
    readonly type: string,
    readonly timeoutMs: number,
  ) {
    super(`exec runtime did not answer ${type} within ${timeoutMs} ms`);
    this.name = 'ReplyTimeoutError';
  }
}

/** Requests given up on here (cancelled keyed ones, timed-out ones) whose late replies are still recognised (and dropped). */
const MAX_ABANDONED = 4_096;

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
  /**
   * Sends a request; resolves with the reply's value, rejects with a `SwitchyardError` or a
   * {@link RuntimeLostError}. `timeoutMs`: without a reply by then, the request is cancelled, its
   * late reply dropped, and the promise rejects with a {@link ReplyTimeoutError}.
   */
  request(message: HostRequest, signal?: AbortSignal, timeoutMs?: number): Promise<CellObservation | undefined>;
  /**
   * Sends a message that has no reply (`stored`, `call-result`). Throws when it is bigger than the
   * runtime accepts, or a `BacklogError` (nothing sent) when `maxBacklogBytes` is given and the
   * message would put more than that on its way to the runtime.
   */
  post(message: HostMessage, maxBacklogBytes?: number): void;
  /** Bytes sent that the runtime has not taken yet. */
  readonly backlogBytes: number;
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
  const link = new RuntimeLink(options);
  return new Promise<RuntimeClient>((resolve, reject) => {
    const timeoutMs = options.handshakeTimeoutMs ?? 30_000;
    const timer = setTimeout(() => link.client.lose(`the runtime did not answer hello within ${timeoutMs} ms`), timeoutMs);
    timer.unref?.();
    link.handshake = {
      resolve: (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      reject: (error) => {
        clearTimeout(timer);
        reject(error);
      },
    };
    link.sayHello(options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES);
  });
}

/** A request sent and not yet answered. */
interface PendingRequest {
  resolve(value: CellObservation | undefined): void;
  reject(error: unknown): void;
}

/** The host's end of one connection: the handshake, the pending requests, and how the link ended. */
class RuntimeLink {
  readonly client: RuntimeClient = this.createClient();
  /** Settles the promise `connectRuntime` returned (set before the first message can arrive). */
  handshake!: { resolve(client: RuntimeClient): void; reject(error: Error): void };
  private readonly pending = new Map<number, PendingRequest>();
  /** Requests given up on here (cancelled keyed ones, timed-out ones): a reply that still arrives for one is dropped. */
  private readonly abandoned = new Set<number>();
  private sequence = 0;
  private hello: RuntimeHello | undefined;
  private ended = false;
  private lostCause: string | undefined;
  /** Set when this side ends the connection itself: that cause is final. */
  private ownCause: string | undefined;
  private readonly connection: Connection<HostMessage>;

  constructor(private readonly options: ConnectRuntimeOptions) {
    this.connection = createConnection<RuntimeMessage, HostMessage>({
      transport: options.transport,
      parse: parseRuntimeMessage,
      onMessage: (message) => this.receive(message),
      onClose: (reason) => this.closed(reason),
    });
  }

  sayHello(maxFrameBytes: number): void {
    this.connection.post({ t: 'hello', version: RUNTIME_PROTOCOL_VERSION, maxFrameBytes });
  }

  private violate(cause: string): void {
    this.ownCause ??= cause;
    this.connection.fail(cause);
  }

  private end(cause: string, lost: boolean): void {
    if (this.ended) return;
    this.ended = true;
    this.lostCause = cause;
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const entry of waiting) entry.reject(new RuntimeLostError(cause));
    if (!this.hello) this.handshake.reject(new Error(`exec runtime failed to start: ${cause}`));
    else if (lost) this.options.onLost?.(cause);
  }

  private receive(message: RuntimeMessage): void {
    if (!this.hello) return this.greet(message);
    switch (message.t) {
      case 'hello':
        return this.violate('protocol violation: a second hello');
      case 'fatal':
        return this.violate(`the runtime gave up: ${message.message}`);
      case 'reply':
        return this.settle(message);
      default:
        this.options.onEvent(message);
    }
  }

  private greet(message: RuntimeMessage): void {
    if (message.t === 'fatal') return this.violate(message.message);
    if (message.t !== 'hello') return this.violate('protocol violation: the runtime did not start with hello');
    if (message.version !== RUNTIME_PROTOCOL_VERSION) {
      return this.violate(`the runtime speaks runtime protocol version ${message.version}; this host speaks version ${RUNTIME_PROTOCOL_VERSION}`);
    }
    this.hello = message;
    this.connection.peerMaxFrameBytes = message.maxFrameBytes;
    this.handshake.resolve(this.client);
  }

  private settle(message: Extract<RuntimeMessage, { t: 'reply' }>): void {
    const entry = this.pending.get(message.id);
    if (!entry && this.abandoned.delete(message.id)) return;
    if (!entry) return this.violate(`protocol violation: a reply to request ${message.id}, which is not pending`);
    this.pending.delete(message.id);
    if (message.ok) return entry.resolve(message.value);
    entry.reject(fromWireError(message.error));
  }

  /** The transport closed: the cause is this side's own, or what `decideCause` makes of the transport's reason. */
  private closed(reason: string | undefined): void {
    if (this.ended) return;
    if (this.ownCause !== undefined) return this.end(this.ownCause, true);
    const decideCause = this.options.decideCause;
    void Promise.resolve(decideCause ? decideCause(reason) : reason ?? 'the connection to the runtime closed').then(
      (cause) => this.end(cause, true),
      () => this.end(reason ?? 'the connection to the runtime closed', true),
    );
  }

  private request(message: HostRequest, signal?: AbortSignal, timeoutMs?: number): Promise<CellObservation | undefined> {
    if (this.ended) return Promise.reject(new RuntimeLostError(this.lostCause ?? 'the connection to the runtime closed'));
    const id = ++this.sequence;
    return new Promise((resolve, reject) => {
      try {
        this.connection.post({ ...message, id } as HostMessage);
      } catch (error) {
        reject(new SwitchyardError('LIMIT_EXCEEDED', `exec request could not be sent: ${(error as Error).message}`));
        return;
      }
      this.pending.set(id, { resolve, reject });
      if (timeoutMs !== undefined) this.deadline(id, message.t, timeoutMs);
      if (signal) {
        const onAbort = () => {
          if (!this.pending.has(id)) return;
          this.connection.post({ t: 'cancel', id });
          // A keyed request is answered here at once: its reply may be lost on the way, and the
          // caller gets it by retrying with the same key (the runtime answers that retry again).
          if ('key' in message && typeof message.key === 'string') this.abandon(id);
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
    });
  }

  /** Without a reply within `timeoutMs`, request `id` is cancelled and answered with a {@link ReplyTimeoutError}. */
  private deadline(id: number, type: string, timeoutMs: number): void {
    const entry = this.pending.get(id)!;
    const timer = setTimeout(() => {
      if (this.pending.get(id) !== timed) return;
      this.connection.post({ t: 'cancel', id });
      this.abandon(id, new ReplyTimeoutError(type, timeoutMs));
    }, timeoutMs);
    timer.unref?.();
    const settle = <T>(settled: (value: T) => void) => (value: T) => {
      clearTimeout(timer);
      settled(value);
    };
    const timed: PendingRequest = { resolve: settle(entry.resolve), reject: settle(entry.reject) };
    this.pending.set(id, timed);
  }

  /** Answers request `id` with `error` (ABORTED by default) now; its reply, if it still comes, is dropped. */
  private abandon(id: number, error: unknown = new SwitchyardError('ABORTED', 'exec request was cancelled')): void {
    const entry = this.pending.get(id)!;
    this.pending.delete(id);
    this.abandoned.add(id);
    // Bounded: replies lost for good leave their ids here; the oldest go first.
    for (const oldest of this.abandoned) {
      if (this.abandoned.size <= MAX_ABANDONED) break;
      this.abandoned.delete(oldest);
    }
    entry.reject(error);
  }

  private createClient(): RuntimeClient {
    const link = this;
    return {
      get hello() {
        return link.hello!;
      },
      request: (message, signal, timeoutMs) => link.request(message, signal, timeoutMs),
      post(message, maxBacklogBytes) {
        link.connection.post(message, maxBacklogBytes);
      },
      get backlogBytes() {
        return link.connection.backlogBytes;
      },
      sizeOf: (message) => link.connection.sizeOf(message),
      get maxFrameBytes() {
        return link.connection.peerMaxFrameBytes;
      },
      get pending() {
        return link.pending.size;
      },
      get ended() {
        return link.ended;
      },
      close(cause = 'the exec runtime was shut down') {
        if (link.ended) return;
        link.end(cause, false);
        link.connection.close();
      },
      lose(cause) {
        if (link.ended) return;
        link.violate(cause);
      },
    };
  }
}
