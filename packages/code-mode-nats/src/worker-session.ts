import {
  RuntimeLostError,
  callToolRequest,
  encodeJournalResult,
  splitStoredPairs,
  type ResumeCellOptions,
  type EngineSessionOptions,
  type RuntimeEventMessage,
  type RuntimeLease,
  type RuntimePlacement,
  type StoredPair,
  type StoredValueStore,
} from '@switchyard/code-mode-runtime/protocol';
import { SwitchyardError, cellIdOf, errorMessage, type CellHost, type CellObservation, type CodeModeSession, type CreateCellOptions, type CreatedCell, type ObserveOptions } from '@switchyard/protocol';

/** Settings of a {@link WorkerSession}. */
export interface WorkerSessionSettings {
  /** The limits the session runs with (already capped by the runtime host). */
  options: EngineSessionOptions;
  /** Where the session's calls, notifications and events go (the agent host's connection). */
  host: CellHost;
  /** The session's stored values as the agent host sends (snapshot) and receives (commit) them. */
  store: StoredValueStore;
  /** The worker pool. */
  pool: RuntimePlacement;
  /** Whose session it is: the pool never puts two tenants in one worker. */
  tenant: string;
}

/** A lease on a worker and what this session has there. */
interface Binding {
  lease: RuntimeLease;
  cells: Set<string>;
  creating: number;
  lost: boolean;
  /** Nested calls in flight: the worker's call number → the cancel handle of the host's call. */
  calls: Map<number, AbortController>;
  /** Commit parts staged per cell until the last part. */
  commits: Map<string, { writes: StoredPair[]; bytes: number }>;
  /** When the session last made a keyed (`idempotencyKey`) request through this lease. */
  keyedAt?: number;
  /** Set while an idle lease is kept for the retries of keyed requests. */
  idleTimer?: NodeJS.Timeout;
}

/**
 * How long an idle session keeps its worker after its last keyed request (ms): the worker's session
 * holds the answers a retried create or observe repeats, and closing it would lose them.
 */
const KEYED_RETRY_WINDOW_MS = 60_000;

const notFound = (cellId: string) => new SwitchyardError('CELL_NOT_FOUND', `exec cell ${cellId} not found`);

/**
 * One agent host's session on a runtime host whose cells run in a worker process of the tenant's
 * own (the pool of `@switchyard/code-mode-runtime`): the runtime host keeps the connection to the
 * agent host, the caps and the session count; the worker runs the isolates. Messages are relayed
 * both ways (the session's key on the worker is the lease's). When the worker dies (a V8 fatal
 * error of one of its cells, its memory limit), only this tenant's cells end: each pending request
 * answers with a completed observation "exec runtime ended unexpectedly: <cause>", the agent host
 * hears `cellClosed` for every cell, and the next cell gets a fresh worker.
 * Stored values stay with the agent host: the snapshot goes to the worker with the cell, its
 * writes come back as the agent host's commit (staged parts bounded by `maxStoredBytes`).
 * Journals stay with the agent host too: the worker's journal entries are passed on as they come,
 * and a cell the agent host replays (its runtime host was lost) arrives as `resumeCell`.
 */
export class WorkerSession implements CodeModeSession {
  private binding: Binding | undefined;
  private binding$: Promise<Binding> | undefined;
  private closing = false;

  constructor(private readonly settings: WorkerSessionSettings) {}

  async createCell(options: CreateCellOptions): Promise<CreatedCell> {
    if (this.closing) throw new SwitchyardError('SHUTTING_DOWN', 'code mode session is shutting down');
    const cellId = options.cellId!;
    // Taken now: the runtime protocol stages a cell's snapshot until its create-cell.
    const pairs = this.settings.options.storedValues ? this.settings.store.snapshot(cellId) : [];
    const { source, tools, yieldTimeMs, typescript, idempotencyKey, seed } = options;
    const observation = await this.start(cellId, pairs, options.signal, idempotencyKey !== undefined, (key, stored) =>
      // The idempotency key travels on: the worker's engine answers a retried create with the original cell.
      // The seed too: the agent host's journal of the cell holds it (a replay elsewhere draws the same randomness).
      ({ t: 'create-cell', session: key, cellId, source, tools: [...tools], yieldTimeMs, typescript, stored, key: idempotencyKey, seed }),
    );
    return { cellId, observation: observation! };
  }

