import { ModelRequestError, errorMessage, type ModelStreamEvent } from '@switchyard/protocol';
import {
  BACKOFF_OPTION_RULES,
  abortableSleep,
  backoffDelay as exponentialDelay,
  optionRules as rule,
  type BackoffOptions,
  type OptionsShape,
} from '@switchyard/kit/internal';
import { ModelHttpError, errorFromResponse } from './http-error';

/** How a client retries 429 / 5xx / network failures: attempts, and the backoff between them. */
export interface RetryOptions extends BackoffOptions {
  /** Attempts in all, the first included. Default 5. */
  maxAttempts?: number;
}

/** The option rules of {@link RetryOptions}, shared by every client's strict options check. */
export const RETRY_OPTION_RULES: OptionsShape<RetryOptions> = {
  ...BACKOFF_OPTION_RULES,
  maxAttempts: rule.number({ min: 1, integer: true }),
};

const RETRY_AFTER_CAP_MS = 60_000;

/**
 * The delay before retry number `retry` (1 for the first retry): exponential backoff with ±25 %
 * jitter, or the server's `retry-after` hint when it sent one (capped at 60 s).
 */
export function backoffDelay(retry: number, options: RetryOptions = {}, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, RETRY_AFTER_CAP_MS);
  return exponentialDelay(retry, options);
}

/**
 * Runs `attempt` (one HTTP request and its stream) and retries it with the same request while it
 * fails retryably and has yielded nothing yet. Once an event has been yielded, the consumer has
 * acted on it, so a later failure is thrown (still `retryable`) instead of replaying the response.
 * An aborted `signal` rethrows the abort reason.
 */
export async function* streamWithRetries(
  attempt: () => AsyncIterable<ModelStreamEvent>,
  signal: AbortSignal,
  options: RetryOptions = {},
): AsyncGenerator<ModelStreamEvent> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 5);
  const sleep = options.sleep ?? abortableSleep;
  for (let number = 1; ; number++) {
    let yielded = false;
    try {
      for await (const event of attempt()) {
        yielded = true;
        yield event;
      }
      return;
    } catch (error) {
      signal.throwIfAborted();
      const failure = toModelRequestError(error);
      if (!failure.retryable || yielded || number >= maxAttempts) {
        // the session reads it and does not retry again what this client already retried
        failure.attempts = number;
        throw failure;
      }
      const hint = failure instanceof ModelHttpError ? failure.retryAfterMs : undefined;
      await sleep(backoffDelay(number, options, hint), signal);
    }
  }
}

function toModelRequestError(error: unknown): ModelRequestError {
  if (error instanceof ModelRequestError) return error;
  // fetch() rejects with TypeError("fetch failed") and the socket error as its cause.
  const cause = (error as { cause?: unknown })?.cause;
  const detail = cause ? `${errorMessage(error)} (${errorMessage(cause)})` : errorMessage(error);
  return new ModelRequestError(`model request failed: ${detail}`, { retryable: true, cause: error });
}

/** POSTs a JSON body expecting an event stream; a non-2xx answer throws a {@link ModelHttpError}. */
export async function postForStream(
  fetchImpl: typeof fetch,
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  maxErrorBodyBytes?: number,
): Promise<ReadableStream<Uint8Array>> {
  const response = await fetchImpl(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body,
    signal,
  });
  if (!response.ok) {
    throw await errorFromResponse(response, maxErrorBodyBytes);
  }
  if (!response.body) throw new ModelRequestError('model request failed: the response has no body', { retryable: true });
  return response.body;
}
