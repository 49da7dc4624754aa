import type { JsonValue } from './json';
import type { SwitchyardErrorCode } from './errors';

/**
 * What kind of failure a failed call was, as PostToolUseFailure hooks read it (`error_code`): the
 * code of the error it threw (a `SwitchyardErrorCode`), or a kind only a failed output reports —
 * `TIMEOUT` (the tool's own time limit ran out: an MCP call's `toolTimeoutMs`) and `SANDBOX_DENIED`
 * (the sandbox stopped what a command tried).
 */
export type ToolFailureCode = SwitchyardErrorCode | 'TIMEOUT' | 'SANDBOX_DENIED';
import type { ToolPayload } from './payload';
import type { WireTool } from './tool-spec';
import type { ContentItem, ToolOutputBody, ToolOutputItem } from './wire';

/**
 * What a handler produces. One output answers one call: the router turns
 * it into the wire item the model reads, and Code Mode into the typed value a cell's promise
 * resolves with. Implementations must be pure (calling a method twice gives the same answer).
 */
export interface ToolOutput {
  /**
   * Whether the call succeeded, for logs, hooks and the Code Mode promise (`false` rejects it).
   * Internal: the wire item carries only the content. `undefined` means "not applicable" (aborted,
   * hook feedback).
   */
  readonly success: boolean | undefined;
  /**
   * Optional, for an output with `success: false`: what kind of failure it reports (`TIMEOUT` for an
   * MCP call that ran out of time, `SANDBOX_DENIED` for a command the sandbox stopped).
   * PostToolUseFailure hooks read it as `error_code`; absent means `RESPOND_TO_MODEL` (a failure the
   * model reads).
   */
  readonly failureCode?: ToolFailureCode;
  /**
   * The wire item answering `callId`: `custom_tool_call_output` for a custom payload,
   * `tool_search_output` for tool_search results, `function_call_output` otherwise. Never throws.
   */
  toResponseItem(callId: string, payload: ToolPayload): ToolOutputItem;
  /**
   * The value a Code Mode cell receives. Default derivation: a text body → that string; content
   * items → their non-empty texts and image URLs joined by `\n`. JSON outputs give the value itself.
   */
  codeModeResult(payload: ToolPayload): JsonValue;
  /**
   * Optional: the JSON text of {@link codeModeResult}, when the output already holds it (a JSON
   * output encodes its value once, for the model and a cell alike). A Code Mode host sends it to
   * the cell as it is instead of encoding the value again. Never throws.
   */
  codeModeResultJson?(payload: ToolPayload): string | undefined;
  /** Lossy diagnostic text, at most 2 KiB / 64 lines (suffix "[... telemetry preview truncated ...]"). */
  logPreview(): string;
  /** The `tool_response` a PostToolUse hook sees; defaults to {@link codeModeResult}. */
  postToolUseResponse?(payload: ToolPayload): JsonValue;
  /**
   * When true, a Code Mode promise resolves with {@link codeModeResult} even though `success` is
   * false (an MCP `isError` result resolves; it does not reject). Default: `success: false` rejects.
   */
  readonly codeModeAlwaysResolves?: boolean;
}

/** True when `value` looks like a {@link ToolOutput} (duck-typed: works across package copies). */
export function isToolOutput(value: unknown): value is ToolOutput {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ToolOutput).toResponseItem === 'function' &&
    typeof (value as ToolOutput).codeModeResult === 'function'
  );
}
