import {
  DEFAULT_HOOK_INPUT_BOUNDS,
  errorMessage,
  jsonBoundsViolation,
  type ApprovalProvider,
  type JsonBounds,
  type HookEndEvent,
  type HookRunner,
  type HookStartEvent,
  type JsonValue,
  type LifecycleHookOutcome,
  type PermissionRequestOutcome,
  type PostToolUseOutcome,
  type PostToolUseRequest,
  type PreToolUseOutcome,
  type PreToolUseRequest,
  type SwitchyardEventListener,
} from '@switchyard/protocol';
import { checkOptions, createEventHub, elapsedMs, optionRules as rule, type OptionsShape, type EventHub } from '@switchyard/kit';
import { DEFAULT_MAX_OUTPUT_BYTES, runHookCommand } from './command-runner';
import {
  HOOK_EVENTS,
  buildHandlers,
  readHooksConfigFile,
  type ConfiguredHandler,
  type FunctionHookRegistration,
  type HookEventName,
  type HooksConfig,
  type HooksConfigFile,
  type HooksConfigLayer,
} from './hooks-config';
import {
  decideLifecycle,
  decidePostToolUse,
  decidePreToolUse,
  type HandlerRunResult,
  type LifecycleHandlerDecision,
  type PostHandlerDecision,
  type PreHandlerDecision,
} from './hook-output';
import { lifecycleInput, postToolUseInput, preToolUseInput, type AnyHookInput as HookInput, type LifecycleRequests } from './hook-payload';
import { resolveAsk } from './hook-approval';
import { runFunctionHook } from './function-hook';

/** Options of {@link createHookEngine}. */
export interface HookEngineOptions {
  /**
   * `hooks.json` layer paths, lowest precedence first. A path that does not exist is a `CONFIG`
   * error, unless given as `{ path, optional: true }`; a broken file is a warning (a `CONFIG` error
   * with `required`). Command hooks of a file run in its folder.
   */
  configFiles?: readonly HooksConfigFile[];
  /** Configuration objects (hooks.json shape; handlers may also be `{type:"function", run}`), after the files. */
  config?: HooksConfig | readonly HooksConfig[];
  /** In-process hooks, after every config layer. */
  functionHooks?: readonly FunctionHookRegistration[];
  /** Answers PreToolUse `permissionDecision:"ask"`; falls back to `step.approvals`. Without either, `ask` fails open. */
  approvals?: ApprovalProvider;
  /** Shell for command hooks, run as `<shell> -c <command>`. Default `/bin/sh` (`$SHELL` with `loginShell`). */
  shell?: string;
  /** Run command hooks in a login shell (`-lc`): profiles are read on every run (seconds on some machines). Default false. */
  loginShell?: boolean;
  /** `transcript_path` on every hook's stdin (a lifecycle request's own wins). Default `null`. */
  transcriptPath?: string;
  /** Timeout of handlers that set none, in seconds. Default 600. */
  defaultTimeoutSec?: number;
  /** Cap of captured stdout and of captured stderr, each, in bytes. Default 1 MiB. */
  maxOutputBytes?: number;
  /** Extra environment variables for command hooks (on top of `process.env`). */
  env?: Record<string, string>;
  /**
   * Fail closed: a handler that times out, crashes, cannot be spawned or answers something
   * unreadable blocks the call (PreToolUse) or withholds the tool's output from the model
   * (PostToolUse) instead of failing open. A handler's own `failClosed` overrides this. Default false
   * (the reference's fail-open behaviour). `async` handlers never block either way.
   */
  failClosed?: boolean;
  /**
   * Every hook is required: a hook that cannot run, times out or fails blocks the call with a
   * message naming it, and any configuration problem refuses creation (`CONFIG`). A handler's own
   * `required: true` does the same for that handler. Default false.
   */
  required?: boolean;
  /**
   * How deep and large the stdin object may be. An input past them (or one that cannot be
   * serialized) is never run unhooked: PreToolUse blocks, PostToolUse withholds the output.
   * Default 100 levels and 16 Mi characters (the registry refuses such calls earlier).
   */
  inputBounds?: JsonBounds;
}

/** The hook engine: a protocol `HookRunner` (every lifecycle event included) plus events, configuration warnings and cleanup. */
export interface HookEngine extends Required<HookRunner> {
  /** Subscribes to `hook-start` / `hook-end`; returns the unsubscribe function. A throwing listener is reported as a `SWITCHYARD_LISTENER` process warning and never breaks a hook run. */
  on<T extends 'hook-start' | 'hook-end'>(type: T, listener: SwitchyardEventListener<T>): () => void;
  /** Problems found while loading the configuration (each skipped something). */
  readonly warnings: readonly string[];
  /** Number of handlers configured per event. */
  readonly handlerCounts: Readonly<Record<HookEventName, number>>;
  /** Kills every hook process still running (including `async` ones) and waits for them. */
  close(): Promise<void>;
}

