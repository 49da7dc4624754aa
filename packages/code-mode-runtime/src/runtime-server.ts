import { SwitchyardError, errorMessage, type CellHost, type CellToolRequest, type CodeModeSession, type JsonValue } from '@switchyard/protocol';
import { createCellIdGenerator } from '@switchyard/kit/internal';
import { createEngineSession } from './engine-session';
import type { ResumeCellOptions, StoredValueStore } from './code-mode-session';
import type { JournalCall, JournalCallResult } from '@switchyard/protocol';
import {
  DEFAULT_MAX_FRAME_BYTES,
  ProtocolError,
  DURABLE_CELLS_CAPABILITY,
  RUNTIME_CAPABILITIES,
  RUNTIME_PROTOCOL_VERSION,
  createConnection,
  parseHostMessage,
  splitStoredPairs,
  toWireError,
  type Connection,
  type HostMessage,
  type RuntimeMessage,
  type RuntimeTransport,
  type StoredPair,
  type EngineSessionOptions,
} from './protocol';
import { VERSION } from './version';

/** Options of {@link serveRuntime}. */
export interface ServeRuntimeOptions {
  /** The connection to one host. */
  transport: RuntimeTransport;
  /** The biggest frame accepted from the host (bytes; the transport should enforce the same). Default 64 MiB. */
  maxFrameBytes?: number;
  /** Called once when the host is gone (the transport closed) and every cell has been stopped. */
  onClosed?(cause: string | undefined): void;
  /**
   * Called with every parsed `open-session` before the session opens: returns the options it
   * runs with (a runtime host that serves untrusted hosts caps what they ask for), or a string:
   * the session is refused with that error. Default: the options as asked.
   */
  admitSession?(session: string, options: EngineSessionOptions): EngineSessionOptions | string;
  /** Called when a session `admitSession` let in closes (`close-session`; a connection that ends closes none). */
  sessionClosed?(session: string): void;
  /**
   * Opens the engine of an admitted session somewhere else than in isolates of this process (a
   * runtime host runs each tenant's cells in worker processes): `store` is the session's stored
   * values as the host sends and receives them, `host` where its calls, notifications and events
   * go. Default: an engine session in this process.
   */
  openSession?(session: string, options: EngineSessionOptions, host: CellHost, store: StoredValueStore): CodeModeSession;
  /**
   * The sessions `openSession` opens are durable: they pass their engine's journal entries on to
   * `host.journal` and re-run cells from a journal (`resumeCell(options)`), so this runtime says
   * `durable-cells` and the host replays its cells elsewhere when it is lost. Default `false` (a
   * relay that does not pass both on: the host fails a lost runtime's cells with the cause).
   */
  relaysDurableCells?: boolean;
}

/** A journaled result as `resume-cell` carries it: `+` and the JSON text (none: no value), or `-` and the error. */
export function encodeResult(result: JournalCallResult): string {
  return result.ok ? `+${result.json ?? ''}` : `-${result.error}`;
}

function decodeResult(text: string | undefined): JournalCallResult | undefined {
  if (text === undefined || text === '') return undefined;
  if (text[0] === '-') return { ok: false, error: text.slice(1) };
  return text.length === 1 ? { ok: true } : { ok: true, json: text.slice(1) };
}

interface PendingCall {
  /** The result's JSON text as the host sent it (`undefined`: no value). */
  resolve(json: string | undefined): void;
  reject(error: string): void;
}

/**
 * The runtime side of the runtime protocol: speaks to one host over `transport` and runs that
 * host's cells in isolates of this process. A worker process runs it over its stdio; a remote
 * runtime host would run it over its own transport. Never throws: a malformed message ends the
 * connection (`fatal`), and every request is answered exactly once.
 */
export function serveRuntime(options: ServeRuntimeOptions): { closed: Promise<string | undefined> } {
  let resolveClosed!: (cause: string | undefined) => void;
  const closed = new Promise<string | undefined>((resolve) => (resolveClosed = resolve));
  new RuntimeServer(options.transport, options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES, (cause) => {
    resolveClosed(cause);
    options.onClosed?.(cause);
  }, options);
  return { closed };
}

type HostMessageOf<T extends HostMessage['t']> = Extract<HostMessage, { t: T }>;

