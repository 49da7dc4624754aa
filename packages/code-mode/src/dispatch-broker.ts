import { randomUUID } from 'node:crypto';
import {
  cellIdOf,
  errorMessage,
  isFatalError,
  isJsonObject,
  type CellToolRequest,
  type CellToolResult,
  type CustomToolCallOutputItem,
  type JsonValue,
  type NestedToolDefinition,
  type ToolCall,
  type ToolCallSource,
  type ToolOutput,
  type ToolPayload,
} from '@switchyard/protocol';
import { DEFAULT_OUTPUT_TOKENS, approxTokenCount, truncateTextOutput } from '@switchyard/kit';
import { AbortedToolOutput, createCellIdGenerator } from '@switchyard/kit/internal';
import { toolName } from '@switchyard/protocol';

/**
 * The output budget of one `exec` or `wait` call, in tokens: the `notify()` items its cell sends
 * while that call is the last to observe it, and the call's own response, take from it.
 */
export interface OutputBudget {
  /** The call's whole budget. */
  readonly tokens: number;
  /** What is left. */
  remaining: number;
  /**
   * What notify() items may still take: at most half the budget, so the call's own response (its
   * status, and a failed script's error at its end) always has the other half.
   */
  notifyRemaining: number;
  /** A notify was dropped for want of budget (the note saying so was sent). */
  dropped: boolean;
}

/** A fresh budget of `tokens`. */
export function outputBudget(tokens: number): OutputBudget {
  return { tokens, remaining: tokens, notifyRemaining: Math.floor(tokens / 2), dropped: false };
}

/** What a notify past the budget leaves in its place, once per budget. */
export function notifyDroppedMessage(tokens: number): string {
  return `[notify() output dropped: this call's output budget of ${tokens} tokens is used up; later notify() items are dropped until the next wait]`;
}

/**
 * What runs a nested call: the current step's `ToolCallRuntime` from `@switchyard/registry`
 * satisfies it structurally. Fatal errors reject; every other outcome resolves.
 */
export interface NestedWorker {
  handle(
    call: ToolCall,
    options: { source: ToolCallSource; signal?: AbortSignal },
  ): Promise<{ output: ToolOutput; success: boolean | undefined; error?: { code?: string } }>;
}

/** A cell the broker dispatches for: it exists once `exec` has registered the cell's surface (its ready gate). */
interface CellRecord {
  tools: Map<string, NestedToolDefinition>;
  execCallId: string;
  /** `cell-start` was said (at the cell's first nested call or notify, or when its creation returned). */
  started: boolean;
  /** When `createCell` began (ms since the epoch), for `cell-start`. */
  startTime: number;
  /** The budget of the exec or wait call that last observed the cell: its notify() items take from it. */
  budget: OutputBudget;
}

/** A cell as `exportCells` gives it and `restoreCell` takes it back: what dispatches its calls. */
export interface BrokerCellState {
  cellId: string;
  /** The `call_id` of the `exec` that created it (its background completion answers that call). */
  execCallId: string;
  /** Its tools: the `tools.<codeModeName>` it calls, and the registered tool each runs. */
  tools: Array<{ codeModeName: string; name: string; namespace?: string; kind: 'function' | 'freeform' }>;
}

function abortError(signal: AbortSignal): string {
  const reason = signal.reason;
  return typeof reason === 'string' ? reason : 'nested tool call cancelled';
}

/** Waits for `promise` unless `signal` aborts first (then rejects with a string). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Routes the nested calls of one host session's cells to the worker of the step that is running.
 * A cell's calls are dispatched only once `exec` has registered it (its ready gate); while no step is attached,
 * calls queue and run when the next step attaches. Cancellation is checked before sending, while
 * waiting at the gate or for a worker, and while waiting for the result.
 */
export class DispatchBroker {
  private readonly cells = new Map<string, CellRecord>();
  private readonly nextCellId = createCellIdGenerator();
  private worker: NestedWorker | undefined;
  /** Workers attached for the time between turns: their calls' source says `background`. */
  private readonly backgroundWorkers = new WeakSet<NestedWorker>();
  private workerWaiters: Array<() => void> = [];
  private readonly injected: CustomToolCallOutputItem[] = [];
  private fatal: unknown;

