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
  type PostToolUseOutcome,
  type PostToolUseRequest,
  type PreToolUseOutcome,
  type PreToolUseRequest,
  type SwitchyardEventListener,
} from '@switchyard/protocol';
import { checkOptions, createEventHub, elapsedMs, optionRules as rule, type OptionsShape, type EventHub } from '@switchyard/kit';
import { DEFAULT_MAX_OUTPUT_BYTES, runHookCommand } from './command-runner';
import {
  buildHandlers,
  readHooksConfigFile,
  type ConfiguredHandler,
  type FunctionHookRegistration,
  type HookEventName,
  type HooksConfig,
  type HooksConfigLayer,
} from './hooks-config';
import { decidePostToolUse, decidePreToolUse, type HandlerRunResult, type PostHandlerDecision, type PreHandlerDecision } from './hook-output';
import { postToolUseInput, preToolUseInput, type HookInput } from './hook-payload';
import { resolveAsk } from './hook-approval';
import { runFunctionHook } from './function-hook';

/** Options of {@link createHookEngine}. */
export interface HookEngineOptions {
  /** `hooks.json` layer paths, lowest precedence first. Missing files are skipped; broken ones warn. */
  configFiles?: readonly string[];
  /** Configuration objects (hooks.json shape; handlers may also be `{type:"function", run}`), after the files. */
  config?: HooksConfig | readonly HooksConfig[];
  /** In-process hooks, after every config layer. */
  functionHooks?: readonly FunctionHookRegistration[];
  /** Answers PreToolUse `permissionDecision:"ask"`; falls back to `step.approvals`. Without either, `ask` fails open. */
  approvals?: ApprovalProvider;
  /** Shell for command hooks (run as `<shell> -lc <command>`). Default `$SHELL`, else `/bin/sh`. */
  shell?: string;
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
   * How deep and large the stdin object may be. An input past them (or one that cannot be
   * serialized) is never run unhooked: PreToolUse blocks, PostToolUse withholds the output.
   * Default 100 levels and 16 Mi characters (the registry refuses such calls earlier).
   */
  inputBounds?: JsonBounds;
}

/** The hook engine: a protocol `HookRunner` plus events, configuration warnings and cleanup. */
export interface HookEngine extends HookRunner {
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

const EVENT_KEYS: Record<HookEventName, string> = { PreToolUse: 'pre-tool-use', PostToolUse: 'post-tool-use' };

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
  configFiles: rule.listOf(rule.string()),
  config: rule.anyOf(rule.object(), rule.listOf(rule.object())),
  functionHooks: rule.listOf(rule.object()),
  approvals: rule.object(),
  shell: rule.string(),
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
  /** The decision of a failed fail-closed handler. */
  closed: (error: string, decision: D) => D;
}

/** The layers in precedence order: config files, config objects, then function hooks. */
function collectLayers(options: HookEngineOptions, warnings: string[]): HooksConfigLayer[] {
  const layers: HooksConfigLayer[] = [];
  for (const path of options.configFiles ?? []) {
    const layer = readHooksConfigFile(path, warnings);
    if (layer) layers.push(layer);
  }
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
  const result = await runHookCommand({
    command: handler.command,
    cwd: run.input.cwd,
    input: run.inputJson,
    timeoutSec: handler.timeoutSec,
    shell: context.shell,
    env: context.env,
    maxOutputBytes: context.maxOutputBytes,
    signal: run.signal,
  });
  return { ...result, maxOutputBytes: context.maxOutputBytes };
}

/** Runs one handler with its `hook-start` / `hook-end` events; the policy turns the raw run into a decision. */
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
  context.events.emit({ type: 'hook-start', runId, event: handler.event, toolName: input.tool_name, sessionId: input.session_id });
  const failClosed = !handler.async && (handler.failClosed ?? context.failClosed ?? false);
  const work = (async () => {
    let decision: D;
    try {
      decision = await policy.decide(await runHandler(context, { handler, input, inputJson: run.inputJson, signal: controller.signal }), handler);
    } catch (error) {
      decision = failed<D>(errorMessage(error));
    }
    return failClosed && decision.status === 'failed' ? policy.closed(decision.error ?? 'unknown failure', decision) : decision;
  })();
  const entry = { controller, done: work };
  context.running.add(entry);
  try {
    const decision = await work;
    const described = policy.describe(decision);
    context.events.emit({
      type: 'hook-end',
      runId,
      event: handler.event,
      toolName: input.tool_name,
      sessionId: input.session_id,
      outcome: described.outcome,
      durationMs: elapsedMs(started),
      ...(described.message !== undefined ? { message: described.message } : {}),
    });
    return decision;
  } finally {
    context.running.delete(entry);
    parentSignal.removeEventListener('abort', forward);
  }
}

