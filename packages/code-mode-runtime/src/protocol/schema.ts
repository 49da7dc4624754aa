import type { JsonValue } from '@switchyard/protocol';

/**
 * The field kinds of the runtime protocol's message table (`messages.ts`): each kind checks a value
 * that arrived (after `JSON.parse`), carries its TypeScript type, and names itself for the
 * documentation. A message is a shape (field name → kind); the table maps each message name `t`
 * to its shape, and the types, the validators and the README's table are all derived from it.
 *
 * Why hand-written rather than zod / valibot / typebox: see "The runtime protocol" in the README
 * (the `call` message is validated on every nested call; a dozen closures do it in well under a
 * microsecond, and the error texts name the exact field: `call.call is not a non-negative integer`).
 */

/** A malformed frame or message, or a broken rule of this protocol. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/**
 * Where a value sits, for error texts only (built when a check fails, never on success): the
 * parent's path and the key (`reply.value` + `items` → `reply.value.items`; an index `0` → `[0]`).
 */
function at(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

/** One field kind. `T` is the type of a value that passed `check` (`type` is never set: it only carries `T`). */
export interface Field<T> {
  /** Throws a {@link ProtocolError} naming the field (`parent` + `key`) when `value` is not of this kind. */
  readonly check: (value: unknown, parent: string, key: string | number) => void;
  /** The kind as the documentation shows it (`integer ≥ 0`, `string[]`, `CellObservation`). */
  readonly doc: string;
  /** An optional field may be absent (or `undefined`); every other kind must be present. */
  readonly optional?: true;
  /** A named object or union kind, documented once in a table of its own. */
  readonly named?: NamedKind;
  /** The kinds this kind is made of (for the documentation of nested named kinds). */
  readonly parts?: readonly Field<unknown>[];
  readonly type?: T;
}

/** The type a field kind checks. */
export type Infer<F> = F extends Field<infer T> ? T : never;

/** A message or an object: field name → kind. */
export type Shape = Readonly<Record<string, Field<unknown>>>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K] extends { optional: true } ? K : never }[keyof S];

/** The object type of a shape: optional kinds are optional properties. */
export type ObjectOf<S extends Shape> = Simplify<{ [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Infer<S[K]> }>;

function fail(parent: string, key: string | number, problem: string): never {
  throw new ProtocolError(`${at(parent, key)} ${problem}`);
}

/** Renders `a`, `a or b`, `a, b or c`. */
export function orList(values: readonly unknown[]): string {
  const texts = values.map(String);
  return texts.length === 1 ? texts[0] : `${texts.slice(0, -1).join(', ')} or ${texts.at(-1)}`;
}

/** A non-negative safe integer (ids, call numbers, sizes, milliseconds). */
export const integer: Field<number> = {
  doc: 'integer ≥ 0',
  check(value, parent, key) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) fail(parent, key, 'is not a non-negative integer');
  },
};

/** A finite number (a measured duration). */
export const finite: Field<number> = {
  doc: 'number',
  check(value, parent, key) {
    if (typeof value !== 'number' || !Number.isFinite(value)) fail(parent, key, 'is not a number');
  },
};

export const string: Field<string> = {
  doc: 'string',
  check(value, parent, key) {
    if (typeof value !== 'string') fail(parent, key, 'is not a string');
  },
};

export const boolean: Field<boolean> = {
  doc: 'boolean',
  check(value, parent, key) {
    if (typeof value !== 'boolean') fail(parent, key, 'is not a boolean');
  },
};

/** Any JSON value. The check is nothing: the value came out of `JSON.parse`, so it is JSON by construction. */
export const json: Field<JsonValue> = {
  doc: 'JSON',
  check() {},
};

/** One of a few strings (a closed set: a value outside it is refused). */
export function literal<const V extends readonly string[]>(...values: V): Field<V[number]> {
  const allowed = new Set<unknown>(values);
  const problem = values.length > 6 ? `is not one of ${values.length} known values (${values.join(', ')})` : `is not ${orList(values)}`;
  return {
    doc: values.map((value) => `\`${value}\``).join(' \\| '),
    check(value, parent, key) {
      if (!allowed.has(value)) fail(parent, key, problem);
    },
  };
}

/** A field that may be absent (or `undefined`; `null` is refused like any other wrong value). */
export function optional<T>(field: Field<T>): Field<T> & { optional: true } {
  return {
    doc: field.doc,
    optional: true,
    named: field.named,
    parts: [field],
    check(value, parent, key) {
      if (value !== undefined) field.check(value, parent, key);
    },
  };
}

/** An array whose every element is of kind `of`. */
export function arrayOf<T>(of: Field<T>): Field<T[]> {
  return {
    doc: `${of.doc.includes(' ') ? `(${of.doc})` : of.doc}[]`,
    parts: [of],
    check(value, parent, key) {
      if (!Array.isArray(value)) fail(parent, key, 'is not an array');
      const path = at(parent, key);
      for (let index = 0; index < value.length; index++) of.check(value[index], path, index);
    },
  };
}

/** Stored values as they travel: `[key, JSON text]` pairs. */
export const pairs: Field<Array<[string, string]>> = {
  doc: '[string, string][]',
  check(value, parent, key) {
    if (!Array.isArray(value)) fail(parent, key, 'is not an array');
    for (const pair of value) {
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
        fail(parent, key, 'holds an entry that is not [string, string]');
      }
    }
  },
};

/** A named object or union kind, as its documentation table shows it. */
export interface NamedKind {
  readonly name: string;
  readonly meaning: string;
  /** One row per variant: the discriminating value (or none for a plain object) and the shape. */
  readonly variants: ReadonlyArray<{ readonly when?: string; readonly shape: Shape }>;
}