  /** The first fatal error a nested call raised since the last take (exec / wait rethrow it). */
  takeFatal(): unknown {
    const fatal = this.fatal;
    this.fatal = undefined;
    return fatal;
  }

  /** `onCellStart` is told each cell id once: at its first nested call or notify, or when its creation returned. */
  constructor(private readonly options: { onCellStart?: (cellId: string, start: { execCallId: string; startTime: number }) => void } = {}) {}

  /**
   * Attaches the current step's worker; returns a detach function (a no-op if another worker
   * replaced it). A `background` worker serves cells between turns: its calls' source carries
   * `background: true`.
   */
  attachWorker(worker: NestedWorker, options: { background?: boolean } = {}): () => void {
    this.worker = worker;
    if (options.background) this.backgroundWorkers.add(worker);
    const waiters = this.workerWaiters;
    this.workerWaiters = [];
    for (const wake of waiters) wake();
    return () => {
      if (this.worker === worker) this.worker = undefined;
    };
  }

  /**
   * Creates a cell through `create`, which receives the id the broker chose for it. The cell's
   * record (its tool surface: the ready gate) exists before `create` runs, so a nested call or a
   * notify the cell makes before its first observation finds it; creations of one session run
   * concurrently. The record is dropped when the cell finished within its first observation, or
   * when `create` failed without creating the cell (a rejection that carries no `cellId`).
   */
  async createCell<T extends { cellId: string; observation?: { kind: string } }>(
    tools: readonly NestedToolDefinition[],
    execCallId: string,
    create: (cellId: string) => Promise<T>,
    budget: OutputBudget = outputBudget(DEFAULT_OUTPUT_TOKENS),
  ): Promise<T> {
    const cellId = this.nextCellId();
    const startTime = performance.timeOrigin + performance.now();
    const record: CellRecord = { tools: new Map(tools.map((tool) => [tool.codeModeName, tool])), execCallId, started: false, startTime, budget };
    this.cells.set(cellId, record);
    let created: T;
    try {
      created = await create(cellId);
    } catch (error) {
      // Cancelled after creation (the error names the cell): it runs on until terminated and closed.
      if (cellIdOf(error) !== cellId) this.cells.delete(cellId);
      throw error;
    }
    this.start(cellId, record);
    // Finished within its first observation: the runtime has already closed it; keep nothing.
    if (created.observation && created.observation.kind !== 'yielded') this.cells.delete(cellId);
    return created;
  }

  /** Whether a cell of the session is open (the runtime's rule: a restore comes before any). */
  get hasOpenCells(): boolean {
    return this.cells.size > 0;
  }

  /** A `wait` observes the cell: from now its notify() items take from `budget`. */
  observeWith(cellId: string, budget: OutputBudget): void {
    const record = this.cells.get(cellId);
    if (record) record.budget = budget;
  }

  /** The `call_id` of the exec call that created `cellId`, while the cell is open. */
  execCallId(cellId: string): string | undefined {
    return this.cells.get(cellId)?.execCallId;
  }

  /** Forgets a closed cell. */
  closeCell(cellId: string): void {
    this.cells.delete(cellId);
  }

  /** The open cells, as a store keeps them beside the runtime's journals. */
  exportCells(): BrokerCellState[] {
    return [...this.cells.keys()].map((cellId) => this.exportCell(cellId)!);
  }

  /** One open cell as a store keeps it, or undefined for a cell the broker does not hold. */
  exportCell(cellId: string): BrokerCellState | undefined {
    const record = this.cells.get(cellId);
    if (!record) return undefined;
    return {
      cellId,
      execCallId: record.execCallId,
      tools: [...record.tools.values()].map((tool) => ({
        codeModeName: tool.codeModeName,
        name: tool.toolName.name,
        ...(tool.toolName.namespace === undefined ? {} : { namespace: tool.toolName.namespace }),
        kind: tool.kind,
      })),
    };
  }

