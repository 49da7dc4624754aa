import type {
  ApprovalRequest,
  CellEndEvent,
  CellStartEvent,
  HookEndEvent,
  JsonObject,
  JsonValue,
  ResponseItem,
  ToolCallEventBase,
  ToolCallStartEvent,
  ToolOutputItem,
} from '@switchyard/protocol';
import { displayName, toolName } from '@switchyard/protocol';
import type { UIMessageChunk } from 'ai';
import type { ApprovalDescriptor, NestedCallData } from './ui-data';
import { outputBodyText } from './ui-data';
import { PROVIDER_METADATA_FIELD, messageText, reasoningText } from './prompt';

/** Any event of a turn (`session.streamTurn(...)` yields them); unknown types are ignored. */
export interface TurnEventLike {
  readonly type: string;
}

/** What the approvals bridge reports to a stream (see `createUIApprovals`). */
export type ApprovalNotice =
  | { readonly type: 'approval-requested'; readonly approvalId: string; readonly request: ApprovalRequest }
  | { readonly type: 'approval-settled'; readonly approvalId: string; readonly approved: boolean; readonly reason?: string };

/** A turn's end as the translator saw it. */
export interface TurnOutcome {
  readonly finishReason: 'stop' | 'error' | 'other';
  readonly aborted: boolean;
}

/** Notices kept for calls not seen yet (others' calls, when a bridge serves several streams, are dropped past it). */
const MAX_EARLY_NOTICES = 64;

/** A call the model made (it has a tool part): its state as the stream knows it. */
interface ModelCall {
  readonly toolName: string;
  open: boolean;
  /** `tool-call-start` came: a call refused before it started (unknown tool, invalid arguments) has none, and failed. */
  started?: boolean;
  /** How the call ended (`tool-call-end` / `-blocked` / `-aborted`), before its output arrives. */
  failed?: boolean;
  denied?: boolean;
  /** Its output chunk, re-sent when an approval re-opened a part that had already answered. */
  output?: UIMessageChunk;
  /** Approvals waiting on this part. */
  readonly pending: Set<string>;
}

/** Loop events read here, by the fields read (structural: this package does not depend on the session). */
type ModelItemEvent = { type: 'model-item'; item: ResponseItem };
type TextDeltaEvent = { type: 'text-delta'; delta: string };
type ToolOutputEvent = { type: 'tool-output'; item: ToolOutputItem };
type TurnEndEvent = { type: 'turn-end'; result?: { promptBlocked?: string }; error?: unknown };
type BackgroundEvent = { type: 'background-complete'; callId: string; cellId?: string; processId?: number; status: 'completed' | 'failed' | 'terminated'; item?: ToolOutputItem };
type EndEvent = ToolCallEventBase & { type: 'tool-call-end' | 'tool-call-blocked' | 'tool-call-aborted'; success?: boolean; durationMs?: number; error?: { code: string; message: string }; reason?: string };

/** Options of the translator. */
export interface TranslatorOptions {
  /** The text of an error chunk (never the error's cause or stack). */
  readonly errorText: (error: unknown) => string;
  /** Longest nested-call input (characters of its text) sent whole; longer ones send `inputPreview`. */
  readonly maxInputChars: number;
  /** Cells → the `exec` call that created each, shared by the streams of one session (a cell outlives its turn). */
  readonly cells?: Map<string, string | undefined>;
}

/**
 * Turns a Switchyard turn's events into UI message stream chunks, one event at a time. Keeps what
 * it needs to pair them up (calls with their outputs, cells with their `exec` call, approvals with
 * the part that shows them); never emits `start` / `finish`, which frame a response.
 */
export class UIChunkTranslator {
  private stepOpen = false;
  /** Calls whose parts the current step added (a retry removes them). */
  private stepCalls: string[] = [];
  private textId: string | undefined;
  private nextId = 0;
  private readonly calls = new Map<string, ModelCall>();
  private readonly nested = new Map<string, NestedCallData>();
  /** Nested calls shown as a tool part of their own (their cell's `exec` part is in another message). */
  private readonly standalone = new Set<string>();
  private readonly cells: Map<string, string | undefined>;
  /** Waiting approvals → the part they are shown on. */
  private readonly approvals = new Map<string, string>();
  private readonly shownOn = new Map<string, string>();
  private ended: TurnOutcome | undefined;
  /** Approval notices about calls not seen yet. */
  private readonly early: ApprovalNotice[] = [];

