import type { WireTool } from './tool-spec';
import type { ResponseItem } from './wire';
import { SwitchyardError } from './errors';

/** Token usage reported by a model response. */
export interface ModelUsage {
  /** Tokens in the request input (prompt). */
  readonly inputTokens: number;
  /** Tokens the model generated. */
  readonly outputTokens: number;
  /** Input plus output tokens; the session records it as the context's used tokens. */
  readonly totalTokens: number;
  /** Of `inputTokens`, those read from the provider's prompt cache, when it reports them (`gen_ai.usage.cache_read.input_tokens`). */
  readonly cacheReadInputTokens?: number;
  /** Of `outputTokens`, those spent on reasoning, when the provider reports them (`gen_ai.usage.reasoning.output_tokens`). */
  readonly reasoningOutputTokens?: number;
}

/**
 * Who serves a model client's requests and how it sends them, as its telemetry reports them
 * (`gen_ai.provider.name`, `server.address`, `server.port`, `gen_ai.request.stream` on the
 * session's `chat` spans). Known before a request is sent, so a failed request carries it too.
 */
export interface ModelProviderInfo {
  /** The provider, as the OpenTelemetry GenAI conventions name it: `openai`, `azure.ai.openai`, `anthropic`, `gcp.gemini`, `aws.bedrock`, … */
  readonly name: string;
  /** Host name (or address) the client sends its requests to. */
  readonly serverAddress?: string;
  /** Port the client sends its requests to (the scheme's default when the URL names none). */
  readonly serverPort?: number;
  /** True when the client asks for a streamed response. */
  readonly streaming?: boolean;
}

/** What a model can do; the session reads it for `parallel_tool_calls` and the context window. */
export interface ModelCapabilities {
  /** Model name, for hook payloads. */
  readonly name?: string;
  /** The model may emit several tool calls per response. Default true. */
  readonly parallelToolCalls?: boolean;
  /** Context window in tokens, if known. */
  readonly contextWindow?: number;
  /** Accepts `detail: "original"` images. Default false. */
  readonly originalImageDetail?: boolean;
}

/** One sampling request (one step). `tools` is the step's visible specs as wire JSON. */
export interface ModelRequest {
  /** The step's visible specs as Responses-API JSON, in plan order (byte-identical for the same plan). */
  readonly tools: readonly WireTool[];
  /** The whole input history: user messages, previous outputs, tool calls and their outputs, injections. */
  readonly input: readonly ResponseItem[];
  /** Sent as `parallel_tool_calls`: {@link ModelCapabilities.parallelToolCalls}, default true. */
  readonly parallelToolCalls: boolean;
  /** System instructions, if any. */
  readonly instructions?: string;
  /** Aborted when the turn is cancelled. */
  readonly signal: AbortSignal;
}

/**
 * A streamed event. `output-item` carries a complete output item (a tool call is dispatched as
 * soon as its item arrives); `text-delta` is optional progress; `completed` ends the response.
 */
export type ModelStreamEvent =
  | {
      /** A complete output item arrived. */
      readonly type: 'output-item';
      /** The item (a tool call, a message, reasoning, …) exactly as the model produced it. */
      readonly item: ResponseItem;
    }
  | {
      /** Progress: more assistant text. */
      readonly type: 'text-delta';
      /** The new text since the previous delta. */
      readonly delta: string;
    }
  | {
      /** The response ended; no event follows. */
      readonly type: 'completed';
      /** Token usage of this response, when the server reports it (feeds the context-window status). */
      readonly usage?: ModelUsage;
      /** The server's response id, when it has one. */
      readonly responseId?: string;
      /** The model that answered, as the server names it (may differ from the requested one: `gpt-5` answered by `gpt-5-2025-08-07`). */
      readonly model?: string;
      /** Why the model stopped, one entry per choice, as the provider says it (`stop`, `tool_calls`, `length`; the Responses API's `completed`). */
      readonly finishReasons?: readonly string[];
    };

/**
 * A model the session can sample. `stream` yields events for one request and ends after
 * `completed`. Throw a {@link ModelRequestError} on failure (`retryable` ones are retried by the
 * session with the same plan).
 */
export interface ModelClient {
  /** What the model can do; absent means the documented defaults. */
  readonly capabilities?: ModelCapabilities;
  /** Who serves the model and how requests go, for telemetry; absent when the client cannot tell. */
  readonly provider?: ModelProviderInfo;
  /**
   * Samples one request; yields events and ends after `completed`. Called by the session once per step attempt;
   * should stop when `request.signal` aborts.
   */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
}

/**
 * A model request failed. `retryable` for 429 / 5xx / network errors; `status` is the HTTP status
 * if any; `attempts` how many requests the client made. An aborted request is not a model error:
 * the session reports a turn its host aborted as `ABORTED`.
 */
export class ModelRequestError extends SwitchyardError {
  /**
   * True for transient failures; the session retries them (same plan) only while no tool call of the attempt has
   * started.
   */
  readonly retryable: boolean;
  /** HTTP status of the failed response; absent for network or stream errors. */
  readonly status?: number;
  /**
   * Requests the client made before giving up: 1 when it did not retry. A client that retries
   * itself sets it (in the constructor or just before throwing); the session does not retry an
   * error whose `attempts` is above 1 unless configured to, so attempts never multiply.
   */
  attempts: number;

  constructor(message: string, options: { retryable: boolean; status?: number; cause?: unknown; attempts?: number }) {
    super('MODEL_ERROR', message, { cause: options.cause });
    this.name = 'ModelRequestError';
    this.retryable = options.retryable;
    this.status = options.status;
    this.attempts = options.attempts ?? 1;
  }
}
