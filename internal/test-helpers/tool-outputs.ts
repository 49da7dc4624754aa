/**
 * Readers of what a tool's handler returned (a `ToolOutput`, an invocation's result). Typed by shape,
 * so this package stays below every Switchyard package.
 */

/** A JSON value, by shape (it fits the protocol's `JsonValue`). */
type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** The empty function call an output is read back for. */
const NO_ARGUMENTS = { kind: 'function' as const, arguments: '{}' };

/** The text the model reads for a function tool's output; throws when its item is not a text `function_call_output`. */
export function modelText(output: { toResponseItem(callId: string, payload: typeof NO_ARGUMENTS): unknown }): string {
  const item = output.toResponseItem('call', NO_ARGUMENTS) as { type?: string; output?: unknown };
  if (item.type !== 'function_call_output' || typeof item.output !== 'string') throw new Error(`unexpected item ${JSON.stringify(item)}`);
  return item.output;
}

/** The value a Code Mode cell receives for an output (a function tool's result object). */
export function codeModeValue(output: { codeModeResult(payload: typeof NO_ARGUMENTS): unknown }): { [key: string]: Json } {
  return output.codeModeResult(NO_ARGUMENTS) as { [key: string]: Json };
}

/** An invocation's output body as JSON text. */
export const bodyText = (result: { output: unknown }): string => JSON.stringify((result.output as { body: unknown }).body);
