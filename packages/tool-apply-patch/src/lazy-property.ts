/**
 * Gives `target` an enumerable `key` computed on first read, then kept (assigning replaces it):
 * spreading, JSON and structured cloning see a plain value, and a reader that never looks at it
 * never pays for it (a change's per-hunk diff, a file's text decoded from the helper's answer,
 * the turn diff of an event).
 */
export function lazyProperty<T extends object, K extends string, V>(target: T, key: K, compute: () => V): T & Record<K, V> {
  let state: { value: V } | undefined;
  return Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get: () => (state ??= { value: compute() }).value,
    set: (next: V) => {
      state = { value: next };
    },
  }) as T & Record<K, V>;
}
