import { toJsonResult } from './json-check';
import type { ContentItem, JsonValue, ToolOutput, ToolOutputBody, ToolOutputItem, ToolPayload, WireTool } from '@switchyard/protocol';

const PREVIEW_BYTES = 2048;
const PREVIEW_LINES = 64;
/** Suffix appended to a truncated {@link ToolOutput.logPreview}. */
export const PREVIEW_TRUNCATED_SUFFIX = '[... telemetry preview truncated ...]';

/** Cuts `text` to the telemetry preview limits (2 KiB, 64 lines), at a character boundary. */
export function previewText(text: string): string {
  let lines = text.split('\n');
  let cut = false;
  if (lines.length > PREVIEW_LINES) {
    lines = lines.slice(0, PREVIEW_LINES);
    cut = true;
  }
  let out = lines.join('\n');
  if (Buffer.byteLength(out, 'utf8') > PREVIEW_BYTES) {
    out = Buffer.from(out, 'utf8').subarray(0, PREVIEW_BYTES).toString('utf8').replace(/\uFFFD+$/, '');
    cut = true;
  }
  return cut ? `${out}\n${PREVIEW_TRUNCATED_SUFFIX}` : out;
}

function outputItem(callId: string, payload: ToolPayload, output: ToolOutputBody): ToolOutputItem {
  return payload.kind === 'custom'
    ? { type: 'custom_tool_call_output', call_id: callId, output }
    : { type: 'function_call_output', call_id: callId, output };
}

/** Joins the non-empty texts and image URLs of content items with `\n` (reference default). */
export function contentItemsToText(items: readonly ContentItem[]): string {
  return items
    .map((item) => (item.type === 'input_text' ? item.text : item.image_url))
    .filter((part) => part.length > 0)
    .join('\n');
}

/**
 * The everyday output: text or content items plus a success flag. One text item collapses to a
 * plain string body. The Code Mode result is the text (or the joined items) unless `codeModeValue`
 * supplies a typed value (e.g. exec_command's result object).
 */
export class FunctionToolOutput implements ToolOutput {
  /** What the model reads: text, or content items (a single text item is stored as its string). */
  readonly body: ToolOutputBody;
  /** See {@link ToolOutput.success}; default true. */
  readonly success: boolean | undefined;
  private readonly codeModeValue: JsonValue | undefined;

  constructor(body: ToolOutputBody, success: boolean | undefined = true, codeModeValue?: JsonValue) {
    this.body = Array.isArray(body) && body.length === 1 && body[0].type === 'input_text' ? body[0].text : body;
    this.success = success;
    this.codeModeValue = codeModeValue;
  }

  /** A text output. */
  static text(text: string, success = true): FunctionToolOutput {
    return new FunctionToolOutput(text, success);
  }

  /** `custom_tool_call_output` for a custom payload, else `function_call_output`, carrying `body`. Never throws. */
  toResponseItem(callId: string, payload: ToolPayload): ToolOutputItem {
    return outputItem(callId, payload, this.body);
  }

  /** The `codeModeValue` when given, else the text body or the items' texts/URLs joined by `\n`. */
  codeModeResult(_payload: ToolPayload): JsonValue {
    if (this.codeModeValue !== undefined) return this.codeModeValue;
    return typeof this.body === 'string' ? this.body : contentItemsToText(this.body);
  }

  /** The body as text, cut to the preview limits. */
  logPreview(): string {
    return previewText(typeof this.body === 'string' ? this.body : contentItemsToText(this.body));
  }
}

/**
 * A JSON result: the model reads its JSON text, Code Mode and PostToolUse hooks get the same value
 * (after JSON's own conversions: a `Date` is its ISO string). `success` defaults to true.
 */
export class JsonToolOutput implements ToolOutput {
  /** The result as JSON: the given value, or its converted copy when `toJSON`, `-0` or `undefined` members changed it. */
  readonly value: JsonValue;
  /** See {@link ToolOutput.success}; default true. */
  readonly success: boolean | undefined;
  private readonly text: string;

