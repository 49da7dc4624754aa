import { errorMessage, isSwitchyardError, type CellHost, type CellToolRequest, type JsonValue } from '@switchyard/protocol';
import { createCellIdGenerator } from '@switchyard/kit';
import { createEngineSession } from './engine-session';
import type { Session } from './code-mode-session';
import {
  DEFAULT_MAX_FRAME_BYTES,
  ProtocolError,
  RUNTIME_CAPABILITIES,
  RUNTIME_PROTOCOL_VERSION,
  createConnection,
  parseHostMessage,
  splitStoredPairs,
  type Connection,
  type HostMessage,
  type RuntimeMessage,
  type RuntimeTransport,
  type StoredPair,
  type WireError,
} from './runtime-protocol';
import { VERSION } from './version';

/** Options of {@link serveRuntime}. */
export interface ServeRuntimeOptions {
  /** The connection to one host. */
  transport: RuntimeTransport;
  /** The biggest frame accepted from the host (bytes; the transport should enforce the same). Default 64 MiB. */
  maxFrameBytes?: number;
  /** Called once when the host is gone (the transport closed) and every cell has been stopped. */
  onClosed?(cause: string | undefined): void;
}

interface PendingCall {
  resolve(value: JsonValue): void;
  reject(error: string): void;
}

/**
 * The runtime side of the runtime protocol: speaks to one host over `transport` and runs that
 * host's cells in isolates of this process. A worker process runs it over its stdio; a remote
 * runtime host would run it over its own transport. Never throws: a malformed message ends the
 * connection (`fatal`), and every request is answered exactly once.
 */