  constructor(private readonly options: TranslatorOptions) {
    this.cells = options.cells ?? new Map();
  }

  /** The turn's outcome once its `turn-end` arrived. */
  get outcome(): TurnOutcome | undefined {
    return this.ended;
  }

  /** True while an approval waits and every part still running waits on one (nothing else will come until an answer). */
  get waitingForApproval(): boolean {
    const open = [...this.calls.values()].filter((call) => call.open);
    return this.approvals.size > 0 && open.length > 0 && open.every((call) => call.pending.size > 0);
  }

  translate(event: TurnEventLike): UIMessageChunk[] {
    const chunks = this.translateEvent(event);
    // notices that arrived before the event they are about (a stream reads events later than the bridge reports)
    if (this.early.length > 0 && event.type !== 'turn-end') chunks.push(...this.retryEarly());
    return chunks;
  }

  private translateEvent(event: TurnEventLike): UIMessageChunk[] {
    switch (event.type) {
      case 'step-start':
        return [...this.closeParts(), ...(this.stepOpen ? [{ type: 'finish-step' } as const] : []), this.openStep()];
      case 'model-retry':
        return this.resetStep();
      case 'text-delta':
        return this.textDelta((event as TextDeltaEvent).delta);
      case 'model-item':
        return this.modelItem((event as ModelItemEvent).item);
      case 'tool-call-start':
        return this.callStart(event as ToolCallStartEvent);
      case 'tool-call-end':
      case 'tool-call-blocked':
      case 'tool-call-aborted':
        return this.callEnd(event as EndEvent);
      case 'tool-output':
        return this.output((event as ToolOutputEvent).item);
      case 'cell-start':
        return this.cellStart(event as CellStartEvent);
      case 'cell-end':
        return this.cellEnd(event as CellEndEvent);
      case 'hook-end':
        return [this.hook(event as HookEndEvent)];
      case 'background-complete':
        return this.background(event as BackgroundEvent);
      case 'turn-end':
        return this.turnEnd(event as TurnEndEvent);
      default:
        return [];
    }
  }

  /** Approvals of this stream still waiting for an answer. */
  pendingApprovals(): string[] {
    return [...this.approvals.keys()];
  }

  /** The tool part (`toolCallId`) an approval of this stream is shown on, answered or not. */
  partOf(approvalId: string): string | undefined {
    return this.shownOn.get(approvalId);
  }

  /** The chunks of an approvals bridge notice about a call of this stream (none for other calls). */
  approval(notice: ApprovalNotice): UIMessageChunk[] {
    const chunks = this.tryNotice(notice);
    if (!chunks) {
      if (this.early.length < MAX_EARLY_NOTICES) this.early.push(notice);
      return [];
    }
    // a settlement frees a part for an approval that waited for it
    return this.early.length > 0 ? [...chunks, ...this.retryEarly()] : chunks;
  }

  /** The notice's chunks, or `undefined` while it cannot be shown yet (kept, in order, behind earlier ones about the same approval). */
  private tryNotice(notice: ApprovalNotice): UIMessageChunk[] | undefined {
    if (this.early.some((queued) => queued.approvalId === notice.approvalId)) return undefined;
    return notice.type === 'approval-requested' ? this.approvalRequested(notice.approvalId, notice.request) : this.approvalSettled(notice);
  }

