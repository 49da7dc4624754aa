import {
  ModelRequestError,
  type JsonObject,
  type ModelClient,
  type ModelRequest,
  type ModelStreamEvent,
  type ModelUsage,
  type ResponseItem,
} from '@switchyard/protocol';
import { checkOptions, optionRules as rule, type OptionsShape } from '@switchyard/kit/internal';
import { describeServerError, isRetryableErrorCode } from './http-error';
import { RETRY_OPTION_RULES, type RetryOptions } from './retry';
import { STREAM_LIMIT_OPTION_RULES, type StreamGuard, type StreamLimitOptions } from './stream-limits';
import { createStreamingClient, endpoint, readTokenUsage } from './streaming-client';
import { parseEventData, readServerSentEvents } from './server-sent-events';

/** Options of {@link openaiResponses}. */
export interface OpenAIResponsesOptions extends RetryOptions, StreamLimitOptions {
  /** Model name sent as `model`. */
  model: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string;
  /**
   * `gen_ai.provider.name` on the session's spans (the OpenTelemetry GenAI conventions' names:
   * `openai`, `azure.ai.openai`, `deepseek`, …). Default: read from the `baseURL` host, `openai`
   * for a host not known to be another provider's.
   */
  providerName?: string;
  /** API root; the client POSTs to `{baseURL}/responses`. Default `https://api.openai.com/v1`. */
  baseURL?: string;
  /** Default system instructions; a request's own `instructions` win. */
  instructions?: string;
  /** The model may emit several tool calls per response. Default true. */
  parallelToolCalls?: boolean;
  /** Context window in tokens, reported in `capabilities`. */
  contextWindow?: number;
  /** Sent as `reasoning` (e.g. `{ effort: "medium", summary: "auto" }`). */
  reasoning?: JsonObject;
  /** Sent as `store`. Default false. */
  store?: boolean;
  /**
   * Sent as `include`. Default `["reasoning.encrypted_content"]` with `store: false` (so reasoning
   * items can go back without server state), else `[]`.
   */
  include?: string[];
  /** Sent as `prompt_cache_key` when set. */
  promptCacheKey?: string;
  /** Extra top-level body fields, added after the standard ones. */
  extraBody?: JsonObject;
  /** Extra HTTP headers. */
  headers?: Record<string, string>;
  /** The fetch implementation. Default the global `fetch`. */
  fetch?: typeof fetch;
}

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * A {@link ModelClient} for the OpenAI Responses API (streaming). Output items are yielded as
 * each `response.output_item.done` arrives; failures throw a `ModelRequestError` after the
 * client's own retries (see {@link RetryOptions}).
 */
export function openaiResponses(options: OpenAIResponsesOptions): ModelClient {
  checkOptions('openaiResponses', options, RESPONSES_OPTION_RULES);
  return createStreamingClient('openaiResponses', options, endpoint(options?.baseURL ?? DEFAULT_OPENAI_BASE_URL, 'responses'), (request) => ({
    body: JSON.stringify(responsesRequestBody(options, request)),
    parse: parseResponsesStream,
  }));
}

const RESPONSES_OPTION_RULES: OptionsShape<OpenAIResponsesOptions> = {
  ...RETRY_OPTION_RULES,
  ...STREAM_LIMIT_OPTION_RULES,
  model: rule.required(rule.string()),
  apiKey: rule.string(),
  providerName: rule.string(),
  baseURL: rule.string(),
  instructions: rule.string(),
  parallelToolCalls: rule.boolean(),
  contextWindow: rule.number({ min: 1 }),
  reasoning: rule.object(),
  store: rule.boolean(),
  include: rule.listOf(rule.string()),
  promptCacheKey: rule.string(),
  extraBody: rule.object(),
  headers: rule.object(),
  fetch: rule.function(),
};

