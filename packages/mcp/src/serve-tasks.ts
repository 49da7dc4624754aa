import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import type { RequestTaskStore } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ContentBlock, CreateTaskResult, Result, ServerCapabilities, Task, TaskStatus } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, type ToolCallItem, type ToolOutputItem } from '@switchyard/protocol';
import type { CodeModeDispatchResult, CodeModeMcpHost } from './serve';

// MCP Tasks as served here are the 2025-11-25 revision's (`params.task` on `tools/call`,
// `CreateTaskResult`, `tasks/get` / `tasks/result` / `tasks/list` / `tasks/cancel`,
// `notifications/tasks/status`): the one revision an official SDK runs. SDK 2.x (the
// 2026-07-28 revision) only parses that vocabulary and ships no runtime for its Tasks extension.

/** The server capability: `tools/call` may be task-augmented; tasks can be listed and cancelled. */
export const CODE_MODE_TASKS_CAPABILITY: NonNullable<ServerCapabilities['tasks']> = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** How long a task and its result are kept when the client names no `ttl` (one hour). */
export const DEFAULT_CODE_MODE_TASK_TTL_MS = 60 * 60 * 1000;
/** The `pollInterval` suggested to clients, in milliseconds. */
const POLL_INTERVAL_MS = 500;
/**
 * The `yield_time_ms` of each `wait` the server issues while it follows a yielded cell. Short,
 * because a host may run calls one at a time (`switchyard mcp serve` does): the client's other
 * calls then wait behind one of these for at most about this long.
 */
const FOLLOW_YIELD_MS = 1_000;
const RUNNING = /^Script running with cell ID (\S+)/;

type Answer = ToolOutputItem | CodeModeDispatchResult;

/**
 * The SDK's in-memory store, plus: a cancelled task calls `onCancel`, and a finished task's status
 * message is its result's status line (`Script completed` / `Script failed` / `Script terminated`)
 * instead of the last "Script running with cell ID …".
 */
class CodeModeTaskStore extends InMemoryTaskStore {
  private readonly finalMessages = new Map<string, string>();

  constructor(private readonly onCancel: (taskId: string) => void) {
    super();
  }

  override async updateTaskStatus(taskId: string, status: TaskStatus, statusMessage?: string, sessionId?: string): Promise<void> {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    if (status === 'cancelled') this.onCancel(taskId);
  }

  override async storeTaskResult(taskId: string, status: 'completed' | 'failed', result: Result, sessionId?: string): Promise<void> {
    await super.storeTaskResult(taskId, status, result, sessionId);
    const first = (result as CallToolResult).content?.[0];
    if (first?.type === 'text') this.finalMessages.set(taskId, first.text.split('\n')[0]);
  }

  override async getTask(taskId: string, sessionId?: string): Promise<Task | null> {
    const task = await super.getTask(taskId, sessionId);
    const message = this.finalMessages.get(taskId);
    if (!task) this.finalMessages.delete(taskId); // expired (ttl)
    return task && message !== undefined ? { ...task, statusMessage: message } : task;
  }

  override cleanup(): void {
    super.cleanup();
    this.finalMessages.clear();
  }
}

/** What a task needs from serve: the host, the result conversion and the result cap. */
export interface CodeModeTaskContext {
  readonly host: CodeModeMcpHost;
  readonly toResult: (answer: Answer) => CallToolResult;
  readonly capResult: (result: CallToolResult) => CallToolResult;
}

/**
 * The task side of serve: an in-memory task store (the SDK answers `tasks/*` from it) that also
 * terminates a task's cell when the client cancels it, and the runs of task-augmented calls.
 */
export class CodeModeTasks {
  readonly store: CodeModeTaskStore;
  private readonly runs = new Map<string, { controller: AbortController; cellId?: string }>();

  constructor(private readonly context: CodeModeTaskContext) {
    this.store = new CodeModeTaskStore((taskId) => this.cancel(taskId));
  }