/** Turns a raw run into a decision (may be async: `ask` consults an approval provider). */
type Decide<D> = (result: HandlerRunResult, handler: ConfiguredHandler) => Promise<D> | D;

interface RunRecord<D> {
  decision: D;
  completionOrder: number;
}

const EVENT_KEYS: Record<HookEventName, string> = {
  PreToolUse: 'pre-tool-use',
  PostToolUse: 'post-tool-use',
  PermissionRequest: 'permission-request',
  SessionStart: 'session-start',
  UserPromptSubmit: 'user-prompt-submit',
  Stop: 'stop',
  SessionEnd: 'session-end',
};

/** A decision shape both events share, so a failure can stand in for either. */
interface BaseDecision {
  status: string;
  error?: string;
  additionalContexts: string[];
  warnings: string[];
}

function failed<D extends BaseDecision>(error: string): D {
  return { status: 'failed', error, additionalContexts: [], warnings: [] } as unknown as D;
}

/** The PreToolUse block reason of a failed fail-closed handler. */
export function failClosedReason(error: string): string {
  return `hook failed and is fail-closed: ${error}`;
}

/** The block reason (what the model reads) of a required handler that failed: it names the hook. */
export function requiredFailureReason(label: string, error: string): string {
  return `required ${label} failed: ${error}`;
}

/** The PostToolUse feedback (what the model reads) of a failed fail-closed handler. */
export function failClosedFeedback(error: string): string {
  return `the tool output was withheld: a PostToolUse hook failed and is fail-closed: ${error}`;
}

/** The block reason of a call whose input cannot be given to its hooks. */
export function unhookableReason(why: string): string {
  return `the tool input cannot be checked by hooks: ${why}`;
}

/** The feedback of a call whose output cannot be given to its PostToolUse hooks. */
export function unhookableFeedback(why: string): string {
  return `the tool output was withheld: it cannot be checked by PostToolUse hooks: ${why}`;
}

/** Selected handlers and the serialized input, or why the input cannot be given to them. */
type Dispatched<D> = { runs: Array<RunRecord<D> & { runId: string }>; unhookable?: undefined } | { runs?: undefined; unhookable: string };

const HOOK_ENGINE_OPTION_RULES: OptionsShape<HookEngineOptions> = {
  configFiles: rule.listOf(rule.anyOf(rule.string(), rule.shape<{ path: string; optional?: boolean }>({ path: rule.required(rule.string()), optional: rule.boolean() }))),
  config: rule.anyOf(rule.object(), rule.listOf(rule.object())),
  functionHooks: rule.listOf(rule.object()),
  approvals: rule.object(),
  shell: rule.string(),
  loginShell: rule.boolean(),
  transcriptPath: rule.string(),
  required: rule.boolean(),
  defaultTimeoutSec: rule.number({ min: 0 }),
  maxOutputBytes: rule.number({ min: 1, integer: true }),
  env: rule.object(),
  failClosed: rule.boolean(),
  inputBounds: rule.shape<JsonBounds>({ maxDepth: rule.required(rule.number({ min: 1, integer: true })), maxChars: rule.required(rule.number({ min: 1, integer: true })) }),
};

/** What the engine's runs share: how command hooks are started, the events, the runs to abort on close(). */
interface EngineContext {
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
  readonly events: EventHub<HookStartEvent | HookEndEvent>;
  /** Aborted by close(). */
  readonly running: Set<{ controller: AbortController; done: Promise<unknown> }>;
}

/** How one hook event turns runs into decisions and events. */
interface DecisionPolicy<D extends BaseDecision> {
  /** The raw run → a decision. */
  decide: Decide<D>;
  /** The `hook-end` event's outcome and message. */
  describe: (decision: D) => Pick<HookEndEvent, 'outcome' | 'message'>;
  /** The decision of a failed fail-closed handler (`reason`: what the model reads). */
  closed: (reason: string, decision: D) => D;
}

/** The layers in precedence order: config files, config objects, then function hooks. */
function collectLayers(options: HookEngineOptions, warnings: string[]): HooksConfigLayer[] {
  const layers: HooksConfigLayer[] = [];
  (options.configFiles ?? []).forEach((entry, index) => {
    const layer = readHooksConfigFile(entry, index, warnings, options.required === true);
    if (layer) layers.push(layer);
  });
  const configs = options.config === undefined ? [] : Array.isArray(options.config) ? options.config : [options.config as HooksConfig];
  configs.forEach((config, index) => layers.push({ sourcePath: `<config:${index}>`, config }));
  for (const registration of options.functionHooks ?? []) {
    const { event, matcher, ...handler } = registration;
    layers.push({ sourcePath: `<function${handler.name ? `:${handler.name}` : ''}>`, config: { hooks: { [event]: [{ matcher, hooks: [{ ...handler, type: 'function' }] }] } } });
  }
  return layers;
}

