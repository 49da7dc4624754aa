import { randomUUID } from 'node:crypto';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/server';
import { errorMessage, type ToolCallItem } from '@switchyard/protocol';
import type { ApprovalDesk, ApprovalObserver, CellApprovalSource, PendingApproval } from './serve-approvals';

/** How long a task and its result are kept when the client names no `ttl` (one hour). */
export const DEFAULT_CODE_MODE_TASK_TTL_MS = 60 * 60 * 1000;
/** The poll interval suggested to clients, in milliseconds. */
export const TASK_POLL_INTERVAL_MS = 500;
/** How long a finished task stays readable at least, whatever its `ttl`. */
const KEEP_FINISHED_MS = 60_000;
/**
 * The `yield_time_ms` of each `wait` the server issues while it follows a yielded cell. Short,
 * because a host may run calls one at a time (`switchyard mcp serve` does): the client's other
 * calls then wait behind one of these for at most about this long.
 */
const FOLLOW_YIELD_MS = 1_000;
const RUNNING = /^Script running with cell ID (\S+)/;

export type CodeModeTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A task as both wire revisions describe it (each face renames and trims). */
export interface CodeModeTaskSnapshot {
  readonly taskId: string;
  readonly status: CodeModeTaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  /** The final result (`completed`, and `failed` on 2025-11-25). */
  readonly result?: CallToolResult;
  /** The JSON-RPC error of a `failed` task on 2026-07-28: the host itself failed. */
  readonly error?: { readonly code: number; readonly message: string };
  /** The approvals the cell waits for (`input_required`). */
  readonly inputs: readonly PendingApproval[];
}

/**
 * Which revision's rules a task follows: on `legacy` (2025-11-25) a script error ends the task
 * `failed` with its error result; on `modern` (2026-07-28) it is `completed` with an `isError`
 * result, and `failed` (with a JSON-RPC error) is kept for a host that failed.
 */
export type TaskGeneration = 'legacy' | 'modern';

/** What the engine needs from serve. */
export interface CodeModeTaskContext {
  readonly generation: TaskGeneration;
  /** Runs one `exec` / `wait` item; rejects when the host fails. */
  readonly dispatch: (item: ToolCallItem, signal: AbortSignal) => Promise<CallToolResult>;
  readonly capResult: (result: CallToolResult) => CallToolResult;
  readonly desk: ApprovalDesk;
  /** Whether approvals can be asked of this task's client (2026-07-28: its request declared `elicitation`). */
  readonly canAsk: (taskId: string) => boolean;
  /** Every status change (2025-11-25 sends `notifications/tasks/status`). */
  readonly onStatus?: (task: CodeModeTaskSnapshot) => void;
}

/** How a task begins: from a call it dispatches itself, or from the answer of a cell that already yielded. */
export type TaskStart = { readonly call: ToolCallItem } | { readonly yielded: CallToolResult; readonly callId: string };

interface TaskRecord extends ApprovalObserver {
  taskId: string;
  status: CodeModeTaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  result?: CallToolResult;
  error?: { code: number; message: string };
  controller: AbortController;
  execCallId: string;
  cellId?: string;
  created: number;
  finished?: number;
  waiters: Array<() => void>;
  unobserve?: () => void;
  expiry?: NodeJS.Timeout;
}

const TERMINAL = new Set<CodeModeTaskStatus>(['completed', 'failed', 'cancelled']);

/** Whether a task status is final. */
export function isTerminalStatus(status: CodeModeTaskStatus): boolean {
  return TERMINAL.has(status);
}

/** The cell id of a "Script running with cell ID …" answer. */
export function runningCell(result: CallToolResult): string | undefined {
  const first = result.content[0];
  return first?.type === 'text' ? RUNNING.exec(first.text)?.[1] : undefined;
}