/** The key of a cell's staged stored values. */
const stagedKey = (session: string, cellId: string) => `${session}\u0000${cellId}`;

/** One host's connection and what it holds: its sessions, staged snapshots, pending requests and nested calls. */
class RuntimeServer {
  private readonly sessions = new Map<string, CodeModeSession>();
  /** Snapshots staged by `stored` messages, by session and cell, until the cell's `create-cell`. */
  private readonly staged = new Map<string, StoredPair[]>();
  /** Cancel handles of pending `create-cell` / `observe` requests. */
  private readonly cancels = new Map<number, AbortController>();
  private readonly calls = new Map<number, PendingCall>();
  private callSequence = 0;
  private greeted = false;
  private readonly nextCellId = createCellIdGenerator();
  private readonly connection: Connection<RuntimeMessage>;

  constructor(
    transport: RuntimeTransport,
    private readonly maxFrameBytes: number,
    onStopped: (cause: string | undefined) => void,
    private readonly admission: Pick<ServeRuntimeOptions, 'admitSession' | 'sessionClosed' | 'openSession' | 'relaysDurableCells'> = {},
  ) {
    this.connection = createConnection<HostMessage, RuntimeMessage>({
      transport,
      parse: parseHostMessage,
      onMessage: (message) => this.receive(message),
      onClose: (cause) => void this.stop().then(() => onStopped(cause)),
    });
  }

  private receive(message: HostMessage): void {
    try {
      this.handle(message);
    } catch (error) {
      // A handler bug must not take the worker down silently: tell the host, then end.
      this.fatal(`runtime error: ${errorMessage(error)}`);
    }
  }

  /** The host is gone: nested calls fail, every session shuts down; resolves when they all did. */
  private stop(): Promise<unknown> {
    for (const call of this.calls.values()) call.reject('exec runtime lost its host');
    this.calls.clear();
    const sessionsLeft = [...this.sessions.values()];
    this.sessions.clear();
    return Promise.all(sessionsLeft.map((session) => session.shutdown().catch(() => undefined)));
  }

  private handle(message: HostMessage): void {
    if (!this.greeted) return this.greet(message);
    switch (message.t) {
      case 'hello':
        return this.fatal('protocol violation: a second hello');
      case 'ping':
        return this.reply(message.id, { value: undefined });
      case 'open-session':
        return this.openSession(message);
      case 'close-session': {
        const session = this.sessions.get(message.session);
        this.sessions.delete(message.session);
        if (session) this.admission.sessionClosed?.(message.session);
        return this.answer(message.id, async () => session?.shutdown());
      }
      case 'stored':
        return this.stage(stagedKey(message.session, message.cellId), message.values);
      case 'create-cell':
        return this.createCell(message);
      case 'resume-cell':
        return this.resumeCell(message);
      case 'observe':
        return this.observe(message);
      case 'terminate': {
        const session = this.sessions.get(message.session);
        return this.answer(message.id, async () => {
          if (!session) throw new ProtocolError(`session ${message.session} is not open`);
          return session.terminate(message.cellId);
        });
      }
      case 'cancel':
        this.cancels.get(message.id)?.abort();
        return;
      case 'call-result':
        return this.callResult(message);
    }
  }

  private greet(message: HostMessage): void {
    if (message.t !== 'hello') return this.fatal('protocol violation: the first message must be hello');
    if (message.version !== RUNTIME_PROTOCOL_VERSION) {
      return this.fatal(`the host speaks runtime protocol version ${message.version}; this runtime speaks version ${RUNTIME_PROTOCOL_VERSION}`);
    }
    this.greeted = true;
    this.connection.peerMaxFrameBytes = message.maxFrameBytes;
    this.connection.post({
      t: 'hello',
      version: RUNTIME_PROTOCOL_VERSION,
      maxFrameBytes: this.maxFrameBytes,
      // A relay (`openSession`) says it only when it passes journals and replays on.
      capabilities: this.admission.openSession && !this.admission.relaysDurableCells ? RUNTIME_CAPABILITIES : [...RUNTIME_CAPABILITIES, DURABLE_CELLS_CAPABILITY],
      pid: process.pid,
      engine: `@switchyard/code-mode-runtime ${VERSION}, node ${process.versions.node}`,
    });
  }

