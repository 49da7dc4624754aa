import { ModelRequestError } from '@switchyard/protocol';
import { STREAM_LIMIT_DEFAULTS, readCappedText } from './stream-limits';

/** Error codes a server may send that no retry can fix. */
const FINAL_ERROR_CODES = new Set([
  'context_length_exceeded',
  'insufficient_quota',
  'usage_not_included',
  'invalid_prompt',
  'invalid_request_error',
  'invalid_api_key',
]);

/** A {@link ModelRequestError} that also carries the server's retry hint, in milliseconds. */
export class ModelHttpError extends ModelRequestError {
  readonly retryAfterMs?: number;

  constructor(message: string, options: { retryable: boolean; status?: number; cause?: unknown; retryAfterMs?: number }) {
    super(message, options);
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * True when an error `code` sent by the server (in a body or a stream event) may succeed on retry.
 * Codes compare case-insensitively: compatible servers send `CONTEXT_LENGTH_EXCEEDED` too.
 */
export function isRetryableErrorCode(code: unknown): boolean {
  return typeof code !== 'string' || !FINAL_ERROR_CODES.has(code.toLowerCase());
}

/** The message, code and type of an OpenAI-style error object (`{error:{message,code,type}}` or the error itself). */
export function describeServerError(value: unknown): { message?: string; code?: string; status?: number } {
  if (typeof value !== 'object' || value === null) return {};
  const record = value as Record<string, unknown>;
  const inner = typeof record.error === 'object' && record.error !== null ? (record.error as Record<string, unknown>) : record;
  const message = typeof inner.message === 'string' ? inner.message : typeof record.error === 'string' ? record.error : undefined;
  const code = typeof inner.code === 'string' ? inner.code : typeof inner.type === 'string' ? inner.type : undefined;
  // Some compatible servers (vLLM, llama.cpp) put the HTTP status in a numeric `code`.
  const status = typeof inner.code === 'number' ? inner.code : undefined;
  return { message, code, status };
}

/** True when a server error object may succeed on retry: by its numeric status when it has one, else by its code. */
export function isRetryableServerError(error: { code?: string; status?: number }): boolean {
  if (error.status !== undefined) return error.status === 408 || error.status === 429 || error.status >= 500;
  return isRetryableErrorCode(error.code);
}

/**
 * Builds the error of a non-2xx response: the server's message when its body has one.
 * 408, 409, 429 and 5xx are retryable (429 `insufficient_quota` is not); `x-should-retry` overrides.
 * At most `maxBodyBytes` of the body are read: a server cannot make the client hold an endless error.
 */
export async function errorFromResponse(response: Response, maxBodyBytes = STREAM_LIMIT_DEFAULTS.maxErrorBodyBytes): Promise<ModelHttpError> {
  const text = await readCappedText(response.body, maxBodyBytes);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const { message, code } = describeServerError(parsed);
  const status = response.status;
  let retryable = status === 408 || status === 409 || status === 429 || status >= 500;
  if (retryable && !isRetryableErrorCode(code)) retryable = false;
  const shouldRetry = response.headers.get('x-should-retry');
  if (shouldRetry === 'true') retryable = true;
  if (shouldRetry === 'false') retryable = false;
  const detail = message ?? (text.trim() ? text.trim().slice(0, 500) : response.statusText || 'no response body');
  return new ModelHttpError(`model request failed (HTTP ${status}): ${detail}`, {
    retryable,
    status,
    retryAfterMs: retryAfterMs(response.headers),
  });
}

/** Reads `retry-after-ms` or `retry-after` (seconds or an HTTP date); `undefined` when absent or unreadable. */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const milliseconds = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}