/** The JSON body of one Responses-API request. Same options and request give the same body, byte for byte. */
export function responsesRequestBody(options: OpenAIResponsesOptions, request: ModelRequest): JsonObject {
  const body: JsonObject = { model: options.model };
  const instructions = request.instructions ?? options.instructions;
  if (instructions !== undefined) body.instructions = instructions;
  const store = options.store ?? false;
  // Without `store`, the server keeps nothing: a reasoning item goes back only with the
  // `encrypted_content` it came with; one without it (by id alone) is answered "Item with id
  // 'rs_…' not found", so it is left out.
  const input = store ? request.input : request.input.filter((item) => !isReasoningWithoutContent(item));
  body.input = input.map(toResponsesInputItem) as unknown as JsonObject[];
  body.tools = request.tools as unknown as JsonObject[];
  body.tool_choice = 'auto';
  body.parallel_tool_calls = request.parallelToolCalls && (options.parallelToolCalls ?? true);
  if (options.reasoning) body.reasoning = options.reasoning;
  body.store = store;
  body.stream = true;
  body.include = options.include ?? (store ? [] : ['reasoning.encrypted_content']);
  if (options.promptCacheKey !== undefined) body.prompt_cache_key = options.promptCacheKey;
  return { ...body, ...options.extraBody };
}

function isReasoningWithoutContent(item: ResponseItem): boolean {
  const record = item as Record<string, unknown>;
  return record.type === 'reasoning' && (typeof record.encrypted_content !== 'string' || record.encrypted_content === '');
}

/**
 * An output item as the Responses API takes it back as input. The server `id` stays only where the
 * input types require it (an assistant `message` with output text, which also needs its `status`,
 * and a `reasoning` item, whose `encrypted_content` makes it usable with `store: false`); other
 * items go without it, and a `custom_tool_call` without the `status` the server adds but the input
 * type does not have. An assistant message without an id (from another model client, or scripted)
 * goes as the plain-text message form.
 */
export function toResponsesInputItem(item: ResponseItem): ResponseItem {
  const record = item as Record<string, unknown>;
  if (record.type === 'reasoning') return item;
  if (record.type === 'message' && record.role === 'assistant' && Array.isArray(record.content)) {
    if (typeof record.id === 'string' && record.id !== '') return { ...record, status: record.status ?? 'completed' } as ResponseItem;
    const parts = record.content as Array<Record<string, unknown>>;
    const text = parts.map((part) => (typeof part.text === 'string' ? part.text : typeof part.refusal === 'string' ? part.refusal : '')).join('');
    return { type: 'message', role: 'assistant', content: text } as ResponseItem;
  }
  const { id: _id, ...rest } = record;
  if (record.type === 'custom_tool_call') delete rest.status;
  return rest as ResponseItem;
}

/**
 * Parses one Responses-API event stream into model stream events; ends at `response.completed`.
 * Items are yielded at `response.output_item.done`; an item of `response.completed`'s `output`
 * that never had its `done` event (the openai SDK's own stream fixtures end that way) is yielded
 * from there, before `completed`.
 */
async function* parseResponsesStream(body: ReadableStream<Uint8Array>, guard: StreamGuard): AsyncGenerator<ModelStreamEvent> {
  const state: ResponsesStreamState = { deltas: new Map(), doneIds: new Set(), doneIndexes: new Set(), guard };
  for await (const message of readServerSentEvents(body, guard)) {
    if (message.data === '[DONE]') continue;
    const event = parseEventData(message.data);
    const type = typeof event.type === 'string' ? event.type : message.event;
    if (type === 'response.completed') {
      yield* completedEvents(event, state);
      return;
    }
    yield* readResponsesEvent(type, event, state);
  }
  throw new ModelRequestError('model stream closed before response.completed', { retryable: true });
}

interface ResponsesStreamState {
  /** Argument/input deltas by item id: used when a server's `output_item.done` leaves them out. */
  deltas: Map<string, string>;
  /** Items already yielded, by id and by `output_index`. */
  doneIds: Set<string>;
  doneIndexes: Set<number>;
  /** Counts the streamed characters by item. */
  guard: StreamGuard;
}

