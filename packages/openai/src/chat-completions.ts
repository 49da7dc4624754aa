import {
  ModelRequestError,
  SwitchyardError,
  type JsonObject,
  type ModelClient,
  type ModelRequest,
  type ModelStreamEvent,
  type ModelUsage,
  type ResponseItem,
} from '@switchyard/protocol';
import { checkOptions, optionRules as rule, type OptionsShape } from '@switchyard/kit/internal';
import { CUSTOM_TOOL_ARGUMENT, toChatMessages, toChatTools, type ChatToolTarget } from './chat-conversion';
import { describeServerError, isRetryableServerError } from './http-error';
import { RETRY_OPTION_RULES, type RetryOptions } from './retry';
import { STREAM_LIMIT_OPTION_RULES, type StreamGuard, type StreamLimitOptions } from './stream-limits';
import { createStreamingClient, endpoint, readTokenUsage } from './streaming-client';
import { parseEventData, readServerSentEvents } from './server-sent-events';

/** Options of {@link chatCompletions}. */
export interface ChatCompletionsOptions extends RetryOptions, StreamLimitOptions {
  /** API root; the client POSTs to `{baseURL}/chat/completions` (e.g. `http://127.0.0.1:8080/v1`). */
  baseURL: string;
  /** Model name sent as `model`. */
  model: string;
  /** Sent as `Authorization: Bearer …` when set; local servers usually need none. */
  apiKey?: string;
  /**
   * `gen_ai.provider.name` on the session's spans (the OpenTelemetry GenAI conventions' names:
   * `openai`, `azure.ai.openai`, `deepseek`, …). Default: read from the `baseURL` host, `openai`
   * for a host not known to be another provider's.
   */
  providerName?: string;
  /** Default system instructions; a request's own `instructions` win. */
  instructions?: string;
  /** The model may emit several tool calls per response. Default true. */
  parallelToolCalls?: boolean;
  /** Context window in tokens, reported in `capabilities`. */
  contextWindow?: number;
  /** Extra top-level body fields (`temperature`, `max_tokens`, …), added after the standard ones. */
  extraBody?: JsonObject;
  /** Extra HTTP headers. */
  headers?: Record<string, string>;
  /** The fetch implementation. Default the global `fetch`. */
  fetch?: typeof fetch;
}

/**
 * A {@link ModelClient} for Chat-Completions-compatible servers (what local model servers speak).
 * Tools are mapped as described in `toChatTools`; streamed tool-call deltas are assembled and
 * yielded as Responses-API `function_call` / `custom_tool_call` items, each as soon as the next
 * call starts or the response ends.
 */
export function chatCompletions(options: ChatCompletionsOptions): ModelClient {
  checkOptions('chatCompletions', options, CHAT_OPTION_RULES);
  if (typeof options?.baseURL !== 'string' || !/^https?:\/\//.test(options.baseURL)) {
    throw new SwitchyardError('CONFIG', `chatCompletions: \`baseURL\` must be an http(s) URL, got ${JSON.stringify(options?.baseURL)}`);
  }
  return createStreamingClient('chatCompletions', options, endpoint(options.baseURL, 'chat/completions'), (request) => {
    const { body, targets } = chatRequestBody(options, request);
    return { body: JSON.stringify(body), parse: (stream, guard) => parseChatStream(stream, targets, guard) };
  });
}

const CHAT_OPTION_RULES: OptionsShape<ChatCompletionsOptions> = {
  ...RETRY_OPTION_RULES,
  ...STREAM_LIMIT_OPTION_RULES,
  baseURL: rule.required(rule.string()),
  model: rule.required(rule.string()),
  apiKey: rule.string(),
  providerName: rule.string(),
  instructions: rule.string(),
  parallelToolCalls: rule.boolean(),
  contextWindow: rule.number({ min: 1 }),
  extraBody: rule.object(),
  headers: rule.object(),
  fetch: rule.function(),
};

/** The JSON body of one Chat Completions request, and the flat tool names it defines. */
export function chatRequestBody(
  options: ChatCompletionsOptions,
  request: ModelRequest,
): { body: JsonObject; targets: Map<string, ChatToolTarget> } {
  const { tools, targets, chatName } = toChatTools(request.tools);
  const body: JsonObject = {
    model: options.model,
    messages: toChatMessages(request.input, request.instructions ?? options.instructions, chatName) as unknown as JsonObject[],
  };
  if (tools.length > 0) {
    body.tools = tools as unknown as JsonObject[];
    body.tool_choice = 'auto';
    body.parallel_tool_calls = request.parallelToolCalls && (options.parallelToolCalls ?? true);
  }
  body.stream = true;
  body.stream_options = { include_usage: true };
  return { body: { ...body, ...options.extraBody }, targets };
}

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
  /** Provider data on the call (Gemini's `extra_content.google.thought_signature`), echoed back. */
  extraContent?: JsonObject;
  /** The deltas came as `type: "custom"` (`custom.name`, `custom.input`): `arguments` holds the raw input. */
  custom?: boolean;
  emitted: boolean;
}

