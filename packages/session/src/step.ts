import { randomUUID } from 'node:crypto';
import { SwitchyardError, systemTimeProvider, type MessageItem, type ResponseItem, type StepContext, type SwitchyardEventType, type ToolExecutor } from '@switchyard/protocol';
import { planTools, type ToolPlan } from '@switchyard/planner';
import { ToolCallRuntime, ToolRegistry, createToolRouter, type ToolRouter } from '@switchyard/registry';
import type { CodeMode } from '@switchyard/code-mode';
import type { SessionEvent } from './session-events';
import { warnOnce } from './warn-once';
import { hostApprovals } from './host-approvals';
import type { BackgroundInbox } from './background';
import { permissionApprovals } from './session-hooks';
import { codeModeFor, currentExecutors, emitGlobal, type SessionState } from './session-state';
import type { Step } from './session-types';

// One sampling step: its context, plan, router and runtime, built once per step.

const TOOL_EVENTS: readonly SwitchyardEventType[] = ['tool-call-start', 'tool-call-end', 'tool-call-blocked', 'tool-call-aborted', 'tool-notification'];

function hookContextMessage(text: string): MessageItem {
  return { type: 'message', role: 'developer', content: `<hook_context>${text}</hook_context>` };
}

/** What a turn's steps share. */
export interface TurnScope {
  readonly state: SessionState;
  readonly id: string;
  readonly controller: AbortController;
  readonly emit: (event: SessionEvent) => void;
  readonly turnState: Map<string | symbol, unknown>;
  readonly pendingContexts: string[];
  readonly runtimes: ToolCallRuntime[];
  stepIndex: number;
  detach: (() => void) | undefined;
}

function stepContextOf(scope: TurnScope): StepContext {
  const { options, sessionId, toolMode, usedTokens } = scope.state;
  return {
    sessionId,
    ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
    turnId: scope.id,
    stepIndex: scope.stepIndex,
    cwd: options.cwd ?? process.cwd(),
    toolMode,
    provider: { namespaceTools: true, ...options.provider },
    model: options.model?.name,
    contextWindow: { windowTokens: options.model?.contextWindow ?? null, usedTokens, autoCompactTokens: options.model?.autoCompactTokens },
    time: options.time ?? systemTimeProvider,
    approvalPolicy: options.approvalPolicy,
    sandboxMode: options.sandboxMode,
    approvals: permissionApprovals(scope.state.hooked, hostApprovals(options.approvals), scope.id),
    turnState: scope.turnState,
    ...(scope.state.inbox ? { background: scope.state.inbox.delivery } : {}),
    ...(toolMode === 'direct' ? {} : { toolDiscovery: scope.state.discovery.sink }),
  };
}

/** Plans the step's tools; warnings are events (and once-per-process warnings), or a CONFIG error when strict. */
async function planStep(scope: TurnScope, context: StepContext): Promise<ToolPlan> {
  const { options } = scope.state;
  const sources = {
    executors: currentExecutors(options),
    hostedSpecs: options.hostedSpecs,
    codeMode: await codeModeFor(scope.state),
    excludedCodeModeNamespaces: options.excludedCodeModeNamespaces,
    budget: options.toolBudget,
    toolSearch: options.toolSearch,
    discovered: scope.state.discovery.planned(),
  };
  const plan = planTools(context, sources, { cache: scope.state.planCache });
  if (options.strict && plan.warnings.length > 0) {
    throw new SwitchyardError('CONFIG', `strict session: ${plan.warnings.map((warning) => warning.message).join('; ')}`);
  }
  for (const warning of plan.warnings) {
    scope.emit(warning);
    // events nobody listens to are easy to miss: the process hears of each problem once
    warnOnce(warning.message, 'SWITCHYARD_PLAN');
  }
  return plan;
}

/**
 * Earlier steps' runtimes with nothing running are released: a long turn with many steps
 * (`mcp serve` makes one per MCP call) would otherwise keep every router and plan, and one
 * turn-signal listener per step.
 */
function releaseIdleRuntimes(runtimes: ToolCallRuntime[]): void {
  for (let index = runtimes.length - 1; index >= 0; index--) {
    if (runtimes[index].activeCalls > 0) continue;
    runtimes[index].dispose();
    runtimes.splice(index, 1);
  }
}