  private openSession(message: HostMessageOf<'open-session'>): void {
    if (this.sessions.has(message.session)) return this.reply(message.id, { error: new ProtocolError(`session ${message.session} is already open`) });
    const key = message.session;
    const options = this.admission.admitSession ? this.admission.admitSession(key, message.options) : message.options;
    if (typeof options === 'string') return this.reply(message.id, { error: new ProtocolError(options) });
    const store: StoredValueStore = {
      snapshot: (cellId) => {
        const values = this.staged.get(stagedKey(key, cellId)) ?? [];
        this.staged.delete(stagedKey(key, cellId));
        return values;
      },
      commit: (cellId, writes) => this.commit(key, cellId, writes),
    };
    const host = this.sessionHost(key);
    const open = this.admission.openSession;
    this.sessions.set(key, open ? open(key, options, host, store) : createEngineSession(options, host, { store, nextCellId: this.nextCellId, closed: () => undefined }));
    this.reply(message.id, { value: undefined });
  }

  /** Adds stored values to the snapshot a cell's `create-cell` starts with. */
  private stage(key: string, values: readonly StoredPair[]): void {
    const list = this.staged.get(key) ?? [];
    for (const pair of values) list.push(pair);
    this.staged.set(key, list);
  }

  private createCell(message: HostMessageOf<'create-cell'>): void {
    const session = this.sessions.get(message.session);
    const controller = new AbortController();
    this.cancels.set(message.id, controller);
    const key = stagedKey(message.session, message.cellId);
    this.stage(key, message.stored);
    this.answer(message.id, async () => {
      if (!session) {
        this.staged.delete(key);
        throw new ProtocolError(`session ${message.session} is not open`);
      }
      try {
        const created = await session.createCell({
          cellId: message.cellId,
          source: message.source,
          tools: message.tools,
          yieldTimeMs: message.yieldTimeMs,
          typescript: message.typescript,
          idempotencyKey: message.key,
          seed: message.seed,
          signal: controller.signal,
        });
        return created.observation;
      } finally {
        this.staged.delete(key);
      }
    });
  }

  /** Re-runs a cell from its journal (`resume-cell`): the engine's `resumeCell`, or a refusal from a session that cannot. */
  private resumeCell(message: HostMessageOf<'resume-cell'>): void {
    const session = this.sessions.get(message.session) as (CodeModeSession & { resumeCell?(options: ResumeCellOptions): Promise<unknown> }) | undefined;
    const key = stagedKey(message.session, message.cellId);
    this.stage(key, message.stored);
    this.answer(message.id, async () => {
      try {
        if (!session) throw new ProtocolError(`session ${message.session} is not open`);
        if (!session.resumeCell) throw new SwitchyardError('INVALID_JOURNAL', `cannot resume cell ${message.cellId}: this runtime does not resume cells`);
        const results = new Map(message.results);
        const calls = message.calls.map((call): JournalCall => {
          const result = decodeResult(results.get(call.id));
          return result === undefined ? call : { ...call, result };
        });
        const { cellId, source, tools, typescript, seed, entries, observed, committed, yieldTimeMs } = message;
        return await session.resumeCell({ cellId, source, tools, typescript, seed, journal: { entries, calls, observed, committed }, yieldTimeMs });
      } finally {
        this.staged.delete(key);
      }
    });
  }

  private observe(message: HostMessageOf<'observe'>): void {
    const session = this.sessions.get(message.session);
    const controller = new AbortController();
    this.cancels.set(message.id, controller);
    this.answer(message.id, async () => {
      if (!session) throw new ProtocolError(`session ${message.session} is not open`);
      return session.observe(message.cellId, { yieldTimeMs: message.yieldTimeMs, idempotencyKey: message.key, signal: controller.signal });
    });
  }

  private callResult(message: HostMessageOf<'call-result'>): void {
    const call = this.calls.get(message.call);
    if (!call) return this.fatal(`protocol violation: a result for call ${message.call}, which is not pending`);
    this.calls.delete(message.call);
    // The result's text goes on as it arrived (a host that put the value inline: encoded here once).
    if (message.ok) call.resolve(message.json ?? (message.value === undefined ? undefined : JSON.stringify(message.value)));
    else call.reject(message.error);
  }

