import type { Client, Tool } from '@modelcontextprotocol/client';
import { resultFromTaskOutcome, type TaskEnabledSession, type TaskView, type ToolDeclaration } from '@modelcontextprotocol/ext-tasks/client';
import type { JsonObject } from '@switchyard/protocol';
import { CallTimer, type CallTimeoutLimit, type ElicitationPause } from './call-timer';

/** The SDK's own request timeout is not used for calls (the {@link CallTimer} is): the longest timer Node allows. */
const NO_SDK_TIMEOUT = 2_147_483_647;

/** A call ran into one of its time limits (`toolTimeoutMs` without progress, or `maxCallTimeMs`). */
export class CallTimeoutError extends Error {
  override name = 'CallTimeoutError';
  constructor(
    readonly limit: CallTimeoutLimit,
    readonly ms: number,
  ) {
    // The text the server reads in `notifications/cancelled` (the SDK's own timeout says "Request timed out").
    super(limit === 'idle' ? `Request timed out after ${ms} ms without progress` : `Request timed out: it ran ${ms} ms in all (maxCallTimeMs)`);
  }
}

/**
 * The states of an MCP task. Spelled out here rather than taken from the tasks SDK's `TaskView`:
 * this type is public, and the SDK's schema declarations it would pull into a host's type-check
 * do not compile with `skipLibCheck: false`. Kept equal to the SDK's states at compile time below.
 */
type McpTaskState = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
true satisfies ([TaskView['status']] extends [McpTaskState] ? ([McpTaskState] extends [TaskView['status']] ? true : never) : never);

/** A task's status as a call sees it change. */
export interface McpTaskStatus {
  readonly taskId: string;
  readonly status: McpTaskState;
  readonly statusMessage?: string;
}

/** One `tools/call` to make. */
export interface ToolCallRequest {
  readonly rawName: string;
  readonly args: JsonObject;
  /** Aborts the call (the server hears `notifications/cancelled`, or `tasks/cancel` for a task). */
  readonly signal: AbortSignal;
  /** Running time allowed without progress (`toolTimeoutMs`). */
  readonly idleMs: number;
  /** Running time allowed in all (`maxCallTimeMs`). */
  readonly totalMs?: number;
  /** The tool as the server listed it, for the 2026-07-28 `Mcp-Param-*` headers (without its output schema: results are checked by the caller). */
  readonly definition?: Tool;
  /** The tool's task declaration (`execution.taskSupport`), for a 2025-11-25 server. */
  readonly declaration?: ToolDeclaration;
  readonly onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  readonly onTaskStatus?: (status: McpTaskStatus) => void;
}

/** What calls to one server share. */
export interface ToolCallContext {
  readonly client: Client;
  /** The server's MCP Tasks session, when it runs tasks. */
  readonly session: TaskEnabledSession | undefined;
  /** The server's pending elicitations (they pause every call's time limits). */
  readonly pause: ElicitationPause;
}

/**
 * Whether a call runs through the Tasks session: on a 2026-07-28 server with the extension every
 * call does (each declares the extension; the server decides which become tasks); on a 2025-11-25
 * server with task support, the tools whose `execution.taskSupport` is `"required"` (they refuse a
 * plain call) — an `"optional"` tool is called directly, as the tool also answers that way.
 */
export function runsAsTask(context: ToolCallContext, declaration: ToolDeclaration | undefined): boolean {
  if (!context.session) return false;
  return context.client.getProtocolEra() === 'modern' || declaration?.taskSupport === 'required';
}

/**
 * Makes one call and resolves with the server's raw result. Time is counted by a {@link CallTimer}:
 * progress (or a task's status change) restarts the idle limit, and nothing is counted while an
 * elicitation of the server waits for the user. Rejects with a {@link CallTimeoutError} when a
 * limit is reached, and with the cause when the call fails or `signal` aborts.
 */
export async function callToolOnServer(context: ToolCallContext, request: ToolCallRequest): Promise<unknown> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(request.signal.reason);
  request.signal.addEventListener('abort', onAbort, { once: true });
  const timer = new CallTimer({
    idleMs: request.idleMs,
    ...(request.totalMs !== undefined ? { totalMs: request.totalMs } : {}),
    pause: context.pause,
    onTimeout: (limit) => controller.abort(new CallTimeoutError(limit, limit === 'idle' ? request.idleMs : request.totalMs!)),
  });
  try {
    return runsAsTask(context, request.declaration) ? await callAsTask(context, request, controller.signal, timer) : await callDirectly(context, request, controller.signal, timer);
  } catch (error) {
    if (controller.signal.reason instanceof CallTimeoutError) throw controller.signal.reason;
    throw error;
  } finally {
    timer.dispose();
    request.signal.removeEventListener('abort', onAbort);
  }
}

async function callDirectly(context: ToolCallContext, request: ToolCallRequest, signal: AbortSignal, timer: CallTimer): Promise<unknown> {
  return context.client.callTool(
    { name: request.rawName, arguments: request.args },
    {
      signal,
      timeout: NO_SDK_TIMEOUT,
      onprogress: (progress) => {
        timer.progress();
        try {
          request.onProgress?.({
            progress: progress.progress,
            ...(progress.total !== undefined ? { total: progress.total } : {}),
            ...(progress.message !== undefined ? { message: progress.message } : {}),
          });
        } catch {
          // A broken listener must not fail the call.
        }
      },
      ...(request.definition ? { toolDefinition: request.definition } : {}),
    },
  );
}

async function callAsTask(context: ToolCallContext, request: ToolCallRequest, signal: AbortSignal, timer: CallTimer): Promise<unknown> {
  const session = context.session!;
  const execution = await session.callTool(request.rawName, request.args, { signal, ...(request.declaration ? { declaration: request.declaration } : {}) });
  let last = '';
  try {
    const { outcome } = await execution.settle({
      signal,
      onEvent: (event) => {
        if (event.type !== 'task') return;
        const { taskId, status, statusMessage, lastUpdatedAt } = event.task;
        const seen = `${status}\u0000${statusMessage ?? ''}\u0000${lastUpdatedAt ?? ''}`;
        if (seen === last) return;
        last = seen;
        timer.progress();
        try {
          request.onTaskStatus?.({ taskId, status, ...(statusMessage !== undefined ? { statusMessage } : {}) });
        } catch {
          // A broken listener must not fail the call.
        }
      },
    });
    return resultFromTaskOutcome(outcome);
  } catch (error) {
    // Stopped waiting (a timeout, the caller's cancel): the server's task is cancelled too.
    if (signal.aborted && execution.kind === 'task') await execution.cancel().catch(() => undefined);
    throw error;
  }
}
