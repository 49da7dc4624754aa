import { createRequire } from 'node:module';
import type { Attributes, Context, Exception, Span, SpanOptions, Tracer } from '@opentelemetry/api';
import {
  SwitchyardError,
  displayName,
  isToolCallItem,
  type HookRunner,
  type ModelProviderInfo,
  type ModelUsage,
  type SwitchyardEventListener,
  type ToolCallSource,
  type ToolExecutor,
} from '@switchyard/protocol';
import type { SessionEventListener, SessionEventType } from './session-events';

/**
 * An OpenTelemetry `Tracer` (from `@opentelemetry/api`), described by the one method the session
 * calls, so that this package's declaration files never name the optional peer: a host without
 * `@opentelemetry/api` type-checks with `skipLibCheck: false`, and any `Tracer` is assignable.
 */
interface OpenTelemetryTracer {
  startSpan(name: string, options?: object, context?: object): object;
}

/** What the session's `tracer` option takes: a tracer, or one with the attributes Switchyard cannot know. */
export type SessionTracer = OpenTelemetryTracer | SessionTracingOptions;

export interface SessionTracingOptions {
  /** The tracer spans are started with (`trace.getTracer('my-host')` or a provider's `getTracer`). */
  tracer: OpenTelemetryTracer;
  /**
   * `gen_ai.provider.name` on every span (`openai`, `anthropic`, …). Without it, `chat` and
   * `invoke_agent` spans carry the name the model client reports (its `provider`); set it for a
   * client that reports none, or to override the one it reports.
   */
  providerName?: string;
  /** `gen_ai.agent.name`: the turn span is then named `invoke_agent {agentName}`. */
  agentName?: string;
  /**
   * Record content the model wrote, cut at 1,024 characters: a call's arguments
   * (`gen_ai.tool.call.arguments`, the conventions' opt-in attribute) and the error text of a failed
   * Code Mode cell (what its code threw). Default false: no arguments, and a failed cell's span says
   * `SCRIPT_ERROR` and "script failed". Tool results are never recorded.
   */
  recordContent?: boolean;
}

type Api = typeof import('@opentelemetry/api');

interface TraceSessionOptions {
  /** The session's subscription function. */
  on<T extends SessionEventType>(type: T, listener: SessionEventListener<T>): () => void;
  /** `gen_ai.conversation.id`. */
  sessionId: string;
  /** `switchyard.tenant`, when the session has one. */
  tenant?: string;
  /** The session's hooks; their `hook-start` / `hook-end` events are read when the runner has an `on` (a `HookEngine` does). */
  hooks?: HookRunner;
  /** The session's `model.name`, for `gen_ai.request.model` on the turn span. */
  model?: string;
}

/** A started span and, built when a child needs it (most spans have none), its context. */
class Traced {
  private built?: Context;
  constructor(
    readonly span: Span,
    private readonly parent: Context,
    private readonly setSpan: Api['trace']['setSpan'],
  ) {}

  /** The span's context: the parent of its children. */
  get context(): Context {
    return (this.built ??= this.setSpan(this.parent, this.span));
  }
}

class TurnTrace extends Traced {
  chat?: Span;
  /** The turn span got the client's `gen_ai.provider.name`. */
  hasProvider = false;
  inputTokens = 0;
  outputTokens = 0;
  hasUsage = false;
  model?: string;
}

let api: Api | undefined;

/** The OpenTelemetry API, loaded the first time a session is traced (an optional peer: hosts without tracing never need it). */
function loadApi(): Api {
  if (api) return api;
  try {
    // a require relative to this module in the ESM build; the CommonJS build has no import.meta.url and its own require
    const here: string | undefined = import.meta.url;
    const load = here ? createRequire(here) : require;
    api = load('@opentelemetry/api') as Api;
  } catch (error) {
    throw new SwitchyardError('CONFIG', 'tracer: tracing needs the @opentelemetry/api package (npm install @opentelemetry/api)', { cause: error });
  }
  return api;
}

/** Milliseconds since the epoch, with the sub-millisecond part (an OpenTelemetry `TimeInput`). */
const now = () => performance.timeOrigin + performance.now();