/** The checks of a shape's fields, in order, computed once. */
function shapeChecks(shape: Shape): Array<[string, Field<unknown>]> {
  return Object.entries(shape);
}

function checkObject(value: unknown, parent: string, key: string | number): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(parent, key, 'is not an object');
  return value as Record<string, unknown>;
}

/**
 * An object of the given shape. Fields the shape does not name are kept and not read (a newer
 * sender may add an optional field; a tool descriptor carries what the engine may read).
 */
export function object<const S extends Shape>(name: string, meaning: string, shape: S): Field<ObjectOf<S>> {
  const checks = shapeChecks(shape);
  return {
    doc: name,
    named: { name, meaning, variants: [{ shape }] },
    parts: Object.values(shape),
    check(value, parent, key) {
      const checked = checkObject(value, parent, key);
      const path = at(parent, key);
      for (const [field, kind] of checks) kind.check(checked[field], path, field);
    },
  };
}

/** The union of the variants' objects, each with its discriminating field set to its name. */
export type VariantsOf<K extends string, V extends Readonly<Record<string, Shape>>> = {
  [N in keyof V & string]: Simplify<{ [P in K]: N } & ObjectOf<V[N]>>;
}[keyof V & string];

/** An object whose string field `key` says which of `variants` it is (a discriminated union). */
export function variants<const K extends string, const V extends Readonly<Record<string, Shape>>>(name: string, meaning: string, key: K, shapes: V): Field<VariantsOf<K, V>> {
  const checks = new Map(Object.entries(shapes).map(([value, shape]) => [value, shapeChecks(shape)]));
  const problem = `is not ${orList([...checks.keys()])}`;
  return {
    doc: name,
    named: { name, meaning, variants: Object.entries(shapes).map(([value, shape]) => ({ when: `${key}: '${value}'`, shape })) },
    parts: Object.values(shapes).flatMap((shape) => Object.values(shape)),
    check(value, parent, at_) {
      const checked = checkObject(value, parent, at_);
      const path = at(parent, at_);
      const discriminant = checked[key];
      const fields = typeof discriminant === 'string' ? checks.get(discriminant) : undefined;
      if (!fields) fail(path, key, problem);
      for (const [field, kind] of fields) kind.check(checked[field], path, field);
    },
  };
}

// ---- messages ------------------------------------------------------------------------------

/** One message of the table: what it means, its fields, and for an outcome the fields of each side of `ok`. */
export type MessageKind =
  | { readonly meaning: string; readonly shape: Shape }
  | { readonly meaning: string; readonly shape: Shape; readonly ok: Shape; readonly failed: Shape };

/** A message with fields `shape`. */
export function message<const S extends Shape>(meaning: string, shape: S): { meaning: string; shape: S } {
  return { meaning, shape };
}

/** A message that is an outcome: its `shape` plus `ok: true` and the `ok` fields, or `ok: false` and the `failed` fields. */
export function outcome<const S extends Shape, const A extends Shape, const B extends Shape>(meaning: string, shape: S, ok: A, failed: B): { meaning: string; shape: S; ok: A; failed: B } {
  return { meaning, shape, ok, failed };
}

/** The message type of entry `E` named `T`. */
type MessageOf<T extends string, E> = E extends { shape: infer S extends Shape; ok: infer A extends Shape; failed: infer B extends Shape }
  ? Simplify<{ t: T } & ObjectOf<S> & { ok: true } & ObjectOf<A>> | Simplify<{ t: T } & ObjectOf<S> & { ok: false } & ObjectOf<B>>
  : E extends { shape: infer S extends Shape }
    ? Simplify<{ t: T } & ObjectOf<S>>
    : never;

/** The union of a table's messages, discriminated on `t`. */
export type MessagesOf<Table> = { [T in keyof Table & string]: MessageOf<T, Table[T]> }[keyof Table & string];

/** A message's checks, computed once per table. */
interface CompiledMessage {
  readonly fields: Array<[string, Field<unknown>]>;
  readonly ok?: Array<[string, Field<unknown>]>;
  readonly failed?: Array<[string, Field<unknown>]>;
}

/**
 * The validator of a table's messages: a message is an object whose `t` names an entry, and whose
 * fields pass that entry's kinds. Returns the message itself (it is not copied).
 */
export function compileTable<Table extends Readonly<Record<string, MessageKind>>>(table: Table): (value: unknown) => MessagesOf<Table> {
  // A Map, not the table object: a `t` of `__proto__` or `constructor` must not find anything.
  const compiled = new Map<unknown, CompiledMessage>(
    Object.entries(table).map(([t, entry]) => [
      t,
      { fields: shapeChecks(entry.shape), ...('ok' in entry ? { ok: shapeChecks(entry.ok), failed: shapeChecks(entry.failed) } : {}) },
    ]),
  );
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ProtocolError('a message is not an object');
    const message = value as Record<string, unknown>;
    const t = message.t;
    const entry = compiled.get(t);
    if (entry === undefined) throw new ProtocolError(`unknown message type ${JSON.stringify(String(t)).slice(0, 40)}`);
    const name = t as string;
    for (const [field, kind] of entry.fields) kind.check(message[field], name, field);
    if (entry.ok !== undefined) {
      boolean.check(message.ok, name, 'ok');
      for (const [field, kind] of message.ok ? entry.ok : entry.failed!) kind.check(message[field], name, field);
    }
    return message as MessagesOf<Table>;
  };
}
