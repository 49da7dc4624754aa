import {
  errorMessage,
  jsonBoundsViolation,
  type ApprovalProvider,
  type HookEndEvent,
  type HookStartEvent,
  type JsonBounds,
  type McpToolCaller,
} from '@switchyard/protocol';
import { elapsedMs, type EventHub } from '@switchyard/kit/internal';
import { runHookCommand } from './command-runner';
import type { ConfiguredHandler, HookEventName } from './hooks-config';
import type { HandlerRunResult } from './hook-output';
import type { AnyHookInput as HookInput } from './hook-payload';
import { runFunctionHook } from './function-hook';
import { runHttpHook } from './http-hook';
import { runMcpToolHook } from './mcp-tool-hook';

// What every hook event shares: running one handler with its events, selecting and running an
// event's handlers, and the texts a failed required or fail-closed handler leaves.

/** What the engine's runs share: how handlers are started, the events, the runs to abort on close(). */
export interface EngineContext {
  readonly handlers: readonly ConfiguredHandler[];
  readonly shell: string;
  readonly loginShell: boolean;
  readonly transcriptPath: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly maxOutputBytes: number;
  readonly inputBounds: JsonBounds;
  /** The engine's `failClosed` option (a handler's own overrides it). */
  readonly failClosed: boolean | undefined;
  readonly approvals: ApprovalProvider | undefined;
  /** The parsed `allowedHttpHookUrls` (`undefined`: not set). */
  readonly allowedHttpHookUrls: readonly URL[] | undefined;
  /** The caller of `mcp_tool` hooks (made from `mcpServers` by the `mcpToolCaller` factory). */
  readonly mcpCaller: McpToolCaller | undefined;
  readonly events: EventHub<HookStartEvent | HookEndEvent>;
  /** Aborted by close(). */
  readonly running: Set<{ controller: AbortController; done: Promise<unknown> }>;
}

/** A decision shape every event shares, so a failure can stand in for any. */
export interface BaseDecision {
  status: string;
  error?: string;
  additionalContexts: string[];
  warnings: string[];
}

/** A decision of a handler that failed (a failure standing in for any event's decision). */
export function failed<D extends BaseDecision>(error: string): D {
  return { status: 'failed', error, additionalContexts: [], warnings: [] } as unknown as D;
}

/** Turns a raw run into a decision (may be async: `ask` consults an approval provider). */
type Decide<D> = (result: HandlerRunResult, handler: ConfiguredHandler) => Promise<D> | D;

/** How one hook event turns runs into decisions and events. */
export interface DecisionPolicy<D extends BaseDecision> {
  /** The raw run → a decision. */
  decide: Decide<D>;
  /** The `hook-end` event's outcome and message. */
  describe: (decision: D) => Pick<HookEndEvent, 'outcome' | 'message'>;
  /** The decision of a failed fail-closed handler (`reason`: what the model reads). */
  closed: (reason: string, decision: D) => D;
}

/** One handler's decision, with the order it finished in and its run id. */
export interface RunRecord<D> {
  decision: D;
  completionOrder: number;
  runId: string;
}

/** Selected handlers' records, or why the input cannot be given to them. */
type Dispatched<D> = { runs: Array<RunRecord<D>>; unhookable?: undefined } | { runs?: undefined; unhookable: string };

const EVENT_KEYS: Record<HookEventName, string> = {
  PreToolUse: 'pre-tool-use',
  PostToolUse: 'post-tool-use',
  PostToolUseFailure: 'post-tool-use-failure',
  PermissionRequest: 'permission-request',
  SessionStart: 'session-start',
  UserPromptSubmit: 'user-prompt-submit',
  Stop: 'stop',
  SessionEnd: 'session-end',
  Interrupt: 'interrupt',
};

/** The PreToolUse block reason of a failed fail-closed handler. */
export function failClosedReason(error: string): string {
  return `hook failed and is fail-closed: ${error}`;
}

/** The block reason (what the model reads) of a required handler that failed: it names the hook. */
function requiredFailureReason(label: string, error: string): string {
  return `required ${label} failed: ${error}`;
}