/**
 * The tasks of one connection: each follows a yielding cell with its own `wait` calls until the
 * cell ends, keeps one result for the whole run (the final status header, then every output in
 * order), surfaces the cell's approvals as `input_required`, and is dropped `ttl` after it began
 * (at least a minute after it ended). Cancelling a task terminates its cell.
 */
export class CodeModeTaskEngine {
  private readonly tasks = new Map<string, TaskRecord>();

  constructor(private readonly context: CodeModeTaskContext) {}

  /** Creates a `working` task and starts following its cell; the task is readable at once. */
  start(start: TaskStart, ttlMs: number): CodeModeTaskSnapshot {
    const now = new Date().toISOString();
    const execCallId = 'call' in start ? start.call.call_id : start.callId;
    const record: TaskRecord = {
      taskId: randomUUID(),
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      controller: new AbortController(),
      execCallId,
      created: Date.now(),
      waiters: [],
      matches: (source: CellApprovalSource) => source.execCallId === execCallId || (record.cellId !== undefined && source.cellId === record.cellId),
      changed: () => this.inputsChanged(record),
    };
    this.tasks.set(record.taskId, record);
    record.expiry = setTimeout(() => this.expire(record), ttlMs);
    record.expiry.unref?.();
    record.unobserve = this.context.desk.observe(record);
    void this.follow(record, start);
    return this.snapshot(record);
  }

  get(taskId: string): CodeModeTaskSnapshot | undefined {
    const record = this.tasks.get(taskId);
    return record ? this.snapshot(record) : undefined;
  }

  list(): CodeModeTaskSnapshot[] {
    return [...this.tasks.values()].map((record) => this.snapshot(record));
  }

  /** Cancels a running task (its cell is terminated); a finished one is returned unchanged. */
  cancel(taskId: string): CodeModeTaskSnapshot | undefined {
    const record = this.tasks.get(taskId);
    if (!record) return undefined;
    if (!isTerminalStatus(record.status)) {
      record.controller.abort(new Error('the client cancelled the task'));
      for (const approval of this.context.desk.pendingFor(record)) approval.deny();
      this.finish(record, 'cancelled', { statusMessage: 'Cancelled by the client' });
      if (record.cellId !== undefined) {
        const terminate: ToolCallItem = { type: 'function_call', call_id: `${record.taskId}-cancel`, name: 'wait', arguments: JSON.stringify({ cell_id: record.cellId, terminate: true }) };
        void this.context.dispatch(terminate, new AbortController().signal).catch(() => undefined);
      }
    }
    return this.snapshot(record);
  }

  /** Answers the task's waiting approvals (`tasks/update`); false for an unknown task. */
  answer(taskId: string, responses: Record<string, unknown>): boolean {
    const record = this.tasks.get(taskId);
    if (!record) return false;
    this.context.desk.answer(responses, record);
    return true;
  }

  /** Resolves once the task is final (or `signal` aborts: rejects). */
  async settled(taskId: string, signal: AbortSignal): Promise<CodeModeTaskSnapshot | undefined> {
    const record = this.tasks.get(taskId);
    if (!record) return undefined;
    if (!isTerminalStatus(record.status)) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        record.waiters.push(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    }
    return this.snapshot(record);
  }

  /** Aborts every running task (the connection closed) and forgets them all. */
  close(): void {
    for (const record of this.tasks.values()) {
      record.controller.abort(new Error('the MCP connection closed'));
      record.unobserve?.();
      clearTimeout(record.expiry);
    }
    this.tasks.clear();
  }

  private snapshot(record: TaskRecord): CodeModeTaskSnapshot {
    return {
      taskId: record.taskId,
      status: record.status,
      ...(record.statusMessage !== undefined ? { statusMessage: record.statusMessage } : {}),
      createdAt: record.createdAt,
      lastUpdatedAt: record.lastUpdatedAt,
      ttlMs: record.ttlMs,
      pollIntervalMs: TASK_POLL_INTERVAL_MS,
      ...(record.result !== undefined ? { result: record.result } : {}),
      ...(record.error !== undefined ? { error: record.error } : {}),
      inputs: isTerminalStatus(record.status) ? [] : this.context.desk.pendingFor(record),
    };
  }

