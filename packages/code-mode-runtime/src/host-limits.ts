import type { EngineSessionOptions, StoredPair } from './protocol';
import { maxValueChars } from './value-limit';
import { limitOf } from './cell-limits';

/**
 * The limits the agent host enforces on what a runtime sends, whatever the runtime is. A runtime
 * (a worker process, a runtime host over a bus) is treated like the model: untrusted. The engine
 * enforces the same per-cell limits inside the runtime; these hold even when a runtime does not.
 */
export interface HostLimits {
  /** Nested calls in flight per cell (`maxInFlightCalls`). */
  maxInFlightCalls: number;
  /** UTF-8 bytes of notify text per cell (`maxOutputBytes`). */
  maxNotifyBytes: number;
  /** Characters of one notify text (the value size limit). */
  maxValueChars: number;
  /** Bytes of nested-call results on their way to the runtime, per connection (`maxInFlightResultBytes`). */
  maxInFlightResultBytes: number;
  /** UTF-8 bytes of a session's stored values, keys included (`maxStoredBytes`); staged commit parts count too. */
  maxStoredBytes: number;
  /** Keys of a session's stored values (`maxStoredKeys`). */
  maxStoredKeys: number;
}

/** The host's limits for sessions with `engine`'s options (defaults filled in). */
export function hostLimits(engine: EngineSessionOptions): HostLimits {
  const valueChars = maxValueChars(engine.heapMb);
  return {
    maxInFlightCalls: engine.maxInFlightCalls,
    maxNotifyBytes: engine.maxOutputBytes,
    maxValueChars: valueChars,
    maxInFlightResultBytes: limitOf(engine, 'maxInFlightResultBytes'),
    maxStoredBytes: limitOf(engine, 'maxStoredBytes'),
    maxStoredKeys: limitOf(engine, 'maxStoredKeys'),
  };
}

/** What the host counts for one cell of a runtime session. */
export interface CellAccount {
  /** Nested calls in flight. */
  calls: number;
  /** UTF-8 bytes of notify text accepted. */
  notifyBytes: number;
  /** Stored writes staged by `commit` parts until the last one, and their bytes. */
  staged: StoredPair[];
  stagedBytes: number;
  /** The limit the runtime made the cell break: the cell's completion fails with it. */
  failure?: string;
  /** Its writes were committed (a runtime committing them again is ignored). */
  committed?: boolean;
}

export function newAccount(): CellAccount {
  return { calls: 0, notifyBytes: 0, staged: [], stagedBytes: 0 };
}

/** UTF-8 bytes a stored pair counts for against the budget (its key and its JSON). */
export function pairBytes([key, json]: StoredPair): number {
  return Buffer.byteLength(key, 'utf8') + Buffer.byteLength(json, 'utf8');
}

/**
 * A session's committed stored values (key → JSON text) within a budget of bytes and keys. A commit
 * that would pass the budget is refused whole (the earlier values stay as they were and loadable;
 * a commit that overwrites keys with smaller values, or fewer, always fits when the result does).
 */
export class StoredValues {
  private readonly values = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly limits: Pick<HostLimits, 'maxStoredBytes' | 'maxStoredKeys'>) {}

  entries(): StoredPair[] {
    return [...this.values];
  }

  /** Replaces every value (a restore), outside the budget's check: they were committed within it before. */
  replace(pairs: readonly StoredPair[]): void {
    this.values.clear();
    this.bytes = 0;
    for (const [key, json] of pairs) {
      const old = this.values.get(key);
      if (old !== undefined) this.bytes -= pairBytes([key, old]);
      this.values.set(key, json);
      this.bytes += pairBytes([key, json]);
    }
  }

  /** Applies `writes` (last writer of a key wins), or returns the sentence saying which budget it would pass. */
  commit(writes: readonly StoredPair[]): string | undefined {
    const next = new Map<string, string>();
    for (const [key, json] of writes) next.set(key, json);
    let bytes = this.bytes;
    let keys = this.values.size;
    for (const [key, json] of next) {
      const old = this.values.get(key);
      if (old === undefined) keys++;
      else bytes -= pairBytes([key, old]);
      bytes += pairBytes([key, json]);
    }
    const { maxStoredBytes, maxStoredKeys } = this.limits;
    if (bytes > maxStoredBytes) {
      return storedBudget(`${bytes} bytes`, `${maxStoredBytes} bytes (maxStoredBytes)`);
    }
    if (keys > maxStoredKeys) return storedBudget(`${keys} keys`, `${maxStoredKeys} keys (maxStoredKeys)`);
    for (const [key, json] of next) this.values.set(key, json);
    this.bytes = bytes;
    return undefined;
  }
}

/** "exec stored values budget exceeded: …" (the cell's writes were not committed). */
export function storedBudget(would: string, budget: string): string {
  return (
    `exec stored values budget exceeded: this cell's writes would make the session's stored values ${would}, over the budget of ${budget}; ` +
    'none of its writes were stored, earlier values are unchanged (load and overwrite them to make room)'
  );
}