/** The stable code of an error (`code` of a Switchyard error), else its name; the semantic conventions' `_OTHER` when it has neither. */
function errorType(error: unknown): string {
  const value = error as { code?: unknown; name?: unknown } | undefined;
  if (typeof value?.code === 'string' && value.code !== '') return value.code;
  if (typeof value?.name === 'string' && value.name !== '' && value.name !== 'Error') return value.name;
  return '_OTHER';
}

/** Longest text a span records (an attribute, a status message, an exception's message or stack). */
const TEXT_LIMIT = 1_024;

/** `text`, cut at {@link TEXT_LIMIT} characters (an ellipsis marks the cut). */
function bounded(text: string): string {
  return text.length > TEXT_LIMIT ? `${text.slice(0, TEXT_LIMIT - 1)}…` : text;
}

function errorText(error: unknown): string {
  if (typeof error === 'string') return bounded(error);
  const message = (error as { message?: unknown } | undefined)?.message;
  return bounded(typeof message === 'string' ? message : String(error));
}

function isTracer(value: SessionTracer): value is OpenTelemetryTracer {
  return typeof (value as OpenTelemetryTracer).startSpan === 'function';
}

/** The open spans of one traced session, and how a span is started, failed and parented. */
class SessionSpans {
  readonly turns = new Map<string, TurnTrace>();
  /** The turn of each direct call the model made (its `call_id`), until the call starts. */
  readonly callTurns = new Map<string, TurnTrace>();
  readonly tools = new Map<string, Traced>();
  readonly cells = new Map<string, Traced>();
  readonly hookRuns = new Map<string, Span>();
  /** `gen_ai.tool.description` by display name, from the latest plan (nested calls use the same names). */
  readonly toolDescriptions = new Map<string, string>();
  /** Plans whose tools are in `toolDescriptions` (the planner reuses a plan while the tools stay the same). */
  readonly plansSeen = new WeakSet<object>();
  lastTurn: TurnTrace | undefined;
  /** The attributes every span carries. */
  readonly conversation: Attributes;
  private readonly setSpan: Api['trace']['setSpan'];

  constructor(
    readonly otel: Api,
    readonly settings: SessionTracingOptions,
    readonly session: TraceSessionOptions,
  ) {
    this.conversation = { 'gen_ai.conversation.id': session.sessionId };
    if (settings.providerName) this.conversation['gen_ai.provider.name'] = settings.providerName;
    if (session.tenant !== undefined) this.conversation['switchyard.tenant'] = session.tenant;
    this.setSpan = otel.trace.setSpan.bind(otel.trace);
  }

  start(name: string, parent: Context, options: SpanOptions): Traced {
    return new Traced((this.settings.tracer as Tracer).startSpan(name, options, parent), parent, this.setSpan);
  }

  startTurn(name: string, parent: Context, options: SpanOptions): TurnTrace {
    return new TurnTrace((this.settings.tracer as Tracer).startSpan(name, options, parent), parent, this.setSpan);
  }

