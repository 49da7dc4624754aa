import type { PreludeLimits } from './bridge';
import type { Send } from './channel';
import { resolveImage } from './image';
import { defineValue, trimText } from './primordials';
import { consoleText, toText, tooLargeText, utf8Length } from './values';

/** Shared by the prelude's parts: once the cell has settled, nothing more is sent. */
export interface CellState {
  finished: boolean;
}

/** The value size check: `.length` only, so it must run before anything that flattens the string. */
export function sizeChecker(limits: PreludeLimits): (text: string, what: string) => void {
  return (text, what) => {
    if (text.length > limits.maxValueChars) throw tooLargeText(what, text.length, limits.maxValueChars, limits.heapMb);
  };
}

/** The output limits of one cell: items (empty ones count too) and UTF-8 bytes. */
function createBudget(limits: PreludeLimits) {
  const checkSize = sizeChecker(limits);
  let outputBytes = 0;
  let outputItems = 0;
  const overBytes = () => 'exec output limit exceeded: a cell may produce at most ' + limits.maxOutputBytes + ' bytes of output';
  return {
    countItem(): void {
      if (outputItems >= limits.maxOutputItems) {
        throw 'exec output limit exceeded: a cell may produce at most ' + limits.maxOutputItems + ' output items (text, image and notify calls)';
      }
      outputItems++;
    },
    charge(text: string, what: string): void {
      const remaining = limits.maxOutputBytes - outputBytes;
      if (text.length > remaining) throw overBytes();
      checkSize(text, what);
      const bytes = utf8Length(text);
      if (bytes > remaining) throw overBytes();
      outputBytes += bytes;
    },
  };
}

/** The cell's output helpers: `text`, `image`, `generatedImage`, `notify` and `console`. */
export function createOutput(limits: PreludeLimits, state: CellState, send: Send) {
  const checkSize = sizeChecker(limits);
  const budget = createBudget(limits);
  function text(value?: unknown): void {
    const item = toText(value);
    budget.countItem();
    budget.charge(item, 'a text() item');
    if (!state.finished) send('text', item);
  }
  function image(imageUrlOrItem?: unknown, detail?: unknown): void {
    const { url, detail: chosen } = resolveImage(imageUrlOrItem, detail, checkSize);
    budget.countItem();
    budget.charge(url, 'an image URL');
    if (!state.finished) send('image', url, chosen === undefined ? 'high' : chosen);
  }
  // generatedImage({ image_url, output_hint? }): an image-generation result, as Codex has it. The
  // image goes through image() (same URL rules; its own detail, else high), then the hint, if
  // any, is one text item after it. The hint is checked first, so a bad hint appends nothing.
  function generatedImage(result?: unknown): void {
    if (result === null || (typeof result !== 'object' && typeof result !== 'function')) throw 'generatedImage expects an image generation result object';
    let hint: unknown;
    try {
      hint = (result as { output_hint?: unknown }).output_hint;
    } catch {
      throw 'failed to read generatedImage output_hint';
    }
    if (hint !== undefined && typeof hint !== 'string') throw 'generatedImage output_hint must be a string when provided';
    if (hint !== undefined) checkSize(hint as string, 'a generatedImage() output hint');
    image(result);
    if (hint !== undefined) text(hint);
  }
  function notify(value?: unknown): void {
    const message = toText(value);
    checkSize(message, 'a notify() message');
    if (trimText(message) === '') throw 'notify expects non-empty text';
    budget.countItem();
    budget.charge(message, 'a notify() message');
    if (!state.finished) send('notify', message);
  }
  return { text, image, generatedImage, notify, console: createConsole(text, checkSize) };
}

/**
 * `console.log` / `info` / `warn` / `error` / `debug`: each appends one text item, like `text()`
 * (see `consoleText`). No format specifiers (`%s` stays as written).
 */
function createConsole(text: (value: string) => void, checkSize: (text: string, what: string) => void): object {
  const consoleObject = {};
  const checkLine = (line: string) => checkSize(line, 'a console line');
  for (const method of ['log', 'info', 'warn', 'error', 'debug']) {
    defineValue(consoleObject, method, function (...values: unknown[]) {
      text(consoleText(values, checkLine));
    });
  }
  return consoleObject;
}
