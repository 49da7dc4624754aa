/**
 * The built-ins the prelude uses after user code has started, captured when the prelude is
 * evaluated (before any user code runs). A cell that later replaces `JSON.stringify`,
 * `Promise.prototype.then`, `RegExp.prototype.test`, `String.prototype.*` or `WeakSet.prototype.*`
 * cannot reach the prelude's checks through them. Methods are bound with `Function.prototype.call`
 * so a call never looks anything up on the receiver.
 */
export const call = Function.prototype.call;

export const stringify = JSON.stringify;
export const parse = JSON.parse;
export const StringOf = String;
export const NumberOf = Number;
export const ErrorOf = Error;
export const PromiseOf = Promise;
export const isArray = Array.isArray;
export const trunc = Math.trunc;
export const finite = Number.isFinite;
export const define = Object.defineProperty;
export const describeProperty = Object.getOwnPropertyDescriptor;
export const construct = Reflect.construct;
export const applyFunction = Reflect.apply;
export const TypeErrorOf = TypeError;
export const parseIntOf = parseInt;
const createObject = Object.create;
export const rejectWith: <T = never>(reason: unknown) => Promise<T> = PromiseOf.reject.bind(PromiseOf);
/** Bound now: a cell that replaces `Promise.prototype.then` cannot stop its calls from being sent. */
export const thenOf: (promise: Promise<unknown>, onFulfilled: () => void) => Promise<unknown> = call.bind(PromiseOf.prototype.then);
export const settledPromise: Promise<void> = PromiseOf.resolve();
export const testPattern: (pattern: RegExp, text: string) => boolean = call.bind(RegExp.prototype.test);
export const lowerCase: (text: string) => string = call.bind(String.prototype.toLowerCase);
export const trimText: (text: string) => string = call.bind(String.prototype.trim);
export const addToSet: (set: WeakSet<object>, value: object) => WeakSet<object> = call.bind(WeakSet.prototype.add);
export const hasInSet: (set: WeakSet<object>, value: unknown) => boolean = call.bind(WeakSet.prototype.has);

/** An object with no prototype: a lookup of a missing key never reaches `Object.prototype`. */
export function createNull<T>(): Record<string, T> {
  return createObject(null) as Record<string, T>;
}

/**
 * Sets `target[key]` by definition, not assignment: a setter the cell put on a prototype
 * (`Array.prototype[0]`) never sees the value.
 */
export function defineValue(target: object, key: PropertyKey, value: unknown, enumerable = true): void {
  define(target, key, { value, writable: true, enumerable, configurable: true });
}