/** True when `text` is a whole JSON value: the arguments of a call can be dispatched. */
function isCompleteJson(text: string): boolean {
  if (text.trim() === '') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Assembles one Chat Completions stream into model stream events. Deltas are joined by `index`,
 * except that a delta bringing a new call `id` to an index that already holds a complete call starts
 * a new call (Gemini's OpenAI-compatible endpoint numbers parallel calls all `0`). A call is
 * yielded once a later call has started and its arguments are complete JSON (some servers declare
 * every call before sending any arguments), and at the end of the response in any case.
 * `reasoning_content` (DeepSeek, vLLM, llama.cpp; `reasoning` on some servers) becomes a
 * `reasoning` item with the text as `reasoning_text` content, yielded before the message and calls.
 */
async function* parseChatStream(body: ReadableStream<Uint8Array>, targets: Map<string, ChatToolTarget>, guard: StreamGuard): AsyncGenerator<ModelStreamEvent> {
  const assembly = new ChatStreamAssembly(targets, guard);
  for await (const message of readServerSentEvents(body, guard)) {
    if (message.data.trim() === '[DONE]') {
      yield* assembly.finish();
      return;
    }
    yield* assembly.readChunk(parseEventData(message.data));
  }
  // Some servers end the stream without `[DONE]`; a finish reason is enough to call it complete.
  if (assembly.finished) {
    yield* assembly.finish();
    return;
  }
  throw new ModelRequestError('model stream closed before the response finished', { retryable: true });
}

/** The state of one Chat Completions response while its chunks arrive: text, reasoning, calls, usage. */
class ChatStreamAssembly {
  private readonly calls: PendingCall[] = [];
  private readonly byIndex = new Map<number, PendingCall>();
  private text = '';
  /** `delta.refusal` text: the model declined; kept as a `refusal` part of the assistant message. */
  private refusal = '';
  private textEmitted = false;
  private reasoning = '';
  private reasoningEmitted = false;
  private usage: ModelUsage | undefined;
  private responseId: string | undefined;
  /** The chunks' `model`: the model that answered. */
  private model: string | undefined;
  /** The first choice's `finish_reason`. */
  private finishReason: string | undefined;
  /** A choice has reported a `finish_reason`. */
  finished = false;

  constructor(
    private readonly targets: Map<string, ChatToolTarget>,
    private readonly guard: StreamGuard,
  ) {}

  /** Folds one parsed chunk in; yields text deltas and the calls it completes. Throws on an error chunk. */
  *readChunk(chunk: Record<string, unknown>): Generator<ModelStreamEvent> {
    throwIfStreamError(chunk);
    if (typeof chunk.id === 'string') this.responseId ??= chunk.id;
    if (typeof chunk.model === 'string' && chunk.model !== '') this.model ??= chunk.model;
    if (chunk.usage && typeof chunk.usage === 'object') this.usage = readTokenUsage(chunk.usage as Record<string, unknown>, CHAT_USAGE);
    const choices = Array.isArray(chunk.choices) ? (chunk.choices as Record<string, unknown>[]) : [];
    const choice = choices.find((entry) => (entry.index ?? 0) === 0);
    if (!choice) return;
    const delta = (choice.delta ?? {}) as Record<string, unknown>;
    const thought = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : typeof delta.reasoning === 'string' ? delta.reasoning : '';
    if (thought !== '') {
      this.guard.grow('reasoning', thought.length);
      this.reasoning += thought;
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      this.guard.grow('text', delta.content.length);
      this.text += delta.content;
      yield { type: 'text-delta', delta: delta.content };
    }
    if (typeof delta.refusal === 'string') {
      this.guard.grow('text', delta.refusal.length);
      this.refusal += delta.refusal;
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const [position, raw] of (delta.tool_calls as Array<Record<string, unknown> | null>).entries()) {
        if (typeof raw !== 'object' || raw === null) continue; // a broken server's null entry
        yield* this.readCallDelta(raw, position);
      }
      yield* this.emitCalls({ all: false });
    }
    if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') {
      this.finished = true;
      this.finishReason = choice.finish_reason;
    }
  }

  /** Yields what is still held (reasoning, text, every call) and the `completed` event. */
  *finish(): Generator<ModelStreamEvent> {
    yield* this.emitText();
    yield* this.emitCalls({ all: true });
    const finishReasons = this.finishReason !== undefined ? [this.finishReason] : undefined;
    yield { type: 'completed', usage: this.usage, responseId: this.responseId, model: this.model, finishReasons };
  }

  /** Joins one `tool_calls` delta into its call, starting a new call when the delta begins one. */
  private *readCallDelta(raw: Record<string, unknown>, position: number): Generator<ModelStreamEvent> {
    const index = typeof raw.index === 'number' ? raw.index : position;
    const id = typeof raw.id === 'string' ? raw.id : '';
    let call = this.byIndex.get(index);
    if (call && id !== '' && call.id !== '' && id !== call.id && isCompleteJson(call.arguments)) call = undefined;
    if (!call) {
      // A new call starts: the text before it is complete.
      yield* this.emitText();
      call = { id: '', name: '', arguments: '', emitted: false };
      this.calls.push(call);
      this.byIndex.set(index, call);
    }
    // A custom tool call streams `custom: { name, input }` instead of `function: { name, arguments }`.
    const custom = raw.type === 'custom' || (typeof raw.custom === 'object' && raw.custom !== null);
    if (custom) call.custom = true;
    const fn = ((custom ? raw.custom : raw.function) ?? {}) as Record<string, unknown>;
    const piece = custom ? fn.input : fn.arguments;
    if (id !== '' && call.id === '') call.id = id;
    if (typeof fn.name === 'string') call.name += fn.name;
    if (typeof piece === 'string') {
      this.guard.grow(`call ${this.calls.indexOf(call)}`, piece.length + (typeof fn.name === 'string' ? fn.name.length : 0));
      call.arguments += piece;
    }
    if (typeof raw.extra_content === 'object' && raw.extra_content !== null && !Array.isArray(raw.extra_content)) {
      call.extraContent = { ...call.extraContent, ...(raw.extra_content as JsonObject) };
    }
  }

  private *emitText(): Generator<ModelStreamEvent> {
    if (!this.reasoningEmitted && this.reasoning !== '') {
      this.reasoningEmitted = true;
      yield { type: 'output-item', item: { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: this.reasoning }] } };
    }
    if (this.textEmitted || (this.text === '' && this.refusal === '')) return;
    this.textEmitted = true;
    const content: JsonObject[] = [];
    if (this.text !== '') content.push({ type: 'output_text', text: this.text });
    if (this.refusal !== '') content.push({ type: 'refusal', refusal: this.refusal });
    yield { type: 'output-item', item: { type: 'message', role: 'assistant', content } as unknown as ResponseItem };
  }

  /**
   * Yields the calls not yet yielded, in order: with `all` every one (the response has ended),
   * otherwise only those known to be complete — followed by another call and holding whole arguments.
   */
  private *emitCalls(options: { all: boolean }): Generator<ModelStreamEvent> {
    for (const [position, call] of this.calls.entries()) {
      if (call.emitted) continue;
      if (!options.all && (position === this.calls.length - 1 || !isCompleteJson(call.arguments))) return;
      call.emitted = true;
      yield { type: 'output-item', item: toResponseItem(call, position, this.targets, this.responseId) };
    }
  }
}

