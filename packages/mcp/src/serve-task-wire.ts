import { ProtocolError, ProtocolErrorCode, type CallToolResult, type Server, type ServerContext } from '@modelcontextprotocol/server';
import { TASKS_EXTENSION_ID_V2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import { z } from 'zod';
import { isTerminalStatus, type CodeModeTaskEngine, type CodeModeTaskSnapshot } from './serve-tasks';

// The two wire faces of one task engine: the 2025-11-25 revision's Tasks (`params.task` on
// `tools/call`, nested `CreateTaskResult`, `tasks/get` / `tasks/result` / `tasks/list` /
// `tasks/cancel`, `notifications/tasks/status`) and the 2026-07-28 Tasks extension
// `io.modelcontextprotocol/tasks` (server-directed flat `CreateTaskResult` with
// `resultType: "task"`, `tasks/get` with the result or input requests inlined, `tasks/update`,
// `tasks/cancel` as an empty acknowledgement, `-32021` for clients that did not declare it).

/** The 2025-11-25 server capability: `tools/call` may be task-augmented; tasks can be listed and cancelled. */
export const LEGACY_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } } as const;

/** `_meta` key linking a `tasks/result` answer to its task (2025-11-25). */
const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

const TaskIdParams = z.looseObject({ taskId: z.string() });
const ListParams = z.looseObject({ cursor: z.string().optional() }).optional();

/** What both revisions say of a task, by the same names. */
function taskFields(task: CodeModeTaskSnapshot) {
  const { taskId, status, statusMessage, createdAt, lastUpdatedAt } = task;
  return { taskId, status, ...(statusMessage !== undefined ? { statusMessage } : {}), createdAt, lastUpdatedAt };
}

/** A task as 2025-11-25 describes it (`ttl` / `pollInterval`). */
export function legacyTask(task: CodeModeTaskSnapshot) {
  return { ...taskFields(task), ttl: task.ttlMs, pollInterval: task.pollIntervalMs };
}

/** A task as 2026-07-28 describes it (`ttlMs` / `pollIntervalMs`), without the status payload. */
function modernTask(task: CodeModeTaskSnapshot) {
  return { ...taskFields(task), ttlMs: task.ttlMs, pollIntervalMs: task.pollIntervalMs };
}

/** The flat 2026-07-28 `CreateTaskResult` (the task's seed state, no payload). */
export function modernCreateTaskResult(task: CodeModeTaskSnapshot) {
  return { resultType: 'task', ...modernTask(task) };
}

/** The 2026-07-28 `DetailedTask`: the result, the error or the outstanding input requests inlined by status. */
export function modernDetailedTask(task: CodeModeTaskSnapshot) {
  const base = modernTask(task);
  // The inlined result is the CallToolResult the call would have answered: on this revision every result carries its `resultType`.
  if (task.status === 'completed') return { ...base, result: { ...(task.result ?? { content: [] }), resultType: 'complete' } };
  if (task.status === 'failed') return { ...base, error: task.error ?? { code: ProtocolErrorCode.InternalError, message: task.statusMessage ?? 'failed' } };
  if (task.status === 'input_required') {
    const inputRequests = Object.fromEntries(task.inputs.map((input) => [input.key, { method: 'elicitation/create', params: input.elicitation }]));
    return { ...base, inputRequests };
  }
  return base;
}

function notFound(taskId: string): never {
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: Task not found (${taskId})`);
}

function clientCapabilities(ctx: ServerContext): { extensions?: Record<string, unknown>; elicitation?: unknown } | undefined {
  return (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/clientCapabilities'] as { extensions?: Record<string, unknown> } | undefined;
}

/** Whether a 2026-07-28 request declared the Tasks extension in its per-request client capabilities. */
export function declaresTasks(ctx: ServerContext): boolean {
  const extensions = clientCapabilities(ctx)?.extensions;
  return typeof extensions?.[TASKS_EXTENSION_ID_V2] === 'object' && extensions[TASKS_EXTENSION_ID_V2] !== null;
}

/** Whether a 2026-07-28 request declared the `elicitation` client capability. */
export function declaresElicitation(ctx: ServerContext): boolean {
  const capabilities = clientCapabilities(ctx);
  return typeof capabilities?.elicitation === 'object' && capabilities.elicitation !== null;
}

function requireTasksDeclared(ctx: ServerContext): void {
  if (declaresTasks(ctx)) return;
  throw new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, 'Missing required client capability', {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } },
  });
}

/** Registers the 2025-11-25 `tasks/*` handlers on a server of that revision. */
export function handleLegacyTasks(server: Server, engine: CodeModeTaskEngine): void {
  server.setRequestHandler('tasks/get', { params: TaskIdParams }, async ({ taskId }) => {
    const task = engine.get(taskId) ?? notFound(taskId);
    return legacyTask(task);
  });
  server.setRequestHandler('tasks/result', { params: TaskIdParams }, async ({ taskId }, ctx) => {
    const task = (await engine.settled(taskId, ctx.mcpReq.signal)) ?? notFound(taskId);
    if (!task.result) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${taskId} was ${task.status}: it has no result`);
    const result: CallToolResult = task.result;
    return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
  });
  server.setRequestHandler('tasks/list', { params: ListParams }, async () => ({ tasks: engine.list().map(legacyTask) }));
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, async ({ taskId }) => {
    const before = engine.get(taskId) ?? notFound(taskId);
    if (isTerminalStatus(before.status)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${before.status}`);
    return legacyTask(engine.cancel(taskId) ?? notFound(taskId));
  });
}

/** Registers the 2026-07-28 Tasks extension's `tasks/*` handlers on a server of that revision. */
export function handleModernTasks(server: Server, engine: CodeModeTaskEngine): void {
  server.setRequestHandler('tasks/get', { params: TaskIdParams }, async ({ taskId }, ctx) => {
    requireTasksDeclared(ctx);
    return modernDetailedTask(engine.get(taskId) ?? notFound(taskId));
  });
  // The SDK lifts `inputResponses` out of every request's params into the context.
  server.setRequestHandler('tasks/update', { params: TaskIdParams }, async ({ taskId }, ctx) => {
    requireTasksDeclared(ctx);
    if (!engine.answer(taskId, ctx.mcpReq.inputResponses ?? {})) notFound(taskId);
    return {};
  });
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, async ({ taskId }, ctx) => {
    requireTasksDeclared(ctx);
    engine.cancel(taskId) ?? notFound(taskId);
    return {};
  });
}
