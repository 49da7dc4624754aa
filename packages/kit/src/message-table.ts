import type { JsonValue } from '@switchyard/protocol';

/**
 * Message tables: the style of every protocol between Switchyard's processes (a host and its
 * runtime, apply_patch and its helper). A table maps each message name `t` to its meaning and
 * its shape (field name → kind); each kind checks a value that arrived (after `JSON.parse`),
 * carries its TypeScript type, and names itself for the documentation, so the message types,
 * the validators and the README's tables are all derived from the table.
 *
 * Why hand-written rather than zod / valibot / TypeBox: a runtime's `call` message is validated
 * on every nested call: compiled checks do it in ~0.02 µs, zod 4 in ~2 µs; and a refusal names
 * the exact field: `reply.value.items[1].type is not input_text or input_image`.
 */

/** A malformed frame or message, or a broken rule of this protocol. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/**
 * Why a value was refused: the problem, and the keys from the refused value out to the message
 * (innermost first; each enclosing kind adds its key on the way out). Nothing is allocated while
 * values pass: a path is only built for a refusal.
 */
export class Refusal {
  readonly keys: Array<string | number> = [];
  readonly problem: string;
  constructor(problem: string) {
    this.problem = problem;
  }

  /** `reply.value.items[1].type is not input_text or input_image` for a message of type `t`. */
  text(t: string): string {
    let path = t;
    for (let index = this.keys.length - 1; index >= 0; index--) {
      const key = this.keys[index];
      path += typeof key === 'number' ? `[${key}]` : `.${key}`;
    }
    return `${path} ${this.problem}`;
  }
}

/** One field kind. `T` is the type of a value that passed `check` (`type` is never set: it only carries `T`). */
export interface Field<T> {
  /** Undefined when `value` is of this kind, else why not. */
  readonly check: (value: unknown) => Refusal | undefined;
  /** The kind as the documentation shows it (`integer ≥ 0`, `string[]`, `CellObservation`). */
  readonly doc: string;
  /** An optional field may be absent (or `undefined`); every other kind must be present. */
  readonly optional?: true;
  /** A named object or union kind, documented once in a table of its own. */
  readonly named?: NamedKind;
  /** An optional kind's check of a present value (a shape checks `undefined` itself, without a call). */
  readonly present?: (value: unknown) => Refusal | undefined;
  /** Nothing to check (a shape reads no such field). */
  readonly unchecked?: true;
  /**
   * Carried as a blob after the frame's JSON header (`text`: the field is a text; `pairs`: the
   * second element of each `[key, text]` pair is), never JSON-escaped or parsed on the way.
   */
  readonly blob?: 'text' | 'pairs';
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

/** Renders `a`, `a or b`, `a, b or c`. */
function orList(values: readonly unknown[]): string {
  const texts = values.map(String);
  return texts.length === 1 ? texts[0] : `${texts.slice(0, -1).join(', ')} or ${texts.at(-1)}`;
}

/** A non-negative safe integer (ids, call numbers, sizes, milliseconds). */
export const integer: Field<number> = {
  doc: 'integer ≥ 0',
  check: (value) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? undefined : new Refusal('is not a non-negative integer')),
};

/** A finite number (a measured duration). */
export const finite: Field<number> = {
  doc: 'number',
  check: (value) => (typeof value === 'number' && Number.isFinite(value) ? undefined : new Refusal('is not a number')),
};

export const string: Field<string> = {
  doc: 'string',
  check: (value) => (typeof value === 'string' ? undefined : new Refusal('is not a string')),
};

export const boolean: Field<boolean> = {
  doc: 'boolean',
  check: (value) => (typeof value === 'boolean' ? undefined : new Refusal('is not a boolean')),
};

/** Any JSON value. The check is nothing: the value came out of `JSON.parse`, so it is JSON by construction. */
export const json: Field<JsonValue> = {
  doc: 'JSON',
  unchecked: true,
  check: () => undefined,
};