  fail(span: Span, error: unknown, type: string, time: number): void {
    const message = errorText(error);
    // never the error itself: its message and stack may be any size (a tool's error, a model's text)
    const stack = error instanceof Error && typeof error.stack === 'string' ? { stack: bounded(error.stack) } : {};
    const code = (error as { code?: unknown } | undefined)?.code;
    const exception: Exception = { name: error instanceof Error ? error.name : type, message, ...(typeof code === 'string' ? { code } : {}), ...stack };
    span.recordException(exception, time);
    span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message });
    span.setAttribute('error.type', type);
  }

  /** The latest turn still running, else the host's active context. */
  fallbackParent(): Context {
    return this.lastTurn?.context ?? this.otel.context.active();
  }

  /** A direct call's parent: the turn whose model made it, else the latest turn still running. */
  private directParent(callId: string): Context {
    const turn = this.callTurns.get(callId);
    if (turn) this.callTurns.delete(callId);
    return (turn ?? this.lastTurn)?.context ?? this.otel.context.active();
  }

  private callParent(callId: string, source: ToolCallSource): Context {
    if (source.kind === 'code-mode') return this.cells.get(source.cellId)?.context ?? this.fallbackParent();
    return this.directParent(callId);
  }

  startTool(callId: string, toolName: string, source: ToolCallSource, time: number): Traced {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': toolName,
      'gen_ai.tool.call.id': callId,
      // every call Switchyard traces runs on this side, in the host's process or one it started
      'gen_ai.tool.type': 'function',
      ...this.conversation,
      'switchyard.tool.caller': source.kind,
    };
    const description = this.toolDescriptions.get(toolName);
    if (description !== undefined) attributes['gen_ai.tool.description'] = description;
    if (source.kind === 'code-mode') {
      attributes['switchyard.cell.id'] = source.cellId;
      attributes['switchyard.cell.tool_call_id'] = source.runtimeToolCallId;
    }
    const traced = this.start(`execute_tool ${toolName}`, this.callParent(callId, source), { kind: this.otel.SpanKind.INTERNAL, attributes, startTime: time });
    this.tools.set(callId, traced);
    return traced;
  }

  /** The open span of a call, or one started now for a call that ended without starting (answered aborted at once). */
  endingTool(event: { callId: string; toolName: string; source: ToolCallSource }, startTime: number): Span {
    const traced = this.tools.get(event.callId) ?? this.startTool(event.callId, event.toolName, event.source, startTime);
    this.tools.delete(event.callId);
    return traced.span;
  }

  endTurn(turn: TurnTrace, time: number, error?: unknown): void {
    if (turn.chat) turn.chat.end(time);
    if (turn.hasUsage) {
      turn.span.setAttributes({ 'gen_ai.usage.input_tokens': turn.inputTokens, 'gen_ai.usage.output_tokens': turn.outputTokens });
    }
    if (error !== undefined) this.fail(turn.span, error, errorType(error), time);
    turn.span.end(time);
    for (const [callId, owner] of this.callTurns) if (owner === turn) this.callTurns.delete(callId);
  }

  endCell(cellId: string, status: string, error?: { type: string; message: string }): void {
    const cell = this.cells.get(cellId);
    if (!cell) return;
    this.cells.delete(cellId);
    const time = now();
    cell.span.setAttribute('switchyard.cell.status', status);
    if (error) this.fail(cell.span, { name: error.type, message: error.message }, error.type, time);
    cell.span.end(time);
  }

  /** Ends every span still open (hook runs, calls, cells as `terminated`, turns) and forgets them. */
  endAll(): void {
    const time = now();
    const safely = guard((run: () => void) => run());
    for (const span of this.hookRuns.values()) safely(() => span.end(time));
    for (const { span } of this.tools.values()) safely(() => span.end(time));
    for (const { span } of this.cells.values()) {
      safely(() => {
        span.setAttribute('switchyard.cell.status', 'terminated');
        span.end(time);
      });
    }
    for (const turn of this.turns.values()) safely(() => this.endTurn(turn, time));
    this.hookRuns.clear();
    this.tools.clear();
    this.cells.clear();
    this.turns.clear();
    this.callTurns.clear();
    this.lastTurn = undefined;
  }
}

/** The listener, made one that never throws. */
function guard<E>(listener: (event: E) => void): (event: E) => void {
  return (event: E) => {
    try {
      listener(event);
    } catch {
      // a broken tracer or exporter costs its spans, never the turn
    }
  };
}

type Subscribe = <T extends SessionEventType>(type: T, listener: SessionEventListener<T>) => void;

/** `invoke_agent` spans: one per turn, with the usage of its model requests summed. */
function traceTurns(spans: SessionSpans, on: Subscribe): void {
  const { otel, settings, session } = spans;
  on('turn-start', (event) => {
    const time = now();
    const attributes: Attributes = { 'gen_ai.operation.name': 'invoke_agent', ...spans.conversation, 'switchyard.turn.id': event.turnId };
    if (settings.agentName) attributes['gen_ai.agent.name'] = settings.agentName;
    if (session.model) attributes['gen_ai.request.model'] = session.model;
    const name = settings.agentName ? `invoke_agent ${settings.agentName}` : 'invoke_agent';
    // the host's active span (if any) is the turn's parent
    const turn = spans.startTurn(name, otel.context.active(), { kind: otel.SpanKind.INTERNAL, attributes, startTime: time });
    turn.model = session.model;
    spans.turns.set(event.turnId, turn);
    spans.lastTurn = turn;
  });

  on('turn-end', (event) => {
    const turn = spans.turns.get(event.turnId);
    if (!turn) return;
    spans.turns.delete(event.turnId);
    if (spans.lastTurn === turn) spans.lastTurn = [...spans.turns.values()].pop();
    spans.endTurn(turn, now(), event.error);
  });
}

