import type { PreludeLimits, StoredPair } from './bridge';
import { sizeChecker } from './output';
import { createNull, parse, stringify } from './primordials';
import { describeMessage } from './tool-error';
import { coerceKey } from './values';

/**
 * `store` / `load` over the session's stored values (a snapshot taken at the cell's start, one
 * JSON string per value). Writes are kept apart in `writes` and reach the runtime only when the
 * cell settles, so a failed cell commits nothing.
 */
export function createStore(storedPairs: readonly StoredPair[], limits: PreludeLimits) {
  const checkSize = sizeChecker(limits);
  const stored = createNull<string>();
  const writes = createNull<string>();
  for (let i = 0; i < storedPairs.length; i++) stored[storedPairs[i][0]] = storedPairs[i][1];
  function store(key?: unknown, value?: unknown): void {
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
  return { store, load, writes };
}