/** One of a few strings (a closed set: a value outside it is refused). */
export function literal<const V extends readonly string[]>(...values: V): Field<V[number]> {
  const allowed = new Set<unknown>(values);
  const problem = values.length > 6 ? `is not one of ${values.length} known values (${values.join(', ')})` : `is not ${orList(values)}`;
  return {
    doc: values.map((value) => `\`${value}\``).join(' \\| '),
    check: (value) => (allowed.has(value) ? undefined : new Refusal(problem)),
  };
}

/** A field that may be absent (or `undefined`; `null` is refused like any other wrong value). */
export function optional<T>(field: Field<T>): Field<T> & { optional: true } {
  const check = field.check;
  return { ...field, optional: true, present: check, check: (value) => (value === undefined ? undefined : check(value)) };
}

/** An array whose every element is of kind `of`. */
export function arrayOf<T>(of: Field<T>): Field<T[]> {
  const check = generated<Field<T[]>['check']>(
    { notArray: () => new Refusal('is not an array'), element: of.check },
    `return function checkArray(value) {
      if (!Array.isArray(value)) return notArray();
      for (let index = 0; index < value.length; index++) {
        const refusal = element(value[index]);
        if (refusal !== undefined) { refusal.keys.push(index); return refusal; }
      }
      return undefined;
    };`,
  );
  return { doc: `${of.doc.includes(' ') ? `(${of.doc})` : of.doc}[]`, check };
}

/** Stored values as they travel: `[key, JSON text]` pairs. */
export const pairs: Field<Array<[string, string]>> = {
  doc: '[string, string][]',
  check(value) {
    if (!Array.isArray(value)) return new Refusal('is not an array');
    for (const pair of value) {
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
        return new Refusal('holds an entry that is not [string, string]');
      }
    }
    return undefined;
  },
};

/** A text carried as a blob (a nested call's arguments or result as JSON text, a notify text). */
export const blob: Field<string> = { ...string, doc: 'string (blob)', blob: 'text' };

/** Stored pairs whose texts are carried as blobs. */
export const blobPairs: Field<Array<[string, string]>> = { ...pairs, doc: '[string, string (blob)][]', blob: 'pairs' };

/** The fields of kind `blob` (`which: 'text'`) or `blobPairs` (`'pairs'`) of every message in `table`, in field order. */
export function blobFieldsOf(table: Readonly<Record<string, { shape: Shape; ok?: Shape; failed?: Shape }>>, which: 'text' | 'pairs'): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  for (const [t, entry] of Object.entries(table)) {
    const names: string[] = [];
    for (const shape of [entry.shape, entry.ok, entry.failed]) {
      for (const [name, field] of Object.entries(shape ?? {})) if (field.blob === which && !names.includes(name)) names.push(name);
    }
    if (names.length > 0) fields[t] = names;
  }
  return fields;
}

/** A named object or union kind, as its documentation table shows it. */
export interface NamedKind {
  readonly name: string;
  readonly meaning: string;
  /** One row per variant: the discriminating value (or none for a plain object) and the shape. */
  readonly variants: ReadonlyArray<{ readonly when?: string; readonly shape: Shape }>;
}

/**
 * A check compiled with `new Function` from the code of this module and the field names of the
 * tables (never from received data; each name is written as a JSON string literal). Why: each
 * compiled check reads fields with constant keys and calls one callee per call site, so V8 sees
 * one object layout and one target per site and inlines them. The same checks written as shared
 * closures looping over `[key, check]` pairs measured 3-10× slower (one megamorphic load and call
 * site for every field of every message), and `call` is validated on every nested call.
 */
function generated<F>(scope: Record<string, unknown>, body: string): F {
  return new Function(...Object.keys(scope), body)(...Object.values(scope)) as F;
}