  private fatal(message: string): void {
    try {
      this.connection.post({ t: 'fatal', message });
    } catch {
      // nothing more to say
    }
    this.connection.close();
  }

  private reply(id: number, outcome: { value?: unknown } | { error: unknown }): void {
    if ('error' in outcome) {
      this.connection.post({ t: 'reply', id, ok: false, error: toWireError(outcome.error) });
      return;
    }
    try {
      this.connection.post({ t: 'reply', id, ok: true, value: outcome.value as never });
    } catch (error) {
      // An observation too large for one frame (the output limits normally prevent it).
      this.connection.post({ t: 'reply', id, ok: false, error: { code: 'LIMIT_EXCEEDED', message: `exec observation could not be sent: ${errorMessage(error)}` } });
    }
  }

  /** Answers `id` with the outcome of `task`, exactly once. */
  private answer(id: number, task: () => Promise<unknown>): void {
    let promise: Promise<unknown>;
    try {
      promise = task();
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (value) => {
        this.cancels.delete(id);
        this.reply(id, { value });
      },
      (error) => {
        this.cancels.delete(id);
        this.reply(id, { error });
      },
    );
  }

  /** What the engine of session `session` sends its host: nested calls, notifications, closings, events. */
  private sessionHost(session: string): CellHost {
    const connection = this.connection;
    return {
      invokeTool: (request) => this.invokeTool(session, request).then((json) => (json === undefined ? undefined : JSON.parse(json)) as JsonValue),
      invokeToolJson: (request) => this.invokeTool(session, request).then((json) => ({ json })),
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
        // Only a cell's own event travels: `runtime-lost` is the agent host's to say (it sees the link end).
        if (event.type === 'cell-limit-exceeded') connection.post({ t: 'cell-event', session, event });
      },
      journal(update) {
        // The agent host keeps the journals: the entries go to it, ahead of what they may cause.
        if (update.type === 'entries') connection.post({ t: 'journal', session, cellId: update.cellId, entries: update.entries });
      },
    };
  }

  /**
   * A nested call of a cell: sent to the host, settled by its `call-result` with the result's JSON
   * text; an abort tells the host to stop the tool. The arguments travel as the cell's JSON text.
   */
  private invokeTool(session: string, request: CellToolRequest): Promise<string | undefined> {
    return new Promise<string | undefined>((resolve, reject) => {
      const call = ++this.callSequence;
      try {
        this.connection.post({
          t: 'call',
          call,
          session,
          cellId: request.cellId,
          runtimeToolCallId: request.runtimeToolCallId,
          tool: request.tool,
          ...(request.inputJson !== undefined ? { inputJson: request.inputJson } : request.input === undefined ? {} : { inputJson: JSON.stringify(request.input) }),
        });
      } catch (error) {
        reject(`tool \`${request.tool}\` was not called: ${error instanceof ProtocolError ? error.message : errorMessage(error)}`);
        return;
      }
      this.calls.set(call, { resolve, reject });
      request.signal.addEventListener('abort', () => {
        if (this.calls.has(call)) this.connection.post({ t: 'call-abort', call, session });
      }, { once: true });
    });
  }

  private commit(session: string, cellId: string, writes: StoredPair[]): void {
    const connection = this.connection;
    const parts = splitStoredPairs(writes, Math.floor(connection.peerMaxFrameBytes / 2));
    const messages: RuntimeMessage[] = parts.map((part, index) => ({ t: 'commit', session, cellId, writes: part, more: index < parts.length - 1 }));
    // All or nothing: a value too large for one frame (rare: the value size limit keeps values far
    // below it) would leave a partial commit, so the cell then commits no write at all.
    // Only a part whose bound (3 bytes of JSON per character) passes the frame limit is measured:
    // the rest are encoded once, when posted, not twice on the worker's main thread.
    const bound = (part: StoredPair[]) => part.reduce((sum, [key, json]) => sum + (key.length + json.length) * 3 + 8, 0);
    const max = connection.peerMaxFrameBytes;
    if (messages.some((message, index) => bound(parts[index]!) > max && connection.sizeOf(message) > max)) return;
    for (const message of messages) connection.post(message);
  }
}