  /** A cell restored from a store: its calls dispatch as they did (its gate is open at once). */
  restoreCell(state: BrokerCellState): void {
    const definitions: NestedToolDefinition[] = state.tools.map((tool) => ({
      toolName: toolName(tool.name, tool.namespace),
      codeModeName: tool.codeModeName,
      description: '',
      kind: tool.kind,
      deferred: false,
    }));
    const record: CellRecord = {
      tools: new Map(definitions.map((tool) => [tool.codeModeName, tool])),
      execCallId: state.execCallId,
      started: false,
      startTime: performance.timeOrigin + performance.now(),
      budget: outputBudget(DEFAULT_OUTPUT_TOKENS),
    };
    this.cells.set(state.cellId, record);
    this.start(state.cellId, record);
  }

  /** The cell's record (saying `cell-start` the first time), or undefined for a cell the broker does not know. */
  private record(cellId: string): CellRecord | undefined {
    const record = this.cells.get(cellId);
    if (record) this.start(cellId, record);
    return record;
  }

  private start(cellId: string, record: CellRecord): void {
    if (record.started) return;
    record.started = true;
    this.options.onCellStart?.(cellId, { execCallId: record.execCallId, startTime: record.startTime });
  }

  private waitForWorker(signal: AbortSignal): Promise<NestedWorker> {
    if (this.worker) return Promise.resolve(this.worker);
    return untilAborted(
      new Promise<void>((resolve) => this.workerWaiters.push(resolve)).then(() => this.waitForWorker(signal)),
      signal,
    );
  }

  /** Dispatches one nested call; rejects as {@link invoke} does. `narrowed`: the value is not the output's own (see {@link callableFinds}). */
  private async run(request: CellToolRequest): Promise<{ value: JsonValue; output: ToolOutput; payload: ToolPayload; narrowed?: true }> {
    const { cellId, tool, signal } = request;
    if (tool === 'exec') throw 'exec cannot invoke itself';
    const record = this.record(cellId);
    if (!record) throw `exec cell ${cellId} not found`;
    const definition = record.tools.get(tool);
    if (!definition) throw `tool \`${tool}\` is not enabled in exec`;
    const payload = callPayload(request, definition.kind);
    if (signal.aborted) throw abortError(signal);
    // Fast path: a step is attached, nothing to wait for.
    const worker = this.worker ?? (await this.waitForWorker(signal));
    const call: ToolCall = { toolName: definition.toolName, callId: `exec-${randomUUID()}`, payload };
    const source: ToolCallSource = this.backgroundWorkers.has(worker)
      ? { kind: 'code-mode', cellId, runtimeToolCallId: request.runtimeToolCallId, background: true }
      : { kind: 'code-mode', cellId, runtimeToolCallId: request.runtimeToolCallId };
    let result: { output: ToolOutput; success: boolean | undefined; error?: { code?: string } };
    try {
      result = await untilAborted(worker.handle(call, { source, signal }), signal);
    } catch (error) {
      // A fatal error ends the turn: the script sees the text, and the next exec / wait
      // response of this session rethrows it (takeFatal), so the registry ends the turn.
      if (isFatalError(error) && !this.fatal) this.fatal = error;
      throw typeof error === 'string' ? error : errorMessage(error);
    }
    const value = result.output.codeModeResult(payload);
    const rejects = result.success === false && result.output.codeModeAlwaysResolves !== true;
    if (rejects || result.error?.code === 'ABORTED' || result.output instanceof AbortedToolOutput) {
      throw typeof value === 'string' ? value : JSON.stringify(value);
    }
    const narrowed = isToolSearch(definition) ? callableFinds(value, record) : undefined;
    return narrowed === undefined ? { value, output: result.output, payload } : { value: narrowed, output: result.output, payload, narrowed: true };
  }

  /**
   * Runs one nested call. Resolves with the tool's Code Mode result; rejects with a string (the
   * model-visible failure text, the abort message, or the rejection text of a nested call). Each
   * request is a run: a call a replayed cell makes again is answered (or joined) by the runtime
   * session's journal before it reaches the host, so the broker keeps no results.
   */
  async invoke(request: CellToolRequest): Promise<JsonValue> {
    return (await this.run(request)).value;
  }