  /**
   * Re-runs a cell from the journal the agent host keeps (`resume-cell`, passed on to the worker as
   * it came): the agent host lost the runtime host that ran it, or the cell was restored.
   */
  async resumeCell(options: ResumeCellOptions): Promise<CellObservation | undefined> {
    if (this.closing) throw new SwitchyardError('SHUTTING_DOWN', 'code mode session is shutting down');
    const { cellId, source, tools, typescript, seed, journal, yieldTimeMs } = options;
    const pairs = options.stored ?? (this.settings.options.storedValues ? this.settings.store.snapshot(cellId) : []);
    const results: StoredPair[] = [];
    for (const call of journal.calls) if (call.result) results.push([call.id, encodeJournalResult(call.result)]);
    const calls = journal.calls.map(({ id, tool, hash }) => ({ id, tool, hash }));
    const { entries, observed, committed } = journal;
    return this.start(cellId, pairs, undefined, false, (key, stored) =>
      ({ t: 'resume-cell', session: key, cellId, source, tools: [...tools], typescript, stored, seed, entries, calls, results, observed, committed, yieldTimeMs }),
    );
  }

  /** Sends a cell's snapshot (parts too big for one frame ahead in `stored`) and its `create-cell` / `resume-cell`. */
  private async start(cellId: string, pairs: StoredPair[], signal: AbortSignal | undefined, keyed: boolean, message: (key: string, stored: StoredPair[]) => Parameters<RuntimeLease['client']['request']>[0]): Promise<CellObservation | undefined> {
    const binding = await this.bind();
    binding.creating++;
    binding.cells.add(cellId);
    try {
      const { client, key } = binding.lease;
      const parts = splitStoredPairs(pairs, Math.floor(client.maxFrameBytes / 2));
      const last = parts.pop() ?? [];
      for (const part of parts) client.post({ t: 'stored', session: key, cellId, values: part });
      return (await client.request(message(key, last), signal)) as CellObservation | undefined;
    } catch (error) {
      if (error instanceof RuntimeLostError) return lost(cellId, error.reason);
      if (cellIdOf(error) !== cellId) binding.cells.delete(cellId);
      throw error;
    } finally {
      binding.creating--;
      if (keyed) binding.keyedAt = Date.now();
      this.releaseIfIdle(binding);
    }
  }

  observe(cellId: string, options: ObserveOptions): Promise<CellObservation> {
    return this.ask(cellId, (key) => ({ t: 'observe', session: key, cellId, yieldTimeMs: options.yieldTimeMs, key: options.idempotencyKey }), options.signal, options.idempotencyKey !== undefined);
  }

  terminate(cellId: string): Promise<CellObservation> {
    return this.ask(cellId, (key) => ({ t: 'terminate', session: key, cellId }));
  }

  async shutdown(): Promise<void> {
    this.closing = true;
    const binding = this.binding ?? (await this.binding$?.catch(() => undefined));
    if (binding && !binding.lost) {
      // The worker terminates the session's cells; bounded, so a stuck worker cannot hold this up.
      const closing = binding.lease.client.request({ t: 'close-session', session: binding.lease.key }).catch(() => undefined);
      await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
      this.drop(binding);
    }
  }