  /** Shows the kept notices that can be shown now, until none can. */
  private retryEarly(): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    for (let progress = true; progress; ) {
      progress = false;
      for (const notice of this.early.splice(0)) {
        const shown = this.tryNotice(notice);
        if (shown) {
          chunks.push(...shown);
          progress = true;
        } else this.early.push(notice);
      }
    }
    return chunks;
  }

  /** `undefined` when the approval is not known (yet). */
  private approvalSettled(notice: Extract<ApprovalNotice, { type: 'approval-settled' }>): UIMessageChunk[] | undefined {
    const partCallId = this.approvals.get(notice.approvalId);
    if (partCallId === undefined) return undefined;
    this.approvals.delete(notice.approvalId);
    const call = this.calls.get(partCallId);
    call?.pending.delete(notice.approvalId);
    const chunks: UIMessageChunk[] = [{ type: 'tool-approval-response', approvalId: notice.approvalId, approved: notice.approved, ...(notice.reason ? { reason: notice.reason } : {}) }];
    // a part that had already answered (a yielded cell's exec) shows its answer again
    if (call && !call.open && call.output && call.pending.size === 0) chunks.push(call.output);
    for (const [callId, data] of this.nested) {
      if (data.approvalId === notice.approvalId && data.status === 'approval-requested') chunks.push(this.nestedPart(callId, { ...data, status: 'running', approvalId: undefined }));
    }
    return chunks;
  }

  /** Closes open text and reasoning parts (before a response ends mid-turn: the next one starts new parts). */
  closeParts(): UIMessageChunk[] {
    if (this.textId === undefined) return [];
    const id = this.textId;
    this.textId = undefined;
    return [{ type: 'text-end', id }];
  }

  private openStep(): UIMessageChunk {
    this.stepOpen = true;
    this.stepCalls = [];
    return { type: 'start-step' };
  }

  /** The attempt's parts are discarded (`reset-step` removes them on the page); the retried attempt streams into the same step. */
  private resetStep(): UIMessageChunk[] {
    this.textId = undefined;
    for (const callId of this.stepCalls) {
      for (const approvalId of this.calls.get(callId)?.pending ?? []) this.approvals.delete(approvalId);
      this.calls.delete(callId);
    }
    this.stepCalls = [];
    return [{ type: 'reset-step' }];
  }

  private id(prefix: string): string {
    return `${prefix}-${++this.nextId}`;
  }

  private textDelta(delta: string): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    if (this.textId === undefined) {
      this.textId = this.id('text');
      chunks.push({ type: 'text-start', id: this.textId });
    }
    chunks.push({ type: 'text-delta', id: this.textId, delta });
    return chunks;
  }

  private modelItem(item: ResponseItem): UIMessageChunk[] {
    switch (item.type) {
      case 'message':
        if ((item as { role?: string }).role === 'assistant') return this.assistantText(item);
        return [...this.closeParts(), itemPart(item)];
      case 'reasoning':
        return [...this.closeParts(), ...reasoningChunks(this.id('reasoning'), item)];
      case 'function_call':
      case 'custom_tool_call':
      case 'tool_search_call':
        return [...this.closeParts(), ...this.modelCall(item)];
      default:
        return [...this.closeParts(), itemPart(item)];
    }
  }

  private assistantText(item: ResponseItem): UIMessageChunk[] {
    const metadata = providerMetadata(item);
    if (this.textId !== undefined) {
      const id = this.textId;
      this.textId = undefined;
      return [{ type: 'text-end', id, ...metadata }];
    }
    const text = messageText(item as JsonObject);
    if (text === '') return [];
    const id = this.id('text');
    return [{ type: 'text-start', id }, { type: 'text-delta', id, delta: text }, { type: 'text-end', id, ...metadata }];
  }

  private modelCall(item: ResponseItem): UIMessageChunk[] {
    const call = item as { type: string; call_id: string; name?: string; namespace?: string; arguments?: unknown; input?: string; execution?: string };
    if (call.type === 'tool_search_call' && call.execution !== 'client') return [itemPart(item)];
    const name = call.type === 'tool_search_call' ? 'tool_search' : displayName(toolName(call.name ?? '', call.namespace));
    this.calls.set(call.call_id, { toolName: name, open: true, pending: new Set() });
    this.stepCalls.push(call.call_id);
    const input = call.type === 'custom_tool_call' ? (call.input ?? '') : parseInput(call.arguments);
    return [{ type: 'tool-input-available', toolCallId: call.call_id, toolName: name, input, ...providerMetadata(item) }];
  }

  private callStart(event: ToolCallStartEvent): UIMessageChunk[] {
    const call = event.source.kind === 'direct' ? this.calls.get(event.callId) : undefined;
    if (call) {
      call.started = true;
      return [];
    }
    const source = event.source;
    const cellId = source.kind === 'code-mode' ? source.cellId : undefined;
    const execCallId = cellId === undefined ? undefined : this.cells.get(cellId);
    const data: NestedCallData = {
      callId: event.callId,
      toolName: event.toolName,
      ...this.nestedInput(event.input),
      caller: source.kind,
      ...(source.kind === 'code-mode' ? { cellId: source.cellId, runtimeToolCallId: source.runtimeToolCallId, ...(source.background ? { background: true as const } : {}) } : {}),
      ...(execCallId !== undefined ? { execCallId } : {}),
      status: 'running',
    };
    return [this.nestedPart(event.callId, data)];
  }

  private nestedInput(text: string | undefined): Pick<NestedCallData, 'input' | 'inputPreview'> {
    if (text === undefined) return {};
    if (text.length > this.options.maxInputChars) return { inputPreview: text.slice(0, this.options.maxInputChars) };
    return { input: parseInput(text) as JsonValue };
  }

  private nestedPart(callId: string, data: NestedCallData): UIMessageChunk {
    this.nested.set(callId, data);
    return { type: 'data-switchyard-call', id: callId, data: withoutUndefined(data) };
  }

  private callEnd(event: EndEvent): UIMessageChunk[] {
    const call = this.calls.get(event.callId);
    if (call && event.source.kind === 'direct') {
      call.failed = event.type !== 'tool-call-end' || event.success === false;
      call.denied = event.error?.code === 'APPROVAL_DENIED';
      return [];
    }
    const data = this.nested.get(event.callId);
    if (!data) return [];
    const status = event.type === 'tool-call-blocked' ? 'blocked' : event.type === 'tool-call-aborted' ? 'aborted' : event.success ? 'completed' : 'failed';
    const chunks = [this.nestedPart(event.callId, { ...data, status, approvalId: undefined, durationMs: event.durationMs, error: event.error, reason: event.reason })];
    if (this.standalone.has(event.callId)) chunks.push(this.standaloneOutput(event.callId, status, event));
    return chunks;
  }

  private standaloneOutput(callId: string, status: NestedCallData['status'], event: EndEvent): UIMessageChunk {
    const call = this.calls.get(callId)!;
    call.open = false;
    if (event.error?.code === 'APPROVAL_DENIED') return { type: 'tool-output-denied', toolCallId: callId };
    if (status === 'completed') return { type: 'tool-output-available', toolCallId: callId, output: { status } };
    return { type: 'tool-output-error', toolCallId: callId, errorText: event.error?.message ?? event.reason ?? status };
  }

  private output(item: ToolOutputItem): UIMessageChunk[] {
    const call = this.calls.get(item.call_id);
    if (!call?.open) return [itemPart(item)];
    call.open = false;
    let chunk: UIMessageChunk;
    if (call.denied) chunk = { type: 'tool-output-denied', toolCallId: item.call_id };
    else if (item.type === 'tool_search_output') chunk = { type: 'tool-output-available', toolCallId: item.call_id, output: { tools: item.tools } };
    else if (call.failed || !call.started) chunk = { type: 'tool-output-error', toolCallId: item.call_id, errorText: outputBodyText(item.output) };
    else chunk = { type: 'tool-output-available', toolCallId: item.call_id, output: item.output };
    call.output = chunk;
    return [chunk];
  }

  private cellStart(event: CellStartEvent): UIMessageChunk[] {
    this.cells.set(event.cellId, event.execCallId);
    return [{ type: 'data-switchyard-cell', id: event.cellId, data: withoutUndefined({ cellId: event.cellId, execCallId: event.execCallId, status: 'running' }) }];
  }

  private cellEnd(event: CellEndEvent): UIMessageChunk[] {
    const execCallId = this.cells.get(event.cellId);
    // an ended cell makes no more calls
    this.cells.delete(event.cellId);
    return [{ type: 'data-switchyard-cell', id: event.cellId, data: withoutUndefined({ cellId: event.cellId, execCallId, status: event.status, error: event.error }) }];
  }

  private hook(event: HookEndEvent): UIMessageChunk {
    // runId is `event-key:index:source:tool_use_id`: the call id is what follows the third colon
    const callId = event.runId.split(':').slice(3).join(':') || undefined;
    const { runId, event: hookEvent, toolName: tool, outcome, durationMs, message, error, hook, required } = event;
    return { type: 'data-switchyard-hook', id: runId, data: withoutUndefined({ runId, event: hookEvent, toolName: tool, callId, outcome, durationMs, message, error, hook, required }) };
  }

  private background(event: BackgroundEvent): UIMessageChunk[] {
    if (!event.item) return [];
    const { callId, cellId, processId, status, item } = event;
    return [...this.closeParts(), { type: 'data-switchyard-background', id: this.id(`background-${callId}`), data: withoutUndefined({ callId, cellId, processId, status, item }) }];
  }

  /** `undefined` when the call is not known yet, or its part still shows another approval (a part shows one at a time). */
  private approvalRequested(approvalId: string, request: ApprovalRequest): UIMessageChunk[] | undefined {
    const nested = this.nested.get(request.callId);
    if (!nested && !this.calls.has(request.callId)) return undefined;
    let partCallId = request.callId;
    if (nested) {
      const execCallId = nested.cellId === undefined ? undefined : this.cells.get(nested.cellId);
      const exec = execCallId === undefined ? undefined : this.calls.get(execCallId);
      // on its cell's exec part when that part is in this message and free; else on a part of its own
      if (exec && exec.pending.size === 0 && !this.calls.has(request.callId)) partCallId = execCallId!;
    }
    if ((this.calls.get(partCallId)?.pending.size ?? 0) > 0) return undefined;
    const chunks: UIMessageChunk[] = nested && partCallId === request.callId ? this.standalonePart(request.callId, nested) : [];
    if (nested) chunks.push(this.nestedPart(request.callId, { ...nested, status: 'approval-requested', approvalId }));
    const call = this.calls.get(partCallId)!;
    call.pending.add(approvalId);
    this.approvals.set(approvalId, partCallId);
    this.shownOn.set(approvalId, partCallId);
    const reason = request.reason ?? (nested ? `${nested.toolName} (called by the cell) needs approval` : undefined);
    chunks.push({ type: 'tool-approval-request', approvalId, toolCallId: partCallId, approvalDescriptor: { ...describe(request), ...(partCallId !== request.callId ? { nested: true } : {}) }, ...(reason ? { reason } : {}) });
    return chunks;
  }

  /** A nested call whose cell's `exec` part is not in this message gets a tool part of its own, so the page can answer it. */
  private standalonePart(callId: string, nested: NestedCallData): UIMessageChunk[] {
    if (this.calls.has(callId)) return [];
    this.standalone.add(callId);
    this.calls.set(callId, { toolName: nested.toolName, open: true, pending: new Set() });
    this.stepCalls.push(callId);
    return [{ type: 'tool-input-available', toolCallId: callId, toolName: nested.toolName, input: nested.input ?? nested.inputPreview ?? null }];
  }

  private turnEnd(event: TurnEndEvent): UIMessageChunk[] {
    const chunks = this.closeParts();
    if (event.result?.promptBlocked !== undefined) chunks.push({ type: 'data-switchyard-prompt-blocked', data: { reason: event.result.promptBlocked } });
    if (this.stepOpen) chunks.push({ type: 'finish-step' });
    this.stepOpen = false;
    const aborted = (event.error as { code?: unknown } | undefined)?.code === 'ABORTED';
    if (event.error !== undefined && !aborted) chunks.push({ type: 'error', errorText: this.options.errorText(event.error) });
    this.ended = { finishReason: event.error === undefined ? 'stop' : aborted ? 'other' : 'error', aborted };
    return chunks;
  }
}