  /**
   * Starts `call` as a task and answers its `CreateTaskResult` (status `working`) at once. The run
   * dispatches the call; while the answer is "Script running with cell ID …" it follows the cell
   * with `wait` (the status message names the cell, and each step sends
   * `notifications/tasks/status`), then stores the final result: `completed`, or `failed` for an
   * error result. `call` may be the error result of a wrong argument: the task fails with it.
   */
  async start(call: ToolCallItem | CallToolResult, ttl: number | null | undefined, taskStore: RequestTaskStore): Promise<CreateTaskResult> {
    const task = await taskStore.createTask({ ttl: ttl ?? DEFAULT_CODE_MODE_TASK_TTL_MS, pollInterval: POLL_INTERVAL_MS });
    const run = { controller: new AbortController(), cellId: undefined as string | undefined };
    this.runs.set(task.taskId, run);
    void this.follow(task.taskId, call, run, taskStore).finally(() => this.runs.delete(task.taskId));
    return { task };
  }

  /** Aborts every running task (the connection closed) and drops the store's timers. */
  close(): void {
    for (const run of this.runs.values()) run.controller.abort(new Error('the MCP connection closed'));
    this.runs.clear();
    this.store.cleanup();
  }

  private async follow(taskId: string, call: ToolCallItem | CallToolResult, run: { controller: AbortController; cellId?: string }, taskStore: RequestTaskStore): Promise<void> {
    const signal = run.controller.signal;
    const earlier: ContentBlock[] = [];
    // A wrong `exec` argument arrives as its error result: the task fails with it.
    if ('content' in call) return void (await taskStore.storeTaskResult(taskId, 'failed', call as Result).catch(() => undefined));
    let result = await this.dispatch(call, signal);
    for (let cellId = runningCell(result); cellId !== undefined && !signal.aborted; cellId = runningCell(result)) {
      earlier.push(...result.content.slice(1));
      // One status notification per cell, not one per follow-up wait.
      if (run.cellId !== cellId) await taskStore.updateTaskStatus(taskId, 'working', `Script running with cell ID ${cellId}`).catch(() => undefined);
      run.cellId = cellId;
      const wait: ToolCallItem = { type: 'function_call', call_id: call.call_id, name: 'wait', arguments: JSON.stringify({ cell_id: cellId, yield_time_ms: FOLLOW_YIELD_MS }) };
      result = await this.dispatch(wait, signal);
    }
    if (signal.aborted) return;
    // One result for the whole run: the final status header, then every output in order.
    const [header, ...rest] = result.content;
    const whole: CallToolResult = { ...result, content: header ? [header, ...earlier, ...rest] : earlier };
    // A cancelled task is terminal already; the store refuses a second outcome.
    await taskStore.storeTaskResult(taskId, whole.isError ? 'failed' : 'completed', this.context.capResult(whole) as Result).catch(() => undefined);
  }

  private async dispatch(call: ToolCallItem, signal: AbortSignal): Promise<CallToolResult> {
    try {
      return this.context.toResult(await this.context.host.dispatch(call, { signal }));
    } catch (error) {
      return { content: [{ type: 'text', text: `${'name' in call ? call.name : 'call'} failed: ${errorMessage(error)}` }], isError: true };
    }
  }

  /** A cancelled task's cell is terminated (its current `wait` is abandoned first). */
  private cancel(taskId: string): void {
    const run = this.runs.get(taskId);
    if (!run) return;
    run.controller.abort(new Error('the client cancelled the task'));
    if (run.cellId === undefined) return;
    const terminate: ToolCallItem = { type: 'function_call', call_id: `${taskId}-cancel`, name: 'wait', arguments: JSON.stringify({ cell_id: run.cellId, terminate: true }) };
    void this.context.host.dispatch(terminate, { signal: new AbortController().signal }).catch(() => undefined);
  }
}

function runningCell(result: CallToolResult): string | undefined {
  const first = result.content[0];
  return first?.type === 'text' ? RUNNING.exec(first.text)?.[1] : undefined;
}
