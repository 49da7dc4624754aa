import {
  executorPayloadKinds,
  type HookRunner,
  type JsonObject,
  type PostToolUseOutcome,
  type PostToolUseRequest,
  type PreToolUseOutcome,
  type PreToolUseRequest,
  type ResponseItem,
  type StepContext,
  type SwitchyardEvent,
  type SwitchyardEventType,
  type ToolExecutor,
  type ToolPayload,
  type ToolPayloadKind,
} from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';
import { executorCallItem } from '../executor-host';
import { ToolCallRuntime, type DispatchResult } from '../tool-call-runtime';
import { ToolRegistry } from '../tool-registry';
import { createToolRouter, type ToolRouter } from '../tool-router';

/**
 * What a test hands to a tool: a payload as the registry carries it (`{ kind: 'function', arguments }`,
 * `{ kind: 'custom', input }`, `{ kind: 'tool-search', arguments }`), the arguments object of a function
 * call, or a string — the text the model wrote: a function call's raw arguments (malformed JSON
 * included) or a freeform tool's input.
 */
export type ToolCallInput = ToolPayload | JsonObject | string;

/** Options of {@link invokeTool}. */
export interface InvokeToolOptions {
  /** The call's `call_id`; default `call-<n>`, unique in the process. */
  callId?: string;
  /** Overrides of the step the call runs in (cwd, clock, context window, approvals, …). */
  step?: Partial<StepContext>;
  /** The turn's signal: aborting it cancels the call (an aborted output, as in a session). */
  signal?: AbortSignal;
  /**
   * Hooks around the call. Default: a runner that records every hook input and lets the call
   * continue, so `hookInputs` shows what PreToolUse/PostToolUse would see. `false`: no hook runner
   * at all (a session without hooks). A runner of your own is recorded too.
   */
  hooks?: HookRunner | false;
  /** Other executors registered beside it: the handler's `invocation.tools` reaches them (hooks and all). */
  tools?: readonly ToolExecutor[];
}

/** The hook inputs a call produced (what each hook's stdin would carry, before JSON encoding). */
export interface RecordedHookInputs {
  readonly pre: PreToolUseRequest[];
  readonly post: PostToolUseRequest[];
}

/** The answer of {@link invokeTool}: the registry's result plus what the test can observe around it. */
export interface InvokeToolResult extends DispatchResult {
  /** Every lifecycle event of the call (and of sibling calls), in order: `tool-call-start`, notifications, `tool-call-end`, … */
  readonly events: readonly SwitchyardEvent[];
  /** The hook inputs of the call (empty with `hooks: false`). */
  readonly hookInputs: RecordedHookInputs;
  /** The wire item the call was made from (what the model sent). */
  readonly callItem: ResponseItem;
}

/** The events a session forwards from a step's router. */
const TOOL_EVENTS: readonly SwitchyardEventType[] = ['tool-call-start', 'tool-call-end', 'tool-call-blocked', 'tool-call-aborted', 'tool-notification'];

let counter = 0;

/**
 * One step's registry, router and runtime around `executor` (and `options.tools`), built the way a
 * session builds each step: `ToolRegistry.from` → `createToolRouter` → `ToolCallRuntime`. Calls are
 * made from wire items through `runtime.handleItem`, so the router's call building, the dispatch
 * order, validation, hooks, the gate and cancellation are the ones a session runs.
 */
export interface ToolHarness {
  readonly router: ToolRouter;
  readonly runtime: ToolCallRuntime;
  readonly events: SwitchyardEvent[];
  readonly hookInputs: RecordedHookInputs;
  /** Makes one call; resolves with its result, rejects only with a fatal error (the turn would end). */
  call(input: ToolCallInput, callId?: string): Promise<InvokeToolResult>;
  /** Releases the runtime's listener on the turn signal. */
  dispose(): void;
}