/** The feedback (what the model reads) of a failed fail-closed PostToolUse or PostToolUseFailure handler. */
export function failClosedFeedback(event: HookEventName, error: string): string {
  return withheldFeedback(event, failClosedReason(error));
}

/** The feedback that withholds a tool output: `reason` is a closing reason ({@link failClosedReason}, a required handler's). */
export function withheldFeedback(event: HookEventName, reason: string): string {
  return `the tool output was withheld: a ${event} ${reason}`;
}

/** The block reason of a call whose input cannot be given to its hooks. */
export function unhookableReason(why: string): string {
  return `the tool input cannot be checked by hooks: ${why}`;
}

/** The feedback of a call whose output (or failure) cannot be given to its PostToolUse (PostToolUseFailure) hooks. */
export function unhookableFeedback(event: HookEventName, why: string): string {
  return `the tool output was withheld: it cannot be checked by ${event} hooks: ${why}`;
}

/** Runs one handler of any kind; never rejects. */
async function runHandler(context: EngineContext, run: { handler: ConfiguredHandler; input: HookInput; inputJson: string; signal: AbortSignal }): Promise<HandlerRunResult> {
  const { handler, inputJson, signal } = run;
  switch (handler.kind) {
    case 'function':
      return runFunctionHook(handler, inputJson, signal);
    case 'http':
      return runHttpHook(handler, inputJson, signal, { allowed: context.allowedHttpHookUrls, maxOutputBytes: context.maxOutputBytes, env: context.env });
    case 'mcp_tool':
      // configuration refuses an mcp_tool handler without a caller, so this is never undefined here
      return runMcpToolHook(handler, inputJson, signal, { caller: context.mcpCaller as McpToolCaller, maxOutputBytes: context.maxOutputBytes });
    default:
      break;
  }
  // A command runs beside its hooks.json, so `node hooks/policy.mjs` finds its script whatever the
  // session cwd; the session cwd stays on stdin (`cwd`) and in SWITCHYARD_SESSION_CWD.
  const dir = handler.dir ?? run.input.cwd;
  const result = await runHookCommand({
    command: handler.command,
    cwd: dir,
    input: inputJson,
    timeoutSec: handler.timeoutSec,
    shell: context.shell,
    loginShell: context.loginShell,
    env: { ...context.env, SWITCHYARD_SESSION_CWD: run.input.cwd, SWITCHYARD_HOOKS_DIR: dir },
    maxOutputBytes: context.maxOutputBytes,
    signal,
  });
  return { ...result, maxOutputBytes: context.maxOutputBytes };
}

/** The tool a hook input is about (`''` for lifecycle events without one). */
function toolOf(input: HookInput): string {
  return 'tool_name' in input ? input.tool_name : '';
}

/** Runs the handler and turns its run into a decision; a failure of a fail-closed handler becomes the policy's closed decision. */
async function decideRun<D extends BaseDecision>(
  context: EngineContext,
  run: { handler: ConfiguredHandler; input: HookInput; inputJson: string; policy: DecisionPolicy<D>; signal: AbortSignal },
): Promise<{ decision: D; error?: string }> {
  const { handler, policy } = run;
  let decision: D;
  try {
    decision = await policy.decide(await runHandler(context, run), handler);
  } catch (error) {
    decision = failed<D>(errorMessage(error));
  }
  if (decision.status !== 'failed') return { decision };
  const error = decision.error ?? 'unknown failure';
  const failClosed = !handler.async && (handler.required || (handler.failClosed ?? context.failClosed ?? false));
  if (!failClosed) return { decision, error };
  return { decision: policy.closed(handler.required ? requiredFailureReason(handler.label, error) : failClosedReason(error), decision), error };
}

