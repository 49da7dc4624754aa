/**
 * Copies `fields` into an object without a prototype. Every option object handed to isolated-vm
 * is built this way, so a polluted `Object.prototype` can never add `reference` / `promise` /
 * `copy` options behind our back.
 */
export function nullPrototype<T extends object>(fields: T): T {
  return Object.assign(Object.create(null) as T, fields);
}
