import {
  RespondToModelError,
  SwitchyardError,
  displayName,
  errorMessage,
  executorPayloadKinds,
  hookCaller,
  isFatalError,
  isSwitchyardError,
  jsonBoundsViolation,
  type HookRunner,
  type HookToolInput,
  type JsonBounds,
  type JsonValue,
  type PostToolUseOutcome,
  type PreToolUseOutcome,
  type StepContext,
  type ToolAccess,
  type ToolCall,
  type ToolCallSource,
  type ToolExecutor,
  type ToolInvocation,
  type ToolName,
  type ToolOutput,
  type ToolPayload,
} from '@switchyard/protocol';
import { toToolOutput } from '@switchyard/kit';
import { AbortedToolOutput, FailureToolOutput, elapsedMs } from '@switchyard/kit/internal';
import { malformedCallMessage } from './build-tool-call';
import { HookFeedbackOutput } from './hook-feedback-output';
import { outputFailure, runFailureHooks } from './failure-hooks';
import { blockedMessage, matcherAliases, postHookInput, preHookInput, rewritePayload } from './hook-payloads';
import { parseFunctionArguments, validateArguments } from './input-validation';
import type { ToolRouter } from './tool-router';

/** What the model reads for a call of the wrong payload kind. */
const INCOMPATIBLE_PAYLOAD_ANSWER = 'aborted';

/** Text the model reads when a PostToolUse hook stops without a reason. */
export const POST_HOOK_STOPPED_MESSAGE = 'PostToolUse hook stopped execution';

/** What one dispatch needs from the runtime that owns the call. */
export interface DispatchContext {
  readonly call: ToolCall;
  readonly source: ToolCallSource;
  readonly executor: ToolExecutor | undefined;
  readonly router: ToolRouter;
  readonly step: StepContext;
  /** The call's own signal (aborted on cancellation). */
  readonly signal: AbortSignal;
  /** True once the call is cancelled: `signal.aborted` without reading the signal (a slow getter in Node 20). */
  cancelled(): boolean;
  readonly tools: ToolAccess;
  /** Claims the call's terminal outcome; `false` when cancellation claimed it first. */
  claim(): boolean;
  /** Records hook additional contexts as they arrive. */
  addContexts(contexts: readonly string[]): void;
}

/** The result of a dispatch that did not end the turn. */
export interface DispatchOutcome {
  readonly output: ToolOutput;
  /** The payload the handler saw (after any PreToolUse rewrite). */
  readonly payload: ToolPayload;
  /** The model-visible error, when the call failed before or inside its handler. */
  readonly error?: SwitchyardError;
}

/**
 * The registry's dispatch order: malformed tool_search arguments →
 * lookup → payload kind check → input validation → `tool-call-start` → PreToolUse hooks → handler
 * → PostToolUse hooks (successful calls) or PostToolUseFailure hooks (failed ones) → `tool-call-end`.
 * Resolves with model-visible failures; rejects only with fatal Switchyard errors.
 */
export async function dispatchToolCall(context: DispatchContext): Promise<DispatchOutcome> {
  const checked = checkCall(context);
  if ('output' in checked) return checked;
  const { executor, display, hookInput } = checked;
  throwIfCancelled(context);
  const lifecycle = startCall(context, display);
  let payload = context.call.payload;
  let invocation = checked.invocation;
  if (hookInput) {
    const pre = await runPreHooks({ context, executor, display, invocation, input: hookInput, lifecycle });
    if ('answered' in pre) return pre.answered;
    if (pre.payload !== payload) {
      payload = pre.payload;
      invocation = createInvocation(context, payload, pre.args);
    }
  }
  throwIfCancelled(context);
  let output: ToolOutput;
  try {
    output = toToolOutput(await executor.handle(invocation));
  } catch (error) {
    if (isFatalError(error)) {
      lifecycle.end({ success: false, handlerExecuted: true, failure: error });
      throw error;
    }
    const failure = asModelError(error, display);
    const failed = new FailureToolOutput(failure.message);
    const answer = context.router.hooks ? await runFailureHooks({ context, executor, invocation, output: failed, failure: { message: failure.message, code: failure.code } }) : failed;
    return lifecycle.fail({ handlerExecuted: true, payload, failure, output: answer });
  }
  const success = output.success !== false;
  if (success && context.router.hooks) {
    const post = await runPostHooks({ context, executor, display, invocation, output, lifecycle, payload });
    if ('answered' in post) return post.answered;
    output = post.output;
  } else if (!success && context.router.hooks) {
    output = await runFailureHooks({ context, executor, invocation, output, failure: outputFailure(output, invocation) });
  }
  lifecycle.end({ success, handlerExecuted: true });
  return { output, payload };
}

