import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart, SharedV4ProviderMetadata } from '@ai-sdk/provider';
import {
  ModelRequestError,
  SwitchyardError,
  type JsonObject,
  type ModelCapabilities,
  type ModelClient,
  type ModelProviderInfo,
  type ModelRequest,
  type ModelStreamEvent,
  type ModelUsage,
  type ResponseItem,
} from '@switchyard/protocol';
import { checkOptions, optionRules as rule, type OptionsShape } from '@switchyard/kit/internal';
import { PROVIDER_METADATA_FIELD, toAiSdkPrompt } from './prompt';
import { toAiSdkTools, type CustomToolMode, type ToolTarget } from './tool-table';

/** Options of {@link aiSdkModel}. */
export interface AiSdkModelOptions {
  /**
   * How custom (freeform) tools such as `exec` are sent. Default: `openai` for `@ai-sdk/openai`'s
   * Responses models (provider `openai.responses`), else `function` (`exec` takes `{ code }`).
   */
  customTools?: CustomToolMode;
  /** Context window in tokens (read by get_context_remaining through the session). */
  contextWindow?: number;
  /** Whether the model may emit several tool calls per response. Default true. */
  parallelToolCalls?: boolean;
  /** Passed to every call as is (`maxOutputTokens`, `temperature`, `providerOptions`, `headers`, …). */
  callOptions?: Omit<LanguageModelV4CallOptions, 'prompt' | 'tools' | 'toolChoice' | 'abortSignal'>;
}

const MODEL_OPTION_RULES: OptionsShape<AiSdkModelOptions> = {
  customTools: rule.oneOf('function', 'openai'),
  contextWindow: rule.number({ min: 1, integer: true }),
  parallelToolCalls: rule.boolean(),
  callOptions: rule.object(),
};

/** What the value passed as a model is, and how to fix the usual mistakes. */
function modelProblem(model: unknown): string | undefined {
  if (typeof (model as { then?: unknown } | null)?.then === 'function') return 'got a Promise; did you forget `await`?';
  if (typeof model === 'string') return `got the string "${model}"; pass a model object, e.g. \`openai('gpt-5')\` from @ai-sdk/openai`;
  if (typeof model === 'function' && typeof (model as { languageModel?: unknown }).languageModel === 'function') {
    return 'got a provider, not a model; call it with a model id, e.g. `openai(\'gpt-5\')` instead of `openai`';
  }
  if (typeof model !== 'object' || model === null) return `got ${model === null ? 'null' : typeof model}`;
  const version = (model as { specificationVersion?: unknown }).specificationVersion;
  if (version !== 'v4') return `got specification ${String(version)}; use a provider package built for ai 7 (its models are specification v4)`;
  if (typeof (model as { doStream?: unknown }).doStream !== 'function') return 'got an object without doStream';
  return undefined;
}

/**
 * Turns an AI SDK language model (specification `v4`, what `ai` 7 and its provider packages
 * build) into a Switchyard {@link ModelClient}: every provider the AI SDK speaks — Anthropic,
 * Google, Bedrock, Mistral, Ollama, OpenAI — drives the Switchyard loop. Throws a `CONFIG` error for
 * a model of another specification version (a model id string, a v2/v3 model).
 */
export function aiSdkModel(model: LanguageModelV4, options: AiSdkModelOptions = {}): ModelClient {
  const problem = modelProblem(model);
  if (problem) throw new SwitchyardError('CONFIG', `aiSdkModel: model must be an AI SDK language model of specification v4 (ai 7 providers); ${problem}`);
  checkOptions('aiSdkModel', options, MODEL_OPTION_RULES);
  const customTools: CustomToolMode = options.customTools ?? (model.provider === 'openai.responses' ? 'openai' : 'function');
  const capabilities: ModelCapabilities = {
    name: model.modelId,
    parallelToolCalls: options.parallelToolCalls ?? true,
    ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
  };
  return {
    capabilities,
    provider: providerOf(model.provider),
    stream: (request) => streamResponse(model, request, customTools, options.callOptions),
  };
}

/** The OpenTelemetry GenAI conventions' provider names, by the first part of an AI SDK `provider` (`openai.responses`, `amazon-bedrock`). */
const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  azure: 'azure.ai.openai',
  'amazon-bedrock': 'aws.bedrock',
  bedrock: 'aws.bedrock',
  google: 'gcp.gemini',
  'google-vertex': 'gcp.vertex_ai',
  vertex: 'gcp.vertex_ai',
  mistral: 'mistral_ai',
  xai: 'x_ai',
};

/**
 * Who serves an AI SDK model, for telemetry: the provider named after the conventions (`openai`,
 * `anthropic`, `aws.bedrock`, `gcp.gemini`; an unknown one as the AI SDK names it, up to its first
 * dot). Requests always stream (`doStream`); an AI SDK model does not say which host it calls.
 */
