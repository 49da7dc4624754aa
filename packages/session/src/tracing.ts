import { createRequire } from 'node:module';
import type { Attributes, Context, Exception, Span, SpanOptions, Tracer } from '@opentelemetry/api';
import { SwitchyardError, isToolCallItem, type HookRunner, type SwitchyardEventListener, type ToolCallSource } from '@switchyard/protocol';
import type { SessionEventListener, SessionEventType } from './session-events';

/** What the session's `tracer` option takes: a tracer, or one with the attributes Switchyard cannot know. */
export type SessionTracer = Tracer | SessionTracingOptions;

export interface SessionTracingOptions {
  /** The tracer spans are started with (`trace.getTracer('my-host')` or a provider's `getTracer`). */
  tracer: Tracer;
  /** `gen_ai.provider.name` on model-request spans (`openai`, `anthropic`, …); a `ModelClient` does not say which provider it talks to. */
  providerName?: string;
  /** `gen_ai.agent.name`: the turn span is then named `invoke_agent {agentName}`. */
  agentName?: string;
}

type Api = typeof import('@opentelemetry/api');

interface TraceSessionOptions {
  /** The session's subscription function. */
  on<T extends SessionEventType>(type: T, listener: SessionEventListener<T>): () => void;
  /** `gen_ai.conversation.id`. */
  sessionId: string;
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

function errorText(error: unknown): string {
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : String(error);
}

function isTracer(value: SessionTracer): value is Tracer {
  return typeof (value as Tracer).startSpan === 'function';
}

/**
 * Subscribes a tracer to a session's events and turns them into spans (see the README's Tracing
 * section for the tree and the attributes). Every span gets an explicit parent context and explicit
 * start and end times taken when its events are said. A listener never throws: a failing tracer
 * or exporter costs spans, never a turn. Returns `close`, which ends what is still open (cells
 * alive at shutdown) and unsubscribes.
 */
export function traceSession(option: SessionTracer, session: TraceSessionOptions): { close(): void } {
  const settings: SessionTracingOptions = isTracer(option) ? { tracer: option } : option;
  if (!settings || typeof settings.tracer?.startSpan !== 'function') {
    throw new SwitchyardError('CONFIG', 'tracer: expected an OpenTelemetry Tracer or { tracer, providerName?, agentName? }');
  }
  const otel = loadApi();
  const { tracer } = settings;
  const ERROR = otel.SpanStatusCode.ERROR;
  const conversation: Attributes = { 'gen_ai.conversation.id': session.sessionId };
  if (settings.providerName) conversation['gen_ai.provider.name'] = settings.providerName;

  const turns = new Map<string, TurnTrace>();
  /** The turn of each direct call the model made (its `call_id`), until the call starts. */
  const callTurns = new Map<string, TurnTrace>();
  const tools = new Map<string, Traced>();
  const cells = new Map<string, Traced>();
  const hookRuns = new Map<string, Span>();
  let lastTurn: TurnTrace | undefined;

  const setSpan = otel.trace.setSpan.bind(otel.trace);
  const start = (name: string, parent: Context, options: SpanOptions): Traced => new Traced(tracer.startSpan(name, options, parent), parent, setSpan);

  const fail = (span: Span, error: unknown, type: string, time: number) => {
    const message = errorText(error);
    const exception: Exception = error instanceof Error ? error : { name: type, message };
    span.recordException(exception, time);
    span.setStatus({ code: ERROR, message });
    span.setAttribute('error.type', type);
  };

  const turnOf = (turnId: string): TurnTrace | undefined => turns.get(turnId);
  /** A direct call's parent: the turn whose model made it, else the latest turn still running. */
  const directParent = (callId: string): Context => {
    const turn = callTurns.get(callId);
    if (turn) callTurns.delete(callId);
    return (turn ?? lastTurn)?.context ?? otel.context.active();
  };
  const callParent = (callId: string, source: ToolCallSource): Context => {
    if (source.kind === 'code-mode') return cells.get(source.cellId)?.context ?? lastTurn?.context ?? otel.context.active();
    return directParent(callId);
  };

  const startTool = (callId: string, toolName: string, source: ToolCallSource, time: number): Traced => {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': toolName,
      'gen_ai.tool.call.id': callId,
      ...conversation,
      'switchyard.tool.caller': source.kind,
    };
    if (source.kind === 'code-mode') {
      attributes['switchyard.cell.id'] = source.cellId;
      attributes['switchyard.cell.tool_call_id'] = source.runtimeToolCallId;
    }
    const traced = start(`execute_tool ${toolName}`, callParent(callId, source), { kind: otel.SpanKind.INTERNAL, attributes, startTime: time });
    tools.set(callId, traced);
    return traced;
  };