/** Records the descriptions of a plan's tools, by display name (what `tool-call-start` says). */
function rememberTools(spans: SessionSpans, executors: readonly ToolExecutor[]): void {
  for (const executor of executors) {
    const text = (executor.spec as { description?: unknown }).description;
    if (typeof text !== 'string' || text === '') continue;
    // Code Mode's `exec` description runs to thousands of tokens, and every call's span carries it
    spans.toolDescriptions.set(displayName(executor.name), bounded(text));
  }
}

/**
 * The attributes of who serves the request, as the model client reports them (read structurally:
 * a client may bundle its own copy of protocol). The host's `providerName`, already on every span, wins.
 */
function providerAttributes(settings: SessionTracingOptions, provider: ModelProviderInfo | undefined): Attributes {
  const attributes: Attributes = {};
  if (!settings.providerName && typeof provider?.name === 'string' && provider.name !== '') attributes['gen_ai.provider.name'] = provider.name;
  if (typeof provider?.serverAddress === 'string' && provider.serverAddress !== '') attributes['server.address'] = provider.serverAddress;
  if (Number.isInteger(provider?.serverPort)) attributes['server.port'] = provider!.serverPort;
  if (typeof provider?.streaming === 'boolean') attributes['gen_ai.request.stream'] = provider.streaming;
  return attributes;
}

/** The attributes of a finished response: usage (with its cached and reasoning parts), id, the answering model, finish reasons. */
function responseAttributes(event: { usage?: ModelUsage; responseId?: string; responseModel?: string; finishReasons?: readonly string[] }): Attributes {
  const attributes: Attributes = {};
  const { usage } = event;
  if (usage) {
    attributes['gen_ai.usage.input_tokens'] = usage.inputTokens;
    attributes['gen_ai.usage.output_tokens'] = usage.outputTokens;
    if (typeof usage.cacheReadInputTokens === 'number') attributes['gen_ai.usage.cache_read.input_tokens'] = usage.cacheReadInputTokens;
    if (typeof usage.reasoningOutputTokens === 'number') attributes['gen_ai.usage.reasoning.output_tokens'] = usage.reasoningOutputTokens;
  }
  if (event.responseId) attributes['gen_ai.response.id'] = event.responseId;
  if (event.responseModel) attributes['gen_ai.response.model'] = event.responseModel;
  const reasons = Array.isArray(event.finishReasons) ? event.finishReasons.filter((reason) => typeof reason === 'string') : [];
  if (reasons.length > 0) attributes['gen_ai.response.finish_reasons'] = reasons;
  return attributes;
}

/** `chat` spans: one per sampling attempt, children of the turn; and which turn each model-made call belongs to. */
function traceModelRequests(spans: SessionSpans, on: Subscribe): void {
  on('step-start', (event) => {
    if (spans.plansSeen.has(event.plan)) return;
    spans.plansSeen.add(event.plan);
    rememberTools(spans, event.plan.executors);
  });

  on('model-request', (event) => {
    const turn = spans.turns.get(event.turnId);
    if (!turn) return;
    const time = now();
    if (turn.chat) turn.chat.end(time);
    const model = event.model ?? turn.model;
    if (model && !turn.model) {
      turn.model = model;
      turn.span.setAttribute('gen_ai.request.model', model);
    }
    const served = providerAttributes(spans.settings, event.provider);
    const providerName = served['gen_ai.provider.name'];
    if (providerName !== undefined && !turn.hasProvider) {
      turn.hasProvider = true;
      turn.span.setAttribute('gen_ai.provider.name', providerName);
    }
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      ...spans.conversation,
      ...served,
      'switchyard.step.index': event.stepIndex,
      'switchyard.model.attempt': event.attempt,
    };
    if (model) attributes['gen_ai.request.model'] = model;
    turn.chat = spans.start(model ? `chat ${model}` : 'chat', turn.context, { kind: spans.otel.SpanKind.CLIENT, attributes, startTime: time }).span;
  });

  on('model-item', (event) => {
    const turn = spans.turns.get(event.turnId);
    if (!turn || !isToolCallItem(event.item)) return;
    const callId = (event.item as { call_id?: unknown }).call_id;
    if (typeof callId === 'string') spans.callTurns.set(callId, turn);
  });

  on('model-response', (event) => {
    const turn = spans.turns.get(event.turnId);
    const chat = turn?.chat;
    if (!turn || !chat) return;
    turn.chat = undefined;
    const time = now();
    chat.setAttributes(responseAttributes(event));
    if (event.usage) {
      turn.inputTokens += event.usage.inputTokens;
      turn.outputTokens += event.usage.outputTokens;
      turn.hasUsage = true;
    }
    if (event.error !== undefined) spans.fail(chat, event.error, errorType(event.error), time);
    chat.end(time);
  });
}