/**
 * Selects handlers, serializes the input once (refusing one past the bounds), runs the handlers
 * concurrently (async ones detached) and returns their results in configured order.
 */
async function dispatchHandlers<D extends BaseDecision>(
  context: EngineContext,
  run: { event: HookEventName; request: PreToolUseRequest; input: HookInput; policy: DecisionPolicy<D> },
): Promise<Dispatched<D>> {
  const { event, request, input, policy } = run;
  const names = [request.toolName, ...(request.aliases ?? [])];
  const selected = context.handlers.filter((handler) => handler.event === event && safeMatch(handler, names));
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
    const runId = `${EVENT_KEYS[event]}:${handler.displayOrder}:${handler.sourcePath}:${request.toolUseId}`;
    if (handler.async) {
      // Fire and forget; still bounded by its timeout and killed by close().
      void executeHandler(context, { handler, input, inputJson, runId, parentSignal: new AbortController().signal, policy });
      return undefined;
    }
    return executeHandler(context, { handler, input, inputJson, runId, parentSignal: request.signal, policy }).then((decision) => ({
      decision,
      completionOrder: completed++,
      runId,
    }));
  });
  return { runs: await Promise.all(runs.filter((run) => run !== undefined)) };
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
    closed: (error, decision) => ({ ...decision, status: 'block', reason: failClosedReason(error) }),
  };
}

const POST_TOOL_USE_POLICY: DecisionPolicy<PostHandlerDecision> = {
  decide: decidePostToolUse,
  describe: (decision) => ({
    outcome: decision.status,
    message: decision.status === 'failed' ? decision.error : decision.feedback,
  }),
  closed: (error, decision) => ({ ...decision, status: 'feedback', feedback: failClosedFeedback(error) }),
};

async function runPreToolUse(context: EngineContext, request: PreToolUseRequest): Promise<PreToolUseOutcome> {
  try {
    const input = preToolUseInput(request);
    const dispatched = await dispatchHandlers(context, { event: 'PreToolUse', request, input, policy: preToolUsePolicy(request, context.approvals) });
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
    const input = postToolUseInput(request);
    const dispatched = await dispatchHandlers(context, { event: 'PostToolUse', request, input, policy: POST_TOOL_USE_POLICY });
    if (dispatched.unhookable !== undefined) return { feedback: unhookableFeedback(dispatched.unhookable), additionalContexts: [], warnings: [] };
    return aggregatePost(dispatched.runs);
  } catch (error) {
    const warning = `PostToolUse hooks failed: ${errorMessage(error)}`;
    if (context.failClosed) return { feedback: failClosedFeedback(warning), additionalContexts: [], warnings: [warning] };
    return { additionalContexts: [], warnings: [warning] };
  }
}

/**
 * Creates a hook engine implementing the protocol `HookRunner`. Loading
 * never throws: invalid parts of the configuration are skipped and listed in `engine.warnings`.
 * `runPreToolUse` / `runPostToolUse` never reject; failed hooks fail open and appear in `warnings`.
 */
export function createHookEngine(options: HookEngineOptions = {}): HookEngine {
  checkOptions('createHookEngine', options, HOOK_ENGINE_OPTION_RULES);
  const warnings: string[] = [];
  const handlers = buildHandlers(collectLayers(options, warnings), options.defaultTimeoutSec ?? 600, warnings);
  const context: EngineContext = {
    handlers,
    shell: options.shell ?? (process.env.SHELL || '/bin/sh'),
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
    handlerCounts: {
      PreToolUse: handlers.filter((handler) => handler.event === 'PreToolUse').length,
      PostToolUse: handlers.filter((handler) => handler.event === 'PostToolUse').length,
    },
    runPreToolUse: (request) => runPreToolUse(context, request),
    runPostToolUse: (request) => runPostToolUse(context, request),
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
