/**
 * The model's tool calls, as the items a scripted model answers with. Typed by shape, not by the
 * protocol's types, so this package stays below every Switchyard package; each fits a `ResponseItem`.
 */

/** A function call of `name` with `args` as its JSON arguments; in the wire namespace form when `namespace` is given. */
export const callItem = (callId: string, name: string, args: unknown, namespace?: string) => ({
  type: 'function_call' as const,
  call_id: callId,
  name,
  ...(namespace ? { namespace } : {}),
  arguments: JSON.stringify(args),
});

/** A call of Code Mode's `exec` tool: `code` is its freeform input. */
export const execItem = (callId: string, code: string) => ({ type: 'custom_tool_call' as const, call_id: callId, name: 'exec', input: code });