/** The statements checking object `o` against `shape` (`r`: the refusal; the callees are `c0`, `c1`, … in `scope`). */
function shapeStatements(shape: Shape, scope: Record<string, unknown>): string {
  const lines: string[] = [];
  for (const [key, kind] of Object.entries(shape)) {
    if (kind.unchecked) continue;
    const name = JSON.stringify(key);
    const callee = `c${Object.keys(scope).length}`;
    const refused = `{ r.keys.push(${name}); return r; }`;
    if (kind.present) {
      scope[callee] = kind.present;
      lines.push(`if ((v = o[${name}]) !== undefined && (r = ${callee}(v)) !== undefined) ${refused}`);
    } else {
      scope[callee] = kind.check;
      lines.push(`if ((r = ${callee}(o[${name}])) !== undefined) ${refused}`);
    }
  }
  return `let r, v;\n${lines.join('\n')}`;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const notObject = () => new Refusal('is not an object');
const OBJECT_TEST = `if (typeof o !== 'object' || o === null || Array.isArray(o)) return notObject();`;

/**
 * An object of the given shape. Fields the shape does not name are kept and not read (a newer
 * sender may add an optional field; a tool descriptor carries what the engine may read).
 */
export function object<const S extends Shape>(name: string, meaning: string, shape: S): Field<ObjectOf<S>> {
  const scope: Record<string, unknown> = { notObject };
  const statements = shapeStatements(shape, scope);
  return {
    doc: name,
    named: { name, meaning, variants: [{ shape }] },
    check: generated(scope, `return function checkObject(o) {\n${OBJECT_TEST}\n${statements}\nreturn undefined;\n};`),
  };
}

/** The union of the variants' objects, each with its discriminating field set to its name. */
export type VariantsOf<K extends string, V extends Readonly<Record<string, Shape>>> = {
  [N in keyof V & string]: Simplify<{ [P in K]: N } & ObjectOf<V[N]>>;
}[keyof V & string];

/** An object whose string field `key` says which of `variants` it is (a discriminated union). */
export function variants<const K extends string, const V extends Readonly<Record<string, Shape>>>(name: string, meaning: string, key: K, shapes: V): Field<VariantsOf<K, V>> {
  const problem = `is not ${orList(Object.keys(shapes))}`;
  const scope: Record<string, unknown> = { notObject, notVariant: () => Object.assign(new Refusal(problem), { keys: [key] }) };
  const cases = Object.entries(shapes).map(([value, shape]) => `case ${JSON.stringify(value)}: {\n${shapeStatements(shape, scope)}\nreturn undefined;\n}`);
  return {
    doc: name,
    named: { name, meaning, variants: Object.entries(shapes).map(([value, shape]) => ({ when: `${key}: '${value}'`, shape })) },
    check: generated(scope, `return function checkVariant(o) {\n${OBJECT_TEST}\nswitch (o[${JSON.stringify(key)}]) {\n${cases.join('\n')}\ndefault: return notVariant();\n}\n};`),
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

/** The `case` of message `t`: its fields, then for an outcome `ok` (a boolean, checked first) and the fields of its side. */
function messageCase(t: string, entry: MessageKind, scope: Record<string, unknown>): string {
  const fields = shapeStatements(entry.shape, scope);
  if (!('ok' in entry)) return `case ${JSON.stringify(t)}: {\n${fields}\nreturn undefined;\n}`;
  const ok = shapeStatements({ ok: boolean, ...entry.ok }, scope);
  const failed = shapeStatements({ ok: boolean, ...entry.failed }, scope);
  return `case ${JSON.stringify(t)}: {\n{\n${fields}\n}\nif (o.ok === true) {\n${ok}\n} else {\n${failed}\n}\nreturn undefined;\n}`;
}

/**
 * The validator of a table's messages: a message is an object whose `t` names an entry, and whose
 * fields pass that entry's kinds. Returns the message itself (it is not copied); throws a
 * {@link ProtocolError} naming the field that is not of its kind.
 */
export function compileTable<Table extends Readonly<Record<string, MessageKind>>>(table: Table): (value: unknown) => MessagesOf<Table> {
  const scope: Record<string, unknown> = {};
  const cases = Object.entries(table).map(([t, entry]) => messageCase(t, entry, scope));
  // A `switch` on `t`, not a lookup in the table object: a `t` of `__proto__` or `constructor` finds nothing.
  const check = generated<(o: Record<string, unknown>) => Refusal | undefined | null>(scope, `return function checkMessage(o) {\nswitch (o.t) {\n${cases.join('\n')}\ndefault: return null;\n}\n};`);
  return (value) => {
    if (!isObject(value)) throw new ProtocolError('a message is not an object');
    const refusal = check(value);
    if (refusal === undefined) return value as MessagesOf<Table>;
    if (refusal === null) throw new ProtocolError(`unknown message type ${JSON.stringify(String(value.t)).slice(0, 40)}`);
    throw new ProtocolError(refusal.text(value.t as string));
  };
}

// ---- documentation -------------------------------------------------------------------------

/** `name`: kind, … (an optional field as `name?`). */
function docFields(shape: Shape): string {
  const entries = Object.entries(shape).map(([name, kind]) => `\`${name}${kind.optional ? '?' : ''}\`: ${kind.doc}`);
  return entries.length === 0 ? '—' : entries.join(', ');
}

function docMessageFields(entry: MessageKind): string {
  const common = docFields(entry.shape);
  if (!('ok' in entry)) return common;
  return `${common}<br>\`ok: true\`, ${docFields(entry.ok)}<br>\`ok: false\`, ${docFields(entry.failed)}`;
}

/** Table cells must not contain a raw line break (the kinds escape their own pipes). */
const docCell = (text: string) => text.replace(/\n/g, ' ');

/** A Markdown section documenting a table's messages: one row per `t`, its fields and meaning. */
function renderMessageTable(title: string, table: Readonly<Record<string, MessageKind>>): string[] {
  const rows = Object.entries(table).map(([t, entry]) => `| \`${t}\` | ${docMessageFields(entry)} | ${docCell(entry.meaning)} |`);
  return [`### ${title}`, '', '| `t` | fields | meaning |', '|---|---|---|', ...rows, ''];
}

/** A Markdown section documenting named kinds (made by {@link object} or {@link variants}). */
function renderKindTable(kinds: ReadonlyArray<Field<unknown>>): string[] {
  const rows = kinds.map((kind) => {
    const named = kind.named!;
    const shapes = named.variants.map((variant) => (variant.when === undefined ? docFields(variant.shape) : `\`${variant.when}\`, ${docFields(variant.shape)}`));
    return `| \`${named.name}\` | ${shapes.join('<br>')} | ${docCell(named.meaning)} |`;
  });
  return ['### Kinds used by the messages', '', '| kind | fields | meaning |', '|---|---|---|', ...rows, ''];
}

/** The part of `readme` from `start` to `end` (markers included), or undefined when a marker is missing. */
export function generatedPart(readme: string, start: string, end: string): string | undefined {
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from < 0 || to < from) return undefined;
  return readme.slice(from, to + end.length);
}

/** What {@link renderProtocolPart} documents: a protocol's two directions, the kinds they use, its error codes. */
export interface ProtocolPart {
  /** The marker lines around the generated part. */
  start: string;
  end: string;
  /** Each direction's title (`Host → runtime`) and message table. */
  directions: ReadonlyArray<readonly [title: string, table: Readonly<Record<string, MessageKind>>]>;
  kinds: ReadonlyArray<Field<unknown>>;
  /** The error codes, and the field that carries one (`WireError.code`). */
  errorCodes: readonly string[];
  errorField: string;
}

/** A README's generated part documenting one protocol from its tables, markers included. */
export function renderProtocolPart({ start, end, directions, kinds, errorCodes, errorField }: ProtocolPart): string {
  const codes = errorCodes.map((code) => `\`${code}\``).join(', ');
  return [start, '', ...directions.flatMap(([title, table]) => renderMessageTable(title, table)), ...renderKindTable(kinds), `Error codes (\`${errorField}\`): ${codes}.`, '', end].join('\n');
}
