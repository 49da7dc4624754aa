import { errorMessage, type LifecycleHookOutcome, type PermissionRequestOutcome } from '@switchyard/protocol';
import { decideLifecycle, type LifecycleHandlerDecision } from './hook-output';
import { lifecycleInput, type LifecycleRequests } from './hook-payload';
import type { HookEventName } from './hooks-config';
import { dispatchHandlers, failed, toolNames, type DecisionPolicy, type EngineContext } from './engine-core';

// The session's lifecycle events: SessionStart, UserPromptSubmit, Stop, SessionEnd,
// PermissionRequest and Interrupt.

/** Lifecycle events whose failed required hook refuses what they guard (the prompt, the permission). */
const CLOSABLE: ReadonlySet<HookEventName> = new Set(['UserPromptSubmit', 'PermissionRequest']);

function lifecyclePolicy(event: keyof LifecycleRequests): DecisionPolicy<LifecycleHandlerDecision> {
  return {
    decide: (result) => decideLifecycle(event, result),
    describe: (decision) => ({
      outcome: decision.status === 'allow' ? 'continue' : decision.status === 'deny' ? 'block' : decision.status,
      message: decision.status === 'failed' ? decision.error : decision.reason,
    }),
    // A failed required UserPromptSubmit hook refuses the prompt, a PermissionRequest one denies;
    // SessionStart, Stop, SessionEnd and Interrupt guard nothing a failure could refuse, so they stay failed.
    closed: (reason, decision) => (CLOSABLE.has(event) ? { ...decision, status: event === 'PermissionRequest' ? 'deny' : 'block', reason } : decision),
  };
}

/**
 * Run id suffix and matcher names of a lifecycle event: PermissionRequest matches the tool,
 * SessionStart its `source`, Interrupt its `reason`; the others ignore matchers.
 */
function lifecycleTarget<E extends keyof LifecycleRequests>(event: E, request: LifecycleRequests[E]): { suffix: string; names: readonly string[] | undefined } {
  if (event === 'PermissionRequest') {
    const permission = request as LifecycleRequests['PermissionRequest'];
    return { suffix: permission.toolUseId, names: toolNames(permission) };
  }
  if (event === 'SessionStart') return { suffix: request.sessionId, names: [(request as LifecycleRequests['SessionStart']).source] };
  if (event === 'Interrupt') return { suffix: request.turnId ?? request.sessionId, names: [(request as LifecycleRequests['Interrupt']).reason] };
  return { suffix: request.turnId ?? request.sessionId, names: undefined };
}

/** Runs a lifecycle event's hooks; never rejects (an internal failure is a warning, or a refusal when it guards something and every hook is required). */
export async function runLifecycle<E extends keyof LifecycleRequests>(context: EngineContext, event: E, request: LifecycleRequests[E]): Promise<LifecycleHandlerDecision[]> {
  try {
    const input = lifecycleInput(event, request, context.transcriptPath);
    const { suffix, names } = lifecycleTarget(event, request);
    const dispatched = await dispatchHandlers(context, { event, names, runIdSuffix: suffix, input, signal: request.signal, policy: lifecyclePolicy(event) });
    if (dispatched.unhookable !== undefined) return [failed(`${event} input cannot be given to hooks: ${dispatched.unhookable}`)];
    return dispatched.runs.map((run) => ({ ...run.decision, warnings: [...run.decision.warnings, ...(run.decision.status === 'failed' ? [`hook ${run.runId} failed: ${run.decision.error}`] : [])] }));
  } catch (error) {
    return [failed(`${event} hooks failed: ${errorMessage(error)}`)];
  }
}

/** Blocked if any hook blocked (the first reason in configured order), every context, every warning. */
export function aggregateLifecycle(decisions: readonly LifecycleHandlerDecision[]): LifecycleHookOutcome {
  const blocking = decisions.find((decision) => decision.status === 'block');
  return {
    blocked: blocking !== undefined,
    ...(blocking ? { reason: blocking.reason } : {}),
    additionalContexts: decisions.flatMap((decision) => decision.additionalContexts),
    warnings: decisions.flatMap((decision) => (decision.warnings.length > 0 ? decision.warnings : decision.status === 'failed' ? [decision.error ?? 'hook failed'] : [])),
  };
}

/** Any deny wins (its message), else an allow, else no verdict. */
export function aggregatePermission(decisions: readonly LifecycleHandlerDecision[]): PermissionRequestOutcome {
  const warnings = aggregateLifecycle(decisions).warnings;
  const deny = decisions.find((decision) => decision.status === 'deny');
  if (deny) return { decision: 'deny', message: deny.reason, warnings };
  if (decisions.some((decision) => decision.status === 'allow')) return { decision: 'allow', warnings };
  return { warnings };
}