  /**
   * {@link invoke}, resolving with the result's JSON text when the output holds one (a JSON output
   * encoded its value once already), else with the value: the runtime encodes it once, after its
   * limits on results in flight (a flood of huge results is refused before it is encoded).
   */
  async invokeJson(request: CellToolRequest): Promise<CellToolResult> {
    const { value, output, payload, narrowed } = await this.run(request);
    // a narrowed value (a search's callable finds) is not the output's own: its JSON text would differ
    const json = narrowed ? undefined : output.codeModeResultJson?.(payload);
    return json !== undefined ? { json } : { value };
  }

  /**
   * `notify(text)` from a cell: an extra `custom_tool_call_output` with the exec call id, taken
   * from the output budget of the call that last observed the cell. A text past what is left is
   * cut as a response is (`truncateTextOutput`); once nothing is left, one note says later items
   * are dropped, and they are.
   */
  notify(cellId: string, text: string): void {
    const record = this.record(cellId);
    if (!record) return;
    const budget = record.budget;
    let output = text;
    const cost = approxTokenCount(text);
    const left = Math.min(budget.remaining, budget.notifyRemaining);
    if (cost <= left) {
      budget.remaining -= cost;
      budget.notifyRemaining -= cost;
    } else if (left > 0) {
      output = truncateTextOutput(text, left).text;
      budget.remaining -= left;
      budget.notifyRemaining = 0;
    } else if (!budget.dropped) {
      budget.dropped = true;
      output = notifyDroppedMessage(budget.tokens);
    } else return;
    this.injected.push({ type: 'custom_tool_call_output', call_id: record.execCallId, name: 'exec', output });
  }

  /** Items injected by `notify()` since the last call. */
  takeInjected(): CustomToolCallOutputItem[] {
    return this.injected.splice(0, this.injected.length);
  }
}

/** The cells' search: `tools.tool_search`, the plain `tool_search` tool. */
function isToolSearch(definition: NestedToolDefinition): boolean {
  return definition.toolName.name === 'tool_search' && !definition.toolName.namespace;
}

/**
 * A search's answer without the tools this cell cannot call, or `undefined` when it holds none. The
 * search runs on the step that is current when it is made, whose tools may have changed since the
 * cell began (a host's tool list read at every step): a cell's `tools` are fixed at its start, so it
 * is answered with the tools it can call (later cells see the others).
 */
function callableFinds(value: JsonValue, record: CellRecord): JsonValue | undefined {
  if (!isJsonObject(value) || !Array.isArray(value.tools)) return undefined;
  const callable = value.tools.filter((entry) => isJsonObject(entry) && typeof entry.name === 'string' && record.tools.has(entry.name));
  return callable.length === value.tools.length ? undefined : { ...value, tools: callable };
}

/**
 * The registry payload of a nested call. Function arguments go on as the JSON text the cell
 * produced when the runtime passed it (`inputJson`): the registry's validation is their one parse.
 * A text opening with `{` is an object once it parses (a malformed one fails that parse); the
 * decoded `input` is read only for freeform tools and for runtimes that send no text. Throws the
 * model-visible text of an input of the wrong kind.
 */
function callPayload(request: CellToolRequest, kind: 'function' | 'freeform'): ToolPayload {
  const { tool, inputJson } = request;
  if (kind === 'freeform') {
    const input = request.input;
    if (typeof input !== 'string') throw `tool \`${tool}\` expects a string input`;
    return { kind: 'custom', input };
  }
  if (inputJson !== undefined) {
    if (inputJson.trimStart().charCodeAt(0) !== 0x7b /* { */) throw `tool \`${tool}\` expects a JSON object for arguments`;
    return { kind: 'function', arguments: inputJson };
  }
  const input = request.input;
  if (input === null || (input !== undefined && !isJsonObject(input))) throw `tool \`${tool}\` expects a JSON object for arguments`;
  return { kind: 'function', arguments: input === undefined ? '{}' : JSON.stringify(input) };
}
