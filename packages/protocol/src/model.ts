import type { WireTool } from './tool-spec';
import type { ResponseItem } from './wire';
import { SwitchyardError } from './errors';

/** Token usage reported by a model response. */
export interface ModelUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
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
  readonly tools: readonly WireTool[];
  /** The whole input history: user messages, previous outputs, tool calls and their outputs, injections. */
  readonly input: readonly ResponseItem[];
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
  | { readonly type: 'output-item'; readonly item: ResponseItem }
  | { readonly type: 'text-delta'; readonly delta: string }
  | { readonly type: 'completed'; readonly usage?: ModelUsage; readonly responseId?: string };

/**
 * A model the session can sample. `stream` yields events for one request and ends after
 * `completed`. Throw a {@link ModelRequestError} on failure (`retryable` ones are retried by the
 * session with the same plan).
 */
export interface ModelClient {
  readonly capabilities?: ModelCapabilities;
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
}

/** A model request failed. `retryable` for 429 / 5xx / network errors; `status` is the HTTP status if any. */
export class ModelRequestError extends SwitchyardError {
  readonly retryable: boolean;
  readonly status?: number;

  constructor(message: string, options: { retryable: boolean; status?: number; cause?: unknown }) {
    super('MODEL_ERROR', message, { cause: options.cause });
    this.name = 'ModelRequestError';
    this.retryable = options.retryable;
    this.status = options.status;
  }
}