/** Builds a {@link ToolHarness}: the pieces a session builds for one step, over one executor. */
export function createToolHarness(executor: ToolExecutor, options: Omit<InvokeToolOptions, 'callId'> = {}): ToolHarness {
  const executors = [executor, ...(options.tools ?? [])];
  const registry = ToolRegistry.from(executors);
  const hookInputs: RecordedHookInputs = { pre: [], post: [] };
  const hooks = options.hooks === false ? undefined : recordingHooks(options.hooks, hookInputs);
  const router = createToolRouter({ specs: executors.map((candidate) => candidate.spec), registry, hooks });
  const events: SwitchyardEvent[] = [];
  for (const type of TOOL_EVENTS) router.on(type, (event) => events.push(event));
  const runtime = new ToolCallRuntime({ router, step: createStepContext(options.step), signal: options.signal });
  return {
    router,
    runtime,
    events,
    hookInputs,
    async call(input, callId = `call-${++counter}`) {
      const callItem = wireCall(executor, input, callId);
      const result = await runtime.handleItem(callItem);
      // The router turns every call item into a call; a miss means the item builder above is wrong.
      if (!result) throw new Error(`invokeTool: the router did not read ${JSON.stringify(callItem)} as a tool call`);
      return { ...result, events, hookInputs, callItem };
    },
    dispose: () => runtime.dispose(),
  };
}

/**
 * Runs one call of `executor` through the same registry, router and runtime a session uses, and
 * resolves with the model-visible answer (`item`, carrying the call's `call_id`), the output, the
 * error code of a failure, the events and the hook inputs. Model-visible failures (invalid input,
 * refusals, thrown errors, aborts, a call of the wrong payload kind) resolve; only a fatal error
 * (`FATAL`) rejects, as it would end a session's turn.
 */
export async function invokeTool(executor: ToolExecutor, input: ToolCallInput = {}, options: InvokeToolOptions = {}): Promise<InvokeToolResult> {
  const harness = createToolHarness(executor, options);
  try {
    return await harness.call(input, options.callId);
  } finally {
    harness.dispose();
  }
}

/** The payload kind `input` stands for on `executor` (a string is the text of its own kind). */
export function payloadOf(executor: ToolExecutor, input: ToolCallInput): ToolPayload {
  if (isPayload(input)) return input;
  if (typeof input === 'string') {
    const kinds = executorPayloadKinds(executor);
    return kinds.includes('function') || !kinds.includes('custom') ? { kind: 'function', arguments: input } : { kind: 'custom', input };
  }
  return { kind: 'function', arguments: JSON.stringify(input) };
}

/**
 * The wire item the model would send for this call. An arguments object whose only keys are a
 * payload's (`kind` with `arguments` or `input`) is read as that payload; pass such arguments as
 * `{ kind: 'function', arguments: JSON.stringify(args) }`.
 */
function wireCall(executor: ToolExecutor, input: ToolCallInput, callId: string): ResponseItem {
  return executorCallItem(executor, payloadOf(executor, input), callId);
}

const PAYLOAD_FIELDS: Record<ToolPayloadKind, string> = { function: 'arguments', custom: 'input', 'tool-search': 'arguments' };

function isPayload(input: ToolCallInput): input is ToolPayload {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return false;
  const kind = (input as { kind?: unknown }).kind;
  if (typeof kind !== 'string' || !(kind in PAYLOAD_FIELDS)) return false;
  const keys = Object.keys(input);
  return keys.length === 2 && keys.includes(PAYLOAD_FIELDS[kind as ToolPayloadKind]);
}

/** A hook runner that records every input, then answers with `inner` (or "continue"). */
function recordingHooks(inner: HookRunner | undefined, record: RecordedHookInputs): HookRunner {
  return {
    async runPreToolUse(request): Promise<PreToolUseOutcome> {
      record.pre.push(request);
      return inner ? inner.runPreToolUse(request) : { blocked: false, additionalContexts: [] };
    },
    async runPostToolUse(request): Promise<PostToolUseOutcome> {
      record.post.push(request);
      return inner ? inner.runPostToolUse(request) : { additionalContexts: [] };
    },
  };
}
