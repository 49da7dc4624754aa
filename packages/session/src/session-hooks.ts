import {
  type ApprovalDecision,
  type ApprovalProvider,
  type ApprovalRequest,
  type HookEndEvent,
  type HookRunner,
  type HookStartEvent,
  type InterruptReason,
  type LifecycleHookOutcome,
  type LifecycleHookRequestBase,
  type MessageItem,
  type ResponseItem,
  type SwitchyardEventListener,
} from '@switchyard/protocol';

/** A `warning` session event: something the host should hear of that did not stop the session. */
export interface SessionWarningEvent {
  type: 'warning';
  /** What warned: `hooks` (a hook failed open), `tools` (a tool's setup check at creation, e.g. exec_command without a usable sandbox), `background` (the session stopped waking itself: `maxWakeTurns`). */
  source: 'hooks' | 'tools' | 'background';
  message: string;
  /** For `hooks`: the hook (its command or function name and source). */
  hook?: string;
  /** For `hooks`: the run that failed. */
  runId?: string;
}

/** The session state the hook wiring reads. */
export interface HookedSession {
  readonly sessionId: string;
  readonly hooks: HookRunner | undefined;
  readonly cwd: string;
  readonly model: string | undefined;
  readonly permissionMode: string | undefined;
  readonly transcriptPath: string | undefined;
}

/** A runner with events (a `HookEngine`); a host-written `HookRunner` may have none. */
interface HookEvents {
  on<T extends 'hook-start' | 'hook-end'>(type: T, listener: SwitchyardEventListener<T>): () => void;
}

function hasEvents(hooks: HookRunner | undefined): hooks is HookRunner & HookEvents {
  return typeof (hooks as Partial<HookEvents> | undefined)?.on === 'function';
}

/**
 * Forwards the runner's `hook-start` / `hook-end` of this session to `emit`, and turns a hook that
 * failed without blocking (fail-open) into one `warning` event per hook per session, so a policy
 * that silently stopped enforcing is heard of. Returns the unsubscribe function.
 */
export function forwardHookEvents(session: HookedSession, emit: (event: HookStartEvent | HookEndEvent | SessionWarningEvent) => void): () => void {
  const hooks = session.hooks;
  if (!hasEvents(hooks)) return () => undefined;
  // an engine shared by several sessions reports every session's runs: only ours are forwarded
  const ours = (event: HookStartEvent | HookEndEvent) => event.sessionId === undefined || event.sessionId === session.sessionId;
  const warned = new Set<string>();
  const offStart = hooks.on('hook-start', (event) => {
    if (ours(event)) emit(event);
  });
  const offEnd = hooks.on('hook-end', (event) => {
    if (!ours(event)) return;
    emit(event);
    if (event.outcome !== 'failed') return;
    const hook = event.hook ?? event.runId;
    if (warned.has(hook)) return;
    warned.add(hook);
    const message = `${event.event} ${hook} failed and did not block: ${event.error ?? event.message ?? 'unknown failure'}`;
    emit({ type: 'warning', source: 'hooks', message, hook, runId: event.runId });
  });
  return () => {
    offStart();
    offEnd();
  };
}

/** The fields every lifecycle request carries. */
export function lifecycleRequest(session: HookedSession, signal: AbortSignal, turnId?: string): LifecycleHookRequestBase {
  return {
    sessionId: session.sessionId,
    ...(turnId !== undefined ? { turnId } : {}),
    cwd: session.cwd,
    ...(session.model !== undefined ? { model: session.model } : {}),
    ...(session.permissionMode !== undefined ? { permissionMode: session.permissionMode } : {}),
    ...(session.transcriptPath !== undefined ? { transcriptPath: session.transcriptPath } : {}),
    signal,
  };
}

/** The outcome of a lifecycle runner that rejected (the `HookRunner` contract says it must not): nothing decided. */
function safely(run: () => Promise<LifecycleHookOutcome> | undefined): Promise<LifecycleHookOutcome | undefined> {
  return Promise.resolve()
    .then(run)
    .catch(() => undefined);
}

