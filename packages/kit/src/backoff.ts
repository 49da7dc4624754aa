import { optionRules as rule, type OptionsShape } from './options';

/** How long to wait between attempts of a failed request: exponential backoff with jitter. */
export interface BackoffOptions {
  /** Delay before the first retry, in milliseconds; doubles each retry. Default 500. */
  initialDelayMs?: number;
  /** Upper bound of a computed delay, in milliseconds. Default 10 000. */
  maxDelayMs?: number;
  /** Waits between attempts; rejects when `signal` aborts. Default {@link abortableSleep}; injected by tests. */
  sleep?: (milliseconds: number, signal: AbortSignal) => Promise<void>;
  /** A number in [0, 1) for jitter. Default `Math.random`. */
  random?: () => number;
}

/** The option rules of {@link BackoffOptions}, for the strict options check of whoever embeds them. */
export const BACKOFF_OPTION_RULES: OptionsShape<BackoffOptions> = {
  initialDelayMs: rule.number({ min: 0 }),
  maxDelayMs: rule.number({ min: 0 }),
  sleep: rule.function(),
  random: rule.function(),
};

/**
 * The delay before retry number `retry` (1 for the first retry), in milliseconds:
 * `initialDelayMs × 2^(retry-1)` capped at `maxDelayMs`, then ±25 % jitter. Never throws.
 */
export function backoffDelay(retry: number, options: BackoffOptions = {}): number {
  const initial = options.initialDelayMs ?? 500;
  const max = options.maxDelayMs ?? 10_000;
  const base = Math.min(max, initial * 2 ** (retry - 1));
  const random = options.random ?? Math.random;
  return Math.round(base * (0.75 + 0.5 * random()));
}

/** Waits `milliseconds`, rejecting with the signal's reason if it aborts first. */
export function abortableSleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