  /** The open span of a call, or one started now for a call that ended without starting (answered aborted at once). */
  const endingTool = (event: { callId: string; toolName: string; source: ToolCallSource }, startTime: number): Span => {
    const traced = tools.get(event.callId) ?? startTool(event.callId, event.toolName, event.source, startTime);
    tools.delete(event.callId);
    return traced.span;
  };

  const endTurn = (turn: TurnTrace, time: number, error?: unknown) => {
    if (turn.chat) turn.chat.end(time);
    if (turn.hasUsage) {
      turn.span.setAttributes({ 'gen_ai.usage.input_tokens': turn.inputTokens, 'gen_ai.usage.output_tokens': turn.outputTokens });
    }
    if (error !== undefined) fail(turn.span, error, errorType(error), time);
    turn.span.end(time);
    for (const [callId, owner] of callTurns) if (owner === turn) callTurns.delete(callId);
  };

  const guard =
    <E>(listener: (event: E) => void) =>
    (event: E) => {
      try {
        listener(event);
      } catch {
        // a broken tracer or exporter costs its spans, never the turn
      }
    };

  const unsubscribe: Array<() => void> = [];
  const on = <T extends SessionEventType>(type: T, listener: SessionEventListener<T>) => unsubscribe.push(session.on(type, guard(listener)));

  on('turn-start', (event) => {
    const time = now();
    const attributes: Attributes = { 'gen_ai.operation.name': 'invoke_agent', ...conversation, 'switchyard.turn.id': event.turnId };
    if (settings.agentName) attributes['gen_ai.agent.name'] = settings.agentName;
    if (session.model) attributes['gen_ai.request.model'] = session.model;
    const name = settings.agentName ? `invoke_agent ${settings.agentName}` : 'invoke_agent';
    // the host's active span (if any) is the turn's parent
    const parent = otel.context.active();
    const turn = new TurnTrace(tracer.startSpan(name, { kind: otel.SpanKind.INTERNAL, attributes, startTime: time }, parent), parent, setSpan);
    turn.model = session.model;
    turns.set(event.turnId, turn);
    lastTurn = turn;
  });

  on('turn-end', (event) => {
    const turn = turnOf(event.turnId);
    if (!turn) return;
    turns.delete(event.turnId);
    if (lastTurn === turn) lastTurn = [...turns.values()].pop();
    endTurn(turn, now(), event.error);
  });