/** A call that passed its checks: the executor, its display name, its invocation and (with hooks) its bounded hook input. */
interface CheckedCall {
  readonly executor: ToolExecutor;
  readonly display: string;
  readonly invocation: ToolInvocation;
  readonly hookInput: HookToolInput | undefined;
}

/**
 * The checks before a call starts (no lifecycle events yet): arguments, lookup, payload kind (a
 * mismatch is answered `aborted`), validation, and the hook input — one hooks cannot be given is refused like an
 * invalid one, never run without its hooks.
 */
function checkCall(context: DispatchContext): CheckedCall | DispatchOutcome {
  const { call, executor, router } = context;
  const display = displayName(call.toolName);
  const malformed = malformedCallMessage(call);
  if (malformed !== undefined) return refuse(context, call.payload, new RespondToModelError(malformed, { code: 'INVALID_INPUT' }));
  if (!executor) {
    const message = call.payload.kind === 'custom' ? `unsupported custom tool call: ${display}` : `unsupported call: ${display}`;
    return refuse(context, call.payload, new RespondToModelError(message, { code: 'TOOL_NOT_FOUND' }));
  }
  if (!executorPayloadKinds(executor).includes(call.payload.kind)) {
    // The wrong kind of call (`exec_command` as a custom call) is a model's slip, not the host's
    // failure: the model reads `aborted` and samples again, as the reference answers; the host gets
    // the error with the result.
    context.claim();
    const error = new SwitchyardError('INCOMPATIBLE_PAYLOAD', `tool ${display} invoked with incompatible payload`);
    return { output: new AbortedToolOutput(INCOMPATIBLE_PAYLOAD_ANSWER), payload: call.payload, error };
  }
  let invocation: ToolInvocation;
  try {
    invocation = createInvocation(context, call.payload, validatePayload(executor, display, call.payload));
  } catch (error) {
    return refuse(context, call.payload, asModelError(error, display));
  }
  if (!router.hooks) return { executor, display, invocation, hookInput: undefined };
  try {
    const input = preHookInput(executor, invocation);
    // no PreToolUse hook reads this call: its input is neither bounded nor refused for its size
    if (input === undefined || !hasHooks(router.hooks, 'PreToolUse', input, call.toolName)) return { executor, display, invocation, hookInput: undefined };
    return { executor, display, invocation, hookInput: hookableInput(input, router.hookInputBounds) };
  } catch (error) {
    return refuse(context, call.payload, unhookable(display, error));
  }
}

/** The events of a started call; each terminal one is emitted only if the call claims its outcome. */
interface CallLifecycle {
  end(outcome: { success: boolean; handlerExecuted: boolean; failure?: unknown }): void;
  /** Ends the call as failed with the model-visible `failure` and answers with it (or with `output`, its text replaced by PostToolUseFailure hooks). */
  fail(outcome: { handlerExecuted: boolean; payload: ToolPayload; failure: SwitchyardError; output?: ToolOutput }): DispatchOutcome;
  blocked(reason: string): void;
}

/** Emits `tool-call-start` and returns the call's terminal events. */
function startCall(context: DispatchContext, display: string): CallLifecycle {
  const { call, router } = context;
  const startedAt = performance.now();
  const base = { callId: call.callId, toolName: display, source: context.source };
  router.emit({ type: 'tool-call-start', ...base, ...payloadText(call.payload) });
  const lifecycle: CallLifecycle = {
    end({ success, handlerExecuted, failure }) {
      if (!context.claim()) return;
      const error = failure === undefined ? undefined : { code: isSwitchyardError(failure) ? failure.code : 'INTERNAL', message: errorMessage(failure) };
      router.emit({ type: 'tool-call-end', ...base, success, durationMs: elapsedMs(startedAt), handlerExecuted, ...(error ? { error } : {}) });
    },
    fail({ handlerExecuted, payload, failure, output }) {
      lifecycle.end({ success: false, handlerExecuted, failure });
      return { output: output ?? new FailureToolOutput(failure.message), payload, error: failure };
    },
    blocked(reason) {
      if (context.claim()) router.emit({ type: 'tool-call-blocked', ...base, reason });
    },
  };
  return lifecycle;
}

