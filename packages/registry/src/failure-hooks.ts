import {
  hookCaller,
  jsonBoundsViolation,
  type PostToolUseOutcome,
  type ToolFailureCode,
  type ToolExecutor,
  type ToolInvocation,
  type ToolOutput,
} from '@switchyard/protocol';
import { contentItemsToText } from '@switchyard/kit/internal';
import type { DispatchContext } from './dispatch';
import { HookFeedbackOutput } from './hook-feedback-output';
import { matcherAliases, preHookInput } from './hook-payloads';

/** Text the model reads when a PostToolUseFailure hook stops without a reason. */
const FAILURE_HOOK_STOPPED_MESSAGE = 'PostToolUseFailure hook stopped execution';

/**
 * Failures that are no failure of the tool: a cancelled call (the turn's Interrupt hooks hear of
 * an abort) and an approval a person or a PermissionRequest hook refused (a decision, made where
 * policy already saw the call). Neither reaches PostToolUseFailure.
 */
const NOT_TOOL_FAILURES: ReadonlySet<ToolFailureCode> = new Set(['ABORTED', 'APPROVAL_DENIED']);

/** Why a call failed, as PostToolUseFailure hooks read it. */
export interface CallFailure {
  /** The text the model reads. */
  readonly message: string;
  readonly code: ToolFailureCode;
}

/** The failure a failed output reports: its model-visible text and its `failureCode` (default `RESPOND_TO_MODEL`). */
export function outputFailure(output: ToolOutput, invocation: ToolInvocation): CallFailure {
  const item = output.toResponseItem(invocation.callId, invocation.payload);
  const body = 'output' in item ? item.output : '';
  const message = typeof body === 'string' ? body : contentItemsToText(body);
  return { message, code: output.failureCode ?? 'RESPOND_TO_MODEL' };
}

/**
 * Runs the PostToolUseFailure hooks of a call whose handler ran and failed (`output` is what the
 * model would read). Resolves with the output to answer: the same, or one whose model-visible text
 * is the hooks' feedback (Code Mode and logs keep the original failure). Skipped — the output as
 * it is — without a runner that has the event, for calls without a hook payload, for cancelled
 * calls and approval refusals, and when the hook input cannot be built or bounded (the call has
 * failed already; there is nothing to withhold but the failure text itself). A runner that
 * rejects fails open.
 */
export async function runFailureHooks(run: {
  context: DispatchContext;
  executor: ToolExecutor;
  invocation: ToolInvocation;
  output: ToolOutput;
  failure: CallFailure;
}): Promise<ToolOutput> {
  const { context, executor, invocation, output, failure } = run;
  const hooks = context.router.hooks;
  if (typeof hooks?.runPostToolUseFailure !== 'function' || NOT_TOOL_FAILURES.has(failure.code) || context.cancelled()) return output;
  let input;
  try {
    input = preHookInput(executor, invocation);
  } catch {
    return output;
  }
  if (input === undefined || jsonBoundsViolation(input.toolInput, context.router.hookInputBounds) !== undefined) return output;
  let outcome: PostToolUseOutcome;
  try {
    outcome = await hooks.runPostToolUseFailure({
      ...input,
      aliases: matcherAliases(input, context.call.toolName),
      toolUseId: context.call.callId,
      caller: hookCaller(context.source),
      step: context.step,
      signal: context.signal,
      error: failure.message,
      errorCode: failure.code,
    });
  } catch {
    return output;
  }
  if (typeof outcome !== 'object' || outcome === null) return output;
  context.addContexts(Array.isArray(outcome.additionalContexts) ? outcome.additionalContexts.filter((text): text is string => typeof text === 'string' && text !== '') : []);
  const feedback = typeof outcome.feedback === 'string' && outcome.feedback !== '' ? outcome.feedback : outcome.stop ? FAILURE_HOOK_STOPPED_MESSAGE : undefined;
  return feedback === undefined ? output : new HookFeedbackOutput(feedback, output);
}