  /**
   * Any JSON value, of any object type (an `interface` works as well as a `type`). Values JSON
   * would mangle are refused with a `TypeError` naming the member and the fix: a `Map`, `Set`,
   * typed array, class instance without `toJSON()`, `NaN` / `Infinity`, BigInt, function, symbol
   * or cycle (`result.index is a Map: return a plain object …`).
   */
  constructor(value: JsonValue | object, success: boolean | undefined = true) {
    const json = toJsonResult(value);
    this.text = json.text;
    this.value = json.value as JsonValue;
    this.success = success;
  }

  /** A function or custom output whose text is the value's JSON. Never throws. */
  toResponseItem(callId: string, payload: ToolPayload): ToolOutputItem {
    return outputItem(callId, payload, this.text);
  }

  /** The value itself. */
  codeModeResult(): JsonValue {
    return this.value;
  }

  /** The value's JSON text, encoded once in the constructor. */
  codeModeResultJson(): string {
    return this.text;
  }

  /** The JSON text, cut to the preview limits. */
  logPreview(): string {
    return previewText(this.text);
  }
}

/**
 * tool_search results: loadable specs sent back as a `tool_search_output` item with
 * `status:"completed"`, `execution:"client"`. Code Mode receives the specs array.
 */
export class ToolSearchOutput implements ToolOutput {
  /** The loadable specs found, as Responses-API JSON (functions and namespaces), in result order. */
  readonly tools: WireTool[];
  /** Always true. */
  readonly success: boolean | undefined = true;

  constructor(tools: WireTool[]) {
    this.tools = tools;
  }

  /**
   * A `tool_search_output` for a tool-search payload; for any other payload a function or custom output whose
   * text is the specs' JSON.
   */
  toResponseItem(callId: string, payload: ToolPayload): ToolOutputItem {
    if (payload.kind !== 'tool-search') return outputItem(callId, payload, JSON.stringify(this.tools));
    return { type: 'tool_search_output', call_id: callId, status: 'completed', execution: 'client', tools: this.tools };
  }

  /** The specs array. */
  codeModeResult(): JsonValue {
    return this.tools as unknown as JsonValue;
  }

  /** The specs' JSON, cut to the preview limits. */
  logPreview(): string {
    return previewText(JSON.stringify(this.tools));
  }
}

/**
 * Formats the abort message of a cancelled call: `"aborted by user after {secs:.1}s"`, or for shell
 * tools (`style: 'shell'`, an executor's `abortStyle`) `"Wall time: {secs:.1} seconds\naborted by user"`;
 * seconds are at least 0.1.
 */
export function abortedMessage(elapsedMs: number, options: { style?: 'default' | 'shell' } = {}): string {
  const secs = Math.max(0.1, elapsedMs / 1000).toFixed(1);
  return options.style === 'shell' ? `Wall time: ${secs} seconds\naborted by user` : `aborted by user after ${secs}s`;
}

/**
 * A message-only answer (the shared shape of aborted and failed calls): the message as the output
 * text, or an empty completed `tool_search_output` for tool_search; Code Mode receives the message.
 */
abstract class MessageToolOutput implements ToolOutput {
  /** The model-visible text. */
  readonly message: string;
  /** `undefined` for aborted calls, `false` for failures. */
  abstract readonly success: boolean | undefined;

  constructor(message: string) {
    this.message = message;
  }

  /** An empty completed `tool_search_output` for tool_search; else a function or custom output with the message. */
  toResponseItem(callId: string, payload: ToolPayload): ToolOutputItem {
    if (payload.kind === 'tool-search') {
      return { type: 'tool_search_output', call_id: callId, status: 'completed', execution: 'client', tools: [] };
    }
    return outputItem(callId, payload, this.message);
  }

  /** The message. */
  codeModeResult(): JsonValue {
    return this.message;
  }

  /** The message, cut to the preview limits. */
  logPreview(): string {
    return previewText(this.message);
  }
}

/**
 * The answer to a cancelled call: the abort message (see {@link abortedMessage})
 * with `success` unset; for tool_search an empty completed `tool_search_output`.
 */
export class AbortedToolOutput extends MessageToolOutput {
  /** Always `undefined`: an aborted call neither succeeded nor failed. */
  readonly success: boolean | undefined = undefined;
}

/**
 * The answer to a model-visible failure (reference error table): the message (e.g.
 * `unsupported call: x`) with `success: false`; tool_search failures become an empty completed
 * `tool_search_output`.
 */
export class FailureToolOutput extends MessageToolOutput {
  /** Always false. */
  readonly success = false;
}
