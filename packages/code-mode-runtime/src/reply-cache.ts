import { SwitchyardError } from '@switchyard/protocol';

/**
 * The answers of keyed (`idempotencyKey`) calls, so that a retry gets the answer the first call
 * got (or is still waiting for) instead of a second run or a second observation. Bounded: the
 * oldest answer goes when more than `max` are kept; a retry comes soon after the answer it
 * repeats, so the most recent ones are enough.
 */
export class ReplyCache<T> {
  private readonly entries = new Map<string, T>();

  constructor(private readonly max: number) {}

  get(key: string): T | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: T): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.max) break;
      this.entries.delete(oldest);
    }
  }

  /** Forgets `key`, only while it still holds `value` (a later answer under the key stays). */
  forget(key: string, value: T): void {
    if (this.entries.get(key) === value) this.entries.delete(key);
  }
}

/**
 * `promise`, or a rejection with `cancelled()` as soon as `signal` aborts: a retry that joins an
 * answer still on its way can be cancelled without cancelling the call it joined.
 */
export function joinAnswer<T>(promise: Promise<T>, signal: AbortSignal | undefined, cancelled: () => Error): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Throws INVALID_INPUT unless `key` is absent or 1–256 characters. */
export function checkIdempotencyKey(key: unknown, call: string): void {
  if (key === undefined) return;
  if (typeof key !== 'string' || key.length === 0 || key.length > 256) {
    throw new SwitchyardError('INVALID_INPUT', `${call} expects \`idempotencyKey\` to be a string of 1-256 characters`);
  }
}