/** `execute_tool` spans: one per call, ended as it succeeded, failed, was blocked or aborted. */
function traceToolCalls(spans: SessionSpans, on: Subscribe): void {
  on('tool-call-start', (event) => {
    const traced = spans.startTool(event.callId, event.toolName, event.source, now());
    // the arguments are the model's text: content, recorded only when the host asks
    if (spans.settings.recordContent === true && typeof event.input === 'string') traced.span.setAttribute('gen_ai.tool.call.arguments', bounded(event.input));
  });

  on('tool-call-end', (event) => {
    const time = now();
    const span = spans.endingTool(event, time - event.durationMs);
    if (event.error) spans.fail(span, { name: event.error.code, message: event.error.message }, event.error.code, time);
    else if (!event.success) spans.fail(span, 'the tool returned a failed output', '_OTHER', time);
    span.end(time);
  });

  on('tool-call-blocked', (event) => {
    const time = now();
    const span = spans.endingTool(event, time);
    span.setAttribute('switchyard.tool.blocked_reason', bounded(event.reason));
    spans.fail(span, { name: 'HOOK_BLOCKED', message: event.reason }, 'HOOK_BLOCKED', time);
    span.end(time);
  });

  on('tool-call-aborted', (event) => {
    const time = now();
    const span = spans.endingTool(event, time - event.durationMs);
    spans.fail(span, { name: 'ABORTED', message: 'tool call aborted' }, 'ABORTED', time);
    span.end(time);
  });
}

/** `code_mode.cell` spans: children of their `exec` call, ended with the cell's status. */
function traceCells(spans: SessionSpans, on: Subscribe): void {
  on('cell-start', (event) => {
    if (spans.cells.has(event.cellId)) return;
    const time = now();
    const exec = event.execCallId ? spans.tools.get(event.execCallId) : undefined;
    // a cell of another session sharing this Code Mode has no exec call here: not ours to trace
    if (event.execCallId && !exec) return;
    const attributes: Attributes = { ...spans.conversation, 'switchyard.cell.id': event.cellId };
    if (event.execCallId) attributes['switchyard.cell.exec_call_id'] = event.execCallId;
    const parent = exec?.context ?? spans.fallbackParent();
    const startTime = Math.min(event.startTime ?? time, time);
    spans.cells.set(event.cellId, spans.start('code_mode.cell', parent, { kind: spans.otel.SpanKind.INTERNAL, attributes, startTime }));
  });

  on('cell-end', (event) => {
    // what the cell's code threw is the model's text: content, recorded only when the host asks
    const message = spans.settings.recordContent === true && event.error !== undefined ? event.error : 'script failed';
    spans.endCell(event.cellId, event.status, event.status === 'failed' ? { type: 'SCRIPT_ERROR', message } : undefined);
  });

  on('cell-limit-exceeded', (event) => {
    spans.cells.get(event.cellId)?.span.addEvent('switchyard.cell.limit_exceeded', { 'switchyard.cell.limit': bounded(event.message) }, now());
  });

  on('runtime-lost', (event) => {
    for (const cellId of event.cellIds) spans.endCell(cellId, 'failed', { type: 'RUNTIME_LOST', message: `exec runtime ended unexpectedly: ${event.cause}` });
  });
}

type HookEventType = 'hook-start' | 'hook-end';
type HookEvent<T extends HookEventType> = Parameters<SwitchyardEventListener<T>>[0];
type HookSource = HookRunner & { on?: (type: HookEventType, listener: SwitchyardEventListener<HookEventType>) => () => void };