/** Runs one handler with its `hook-start` / `hook-end` events (`hook-end` always comes, whatever happened to the run). */
async function executeHandler<D extends BaseDecision>(
  context: EngineContext,
  run: { handler: ConfiguredHandler; input: HookInput; inputJson: string; runId: string; parentSignal: AbortSignal; policy: DecisionPolicy<D> },
): Promise<D> {
  const { handler, input, runId, parentSignal, policy } = run;
  const controller = new AbortController();
  const forward = () => controller.abort();
  parentSignal.addEventListener('abort', forward, { once: true });
  if (parentSignal.aborted) controller.abort();
  const started = performance.now();
  const common = { runId, event: handler.event, toolName: toolOf(input), sessionId: input.session_id };
  context.events.emit({ type: 'hook-start', ...common });
  const work = decideRun(context, { handler, input, inputJson: run.inputJson, policy, signal: controller.signal });
  const entry = { controller, done: work };
  context.running.add(entry);
  try {
    const { decision, error } = await work;
    const described = policy.describe(decision);
    context.events.emit({
      type: 'hook-end',
      ...common,
      outcome: described.outcome,
      durationMs: elapsedMs(started),
      ...(described.message !== undefined ? { message: described.message } : {}),
      ...(error !== undefined ? { error } : {}),
      hook: handler.label,
      required: handler.required,
    });
    return decision;
  } finally {
    context.running.delete(entry);
    parentSignal.removeEventListener('abort', forward);
  }
}

/** What one event dispatch needs: the names matchers try (`undefined`: matchers are ignored), the run id suffix, the stdin object. */
export interface DispatchRequest<D extends BaseDecision> {
  event: HookEventName;
  names: readonly string[] | undefined;
  runIdSuffix: string;
  input: HookInput;
  signal: AbortSignal;
  policy: DecisionPolicy<D>;
}

export function safeMatch(handler: ConfiguredHandler, names: readonly string[]): boolean {
  try {
    return handler.matcher(names);
  } catch {
    return false;
  }
}

/**
 * Selects handlers, serializes the input once (refusing one past the bounds), runs the handlers
 * concurrently (async ones detached) and returns their results in configured order.
 */
export async function dispatchHandlers<D extends BaseDecision>(context: EngineContext, run: DispatchRequest<D>): Promise<Dispatched<D>> {
  const { event, names, input, policy } = run;
  const selected = context.handlers.filter((handler) => handler.event === event && (names === undefined || safeMatch(handler, names)));
  if (selected.length === 0) return { runs: [] };
  const violation = jsonBoundsViolation(input, context.inputBounds);
  if (violation) return { unhookable: violation };
  let inputJson: string;
  try {
    inputJson = JSON.stringify(input);
  } catch (error) {
    return { unhookable: `it cannot be serialized (${errorMessage(error)})` };
  }
  let completed = 0;
  const runs = selected.map((handler) => {
    const runId = `${EVENT_KEYS[event]}:${handler.displayOrder}:${handler.sourcePath}:${run.runIdSuffix}`;
    if (handler.async) {
      // Fire and forget; still bounded by its timeout and killed by close().
      void executeHandler(context, { handler, input, inputJson, runId, parentSignal: new AbortController().signal, policy });
      return undefined;
    }
    return executeHandler(context, { handler, input, inputJson, runId, parentSignal: run.signal, policy }).then((decision) => ({
      decision,
      completionOrder: completed++,
      runId,
    }));
  });
  return { runs: await Promise.all(runs.filter((run) => run !== undefined)) };
}

/** Matcher names of a tool event: the tool name, then its aliases. */
export function toolNames(request: { toolName: string; aliases?: readonly string[] }): string[] {
  return [request.toolName, ...(request.aliases ?? [])];
}

/** Every run's warnings, and a line for each failed run. */
export function collectWarnings(runs: ReadonlyArray<RunRecord<BaseDecision>>): string[] {
  return runs.flatMap(runWarnings);
}

/** One run's warnings, and a line naming it when it failed. */
export function runWarnings(run: RunRecord<BaseDecision>): string[] {
  return [...run.decision.warnings, ...(run.decision.status === 'failed' ? [`hook ${run.runId} failed: ${run.decision.error}`] : [])];
}
