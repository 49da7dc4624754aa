import { ErrorOf, StringOf, addToSet, define, hasInSet } from './primordials';

const toolErrors = new WeakSet<object>();

/**
 * A failed nested tool call rejects with this Error: its message is the failure text, and the
 * failure reads exactly as the bare text it used to be everywhere else: `String(e)` and template
 * strings (`toString`), `text(e)` and `console.log(e)`, JSON (`toJSON`, so `text({ e })` and
 * `store()` keep the text) and, uncaught, the cell's error (its `stack` is the text alone, no frames).
 */
export class ToolCallError extends ErrorOf {
  constructor(message: string) {
    super(message);
    define(this, 'stack', { value: message, writable: true, configurable: true });
    addToSet(toolErrors, this);
  }
  override toString(): string {
    return StringOf(this.message);
  }
  toJSON(): string {
    return StringOf(this.message);
  }
}
define(ToolCallError.prototype, 'name', { value: 'ToolCallError', writable: true, configurable: true });

/** Whether `value` is a `ToolCallError` this prelude made (a cell cannot forge one). */
export function isToolError(value: unknown): boolean {
  return hasInSet(toolErrors, value);
}

/** `String(value)`, or `'unknown error'` when even that throws (a hostile `toString`). */
export function describeMessage(error: unknown): string {
  try {
    return StringOf(error);
  } catch {
    return 'unknown error';
  }
}

/** The text a cell fails with: the error's `stack` when it has a string one, else `String(error)`. */
export function describe(error: unknown): string {
  try {
    const stack = error !== null && (typeof error === 'object' || typeof error === 'function') ? (error as { stack?: unknown }).stack : undefined;
    if (typeof stack === 'string') return stack;
  } catch {
    // a throwing `stack` getter: fall back to String()
  }
  return describeMessage(error);
}

/** A `ToolCallError` for a failure text (a non-string becomes its `String()`). */
export function toolError(message: unknown): ToolCallError {
  return new ToolCallError(typeof message === 'string' ? message : describeMessage(message));
}