/** The payload's own text for `tool-call-start` (never parsed here): function arguments or freeform input. */
function payloadText(payload: ToolPayload): { input?: string } {
  if (payload.kind === 'function') return { input: payload.arguments };
  if (payload.kind === 'custom') return { input: payload.input };
  return {};
}

/** Runs PreToolUse hooks: the call is blocked, its rewrite fails (answered), or it goes on with the (maybe rewritten) payload. */
async function runPreHooks(run: {
  context: DispatchContext;
  executor: ToolExecutor;
  display: string;
  invocation: ToolInvocation;
  input: HookToolInput;
  lifecycle: CallLifecycle;
}): Promise<{ answered: DispatchOutcome } | { payload: ToolPayload; args?: JsonValue }> {
  const { context, executor, display, invocation, input, lifecycle } = run;
  const { call } = context;
  const hooks = context.router.hooks!;
  const request = { ...input, aliases: matcherAliases(input, call.toolName), toolUseId: call.callId, caller: hookCaller(context.source), step: context.step, signal: context.signal };
  const outcome: PreToolUseOutcome | undefined = await failOpenAsync(() => hooks.runPreToolUse(request));
  if (!outcome) return { payload: invocation.payload };
  context.addContexts(stringList(outcome.additionalContexts));
  if (outcome.blocked) {
    const reason = typeof outcome.reason === 'string' && outcome.reason !== '' ? outcome.reason : 'no reason given';
    const error = new RespondToModelError(blockedMessage(input, reason), { code: 'HOOK_BLOCKED' });
    lifecycle.blocked(reason);
    return { answered: { output: new FailureToolOutput(error.message), payload: invocation.payload, error } };
  }
  if (outcome.updatedInput === undefined) return { payload: invocation.payload };
  let payload = invocation.payload;
  let args: JsonValue | undefined;
  try {
    payload = rewritePayload(executor, invocation, outcome.updatedInput);
    args = validatePayload(executor, display, payload);
  } catch (error) {
    if (isFatalError(error)) {
      lifecycle.end({ success: false, handlerExecuted: false, failure: error });
      throw error;
    }
    return { answered: lifecycle.fail({ handlerExecuted: false, payload, failure: asModelError(error, display) }) };
  }
  return { payload, args };
}

/** Runs PostToolUse hooks on a successful output: its feedback wraps the output; an output hooks cannot see is withheld. */
async function runPostHooks(run: {
  context: DispatchContext;
  executor: ToolExecutor;
  display: string;
  invocation: ToolInvocation;
  output: ToolOutput;
  lifecycle: CallLifecycle;
  payload: ToolPayload;
}): Promise<{ answered: DispatchOutcome } | { output: ToolOutput }> {
  const { context, executor, display, invocation, output, lifecycle, payload } = run;
  const { call } = context;
  const hooks = context.router.hooks!;
  let post: { input: HookToolInput; response: JsonValue } | undefined;
  try {
    const built = postHookInput(executor, invocation, output);
    // No PostToolUse hook reads this output: nothing to bound, nothing to withhold.
    if (built && !hasHooks(hooks, 'PostToolUse', built.input, call.toolName)) return { output };
    post = hookablePost(built, context.router.hookInputBounds);
  } catch (error) {
    // The handler ran, but hooks cannot see its output: the model does not see it either.
    return { answered: lifecycle.fail({ handlerExecuted: true, payload, failure: withheld(display, error) }) };
  }
  if (!post) return { output };
  const outcome: PostToolUseOutcome | undefined = await failOpenAsync(() =>
    hooks.runPostToolUse({
      ...post.input,
      aliases: matcherAliases(post.input, call.toolName),
      toolUseId: post.input.toolUseId ?? call.callId,
      caller: hookCaller(context.source),
      step: context.step,
      signal: context.signal,
      toolResponse: post.response,
    }),
  );
  if (!outcome) return { output };
  context.addContexts(stringList(outcome.additionalContexts));
  const feedback = outcome.stop ? nonEmpty(outcome.feedback) ?? POST_HOOK_STOPPED_MESSAGE : nonEmpty(outcome.feedback);
  return { output: feedback !== undefined ? new HookFeedbackOutput(feedback, output) : output };
}