/** The call a hook run belongs to: its run id ends in the call's `tool_use_id`. */
function toolOfRun(spans: SessionSpans, runId: string): { callId: string; traced: Traced } | undefined {
  const last = runId.slice(runId.lastIndexOf(':') + 1);
  const direct = spans.tools.get(last);
  if (direct) return { callId: last, traced: direct };
  for (const [callId, traced] of spans.tools) if (runId.endsWith(`:${callId}`)) return { callId, traced };
  return undefined;
}

function hookStarted(spans: SessionSpans, event: HookEvent<'hook-start'>): void {
  // a hook engine shared by several sessions reports every session's runs: only ours become spans
  if (event.sessionId !== undefined && event.sessionId !== spans.session.sessionId) return;
  const owner = toolOfRun(spans, event.runId);
  if (!owner) return;
  const attributes: Attributes = {
    ...spans.conversation,
    'switchyard.hook.event': event.event,
    'switchyard.hook.run_id': event.runId,
    'gen_ai.tool.name': event.toolName,
    'gen_ai.tool.call.id': owner.callId,
  };
  const options: SpanOptions = { kind: spans.otel.SpanKind.INTERNAL, attributes, startTime: now() };
  spans.hookRuns.set(event.runId, spans.start(`hook ${event.event}`, owner.traced.context, options).span);
}

function hookEnded(spans: SessionSpans, event: HookEvent<'hook-end'>): void {
  if (event.sessionId !== undefined && event.sessionId !== spans.session.sessionId) return;
  const span = spans.hookRuns.get(event.runId);
  if (!span) return;
  spans.hookRuns.delete(event.runId);
  const time = now();
  span.setAttribute('switchyard.hook.outcome', event.outcome);
  if (event.message !== undefined) span.setAttribute('switchyard.hook.message', bounded(event.message));
  // the hook failed (it fails open: the call went on); a block is the hook's decision, recorded on the call
  if (event.outcome === 'failed') spans.fail(span, { name: 'HOOK_FAILED', message: event.message ?? 'hook failed' }, 'HOOK_FAILED', time);
  span.end(time);
}

/** `hook` spans, children of the call they ran for, when the session's hook runner reports its runs (a `HookEngine` does). */
function traceHooks(spans: SessionSpans, unsubscribe: Array<() => void>): void {
  const hookSource = spans.session.hooks as HookSource | undefined;
  if (typeof hookSource?.on !== 'function') return;
  const hookStart = guard<HookEvent<'hook-start'>>((event) => hookStarted(spans, event));
  const hookEnd = guard<HookEvent<'hook-end'>>((event) => hookEnded(spans, event));
  unsubscribe.push(hookSource.on('hook-start', hookStart as never), hookSource.on('hook-end', hookEnd as never));
}

function tracingSettings(option: SessionTracer): SessionTracingOptions {
  const settings: SessionTracingOptions = isTracer(option) ? { tracer: option } : option;
  if (!settings || typeof settings.tracer?.startSpan !== 'function') {
    throw new SwitchyardError('CONFIG', 'tracer: expected an OpenTelemetry Tracer or { tracer, providerName?, agentName?, recordContent? }');
  }
  if (settings.recordContent !== undefined && typeof settings.recordContent !== 'boolean') throw new SwitchyardError('CONFIG', 'tracer.recordContent must be a boolean');
  return settings;
}

/**
 * Subscribes a tracer to a session's events and turns them into spans (see the README's Tracing
 * section for the tree and the attributes). Every span gets an explicit parent context and explicit
 * start and end times taken when its events are said. A listener never throws: a failing tracer
 * or exporter costs spans, never a turn. Returns `close`, which ends what is still open (cells
 * alive at shutdown) and unsubscribes.
 */
export function traceSession(option: SessionTracer, session: TraceSessionOptions): { close(): void } {
  const settings = tracingSettings(option);
  const spans = new SessionSpans(loadApi(), settings, session);
  const unsubscribe: Array<() => void> = [];
  const on: Subscribe = (type, listener) => {
    unsubscribe.push(session.on(type, guard(listener)));
  };
  traceTurns(spans, on);
  traceModelRequests(spans, on);
  traceToolCalls(spans, on);
  traceCells(spans, on);
  traceHooks(spans, unsubscribe);
  return {
    close() {
      for (const stop of unsubscribe.splice(0)) stop();
      spans.endAll();
    },
  };
}
