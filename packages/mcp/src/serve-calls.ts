import { randomUUID } from 'node:crypto';
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { errorMessage, type ToolCallItem } from '@switchyard/protocol';
import { z } from 'zod';
import type { ApprovalDesk, ApprovalObserver, CellApprovalSource } from './serve-approvals';
import { errorResult } from './serve-results';
import { declaresElicitation, declaresTasks, legacyTask, modernCreateTaskResult } from './serve-task-wire';
import { DEFAULT_CODE_MODE_TASK_TTL_MS, runningCell, type CodeModeTaskEngine } from './serve-tasks';

/** What the `tools/call` handler of one connection works with. */
export interface CallContext {
  readonly era: 'legacy' | 'modern';
  readonly engine: CodeModeTaskEngine;
  readonly desk: ApprovalDesk;
  /** Runs one `exec` / `wait` item; never rejects (a failing host is an error result). */
  readonly run: (item: ToolCallItem, signal: AbortSignal) => Promise<CallToolResult>;
  /** Remembers whether a 2026-07-28 task's client can be asked for approvals. */
  readonly rememberAsking: (taskId: string, canAsk: boolean) => void;
}

/**
 * A call waiting on a cell (2026-07-28): the observer of the cell's approvals. When one arrives
 * the call answers `input_required` (the approvals as `elicitation/create` input requests, its id
 * as `requestState`) and is kept here until the client's retry answers them.
 */
class ObservedCall implements ApprovalObserver {
  readonly id = randomUUID();
  readonly controller = new AbortController();
  readonly result: Promise<CallToolResult>;
  private wake: (() => void) | undefined;

  constructor(
    readonly item: ToolCallItem,
    private readonly cellId: string | undefined,
    run: CallContext['run'],
  ) {
    this.result = run(item, this.controller.signal);
  }

  matches(source: CellApprovalSource): boolean {
    return source.execCallId === this.item.call_id || (this.cellId !== undefined && source.cellId === this.cellId);
  }

  changed(): void {
    this.wake?.();
  }

  /** Resolves when the result is there or the approvals changed. */
  next(): Promise<CallToolResult | undefined> {
    const changed = new Promise<undefined>((resolve) => (this.wake = () => resolve(undefined)));
    return Promise.race([this.result, changed]);
  }
}

const CallParams = z.looseObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional(), task: z.looseObject({ ttl: z.number().nullish() }).optional() });

/**
 * The wire call item of an MCP `tools/call`, or the error result a wrong `exec` argument gets (the
 * model's to fix: a tool error it can read, not a protocol error). Throws `InvalidParams` for a
 * tool this server does not have.
 */
export function toCallItem(name: string, args: Record<string, unknown>, callId: string): ToolCallItem | CallToolResult {
  if (name === 'exec') {
    if (typeof args.code !== 'string') return errorResult('exec expects a `code` argument holding the JavaScript source as a string');
    return { type: 'custom_tool_call', call_id: callId, name: 'exec', input: args.code };
  }
  if (name === 'wait') return { type: 'function_call', call_id: callId, name: 'wait', arguments: JSON.stringify(args) };
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown tool: ${name} (this server has exec and wait)`);
}

/**
 * The `tools/call` handler of one connection. On 2025-11-25 a call carrying `task` becomes a task
 * at once (only `exec` may: `-32601` for `wait`); any other call answers when the host does, its
 * cell's approvals asked with `elicitation/create` meanwhile. On 2026-07-28 the server decides:
 * an `exec` whose cell yields becomes a task when the request declared the Tasks extension, and
 * approvals of the cell the call waits on are answered through `input_required` round trips.
 */
export function createToolsCallHandler(context: CallContext) {
  const suspended = new Map<string, ObservedCall>();
  let sequence = 0;

  return async (request: { params?: unknown; id?: unknown }, ctx: ServerContext): Promise<Record<string, unknown>> => {
    const parsed = CallParams.safeParse(request.params);
    if (!parsed.success) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid tools/call request: ${z.prettifyError(parsed.error)}`);
    const params = parsed.data;
    if (context.era === 'modern') {
      const state = ctx.mcpReq.requestState();
      if (typeof state === 'string') return resume(state, ctx);
    }
    const call = toCallItem(params.name, params.arguments ?? {}, `mcp-${String(ctx.mcpReq.id)}-${++sequence}`);
    if (context.era === 'legacy' && params.task) {
      if (params.name !== 'exec') throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `${params.name} cannot run as a task: only exec supports MCP Tasks`);
      const ttl = params.task.ttl ?? DEFAULT_CODE_MODE_TASK_TTL_MS;
      const start = 'content' in call ? { yielded: call as CallToolResult, callId: `task-${sequence}` } : { call };
      return { task: legacyTask(context.engine.start(start, ttl)) };
    }
    if ('content' in call) return call as CallToolResult;
    if (context.era === 'legacy') return context.run(call, ctx.mcpReq.signal);
    const args = params.arguments ?? {};
    return observe(new ObservedCall(call, typeof args.cell_id === 'string' ? args.cell_id : undefined, context.run), ctx);
  };

  async function resume(state: string, ctx: ServerContext): Promise<Record<string, unknown>> {
    const call = suspended.get(state);
    if (!call) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState');
    suspended.delete(state);
    context.desk.answer(ctx.mcpReq.inputResponses ?? {}, call);
    return observe(call, ctx);
  }

  async function observe(call: ObservedCall, ctx: ServerContext): Promise<Record<string, unknown>> {
    const onAbort = () => call.controller.abort(ctx.mcpReq.signal.reason);
    ctx.mcpReq.signal.addEventListener('abort', onAbort, { once: true });
    const unobserve = context.desk.observe(call);
    try {
      for (;;) {
        const waiting = context.desk.pendingFor(call);
        if (waiting.length > 0 && !declaresElicitation(ctx)) {
          for (const approval of waiting) approval.deny();
          continue;
        }
        if (waiting.length > 0) {
          suspended.set(call.id, call);
          const inputRequests = Object.fromEntries(waiting.map((approval) => [approval.key, { method: 'elicitation/create', params: approval.elicitation }]));
          return { resultType: 'input_required', inputRequests, requestState: call.id };
        }
        const result = await call.next();
        if (!result) continue;
        if (call.item.type === 'custom_tool_call' && runningCell(result) !== undefined && declaresTasks(ctx)) {
          const task = context.engine.start({ yielded: result, callId: call.item.call_id }, DEFAULT_CODE_MODE_TASK_TTL_MS);
          context.rememberAsking(task.taskId, declaresElicitation(ctx));
          return modernCreateTaskResult(task);
        }
        return result;
      }
    } finally {
      unobserve();
      ctx.mcpReq.signal.removeEventListener('abort', onAbort);
    }
  }
}

/** Runs one item through the host; a rejection becomes an error result naming the tool. */
export async function runOnHost(dispatch: () => Promise<CallToolResult>, name: string): Promise<CallToolResult> {
  try {
    return await dispatch();
  } catch (error) {
    return errorResult(`${name} failed: ${errorMessage(error)}`);
  }
}