  private async ask(cellId: string, message: (key: string) => Parameters<RuntimeLease['client']['request']>[0], signal?: AbortSignal, keyed = false): Promise<CellObservation> {
    const binding = this.binding;
    if (!binding || binding.lost || !binding.cells.has(cellId)) throw notFound(cellId);
    binding.creating++;
    try {
      return (await binding.lease.client.request(message(binding.lease.key), signal))!;
    } catch (error) {
      if (error instanceof RuntimeLostError) return lost(cellId, error.reason);
      throw error;
    } finally {
      binding.creating--;
      if (keyed) binding.keyedAt = Date.now();
      this.releaseIfIdle(binding);
    }
  }

  /** The worker this session's cells go to: the current lease, or a new one (one acquisition at a time). */
  private bind(): Promise<Binding> {
    if (this.binding && !this.binding.lost) return Promise.resolve(this.binding);
    this.binding$ ??= (async () => {
      const binding: Binding = { lease: undefined as never, cells: new Set(), creating: 0, lost: false, calls: new Map(), commits: new Map() };
      let lostEarly: string | undefined;
      const sink = {
        onEvent: (message: RuntimeEventMessage) => (binding.lease ? this.onEvent(binding, message) : undefined),
        onLost: (cause: string) => (binding.lease ? this.onLost(binding) : (lostEarly ??= cause)),
      };
      try {
        const lease = await this.settings.pool.acquire(sink, { tenant: this.settings.tenant });
        if (lostEarly !== undefined) {
          lease.release();
          throw new SwitchyardError('RESPOND_TO_MODEL', `exec runtime failed to start: ${lostEarly}`);
        }
        binding.lease = lease;
        this.binding = binding;
        // Pipelined: the worker handles it before the create-cell that follows on the same pipe.
        lease.client.request({ t: 'open-session', session: lease.key, options: this.settings.options }).catch(() => undefined);
        return binding;
      } finally {
        this.binding$ = undefined;
      }
    })();
    return this.binding$;
  }

  /** A worker lease without cells goes back to the pool (its session there closed). */
  private releaseIfIdle(binding: Binding): void {
    if (binding.cells.size > 0 || binding.creating > 0 || binding.lost || binding.idleTimer) return;
    const keep = binding.keyedAt === undefined ? 0 : binding.keyedAt + KEYED_RETRY_WINDOW_MS - Date.now();
    if (keep > 0) {
      binding.idleTimer = setTimeout(() => {
        binding.idleTimer = undefined;
        this.releaseIfIdle(binding);
      }, keep);
      binding.idleTimer.unref();
      return;
    }
    if (!binding.lease.client.ended) binding.lease.client.request({ t: 'close-session', session: binding.lease.key }).catch(() => undefined);
    this.drop(binding);
  }

  private drop(binding: Binding): void {
    clearTimeout(binding.idleTimer);
    binding.idleTimer = undefined;
    if (this.binding === binding) this.binding = undefined;
    binding.lost = true;
    for (const controller of binding.calls.values()) controller.abort('exec cell ended');
    binding.calls.clear();
    binding.commits.clear();
    binding.lease.release();
  }

  /** The worker died: this session's cells there are gone; the agent host hears each one and why. */
  private onLost(binding: Binding): void {
    if (binding.lost) return;
    const cellIds = [...binding.cells];
    this.drop(binding);
    const { host } = this.settings;
    // The runtime protocol has no runtime-lost event from a runtime (the agent host names its own
    // runtime's loss): the agent host hears the failed observations and each cell's closing.
    for (const cellId of cellIds) safely(() => host.cellClosed(cellId));
  }