  on('model-request', (event) => {
    const turn = turnOf(event.turnId);
    if (!turn) return;
    const time = now();
    if (turn.chat) turn.chat.end(time);
    const model = event.model ?? turn.model;
    if (model && !turn.model) {
      turn.model = model;
      turn.span.setAttribute('gen_ai.request.model', model);
    }
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      ...conversation,
      'switchyard.step.index': event.stepIndex,
      'switchyard.model.attempt': event.attempt,
    };
    if (model) attributes['gen_ai.request.model'] = model;
    turn.chat = start(model ? `chat ${model}` : 'chat', turn.context, { kind: otel.SpanKind.CLIENT, attributes, startTime: time }).span;
  });

  on('model-item', (event) => {
    const turn = turnOf(event.turnId);
    if (!turn || !isToolCallItem(event.item)) return;
    const callId = (event.item as { call_id?: unknown }).call_id;
    if (typeof callId === 'string') callTurns.set(callId, turn);
  });

  on('model-response', (event) => {
    const turn = turnOf(event.turnId);
    const chat = turn?.chat;
    if (!turn || !chat) return;
    turn.chat = undefined;
    const time = now();
    if (event.usage) {
      chat.setAttributes({ 'gen_ai.usage.input_tokens': event.usage.inputTokens, 'gen_ai.usage.output_tokens': event.usage.outputTokens });
      turn.inputTokens += event.usage.inputTokens;
      turn.outputTokens += event.usage.outputTokens;
      turn.hasUsage = true;
    }
    if (event.responseId) chat.setAttribute('gen_ai.response.id', event.responseId);
    if (event.error !== undefined) fail(chat, event.error, errorType(event.error), time);
    chat.end(time);
  });

  on('tool-call-start', (event) => {
    startTool(event.callId, event.toolName, event.source, now());
  });

  on('tool-call-end', (event) => {
    const time = now();
    const span = endingTool(event, time - event.durationMs);
    if (event.error) fail(span, { name: event.error.code, message: event.error.message }, event.error.code, time);
    else if (!event.success) fail(span, 'the tool returned a failed output', '_OTHER', time);
    span.end(time);
  });

  on('tool-call-blocked', (event) => {
    const time = now();
    const span = endingTool(event, time);
    span.setAttribute('switchyard.tool.blocked_reason', event.reason);
    fail(span, { name: 'HOOK_BLOCKED', message: event.reason }, 'HOOK_BLOCKED', time);
    span.end(time);
  });

  on('tool-call-aborted', (event) => {
    const time = now();
    const span = endingTool(event, time - event.durationMs);
    fail(span, { name: 'ABORTED', message: 'tool call aborted' }, 'ABORTED', time);
    span.end(time);
  });

  on('cell-start', (event) => {
    if (cells.has(event.cellId)) return;
    const time = now();
    const exec = event.execCallId ? tools.get(event.execCallId) : undefined;
    // a cell of another session sharing this Code Mode has no exec call here: not ours to trace
    if (event.execCallId && !exec) return;
    const attributes: Attributes = { ...conversation, 'switchyard.cell.id': event.cellId };
    if (event.execCallId) attributes['switchyard.cell.exec_call_id'] = event.execCallId;
    const parent = exec?.context ?? lastTurn?.context ?? otel.context.active();
    cells.set(event.cellId, start('code_mode.cell', parent, { kind: otel.SpanKind.INTERNAL, attributes, startTime: Math.min(event.startTime ?? time, time) }));
  });

  const endCell = (cellId: string, status: string, error?: { type: string; message: string }) => {
    const cell = cells.get(cellId);
    if (!cell) return;
    cells.delete(cellId);
    const time = now();
    cell.span.setAttribute('switchyard.cell.status', status);
    if (error) fail(cell.span, { name: error.type, message: error.message }, error.type, time);
    cell.span.end(time);
  };

  on('cell-end', (event) => {
    endCell(event.cellId, event.status, event.status === 'failed' ? { type: 'SCRIPT_ERROR', message: event.error ?? 'script failed' } : undefined);
  });

  on('cell-limit-exceeded', (event) => {
    cells.get(event.cellId)?.span.addEvent('switchyard.cell.limit_exceeded', { 'switchyard.cell.limit': event.message }, now());
  });

  on('runtime-lost', (event) => {
    for (const cellId of event.cellIds) endCell(cellId, 'failed', { type: 'RUNTIME_LOST', message: `exec runtime ended unexpectedly: ${event.cause}` });
  });

  const hookSource = session.hooks as (HookRunner & { on?: (type: 'hook-start' | 'hook-end', listener: SwitchyardEventListener<'hook-start' | 'hook-end'>) => () => void }) | undefined;
  if (typeof hookSource?.on === 'function') {
    /** The call a hook run belongs to: its run id ends in the call's `tool_use_id`. */
    const toolOfRun = (runId: string): { callId: string; traced: Traced } | undefined => {
      const last = runId.slice(runId.lastIndexOf(':') + 1);
      const direct = tools.get(last);
      if (direct) return { callId: last, traced: direct };
      for (const [callId, traced] of tools) if (runId.endsWith(`:${callId}`)) return { callId, traced };
      return undefined;
    };
    const hookStart = guard<Parameters<SwitchyardEventListener<'hook-start'>>[0]>((event) => {
      // a hook engine shared by several sessions reports every session's runs: only ours become spans
      if (event.sessionId !== undefined && event.sessionId !== session.sessionId) return;
      const owner = toolOfRun(event.runId);
      if (!owner) return;
      const attributes: Attributes = {
        ...conversation,
        'switchyard.hook.event': event.event,
        'switchyard.hook.run_id': event.runId,
        'gen_ai.tool.name': event.toolName,
        'gen_ai.tool.call.id': owner.callId,
      };
      hookRuns.set(event.runId, start(`hook ${event.event}`, owner.traced.context, { kind: otel.SpanKind.INTERNAL, attributes, startTime: now() }).span);
    });
    const hookEnd = guard<Parameters<SwitchyardEventListener<'hook-end'>>[0]>((event) => {
      if (event.sessionId !== undefined && event.sessionId !== session.sessionId) return;
      const span = hookRuns.get(event.runId);
      if (!span) return;
      hookRuns.delete(event.runId);
      const time = now();
      span.setAttribute('switchyard.hook.outcome', event.outcome);
      if (event.message !== undefined) span.setAttribute('switchyard.hook.message', event.message);
      // the hook failed (it fails open: the call went on); a block is the hook's decision, recorded on the call
      if (event.outcome === 'failed') fail(span, { name: 'HOOK_FAILED', message: event.message ?? 'hook failed' }, 'HOOK_FAILED', time);
      span.end(time);
    });
    unsubscribe.push(hookSource.on('hook-start', hookStart as never), hookSource.on('hook-end', hookEnd as never));
  }

  return {
    close() {
      for (const stop of unsubscribe.splice(0)) stop();
      const time = now();
      const safely = guard((run: () => void) => run());
      for (const span of hookRuns.values()) safely(() => span.end(time));
      for (const { span } of tools.values()) safely(() => span.end(time));
      for (const { span } of cells.values()) {
        safely(() => {
          span.setAttribute('switchyard.cell.status', 'terminated');
          span.end(time);
        });
      }
      for (const turn of turns.values()) safely(() => endTurn(turn, time));
      hookRuns.clear();
      tools.clear();
      cells.clear();
      turns.clear();
      callTurns.clear();
      lastTurn = undefined;
    },
  };
}