  private update(record: TaskRecord, status: CodeModeTaskStatus, statusMessage: string | undefined): void {
    if (record.status === status && record.statusMessage === statusMessage) return;
    record.status = status;
    record.statusMessage = statusMessage;
    record.lastUpdatedAt = new Date().toISOString();
    this.context.onStatus?.(this.snapshot(record));
  }

  /** A waiting approval arrived or settled: `input_required` while any waits, else `working`. */
  private inputsChanged(record: TaskRecord): void {
    if (isTerminalStatus(record.status)) return;
    const waiting = this.context.desk.pendingFor(record);
    if (waiting.length > 0 && !this.context.canAsk(record.taskId)) {
      for (const approval of waiting) approval.deny();
      return;
    }
    const running = record.cellId !== undefined ? `Script running with cell ID ${record.cellId}` : undefined;
    if (waiting.length > 0) this.update(record, 'input_required', `Waiting for approval: ${waiting[0].elicitation.message}`);
    else this.update(record, 'working', running);
  }

  private finish(record: TaskRecord, status: CodeModeTaskStatus, outcome: { statusMessage?: string; result?: CallToolResult; error?: { code: number; message: string } }): void {
    if (isTerminalStatus(record.status)) return;
    record.result = outcome.result;
    record.error = outcome.error;
    record.finished = Date.now();
    record.unobserve?.();
    this.update(record, status, outcome.statusMessage);
    for (const wake of record.waiters.splice(0)) wake();
    // Kept `ttl` after it began, and at least a minute after it ended.
    if (Date.now() - record.created >= record.ttlMs) {
      clearTimeout(record.expiry);
      record.expiry = setTimeout(() => this.expire(record), KEEP_FINISHED_MS);
      record.expiry.unref?.();
    }
  }

  private expire(record: TaskRecord): void {
    if (!isTerminalStatus(record.status)) return; // a running task is kept until it ends (and then a minute)
    this.tasks.delete(record.taskId);
  }

  private async follow(record: TaskRecord, start: TaskStart): Promise<void> {
    const signal = record.controller.signal;
    const earlier: ContentBlock[] = [];
    let result: CallToolResult;
    try {
      result = 'call' in start ? await this.context.dispatch(start.call, signal) : start.yielded;
      for (let cellId = runningCell(result); cellId !== undefined && !signal.aborted; cellId = runningCell(result)) {
        earlier.push(...result.content.slice(1));
        if (record.cellId !== cellId) {
          record.cellId = cellId;
          // One status per cell, not one per follow-up wait; approvals of the cell may already wait.
          this.inputsChanged(record);
        }
        const wait: ToolCallItem = { type: 'function_call', call_id: record.execCallId, name: 'wait', arguments: JSON.stringify({ cell_id: cellId, yield_time_ms: FOLLOW_YIELD_MS }) };
        result = await this.context.dispatch(wait, signal);
      }
    } catch (error) {
      if (signal.aborted) return;
      const message = `exec failed: ${errorMessage(error)}`;
      if (this.context.generation === 'modern') this.finish(record, 'failed', { statusMessage: message, error: { code: -32603, message } });
      else this.finish(record, 'failed', { statusMessage: message, result: { content: [{ type: 'text', text: message }], isError: true } });
      return;
    }
    if (signal.aborted) return;
    // One result for the whole run: the final status header, then every output in order.
    const [header, ...rest] = result.content;
    const whole = this.context.capResult({ ...result, content: header ? [header, ...earlier, ...rest] : earlier });
    const statusMessage = header?.type === 'text' ? header.text.split('\n')[0] : undefined;
    const failed = whole.isError === true && this.context.generation === 'legacy';
    this.finish(record, failed ? 'failed' : 'completed', { ...(statusMessage !== undefined ? { statusMessage } : {}), result: whole });
  }
}
