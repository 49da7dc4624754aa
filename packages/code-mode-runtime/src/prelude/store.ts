import type { PreludeLimits, StoredPair } from './bridge';
import { sizeChecker } from './output';
import { createNull, parse, stringify } from './primordials';
import { describeMessage } from './tool-error';
import { coerceKey, utf8Length } from './values';

/**
 * `store` / `load` over the session's stored values (a snapshot taken at the cell's start, one
 * JSON string per value). Writes are kept apart in `writes` and reach the runtime only when the
 * cell settles.
 *
 * The cell's own writes (UTF-8 of each written key and its JSON, the last write of a key counted)
 * are bounded by `maxStoredBytes`, the session's whole budget: writes over it can never be
 * committed, so they never leave the isolate. The `store()` that passes it throws `overBudget`
 * (the writes are dropped, later `store()` calls throw it again) and the cell fails with it when
 * it settles, even when it caught the throw: none of its writes are stored.
 */
export function createStore(storedPairs: readonly StoredPair[], limits: PreludeLimits) {
  const checkSize = sizeChecker(limits);
  const stored = createNull<string>();
  let writes = createNull<string>();
  /** UTF-8 bytes of each written key and its JSON. */
  let sizes = createNull<number>();
  let writtenBytes = 0;
  let overBudget: string | undefined;
  for (let i = 0; i < storedPairs.length; i++) stored[storedPairs[i][0]] = storedPairs[i][1];
  function store(key?: unknown, value?: unknown): void {
    if (overBudget !== undefined) throw overBudget;
    const name = coerceKey(key, 'store');
    checkSize(name, 'a store() key');
    let json: string | undefined;
    try {
      json = stringify(value);
    } catch (error) {
      throw describeMessage(error);
    }
    if (json === undefined) throw 'Unable to store ' + stringify(name) + '. Only plain serializable objects can be stored.';
    checkSize(json, 'the JSON of a store() value');
    const size = utf8Length(name) + utf8Length(json);
    const bytes = writtenBytes - (sizes[name] ?? 0) + size;
    if (bytes > limits.maxStoredBytes) {
      overBudget = `exec stored values budget exceeded: this cell's writes passed ${limits.maxStoredBytes} bytes (maxStoredBytes); none of its writes were stored, earlier values are unchanged`;
      writes = createNull<string>();
      sizes = createNull<number>();
      writtenBytes = 0;
      throw overBudget;
    }
    writtenBytes = bytes;
    sizes[name] = size;
    stored[name] = json;
    writes[name] = json;
  }
  function load(key?: unknown): unknown {
    const name = coerceKey(key, 'load');
    // No key this long can have been stored; looking it up would flatten it.
    if (name.length > limits.maxValueChars) return undefined;
    const json = stored[name];
    return json === undefined ? undefined : parse(json);
  }
  return {
    store,
    load,
    /** The writes to commit when the cell settles. */
    writes: () => writes,
    /** The failure of a cell whose writes passed the budget (undefined: they did not). */
    overBudget: () => overBudget,
  };
}