function createInvocation(context: DispatchContext, payload: ToolPayload, args: JsonValue | undefined): ToolInvocation {
  return {
    callId: context.call.callId,
    toolName: context.call.toolName,
    source: context.source,
    payload,
    ...(args === undefined ? {} : { args }),
    signal: context.signal,
    step: context.step,
    emit: (event) => context.router.emit(event),
    tools: context.tools,
  };
}

/** A failure answered before the call started: no lifecycle events. */
function refuse(context: DispatchContext, payload: ToolPayload, error: SwitchyardError): DispatchOutcome {
  context.claim();
  return { output: new FailureToolOutput(error.message), payload, error };
}

/**
 * Parses and validates function arguments against a function spec's schema (unless the executor
 * opts out) and returns the parsed value: the one parse of a call's arguments, handed to the
 * handler as `invocation.args`. `undefined` when nothing was parsed.
 */
function validatePayload(executor: ToolExecutor, display: string, payload: ToolPayload): JsonValue | undefined {
  if (payload.kind !== 'function' || executor.spec.type !== 'function' || executor.skipInputValidation) return undefined;
  if (executor.parseArguments) return executor.parseArguments(payload.arguments);
  const value = parseFunctionArguments(payload.arguments);
  validateArguments(display, executor.spec.parameters, value);
  return value;
}

/**
 * Any non-fatal failure as the model-visible error: Switchyard errors keep their message and code,
 * anything else becomes "tool X failed: …" so the model knows which tool broke.
 */
function asModelError(error: unknown, display: string): SwitchyardError {
  if (isSwitchyardError(error)) return error;
  return new RespondToModelError(`tool ${display} failed: ${errorMessage(error)}`, { cause: error });
}

function throwIfCancelled(context: DispatchContext): void {
  if (context.cancelled()) throw new SwitchyardError('ABORTED', 'tool call cancelled', { cause: context.signal.reason });
}

/** Whether a hook of `event` of the runner matches the call (true when the runner cannot say, or throws). */
function hasHooks(hooks: HookRunner, event: 'PreToolUse' | 'PostToolUse', input: HookToolInput, tool: ToolName): boolean {
  if (!hooks.hasToolHooks) return true;
  try {
    return hooks.hasToolHooks(event, { toolName: input.toolName, aliases: matcherAliases(input, tool) }) !== false;
  } catch {
    return true;
  }
}

/** Thrown when an input or output is outside the hook bounds; carries the reason. */
class Unhookable extends Error {}

/** The adapter's pre-hook input, checked against the bounds (throws {@link Unhookable}). */
function hookableInput(input: HookToolInput | undefined, bounds: JsonBounds): HookToolInput | undefined {
  if (input === undefined) return undefined;
  const violation = jsonBoundsViolation(input.toolInput, bounds);
  if (violation) throw new Unhookable(violation);
  return input;
}

/** The adapter's post-hook input and response, checked against the bounds (throws {@link Unhookable}). */
function hookablePost(
  post: { input: HookToolInput; response: JsonValue } | undefined,
  bounds: JsonBounds,
): { input: HookToolInput; response: JsonValue } | undefined {
  if (post === undefined) return undefined;
  const violation = jsonBoundsViolation(post.input.toolInput, bounds) ?? jsonBoundsViolation(post.response, bounds);
  if (violation) throw new Unhookable(violation);
  return post;
}

/** The refusal of a call whose hook input cannot be built or bounded (`INVALID_INPUT`). */
function unhookable(display: string, error: unknown): SwitchyardError {
  const why = error instanceof Unhookable ? error.message : `its hook input could not be built (${errorMessage(error)})`;
  return new RespondToModelError(`invalid input for ${display}: the call cannot be checked by hooks: ${why}`, { code: 'INVALID_INPUT', cause: error });
}

/** The answer of a call whose output PostToolUse hooks cannot be given (`LIMIT_EXCEEDED`). */
function withheld(display: string, error: unknown): SwitchyardError {
  const why = error instanceof Unhookable ? error.message : `its hook input could not be built (${errorMessage(error)})`;
  return new RespondToModelError(`the output of ${display} was withheld: it cannot be checked by PostToolUse hooks: ${why}`, { code: 'LIMIT_EXCEEDED', cause: error });
}

/** Runs a hook runner call; a throw, rejection or non-object answer means "continue" (fail open). */
async function failOpenAsync<T>(step: () => Promise<T>): Promise<T | undefined> {
  try {
    const outcome = await step();
    return typeof outcome === 'object' && outcome !== null ? outcome : undefined;
  } catch {
    return undefined;
  }
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string' && entry !== '') : [];
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