/** A step's context, plan, router and runtime (kept in the scope's runtimes). */
async function planRuntime(scope: TurnScope): Promise<{ context: StepContext; plan: ToolPlan; router: ToolRouter; runtime: ToolCallRuntime }> {
  const { state, emit } = scope;
  scope.stepIndex++;
  const context = stepContextOf(scope);
  const plan = await planStep(scope, context);
  const registry = ToolRegistry.from(plan.executors);
  const router = createToolRouter({ specs: plan.modelVisibleSpecs, registry, hooks: state.options.hooks });
  for (const type of TOOL_EVENTS) router.on(type, (event) => emit(event as SessionEvent));
  releaseIdleRuntimes(scope.runtimes);
  const runtime = new ToolCallRuntime({ router, step: context, signal: scope.controller.signal, maxConcurrentCalls: state.options.maxConcurrentToolCalls });
  scope.runtimes.push(runtime);
  return { context, plan, router, runtime };
}

/** True when `a` and `b` hold the same executors in the same order. */
function sameExecutors(a: readonly ToolExecutor[], b: readonly ToolExecutor[]): boolean {
  return a.length === b.length && a.every((executor, index) => executor === b[index]);
}

/**
 * The worker serving a session's cells between turns (the `background` option): a step of its own
 * (turn id `background-…`) whose events go to the session's listeners, planned at its first nested
 * call and again whenever a call finds the session's tools changed (a tool the host revoked is
 * unknown to the next call, whatever cell keeps calling it).
 */
export function backgroundWorker(state: SessionState, inbox: BackgroundInbox): Parameters<CodeMode['attachWorker']>[1] {
  let planned: { executors: readonly ToolExecutor[]; runtime: Promise<ToolCallRuntime> } | undefined;
  const plan = async () => {
    releaseIdleRuntimes(state.backgroundRuntimes);
    const controller = new AbortController();
    if (inbox.signal.aborted) controller.abort(inbox.signal.reason);
    else inbox.signal.addEventListener('abort', () => controller.abort(inbox.signal.reason), { once: true });
    const emit = (event: SessionEvent) => emitGlobal(state, event);
    const scope: TurnScope = { state, id: `background-${randomUUID()}`, controller, emit, turnState: new Map(), pendingContexts: [], runtimes: state.backgroundRuntimes, stepIndex: 0, detach: undefined };
    return (await planRuntime(scope)).runtime;
  };
  return {
    async handle(call, options) {
      const executors = currentExecutors(state.options);
      if (!planned || !sameExecutors(planned.executors, executors)) planned = { executors: [...executors], runtime: plan() };
      return (await planned.runtime).handle(call, options);
    },
  };
}

/** Captures a step context and builds its plan, router and runtime (the current worker of Code Mode). */
export async function buildStep(scope: TurnScope): Promise<Step> {
  const { state, emit, id } = scope;
  const { context, plan, router, runtime } = await planRuntime(scope);
  const handleItem = async (item: ResponseItem) => {
    const result = await runtime.handleItem(item);
    if (result) {
      scope.pendingContexts.push(...result.additionalContexts);
      emit({ type: 'tool-output', turnId: id, item: result.item });
    }
    return result;
  };
  const dispatch = async (item: ResponseItem) => {
    const result = await handleItem(item);
    if (!result) throw new SwitchyardError('CONFIG', `not a tool call: ${String((item as { type?: unknown }).type)}`);
    return result.item;
  };
  scope.detach?.();
  scope.detach = state.codeMode ? state.codeMode.attachWorker(state.sessionId, runtime, { tenant: state.options.tenant }) : undefined;
  const step: Step = { context, plan, tools: plan.tools, router, runtime, dispatch, dispatchAll: (items) => Promise.all(items.map(dispatch)), handleItem };
  emit({ type: 'step-start', turnId: id, stepIndex: scope.stepIndex, plan });
  return step;
}

/**
 * notify() items, then background completions (when `background`), then what cells found (with
 * `toolDiscovery: 'conversation'`), then hook contexts: a cell's notifications precede its delivered end.
 */
export function injectedItems(scope: TurnScope, background: boolean): ResponseItem[] {
  const { state } = scope;
  const injected: ResponseItem[] = state.codeMode ? state.codeMode.takeInjected(state.sessionId) : [];
  const completions = background ? [...state.carried.splice(0), ...(state.inbox?.take() ?? [])] : [];
  const found = state.discovery.take();
  const contexts = scope.pendingContexts.splice(0, scope.pendingContexts.length);
  return [...injected, ...completions, ...found, ...contexts.map(hookContextMessage)];
}