export function serveRuntime(options: ServeRuntimeOptions): { closed: Promise<string | undefined> } {
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const sessions = new Map<string, Session>();
  /** Snapshots staged by `stored` messages, by session and cell, until the cell's `create-cell`. */
  const staged = new Map<string, StoredPair[]>();
  /** Cancel handles of pending `create-cell` / `observe` requests. */
  const cancels = new Map<number, AbortController>();
  const calls = new Map<number, PendingCall>();
  let callSequence = 0;
  let greeted = false;
  const nextCellId = createCellIdGenerator();
  let resolveClosed!: (cause: string | undefined) => void;
  const closed = new Promise<string | undefined>((resolve) => (resolveClosed = resolve));

  const connection: Connection<RuntimeMessage> = createConnection<HostMessage, RuntimeMessage>({
    transport: options.transport,
    parse: parseHostMessage,
    onMessage: (message) => {
      try {
        handle(message);
      } catch (error) {
        // A handler bug must not take the worker down silently: tell the host, then end.
        fatal(`runtime error: ${errorMessage(error)}`);
      }
    },
    onClose: (cause) => {
      for (const call of calls.values()) call.reject('exec runtime lost its host');
      calls.clear();
      const sessionsLeft = [...sessions.values()];
      sessions.clear();
      void Promise.all(sessionsLeft.map((session) => session.shutdown().catch(() => undefined))).then(() => {
        resolveClosed(cause);
        options.onClosed?.(cause);
      });
    },
  });

  function fatal(message: string): void {
    try {
      connection.post({ t: 'fatal', message });
    } catch {
      // nothing more to say
    }
    connection.close();
  }

  function reply(id: number, outcome: { value?: unknown } | { error: unknown }): void {
    if ('error' in outcome) {
      const error = outcome.error;
      const wire: WireError = isSwitchyardError(error) ? { code: error.code, message: error.message } : { code: 'INTERNAL', message: errorMessage(error) };
      const cellId = (error as { cellId?: unknown } | undefined)?.cellId;
      if (typeof cellId === 'string') wire.cellId = cellId;
      connection.post({ t: 'reply', id, ok: false, error: wire });
      return;
    }
    try {
      connection.post({ t: 'reply', id, ok: true, value: outcome.value as never });
    } catch (error) {
      // An observation too large for one frame (the output limits normally prevent it).
      connection.post({ t: 'reply', id, ok: false, error: { code: 'LIMIT_EXCEEDED', message: `exec observation could not be sent: ${errorMessage(error)}` } });
    }
  }

  /** Answers `id` with the outcome of `task`, exactly once. */
  function answer(id: number, task: () => Promise<unknown>): void {
    let promise: Promise<unknown>;
    try {
      promise = task();
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (value) => {
        cancels.delete(id);
        reply(id, { value });
      },
      (error) => {
        cancels.delete(id);
        reply(id, { error });
      },
    );
  }

  function sessionHost(session: string): CellHost {
    return {
      invokeTool(request: CellToolRequest): Promise<JsonValue> {
        return new Promise<JsonValue>((resolve, reject) => {
          const call = ++callSequence;
          try {
            connection.post({
              t: 'call',
              call,
              session,
              cellId: request.cellId,
              runtimeToolCallId: request.runtimeToolCallId,
              tool: request.tool,
              input: request.input as JsonValue,
            });
          } catch (error) {
            reject(`tool \`${request.tool}\` was not called: ${error instanceof ProtocolError ? error.message : errorMessage(error)}`);
            return;
          }
          calls.set(call, { resolve, reject });
          request.signal.addEventListener('abort', () => {
            if (calls.has(call)) connection.post({ t: 'call-abort', call, session });
          }, { once: true });
        });
      },
      notify({ cellId, text }) {
        try {
          connection.post({ t: 'notify', session, cellId, text });
        } catch {
          // over the frame limit: the value size limit keeps texts far below it
        }
      },
      cellClosed(cellId) {
        connection.post({ t: 'cell-closed', session, cellId });
      },
      runtimeEvent(event) {
        connection.post({ t: 'cell-event', session, event });
      },
    };
  }

  function commit(session: string, cellId: string, writes: StoredPair[]): void {
    const parts = splitStoredPairs(writes, Math.floor(connection.peerMaxFrameBytes / 2));
    const messages: RuntimeMessage[] = parts.map((part, index) => ({ t: 'commit', session, cellId, writes: part, more: index < parts.length - 1 }));
    // All or nothing: a value too large for one frame (rare: the value size limit keeps values far
    // below it) would leave a partial commit, so the cell then commits no write at all.
    if (messages.some((message) => connection.sizeOf(message) > connection.peerMaxFrameBytes)) return;
    for (const message of messages) connection.post(message);
  }

  function handle(message: HostMessage): void {
    if (!greeted) {
      if (message.t !== 'hello') return fatal('protocol violation: the first message must be hello');
      if (message.version !== RUNTIME_PROTOCOL_VERSION) {
        return fatal(`the host speaks runtime protocol version ${message.version}; this runtime speaks version ${RUNTIME_PROTOCOL_VERSION}`);
      }
      greeted = true;
      connection.peerMaxFrameBytes = message.maxFrameBytes;
      connection.post({
        t: 'hello',
        version: RUNTIME_PROTOCOL_VERSION,
        maxFrameBytes,
        capabilities: RUNTIME_CAPABILITIES,
        pid: process.pid,
        engine: `@switchyard/code-mode-runtime ${VERSION}, node ${process.versions.node}`,
      });
      return;
    }
    switch (message.t) {
      case 'hello':
        return fatal('protocol violation: a second hello');
      case 'ping':
        return reply(message.id, { value: undefined });
      case 'open-session': {
        if (sessions.has(message.session)) return reply(message.id, { error: new ProtocolError(`session ${message.session} is already open`) });
        const key = message.session;
        sessions.set(
          key,
          createEngineSession(message.options, sessionHost(key), {
            store: {
              snapshot: (cellId) => {
                const values = staged.get(`${key}\u0000${cellId}`) ?? [];
                staged.delete(`${key}\u0000${cellId}`);
                return values;
              },
              commit: (cellId, writes) => commit(key, cellId, writes),
            },
            nextCellId,
            closed: () => undefined,
          }),
        );
        return reply(message.id, { value: undefined });
      }
      case 'close-session': {
        const session = sessions.get(message.session);
        sessions.delete(message.session);
        return answer(message.id, async () => session?.shutdown());
      }
      case 'stored': {
        const key = `${message.session}\u0000${message.cellId}`;
        const list = staged.get(key) ?? [];
        for (const pair of message.values) list.push(pair);
        staged.set(key, list);
        return;
      }
      case 'create-cell': {
        const session = sessions.get(message.session);
        const controller = new AbortController();
        cancels.set(message.id, controller);
        const key = `${message.session}\u0000${message.cellId}`;
        const list = staged.get(key) ?? [];
        for (const pair of message.stored) list.push(pair);
        staged.set(key, list);
        return answer(message.id, async () => {
          if (!session) {
            staged.delete(key);
            throw new ProtocolError(`session ${message.session} is not open`);
          }
          try {
            const created = await session.createCell({
              cellId: message.cellId,
              source: message.source,
              tools: message.tools,
              yieldTimeMs: message.yieldTimeMs,
              typescript: message.typescript,
              signal: controller.signal,
            });
            return created.observation;
          } finally {
            staged.delete(key);
          }
        });
      }
      case 'observe': {
        const session = sessions.get(message.session);
        const controller = new AbortController();
        cancels.set(message.id, controller);
        return answer(message.id, async () => {
          if (!session) throw new ProtocolError(`session ${message.session} is not open`);
          return session.observe(message.cellId, { yieldTimeMs: message.yieldTimeMs, signal: controller.signal });
        });
      }
      case 'terminate': {
        const session = sessions.get(message.session);
        return answer(message.id, async () => {
          if (!session) throw new ProtocolError(`session ${message.session} is not open`);
          return session.terminate(message.cellId);
        });
      }
      case 'cancel':
        cancels.get(message.id)?.abort();
        return;
      case 'call-result': {
        const call = calls.get(message.call);
        if (!call) return fatal(`protocol violation: a result for call ${message.call}, which is not pending`);
        calls.delete(message.call);
        if (message.ok) call.resolve(message.value as JsonValue);
        else call.reject(message.error);
        return;
      }
    }
  }

  return { closed };
}