function providerOf(provider: unknown): ModelProviderInfo | undefined {
  if (typeof provider !== 'string' || provider === '') return undefined;
  const [first, second] = provider.toLowerCase().split('.');
  const name = first === 'google' && second === 'vertex' ? 'gcp.vertex_ai' : (PROVIDER_NAMES[first!] ?? first!);
  return { name, streaming: true };
}

async function* streamResponse(
  model: LanguageModelV4,
  request: ModelRequest,
  customTools: CustomToolMode,
  callOptions: AiSdkModelOptions['callOptions'],
): AsyncGenerator<ModelStreamEvent> {
  const { tools, targets } = toAiSdkTools(request.tools, customTools);
  const prompt = toAiSdkPrompt(request.input, { instructions: request.instructions, customTools });
  let result;
  try {
    result = await model.doStream({
      ...callOptions,
      prompt,
      ...(tools.length ? { tools, toolChoice: { type: 'auto' as const } } : {}),
      abortSignal: request.signal,
    });
  } catch (error) {
    throw requestError(error, request.signal);
  }
  const reader = result.stream.getReader();
  const response = new StreamedResponse(targets, request.signal);
  let drained = false;
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (error) {
        throw requestError(error, request.signal);
      }
      if (next.done) {
        drained = true;
        break;
      }
      yield* response.read(next.value);
      if (response.finished) return; // nothing follows `completed`; the finally block closes the stream
    }
  } finally {
    // The consumer stopped early or a part failed: close the provider's connection.
    if (!drained) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  // The stream ran dry before its `finish` part.
  if (request.signal.aborted) throw request.signal.reason;
  throw new ModelRequestError('model stream ended before the response finished', { retryable: true });
}

/** One response while its stream parts arrive: the open blocks, the response id, whether it finished. */
class StreamedResponse {
  private readonly blocks = new OpenBlocks();
  private responseId: string | undefined;
  /** The model that answered (`response-metadata`'s `modelId`). */
  private responseModel: string | undefined;
  /** The `finish` part came and `completed` was yielded. */
  finished = false;

  constructor(
    private readonly targets: Map<string, ToolTarget>,
    private readonly signal: AbortSignal,
  ) {}

  /** The events one stream part yields. Throws the request's error for an `error` part. */
  *read(part: LanguageModelV4StreamPart): Generator<ModelStreamEvent> {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start':
        this.blocks.start(part.type, part.id, part.providerMetadata);
        break;
      case 'text-delta':
      case 'reasoning-delta':
        this.blocks.append(part.type, part.id, part.delta);
        if (part.type === 'text-delta' && part.delta) yield { type: 'text-delta', delta: part.delta };
        break;
      case 'text-end':
      case 'reasoning-end': {
        const entry = this.blocks.end(part.type, part.id);
        const metadata = part.providerMetadata ?? entry?.metadata;
        if (entry) yield { type: 'output-item', item: part.type === 'text-end' ? messageItem(entry.text, metadata) : reasoningItem(entry.text, metadata) };
        break;
      }
      case 'tool-call':
        if (part.providerExecuted) break; // the provider ran it; nothing for the router
        yield { type: 'output-item', item: callItem(part.toolCallId, part.toolName, part.input, this.targets, part.providerMetadata) };
        break;
      case 'response-metadata':
        if (part.id) this.responseId = part.id;
        if (part.modelId) this.responseModel = part.modelId;
        break;
      case 'error':
        throw requestError(part.error, this.signal);
      case 'finish':
        // Text blocks some providers never close still belong to the response.
        for (const entry of this.blocks.unclosedTexts()) yield { type: 'output-item', item: messageItem(entry.text, entry.metadata) };
        this.finished = true;
        yield {
          type: 'completed',
          usage: usageOf(part.usage),
          ...(this.responseId ? { responseId: this.responseId } : {}),
          ...(this.responseModel ? { model: this.responseModel } : {}),
          ...finishReasonsOf(part.finishReason),
        };
        break;
      default:
        break;
    }
  }
}

/** Text and reasoning blocks being streamed, keyed by kind and the provider's block id. */
class OpenBlocks {
  private readonly open = new Map<string, { kind: string; text: string; metadata?: SharedV4ProviderMetadata }>();

  start(type: string, id: string, metadata: SharedV4ProviderMetadata | undefined) {
    const kind = type.slice(0, type.indexOf('-'));
    this.open.set(`${kind}:${id}`, { kind, text: '', metadata });
  }

  /** A delta for a block never started opens it (some providers skip the start). */
  append(type: string, id: string, delta: string) {
    const kind = type.slice(0, type.indexOf('-'));
    const key = `${kind}:${id}`;
    const entry = this.open.get(key) ?? { kind, text: '' };
    entry.text += delta;
    this.open.set(key, entry);
  }

  end(type: string, id: string) {
    const key = `${type.slice(0, type.indexOf('-'))}:${id}`;
    const entry = this.open.get(key);
    this.open.delete(key);
    return entry;
  }

