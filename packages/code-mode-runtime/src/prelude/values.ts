import type { ImageDetail } from './bridge';
import { ErrorOf, StringOf, lowerCase, stringify, trunc, finite, NumberOf } from './primordials';
import { describeMessage, isToolError } from './tool-error';

/** The UTF-8 length of a string, counted without encoding it (a lone surrogate counts 3, as its U+FFFD). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The value size error, as the runtime's `valueTooLarge` words it. */
export function tooLargeText(what: string, length: number, maxValueChars: number, heapMb: number): string {
  return `exec value size limit exceeded: ${what} is ${length} characters, over the limit of ${maxValueChars} characters per value for a cell with a heap limit of ${heapMb} MB`;
}

/**
 * What `text()` appends for a value: strings as they are; `undefined`, `null`, booleans, numbers
 * and BigInts with `String()`; a failed tool call as its text; anything else as its JSON, or
 * `String()` when it has none (a function, a symbol). A value whose JSON throws throws its message.
 */
export function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  const type = typeof value;
  if (value === undefined || value === null || type === 'boolean' || type === 'number' || type === 'bigint') return StringOf(value);
  if (isToolError(value)) return describeMessage(value);
  let json: string | undefined;
  try {
    json = stringify(value);
  } catch (error) {
    throw describeMessage(error);
  }
  if (json === undefined) return StringOf(value);
  return json;
}

/** Whether `value` is an Error of the cell's realm (`console.log` writes those as `String(e)`). */
export function isErrorObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  try {
    return value instanceof ErrorOf;
  } catch {
    return false;
  }
}

/**
 * One `console.*` line: each argument formatted as `text()` formats a value, an Error as
 * `String(e)`, joined by single spaces; `checkLine` sees the line as it grows (it must use
 * `.length` only), so a huge argument list never builds a huge line.
 */
export function consoleText(values: readonly unknown[], checkLine: (line: string) => void): string {
  let line = '';
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    const part = isErrorObject(value) ? describeMessage(value) : toText(value);
    if (i > 0) line += ' ';
    line += part;
    checkLine(line);
  }
  return line;
}

export function isDetail(value: string): value is ImageDetail {
  return value === 'auto' || value === 'low' || value === 'high' || value === 'original';
}

/** An image detail, case-insensitive; anything else throws the reference text. */
export function normalizeDetail(detail: string): ImageDetail {
  if (detail.length > 16) throw 'image detail must be one of: auto, low, high, original';
  const lower = lowerCase(detail);
  if (!isDetail(lower)) throw 'image detail must be one of: auto, low, high, original';
  return lower;
}

/** A `setTimeout` delay in whole ms: non-finite or negative is 0, above 2^31 − 1 (Node would fire after 1 ms) is clamped to it. */
export function timerDelay(delayMs: unknown): number {
  let delay = 0;
  try {
    delay = NumberOf(delayMs);
  } catch {
    delay = 0;
  }
  return finite(delay) && delay > 0 ? (delay > 2147483647 ? 2147483647 : trunc(delay)) : 0;
}

/** A `store` / `load` key as a string (a template literal, as the reference coerces it); a symbol throws "<helper> key must be a string". */
export function coerceKey(key: unknown, helper: 'store' | 'load'): string {
  try {
    return '' + `${key as string}`;
  } catch {
    throw `${helper} key must be a string`;
  }
}