/** The events of one stream event other than `response.completed`; throws on a failure event. */
function* readResponsesEvent(type: string | undefined, event: Record<string, unknown>, state: ResponsesStreamState): Generator<ModelStreamEvent> {
  switch (type) {
    case 'response.output_text.delta':
      if (typeof event.delta === 'string') {
        state.guard.grow(String(event.item_id ?? 'text'), event.delta.length);
        yield { type: 'text-delta', delta: event.delta };
      }
      break;
    case 'response.function_call_arguments.delta':
    case 'response.custom_tool_call_input.delta':
      if (typeof event.item_id === 'string' && typeof event.delta === 'string') {
        state.guard.grow(event.item_id, event.delta.length);
        state.deltas.set(event.item_id, (state.deltas.get(event.item_id) ?? '') + event.delta);
      }
      break;
    case 'response.output_item.done': {
      const item = event.item as Record<string, unknown> | undefined;
      if (!item || typeof item.type !== 'string') break;
      if (typeof item.id === 'string') state.doneIds.add(item.id);
      if (typeof event.output_index === 'number') state.doneIndexes.add(event.output_index);
      yield { type: 'output-item', item: completeItem(item, state.deltas) };
      break;
    }
    case 'response.failed': {
      const response = (event.response ?? {}) as Record<string, unknown>;
      throw streamError('model response failed', response.error);
    }
    case 'response.incomplete': {
      const response = (event.response ?? {}) as Record<string, unknown>;
      const details = (response.incomplete_details ?? {}) as Record<string, unknown>;
      const reason = typeof details.reason === 'string' ? details.reason : 'unknown reason';
      throw new ModelRequestError(`model response incomplete: ${reason}`, { retryable: false });
    }
    case 'error':
      throw streamError('model stream error', event);
    default:
      break;
  }
}

/** The output items `response.completed` carries that were never yielded, then the `completed` event. */
function* completedEvents(event: Record<string, unknown>, state: ResponsesStreamState): Generator<ModelStreamEvent> {
  const response = (event.response ?? {}) as Record<string, unknown>;
  const output = Array.isArray(response.output) ? (response.output as Array<Record<string, unknown> | null>) : [];
  for (const [index, item] of output.entries()) {
    if (typeof item !== 'object' || item === null || typeof item.type !== 'string') continue;
    if (typeof item.id === 'string' ? state.doneIds.has(item.id) : state.doneIndexes.has(index)) continue;
    yield { type: 'output-item', item: completeItem(item, state.deltas) };
  }
  yield {
    type: 'completed',
    usage: readUsage(response.usage),
    responseId: typeof response.id === 'string' ? response.id : undefined,
    model: typeof response.model === 'string' && response.model !== '' ? response.model : undefined,
    // The Responses API has no finish reason: its `status` says how the response ended.
    finishReasons: typeof response.status === 'string' ? [response.status] : undefined,
  };
}

function completeItem(item: Record<string, unknown>, deltas: Map<string, string>): ResponseItem {
  const assembled = typeof item.id === 'string' ? deltas.get(item.id) : undefined;
  if (assembled !== undefined) {
    if (item.type === 'function_call' && typeof item.arguments !== 'string') return { ...item, arguments: assembled } as ResponseItem;
    if (item.type === 'custom_tool_call' && typeof item.input !== 'string') return { ...item, input: assembled } as ResponseItem;
  }
  return item as ResponseItem;
}

function streamError(prefix: string, error: unknown): ModelRequestError {
  const { message, code } = describeServerError(error);
  const label = code ? `${prefix} (${code})` : prefix;
  return new ModelRequestError(`${label}: ${message ?? 'no message'}`, { retryable: isRetryableErrorCode(code) });
}

function readUsage(value: unknown): ModelUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return readTokenUsage(value as Record<string, unknown>, { input: 'input_tokens', output: 'output_tokens', inputDetails: 'input_tokens_details', outputDetails: 'output_tokens_details' });
}

