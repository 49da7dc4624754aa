/**
 * Why `JSON.stringify(value)` failed, with the path of the offending member: `Do not know how to
 * serialize a BigInt (at result.stats.count)`. The fast path is `JSON.stringify` itself; the walk
 * that finds the path runs only after it threw, so a good value is serialized once.
 */
export function serializeJson(value: unknown, root = 'result'): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    const at = offendingPath(value, root);
    throw new TypeError(at ? `${reason} (at ${at})` : reason, { cause: error });
  }
  return text ?? 'null';
}

/** The first member (depth first, in `JSON.stringify`'s order) that makes serialization throw. */
function offendingPath(value: unknown, path: string, seen: object[] = []): string | undefined {
  if (typeof value === 'bigint') return path;
  if (value === null || typeof value !== 'object') return undefined;
  const serializable = value as { toJSON?: unknown };
  if (typeof serializable.toJSON === 'function') {
    try {
      return offendingPath((serializable.toJSON as (key: string) => unknown)(path), path, seen);
    } catch {
      return path;
    }
  }
  if (seen.includes(value)) return path;
  seen.push(value);
  const entries: Array<[string, unknown]> = Array.isArray(value) ? value.map((item, index) => [`[${index}]`, item]) : Object.entries(value).map(([key, item]) => [memberPath(key), item]);
  for (const [suffix, item] of entries) {
    const found = offendingPath(item, `${path}${suffix}`, seen);
    if (found) return found;
  }
  seen.pop();
  return undefined;
}

function memberPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