  /** Text blocks still open when the response finishes (they still belong to it). */
  unclosedTexts() {
    const texts = [...this.open.values()].filter((entry) => entry.kind === 'text');
    this.open.clear();
    return texts;
  }
}

function withMetadata(item: JsonObject, metadata: SharedV4ProviderMetadata | undefined): JsonObject {
  return metadata && Object.keys(metadata).length ? { ...item, [PROVIDER_METADATA_FIELD]: metadata as unknown as JsonObject } : item;
}

function messageItem(text: string, metadata: SharedV4ProviderMetadata | undefined): ResponseItem {
  return withMetadata({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }, metadata) as ResponseItem;
}

function reasoningItem(text: string, metadata: SharedV4ProviderMetadata | undefined): ResponseItem {
  return withMetadata({ type: 'reasoning', summary: [{ type: 'summary_text', text }] }, metadata) as ResponseItem;
}

/**
 * A provider's tool call as a Switchyard wire item. A name the request did not offer becomes a
 * `function_call` under that name (the router answers "unsupported call"); a freeform call whose
 * arguments are not `{ <argument>: string }` passes the raw arguments as its input, so the tool
 * (e.g. `exec`) answers the model with its own error.
 */
function callItem(
  callId: string,
  flatName: string,
  input: string,
  targets: Map<string, ToolTarget>,
  metadata: SharedV4ProviderMetadata | undefined,
): ResponseItem {
  const target = targets.get(flatName);
  let item: JsonObject;
  if (target?.kind === 'custom') {
    let text = input;
    try {
      const parsed: unknown = JSON.parse(input);
      if (target.argument === undefined && typeof parsed === 'string') text = parsed;
      else if (target.argument !== undefined && parsed && typeof parsed === 'object' && typeof (parsed as Record<string, unknown>)[target.argument] === 'string') {
        text = (parsed as Record<string, string>)[target.argument]!;
      }
    } catch {
      // not JSON: the raw text is the input
    }
    item = { type: 'custom_tool_call', call_id: callId, name: target.name, input: text };
    if (target.namespace) item.namespace = target.namespace;
  } else {
    item = { type: 'function_call', call_id: callId, name: target?.name ?? flatName, arguments: input };
    if (target?.namespace) item.namespace = target.namespace;
  }
  return withMetadata(item, metadata) as ResponseItem;
}

/** The provider's own finish reason (`raw`: `tool_calls`, `end_turn`), else the AI SDK's unified one; `{}` when there is neither. */
function finishReasonsOf(reason: { unified?: unknown; raw?: unknown } | undefined): { finishReasons?: string[] } {
  const value = typeof reason?.raw === 'string' && reason.raw !== '' ? reason.raw : reason?.unified;
  return typeof value === 'string' && value !== '' ? { finishReasons: [value] } : {};
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/**
 * Token counts, with anything that is not a finite non-negative number (absent, NaN) read as 0;
 * cache reads and reasoning tokens only when the provider reported them.
 */
function usageOf(
  usage: { inputTokens?: { total?: number; cacheRead?: number }; outputTokens?: { total?: number; reasoning?: number } } | undefined,
): ModelUsage {
  const inputTokens = isCount(usage?.inputTokens?.total) ? usage.inputTokens.total : 0;
  const outputTokens = isCount(usage?.outputTokens?.total) ? usage.outputTokens.total : 0;
  const cacheRead = usage?.inputTokens?.cacheRead;
  const reasoning = usage?.outputTokens?.reasoning;
  return {
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    ...(isCount(cacheRead) ? { cacheReadInputTokens: cacheRead } : {}),
    ...(isCount(reasoning) ? { reasoningOutputTokens: reasoning } : {}),
  };
}

/**
 * A provider failure as a {@link ModelRequestError}: `retryable` and `status` from the AI SDK's
 * `APICallError` (read structurally: the host may load another copy of `@ai-sdk/provider`). An
 * abort rethrows the signal's reason, as the other Switchyard model clients do.
 */
function requestError(error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  let status: number | undefined;
  let retryable = false;
  let message: string;
  try {
    const record = (typeof error === 'object' && error !== null ? error : {}) as { message?: unknown; statusCode?: unknown; isRetryable?: unknown; error?: { message?: unknown } };
    status = typeof record.statusCode === 'number' ? record.statusCode : undefined;
    retryable = record.isRetryable === true;
    const nested = typeof record.error === 'object' && record.error !== null ? record.error.message : undefined;
    message = typeof record.message === 'string' && record.message !== '' ? record.message : typeof nested === 'string' && nested !== '' ? nested : String(error);
  } catch {
    message = 'unreadable provider error';
  }
  return new ModelRequestError(status !== undefined ? `model request failed (HTTP ${status}): ${message}` : `model request failed: ${message}`, {
    retryable,
    ...(status !== undefined ? { status } : {}),
    cause: error,
  });
}