async function runHandler(context: EngineContext, run: { handler: ConfiguredHandler; input: HookInput; inputJson: string; signal: AbortSignal }): Promise<HandlerRunResult> {
  const { handler } = run;
  if (handler.kind === 'function') return runFunctionHook(handler, run.inputJson, run.signal);
  // A command runs beside its hooks.json, so `node hooks/policy.mjs` finds its script whatever the
  // session cwd; the session cwd stays on stdin (`cwd`) and in SWITCHYARD_SESSION_CWD.
  const dir = handler.dir ?? run.input.cwd;
  const result = await runHookCommand({
    command: handler.command,
    cwd: dir,
    input: run.inputJson,
    timeoutSec: handler.timeoutSec,
    shell: context.shell,
    loginShell: context.loginShell,
    env: { ...context.env, SWITCHYARD_SESSION_CWD: run.input.cwd, SWITCHYARD_HOOKS_DIR: dir },
    maxOutputBytes: context.maxOutputBytes,
    signal: run.signal,
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
interface DispatchRequest<D extends BaseDecision> {
  event: HookEventName;
  names: readonly string[] | undefined;
  runIdSuffix: string;
  input: HookInput;
  signal: AbortSignal;
  policy: DecisionPolicy<D>;
}

/**
 * Selects handlers, serializes the input once (refusing one past the bounds), runs the handlers
 * concurrently (async ones detached) and returns their results in configured order.
 */
async function dispatchHandlers<D extends BaseDecision>(context: EngineContext, run: DispatchRequest<D>): Promise<Dispatched<D>> {
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
function toolNames(request: { toolName: string; aliases?: readonly string[] }): string[] {
  return [request.toolName, ...(request.aliases ?? [])];
}

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

const POST_TOOL_USE_POLICY: DecisionPolicy<PostHandlerDecision> = {
  decide: decidePostToolUse,
  describe: (decision) => ({
    outcome: decision.status,
    message: decision.status === 'failed' ? decision.error : decision.feedback,
  }),
  closed: (reason, decision) => ({ ...decision, status: 'feedback', feedback: `the tool output was withheld: a PostToolUse ${reason}` }),
};

async function runPreToolUse(context: EngineContext, request: PreToolUseRequest): Promise<PreToolUseOutcome> {
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

async function runPostToolUse(context: EngineContext, request: PostToolUseRequest): Promise<PostToolUseOutcome> {
  try {
    const input = postToolUseInput(request, context.transcriptPath);
    const names = toolNames(request);
    const dispatched = await dispatchHandlers(context, { event: 'PostToolUse', names, runIdSuffix: request.toolUseId, input, signal: request.signal, policy: POST_TOOL_USE_POLICY });
    if (dispatched.unhookable !== undefined) return { feedback: unhookableFeedback(dispatched.unhookable), additionalContexts: [], warnings: [] };
    return aggregatePost(dispatched.runs);
  } catch (error) {
    const warning = `PostToolUse hooks failed: ${errorMessage(error)}`;
    if (context.failClosed) return { feedback: failClosedFeedback(warning), additionalContexts: [], warnings: [warning] };
    return { additionalContexts: [], warnings: [warning] };
  }
}

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
    // SessionStart, Stop and SessionEnd guard nothing a failure could refuse, so they stay failed.
    closed: (reason, decision) => (CLOSABLE.has(event) ? { ...decision, status: event === 'PermissionRequest' ? 'deny' : 'block', reason } : decision),
  };
}

/** Run id suffix and matcher names of a lifecycle event (matchers apply to PermissionRequest and SessionStart only). */
function lifecycleTarget<E extends keyof LifecycleRequests>(event: E, request: LifecycleRequests[E]): { suffix: string; names: readonly string[] | undefined } {
  if (event === 'PermissionRequest') {
    const permission = request as LifecycleRequests['PermissionRequest'];
    return { suffix: permission.toolUseId, names: toolNames(permission) };
  }
  if (event === 'SessionStart') return { suffix: request.sessionId, names: [(request as LifecycleRequests['SessionStart']).source] };
  return { suffix: request.turnId ?? request.sessionId, names: undefined };
}

/** Runs a lifecycle event's hooks; never rejects (an internal failure is a warning, or a refusal when it guards something and every hook is required). */
async function runLifecycle<E extends keyof LifecycleRequests>(context: EngineContext, event: E, request: LifecycleRequests[E]): Promise<LifecycleHandlerDecision[]> {
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
function aggregateLifecycle(decisions: readonly LifecycleHandlerDecision[]): LifecycleHookOutcome {
  const blocking = decisions.find((decision) => decision.status === 'block');
  return {
    blocked: blocking !== undefined,
    ...(blocking ? { reason: blocking.reason } : {}),
    additionalContexts: decisions.flatMap((decision) => decision.additionalContexts),
    warnings: decisions.flatMap((decision) => (decision.warnings.length > 0 ? decision.warnings : decision.status === 'failed' ? [decision.error ?? 'hook failed'] : [])),
  };
}

/** Any deny wins (its message), else an allow, else no verdict. */
function aggregatePermission(decisions: readonly LifecycleHandlerDecision[]): PermissionRequestOutcome {
  const warnings = aggregateLifecycle(decisions).warnings;
  const deny = decisions.find((decision) => decision.status === 'deny');
  if (deny) return { decision: 'deny', message: deny.reason, warnings };
  if (decisions.some((decision) => decision.status === 'allow')) return { decision: 'allow', warnings };
  return { warnings };
}

/**
 * Creates a hook engine implementing the protocol `HookRunner`. Loading
 * never throws: invalid parts of the configuration are skipped and listed in `engine.warnings`.
 * `runPreToolUse` / `runPostToolUse` never reject; failed hooks fail open and appear in `warnings`.
 */
export function createHookEngine(options: HookEngineOptions = {}): HookEngine {
  checkOptions('createHookEngine', options, HOOK_ENGINE_OPTION_RULES);
  const warnings: string[] = [];
  const settings = { defaultTimeoutSec: options.defaultTimeoutSec ?? 600, requireAll: options.required === true };
  const handlers = buildHandlers(collectLayers(options, warnings), settings, warnings);
  const context: EngineContext = {
    handlers,
    // /bin/sh -c starts in milliseconds; a login shell reads profiles on every hooked call
    shell: options.shell ?? (options.loginShell ? process.env.SHELL || '/bin/sh' : '/bin/sh'),
    loginShell: options.loginShell === true,
    transcriptPath: options.transcriptPath,
    env: options.env ? { ...process.env, ...options.env } : process.env,
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    inputBounds: options.inputBounds ?? DEFAULT_HOOK_INPUT_BOUNDS,
    failClosed: options.failClosed,
    approvals: options.approvals,
    // a throwing listener is reported (process warning SWITCHYARD_LISTENER) and never breaks a hook run
    events: createEventHub<HookStartEvent | HookEndEvent>({ name: 'hooks' }),
    running: new Set(),
  };
  return {
    warnings,
    handlerCounts: Object.fromEntries(HOOK_EVENTS.map((event) => [event, handlers.filter((handler) => handler.event === event).length])) as Record<HookEventName, number>,
    runPreToolUse: (request) => runPreToolUse(context, request),
    runPostToolUse: (request) => runPostToolUse(context, request),
    hasToolHooks: (event, request) => handlers.some((handler) => handler.event === event && safeMatch(handler, toolNames(request))),
    runSessionStart: async (request) => aggregateLifecycle(await runLifecycle(context, 'SessionStart', request)),
    runUserPromptSubmit: async (request) => aggregateLifecycle(await runLifecycle(context, 'UserPromptSubmit', request)),
    runStop: async (request) => aggregateLifecycle(await runLifecycle(context, 'Stop', request)),
    runSessionEnd: async (request) => aggregateLifecycle(await runLifecycle(context, 'SessionEnd', request)),
    runPermissionRequest: async (request) => aggregatePermission(await runLifecycle(context, 'PermissionRequest', request)),
    on: (type, listener) => context.events.on(type, listener),
    async close() {
      const pending = [...context.running];
      for (const entry of pending) entry.controller.abort();
      await Promise.all(pending.map((entry) => entry.done));
    },
  };
}

function aggregatePre(runs: Array<RunRecord<PreHandlerDecision> & { runId: string }>): PreToolUseOutcome {
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

function aggregatePost(runs: Array<RunRecord<PostHandlerDecision> & { runId: string }>): PostToolUseOutcome {
  const feedback = runs.flatMap((run) => (run.decision.feedback !== undefined ? [run.decision.feedback] : []));
  const stop = runs.some((run) => run.decision.status === 'stop');
  return {
    ...(feedback.length > 0 ? { feedback: feedback.join('\n\n') } : {}),
    ...(stop ? { stop: true } : {}),
    additionalContexts: runs.flatMap((run) => run.decision.additionalContexts),
    warnings: collectWarnings(runs),
  };
}

function collectWarnings(runs: Array<RunRecord<BaseDecision> & { runId: string }>): string[] {
  return runs.flatMap((run) => [
    ...run.decision.warnings,
    ...(run.decision.status === 'failed' ? [`hook ${run.runId} failed: ${run.decision.error}`] : []),
  ]);
}

function safeMatch(handler: ConfiguredHandler, names: readonly string[]): boolean {
  try {
    return handler.matcher(names);
  } catch {
    return false;
  }
}