/** Throws the error a server streamed in place of a chunk (`{"error": …}`), retryable when the server says so. */
function throwIfStreamError(chunk: Record<string, unknown>): void {
  if (chunk.error === undefined || chunk.error === null) return;
  const described = describeServerError(chunk);
  const label = described.code ? `model stream error (${described.code})` : 'model stream error';
  throw new ModelRequestError(`${label}: ${described.message ?? 'no message'}`, { retryable: isRetryableServerError(described) });
}

function toResponseItem(call: PendingCall, position: number, targets: Map<string, ChatToolTarget>, responseId: string | undefined): ResponseItem {
  const callId = call.id || `call_${responseId ?? 'chat'}_${position}`;
  const target = targets.get(call.name);
  const extra = call.extraContent ? { extra_content: call.extraContent } : {};
  if (target?.kind === 'custom' || call.custom) {
    const input = call.custom ? call.arguments : customInput(call.arguments);
    const item = { type: 'custom_tool_call', call_id: callId, name: target?.name ?? call.name, input, ...extra } as ResponseItem;
    if (target?.namespace) (item as { namespace?: string }).namespace = target.namespace;
    return item;
  }
  // Unknown names pass through as they came, so the router answers "unsupported call".
  const item = { type: 'function_call', call_id: callId, name: target?.name ?? call.name, arguments: call.arguments, ...extra } as ResponseItem;
  if (target?.namespace) (item as { namespace?: string }).namespace = target.namespace;
  return item;
}

/** The `input` string of a custom tool's arguments; the raw arguments when they are not `{"input": string}`. */
function customInput(raw: string): string {
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as Record<string, unknown>)[CUSTOM_TOOL_ARGUMENT] === 'string') {
      return (parsed as Record<string, string>)[CUSTOM_TOOL_ARGUMENT];
    }
  } catch {
    // fall through
  }
  return raw;
}

/** Chat Completions names its counts `prompt_tokens` / `completion_tokens`. */
const CHAT_USAGE = { input: 'prompt_tokens', output: 'completion_tokens', inputDetails: 'prompt_tokens_details', outputDetails: 'completion_tokens_details' };