function describe(request: ApprovalRequest): ApprovalDescriptor {
  const { kind, toolName: tool, callId, input, command, cwd, escalated } = request;
  return withoutUndefined({ kind, toolName: tool, callId, input, command, cwd, escalated }) as ApprovalDescriptor;
}

/** Arguments text parsed for display; text that is not JSON stays text. */
function parseInput(text: unknown): unknown {
  if (typeof text !== 'string') return text ?? {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function itemPart(item: ResponseItem): UIMessageChunk {
  return { type: 'data-switchyard-item', data: { item } };
}

function reasoningChunks(id: string, item: ResponseItem): UIMessageChunk[] {
  const text = reasoningText(item as JsonObject);
  return [{ type: 'reasoning-start', id }, ...(text ? [{ type: 'reasoning-delta', id, delta: text } as const] : []), { type: 'reasoning-end', id, ...providerMetadata(item) }];
}

/** The item's provider metadata (signatures, item ids) as the chunk's `providerMetadata`. */
function providerMetadata(item: ResponseItem): { providerMetadata?: Record<string, Record<string, JsonValue>> } {
  const metadata = (item as Record<string, unknown>)[PROVIDER_METADATA_FIELD];
  return metadata && typeof metadata === 'object' && !Array.isArray(metadata) ? { providerMetadata: metadata as Record<string, Record<string, JsonValue>> } : {};
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}