  private onEvent(binding: Binding, message: RuntimeEventMessage): void {
    const { host } = this.settings;
    if (binding.lost) {
      if (message.t === 'call') binding.lease.client.post({ t: 'call-result', call: message.call, ok: false, error: 'exec cell ended' });
      return;
    }
    switch (message.t) {
      case 'call':
        return this.onCall(binding, message);
      case 'call-abort':
        return binding.calls.get(message.call)?.abort('nested tool call cancelled');
      case 'notify':
        return safely(() => host.notify({ cellId: message.cellId, text: message.text }));
      case 'commit':
        return this.onCommit(binding, message);
      case 'cell-closed':
        binding.cells.delete(message.cellId);
        binding.commits.delete(message.cellId);
        safely(() => host.cellClosed(message.cellId));
        return this.releaseIfIdle(binding);
      case 'cell-event':
        return safely(() => host.runtimeEvent?.(message.event));
      case 'journal':
        // Passed on as they came, ahead of the calls they may cause: the agent host keeps the journals.
        return safely(() => host.journal?.({ type: 'entries', cellId: message.cellId, entries: message.entries }));
    }
  }

  /**
   * A nested call of a cell: relayed to the agent host, its result back to the worker, exactly
   * once. The arguments and the result travel as the JSON texts they arrived as (never decoded
   * here) when the host relays texts (`invokeToolJson`, as a runtime server does).
   */
  private onCall(binding: Binding, message: Extract<RuntimeEventMessage, { t: 'call' }>): void {
    const controller = new AbortController();
    binding.calls.set(message.call, controller);
    const answer = (result: { ok: true; json: string | undefined } | { ok: false; error: string }) => {
      if (!binding.calls.delete(message.call) || binding.lost) return;
      const client = binding.lease.client;
      try {
        client.post(result.ok ? { t: 'call-result', call: message.call, ok: true, ...(result.json === undefined ? {} : { json: result.json }) } : { t: 'call-result', call: message.call, ok: false, error: result.error });
      } catch (error) {
        client.post({ t: 'call-result', call: message.call, ok: false, error: `tool result could not be sent to the cell: ${errorMessage(error)}` });
      }
    };
    const { host } = this.settings;
    let running: Promise<string | undefined>;
    try {
      const request = callToolRequest(message, controller.signal);
      running = (host.invokeToolJson ? host.invokeToolJson(request) : Promise.resolve(host.invokeTool(request)).then((value) => ({ value }))).then((answer) =>
        'json' in answer ? answer.json : JSON.stringify(answer.value),
      );
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (json) => answer({ ok: true, json }),
      (error: unknown) => answer({ ok: false, error: typeof error === 'string' ? error : errorMessage(error) }),
    );
  }

  /** Stages a cell's commit parts (at most the agent host's `maxStoredBytes`) and hands the whole commit over with the last one. */
  private onCommit(binding: Binding, message: Extract<RuntimeEventMessage, { t: 'commit' }>): void {
    const staged = binding.commits.get(message.cellId) ?? { writes: [], bytes: 0 };
    if (staged.bytes < 0) return; // over the budget already: none of its writes go on
    const budget = this.settings.options.maxStoredBytes ?? this.settings.options.heapMb * 256 * 1024;
    for (const pair of message.writes) {
      staged.writes.push(pair);
      staged.bytes += pair[0].length + pair[1].length;
    }
    if (staged.bytes > budget) {
      binding.commits.set(message.cellId, { writes: [], bytes: -1 });
      const text = `exec stored values budget exceeded: the cell's writes passed ${budget} bytes (maxStoredBytes); none of its writes were stored`;
      safely(() => this.settings.host.runtimeEvent?.({ type: 'cell-limit-exceeded', cellId: message.cellId, message: text }));
      return;
    }
    if (message.more) return void binding.commits.set(message.cellId, staged);
    binding.commits.delete(message.cellId);
    this.settings.store.commit(message.cellId, staged.writes);
  }
}

function lost(cellId: string, cause: string): CellObservation {
  return { kind: 'completed', cellId, items: [], error: `exec runtime ended unexpectedly: ${cause}`, wallTimeMs: 0 };
}

/** A delegate that throws never harms the relay. */
function safely(task: () => unknown): void {
  try {
    task();
  } catch {
    // dropped: the delegate's failure is its own
  }
}
