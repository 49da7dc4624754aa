/**
 * The one rule for what a tool may return as a JSON result, applied once (in `JsonToolOutput`) so
 * the model, a Code Mode cell and a PostToolUse hook see the same value in every host:
 *
 * - JSON values pass as they are: `null`, booleans, finite numbers, strings, arrays, objects with the
 *   plain or the null prototype.
 * - JSON's own conversions apply, and the value the cell and the hooks get is the converted one: a
 *   value with `toJSON()` takes its result (a `Date` becomes its ISO string), `-0` is `0`, a member
 *   that is `undefined` is dropped, an `undefined` array entry is `null`, an `undefined` result is `null`.
 * - Everything `JSON.stringify` would mangle or lose without a word is refused, naming the member
 *   and what to return instead: `Map`, `Set`, `WeakMap`, `WeakSet`, typed arrays, `ArrayBuffer`,
 *   `DataView`, class instances without `toJSON()` (an `Error` included), `NaN` and `±Infinity`,
 *   BigInt, functions, symbols, and cycles.
 */

/** A tool result as JSON: its text and the JSON value it stands for (the given value when nothing was converted). */
export interface JsonResult {
  readonly text: string;
  readonly value: unknown;
}

/** Thrown by {@link toJsonResult}: `message` is one line naming the member and the fix. */
export class NonJsonValueError extends TypeError {
  /** The path of the offending member (`result.rows[1].blob`). */
  readonly path: string;

  constructor(path: string, problem: string) {
    super(`${path} ${problem}`);
    this.name = 'NonJsonValueError';
    this.path = path;
  }
}

/** Why a value cannot be a JSON result member, or `undefined` when it can (before any `toJSON`). */
function refusal(value: unknown): string | undefined {
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? undefined : `is ${value}: JSON has no NaN or Infinity; return null or a string`;
    case 'bigint':
      return 'is a BigInt: return a number or a string (String(value))';
    case 'function':
      return 'is a function: return data, not code';
    case 'symbol':
      return 'is a symbol: return a string';
    case 'object':
      return value === null ? undefined : objectRefusal(value);
    default:
      return undefined;
  }
}

function objectRefusal(value: object): string | undefined {
  if (Array.isArray(value)) return undefined;
  if (value instanceof Map || value instanceof WeakMap) return `is a ${value.constructor.name}: return a plain object (Object.fromEntries(map)) or an array of entries`;
  if (value instanceof Set || value instanceof WeakSet) return `is a ${value.constructor.name}: return an array ([...set])`;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && value instanceof SharedArrayBuffer)) {
    return `is a ${value.constructor?.name ?? 'binary buffer'}: return an array of numbers or a base64 string`;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null) return undefined;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined;
  const name = (prototype as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return `is ${typeof name === 'string' && name !== '' ? `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name} instance` : 'an object of a class'}: return a plain object ({ ...value }) or give the class a toJSON() method`;
}

/**
 * Serializes a tool result under the rule above. Returns its JSON text and the value the cell and
 * hooks receive (the given object itself unless a conversion happened, then the parsed text).
 * Throws a {@link NonJsonValueError} naming the first offending member (`result.index is a Map:
 * …`). The fast path is one `JSON.stringify` with a checking replacer; the walk that names a
 * cycle's path runs only after it threw.
 */
export function toJsonResult(value: unknown, root = 'result'): JsonResult {
  if (value === undefined) return { text: 'null', value: null };
  let converted = false;
  let problem: NonJsonValueError | undefined;
  // The path of every object met so far (the replacer runs depth first, parents before members).
  const paths = new Map<object, string>();
  let text: string | undefined;
  try {
    text = JSON.stringify(value, function replacer(this: object, key: string, member: unknown) {
      const original = (this as Record<string, unknown>)[key];
      const path = key === '' && paths.size === 0 ? root : `${paths.get(this) ?? root}${memberPath(this, key)}`;
      if (original !== member || member === undefined || Object.is(member, -0)) converted = true; // toJSON(), a dropped member, -0
      const why = refusal(hasToJson(original) ? member : original);
      if (why) {
        problem = new NonJsonValueError(path, why);
        throw problem;
      }
      if (typeof member === 'object' && member !== null && !paths.has(member)) paths.set(member, path);
      return member;
    });
  } catch (error) {
    if (problem) throw problem;
    const cycle = cyclePath(value, root, new Set());
    if (cycle) throw new NonJsonValueError(cycle.path, `refers back to ${cycle.target} (a cycle): return a tree, e.g. replace the back reference with an id`);
    throw new NonJsonValueError(root, `cannot be serialized: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  if (text === undefined) return { text: 'null', value: null };
  return { text, value: converted ? JSON.parse(text) : value };
}

function hasToJson(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

/** The first back reference, depth first: the member's path and the path of the object it points back to. */
function cyclePath(value: unknown, path: string, seen: Set<object>, open = new Map<object, string>()): { path: string; target: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const target = open.get(value);
  if (target !== undefined) return { path, target };
  if (seen.has(value)) return undefined;
  seen.add(value);
  open.set(value, path);
  for (const [key, member] of Object.entries(value)) {
    const found = cyclePath(member, `${path}${memberPath(value, key)}`, seen, open);
    if (found) return found;
  }
  open.delete(value);
  return undefined;
}

function memberPath(holder: object, key: string): string {
  if (Array.isArray(holder)) return `[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
