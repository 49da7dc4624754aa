import { ModelRequestError } from '@switchyard/protocol';
import { optionRules as rule, type OptionsShape } from '@switchyard/kit/internal';

/**
 * The bounds of one model request: what a server can make the client hold in memory and how long
 * it can keep it waiting. Each bound that trips ends the attempt with a `ModelRequestError`
 * (`MODEL_ERROR`) naming the option.
 */
export interface StreamLimitOptions {
  /** Bytes of a non-2xx response body read for its error message; the rest is not read. Default 65 536. */
  maxErrorBodyBytes?: number;
  /**
   * Characters of one streamed item: a call's arguments or input, a message's text, the reasoning
   * text. Default 8 388 608 (8 Mi).
   */
  maxItemChars?: number;
  /**
   * Characters streamed in one response, all items together; also the bytes of one server-sent
   * event (an event that never ends). Default 33 554 432 (32 Mi).
   */
  maxResponseChars?: number;
  /**
   * Milliseconds without a server-sent event (before the response headers too) that end the
   * attempt; keep-alive comments do not count as events. Retryable. Default 300 000 (5 minutes).
   */
  idleTimeoutMs?: number;
  /** Milliseconds one attempt (request and whole stream) may take. Not retryable. Default 1 800 000 (30 minutes). */
  totalTimeoutMs?: number;
}

export const STREAM_LIMIT_DEFAULTS: Required<StreamLimitOptions> = {
  maxErrorBodyBytes: 65_536,
  maxItemChars: 8 * 1024 * 1024,
  maxResponseChars: 32 * 1024 * 1024,
  idleTimeoutMs: 300_000,
  totalTimeoutMs: 1_800_000,
};

/** The option rules of {@link StreamLimitOptions}, shared by both clients' strict options check. */
export const STREAM_LIMIT_OPTION_RULES: OptionsShape<StreamLimitOptions> = {
  maxErrorBodyBytes: rule.number({ min: 1, integer: true }),
  maxItemChars: rule.number({ min: 1, integer: true }),
  maxResponseChars: rule.number({ min: 1, integer: true }),
  idleTimeoutMs: rule.number({ min: 1 }),
  totalTimeoutMs: rule.number({ min: 1 }),
};

/**
 * The bounds of one attempt: a signal that aborts with the bound's error when a timeout fires
 * (the fetch and the body read reject with it), and the character counts of what was streamed.
 */
export class StreamGuard {
  readonly limits: Required<StreamLimitOptions>;
  /** Aborts when the caller's signal aborts, or with a bound's {@link ModelRequestError}. */
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly itemChars = new Map<string, number>();
  private responseChars = 0;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly totalTimer: ReturnType<typeof setTimeout>;

  constructor(options: StreamLimitOptions, outer: AbortSignal) {
    this.limits = resolveLimits(options);
    this.signal = AbortSignal.any([outer, this.controller.signal]);
    const total = this.limits.totalTimeoutMs;
    this.totalTimer = setTimeout(() => this.fail(new ModelRequestError(`model request exceeded totalTimeoutMs (${total} ms)`, { retryable: false })), total);
    this.eventArrived();
  }

  /** The bound that ended the attempt, when one did. */
  get failure(): ModelRequestError | undefined {
    const reason: unknown = this.controller.signal.reason;
    return reason instanceof ModelRequestError ? reason : undefined;
  }

  /** A server-sent event arrived: the idle timer starts again. */
  eventArrived(): void {
    if (this.controller.signal.aborted) return;
    clearTimeout(this.idleTimer);
    const idle = this.limits.idleTimeoutMs;
    this.idleTimer = setTimeout(
      () => this.fail(new ModelRequestError(`model stream idle for idleTimeoutMs (${idle} ms) without an event`, { retryable: true })),
      idle,
    );
  }

  /** Counts `chars` more streamed characters of item `key`; throws when an item or the response is over its bound. */
  grow(key: string, chars: number): void {
    const item = (this.itemChars.get(key) ?? 0) + chars;
    this.itemChars.set(key, item);
    this.responseChars += chars;
    if (item > this.limits.maxItemChars) {
      throw new ModelRequestError(`model stream exceeded maxItemChars (${this.limits.maxItemChars} characters in one item)`, { retryable: false });
    }
    if (this.responseChars > this.limits.maxResponseChars) {
      throw new ModelRequestError(`model stream exceeded maxResponseChars (${this.limits.maxResponseChars} characters in one response)`, { retryable: false });
    }
  }

  /** Throws when one server-sent event has grown past `maxResponseChars` bytes without ending. */
  checkPendingEvent(bytes: number): void {
    if (bytes <= this.limits.maxResponseChars) return;
    throw new ModelRequestError(`model stream exceeded maxResponseChars (one event over ${this.limits.maxResponseChars} bytes)`, { retryable: false });
  }

  /** Stops the timers. */
  dispose(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.totalTimer);
  }

  private fail(error: ModelRequestError): void {
    this.dispose();
    this.controller.abort(error);
  }
}

/** The limits of `options` (a client's whole options object), each default filled in. */
export function resolveLimits(options: StreamLimitOptions): Required<StreamLimitOptions> {
  return {
    maxErrorBodyBytes: options.maxErrorBodyBytes ?? STREAM_LIMIT_DEFAULTS.maxErrorBodyBytes,
    maxItemChars: options.maxItemChars ?? STREAM_LIMIT_DEFAULTS.maxItemChars,
    maxResponseChars: options.maxResponseChars ?? STREAM_LIMIT_DEFAULTS.maxResponseChars,
    idleTimeoutMs: options.idleTimeoutMs ?? STREAM_LIMIT_DEFAULTS.idleTimeoutMs,
    totalTimeoutMs: options.totalTimeoutMs ?? STREAM_LIMIT_DEFAULTS.totalTimeoutMs,
  };
}

/** Reads at most `maxBytes` of a body as text and releases the rest unread. */
export async function readCappedText(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  try {
    while (bytes < maxBytes) {
      const chunk = await reader.read();
      if (chunk.done) return text + decoder.decode();
      const room = maxBytes - bytes;
      const piece = chunk.value.byteLength > room ? chunk.value.subarray(0, room) : chunk.value;
      bytes += piece.byteLength;
      text += decoder.decode(piece, { stream: true });
    }
    return text + decoder.decode();
  } catch {
    return text;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