/** SessionStart hooks (`startup`, or `resume` with a saved history); their contexts. */
export async function runSessionStart(session: HookedSession, resumed: boolean): Promise<readonly string[]> {
  const hooks = session.hooks;
  const outcome = await safely(() => hooks?.runSessionStart?.({ ...lifecycleRequest(session, new AbortController().signal), source: resumed ? 'resume' : 'startup' }));
  return outcome?.additionalContexts ?? [];
}

/** The text of a turn's input as UserPromptSubmit reads it (`prompt`): the user messages' text, joined. */
export function promptText(input: readonly ResponseItem[]): string {
  const texts: string[] = [];
  for (const item of input) {
    if (item.type !== 'message' || item.role !== 'user') continue;
    const content = (item as MessageItem).content;
    if (typeof content === 'string') texts.push(content);
    else for (const part of content) if ('text' in part && typeof part.text === 'string') texts.push(part.text);
  }
  return texts.join('\n');
}

/** UserPromptSubmit hooks of a turn. */
export function runUserPromptSubmit(session: HookedSession, run: { turnId: string; prompt: string; signal: AbortSignal }): Promise<LifecycleHookOutcome | undefined> {
  const hooks = session.hooks;
  return safely(() => hooks?.runUserPromptSubmit?.({ ...lifecycleRequest(session, run.signal, run.turnId), prompt: run.prompt }));
}

/** Stop hooks, when the model answered without calls; `blocked` with a reason asks the loop to continue. */
export function runStop(session: HookedSession, run: { turnId: string; signal: AbortSignal; stopHookActive: boolean; lastAssistantMessage?: string }): Promise<LifecycleHookOutcome | undefined> {
  const hooks = session.hooks;
  const request = { ...lifecycleRequest(session, run.signal, run.turnId), stopHookActive: run.stopHookActive, ...(run.lastAssistantMessage !== undefined ? { lastAssistantMessage: run.lastAssistantMessage } : {}) };
  return safely(() => hooks?.runStop?.(request));
}

/** SessionEnd hooks at shutdown. */
export async function runSessionEnd(session: HookedSession): Promise<void> {
  const hooks = session.hooks;
  await safely(() => hooks?.runSessionEnd?.({ ...lifecycleRequest(session, new AbortController().signal), reason: 'shutdown' }));
}

/**
 * Interrupt hooks of an aborted turn, with the reason and the abort reason's text. They get a
 * signal of their own (the turn's has aborted) and decide nothing; a runner without the event, or
 * one that rejects, is skipped.
 */
export async function runInterrupt(session: HookedSession, run: { turnId: string; reason: InterruptReason; detail?: string }): Promise<void> {
  const hooks = session.hooks;
  const request = { ...lifecycleRequest(session, new AbortController().signal, run.turnId), reason: run.reason, ...(run.detail !== undefined ? { detail: run.detail } : {}) };
  await safely(() => hooks?.runInterrupt?.(request));
}

/**
 * The approval provider a step uses: PermissionRequest hooks answer first (a deny wins, else an
 * allow); without a verdict the host's provider decides, and without one the request is denied.
 * `undefined` when there is nothing to wrap (no PermissionRequest support, the host's provider as is).
 */
export function permissionApprovals(session: HookedSession, approvals: ApprovalProvider | undefined, turnId: string): ApprovalProvider | undefined {
  const hooks = session.hooks;
  if (typeof hooks?.runPermissionRequest !== 'function') return approvals;
  // an engine that says it has no PermissionRequest handler leaves the step's provider as it is
  // (and a step without one keeps saying that nobody can be asked)
  if ((hooks as { handlerCounts?: Partial<Record<string, number>> }).handlerCounts?.PermissionRequest === 0) return approvals;
  return {
    async requestApproval(request: ApprovalRequest): Promise<ApprovalDecision> {
      const toolInput = request.command !== undefined ? { command: request.command } : (request.input ?? {});
      let decision: 'allow' | 'deny' | undefined;
      try {
        const outcome = await hooks.runPermissionRequest!({ ...lifecycleRequest(session, request.signal, turnId), toolName: request.toolName, toolInput, toolUseId: request.callId });
        decision = outcome.decision;
      } catch {
        decision = undefined;
      }
      if (decision === 'allow') return 'approved';
      if (decision === 'deny') return 'denied';
      return approvals ? approvals.requestApproval(request) : 'denied';
    },
  };
}
