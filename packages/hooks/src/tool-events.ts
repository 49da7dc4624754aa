import {
  errorMessage,
  type ApprovalProvider,
  type JsonValue,
  type PostToolUseFailureRequest,
  type PostToolUseOutcome,
  type PostToolUseRequest,
  type PreToolUseOutcome,
  type PreToolUseRequest,
} from '@switchyard/protocol';
import { decidePostToolUse, decidePreToolUse, type PostHandlerDecision, type PreHandlerDecision } from './hook-output';
import { postToolUseFailureInput, postToolUseInput, preToolUseInput } from './hook-payload';
import { resolveAsk } from './hook-approval';
import {
  collectWarnings,
  dispatchHandlers,
  failClosedFeedback,
  failClosedReason,
  toolNames,
  unhookableFeedback,
  unhookableReason,
  type DecisionPolicy,
  type EngineContext,
  type RunRecord,
} from './engine-core';

// The tool events: PreToolUse (block, rewrite, ask), PostToolUse and PostToolUseFailure (feedback
// that replaces what the model reads, context).

function preToolUsePolicy(request: PreToolUseRequest, approvals: ApprovalProvider | undefined): DecisionPolicy<PreHandlerDecision> {
  return {
    async decide(result, handler) {
      const decision = decidePreToolUse(result);
      // Nobody waits for an async hook, so its `ask` is not put to a person.
      return decision.status === 'ask' && !handler.async ? resolveAsk(request, decision, approvals) : decision;
    },
    describe: (decision) => ({
      outcome: decision.status === 'ask' ? 'continue' : decision.status,
      message: decision.status === 'failed' ? decision.error : decision.reason,
    }),
    closed: (reason, decision) => ({ ...decision, status: 'block', reason }),
  };
}

/** PostToolUse and PostToolUseFailure: feedback replaces what the model reads; a failed fail-closed handler withholds it. */
function postPolicy(event: 'PostToolUse' | 'PostToolUseFailure'): DecisionPolicy<PostHandlerDecision> {
  return {
    decide: (result) => decidePostToolUse(result, event),
    describe: (decision) => ({
      outcome: decision.status,
      message: decision.status === 'failed' ? decision.error : decision.feedback,
    }),
    closed: (reason, decision) => ({ ...decision, status: 'feedback', feedback: `the tool output was withheld: a ${event} ${reason}` }),
  };
}

const POST_TOOL_USE_POLICY = postPolicy('PostToolUse');
const POST_TOOL_USE_FAILURE_POLICY = postPolicy('PostToolUseFailure');

export async function runPreToolUse(context: EngineContext, request: PreToolUseRequest): Promise<PreToolUseOutcome> {
  try {
    const input = preToolUseInput(request, context.transcriptPath);
    const policy = preToolUsePolicy(request, context.approvals);
    const dispatched = await dispatchHandlers(context, { event: 'PreToolUse', names: toolNames(request), runIdSuffix: request.toolUseId, input, signal: request.signal, policy });
    if (dispatched.unhookable !== undefined) {
      return { blocked: true, reason: unhookableReason(dispatched.unhookable), additionalContexts: [], warnings: [] };
    }
    return aggregatePre(dispatched.runs);
  } catch (error) {
    const warning = `PreToolUse hooks failed: ${errorMessage(error)}`;
    if (context.failClosed) return { blocked: true, reason: failClosedReason(warning), additionalContexts: [], warnings: [warning] };
    return { blocked: false, additionalContexts: [], warnings: [warning] };
  }
}

/** PostToolUse after a success, or PostToolUseFailure after a failure: the same matchers, rules and aggregation. */
async function runAfterCall(
  context: EngineContext,
  event: 'PostToolUse' | 'PostToolUseFailure',
  request: PostToolUseRequest | PostToolUseFailureRequest,
): Promise<PostToolUseOutcome> {
  try {
    const input =
      event === 'PostToolUse'
        ? postToolUseInput(request as PostToolUseRequest, context.transcriptPath)
        : postToolUseFailureInput(request as PostToolUseFailureRequest, context.transcriptPath);
    const policy = event === 'PostToolUse' ? POST_TOOL_USE_POLICY : POST_TOOL_USE_FAILURE_POLICY;
    const dispatched = await dispatchHandlers(context, { event, names: toolNames(request), runIdSuffix: request.toolUseId, input, signal: request.signal, policy });
    if (dispatched.unhookable !== undefined) return { feedback: unhookableFeedback(event, dispatched.unhookable), additionalContexts: [], warnings: [] };
    return aggregatePost(dispatched.runs);
  } catch (error) {
    const warning = `${event} hooks failed: ${errorMessage(error)}`;
    if (context.failClosed) return { feedback: failClosedFeedback(event, warning), additionalContexts: [], warnings: [warning] };
    return { additionalContexts: [], warnings: [warning] };
  }
}

export function runPostToolUse(context: EngineContext, request: PostToolUseRequest): Promise<PostToolUseOutcome> {
  return runAfterCall(context, 'PostToolUse', request);
}

export function runPostToolUseFailure(context: EngineContext, request: PostToolUseFailureRequest): Promise<PostToolUseOutcome> {
  return runAfterCall(context, 'PostToolUseFailure', request);
}

/** Blocked if any hook blocks (the first reason in configured order); else the rewrite of the hook that finished last. */
function aggregatePre(runs: Array<RunRecord<PreHandlerDecision>>): PreToolUseOutcome {
  const blocking = runs.find((run) => run.decision.status === 'block');
  const additionalContexts = runs.flatMap((run) => run.decision.additionalContexts);
  const warnings = collectWarnings(runs);
  if (blocking) return { blocked: true, reason: blocking.decision.reason, additionalContexts, warnings };
  const rewrites = runs.filter((run) => run.decision.status === 'rewrite');
  const last = rewrites.sort((a, b) => b.completionOrder - a.completionOrder)[0];
  return {
    blocked: false,
    ...(last ? { updatedInput: last.decision.updatedInput as JsonValue } : {}),
    additionalContexts,
    warnings,
  };
}

/** Every feedback joined with a blank line, stop if any hook stopped, every context. */
function aggregatePost(runs: Array<RunRecord<PostHandlerDecision>>): PostToolUseOutcome {
  const feedback = runs.flatMap((run) => (run.decision.feedback !== undefined ? [run.decision.feedback] : []));
  const stop = runs.some((run) => run.decision.status === 'stop');
  return {
    ...(feedback.length > 0 ? { feedback: feedback.join('\n\n') } : {}),
    ...(stop ? { stop: true } : {}),
    additionalContexts: runs.flatMap((run) => run.decision.additionalContexts),
    warnings: collectWarnings(runs),
  };
}
