/**
 * What a tool call carries (reference/tools.md §3.1). The kind must match what the executor
 * accepts ({@link ToolExecutor.payloadKinds}), else dispatch fails with the fatal
 * "tool X invoked with incompatible payload".
 */
export type ToolPayload = FunctionPayload | CustomPayload | ToolSearchPayload;

/** Function-tool arguments as the raw JSON string the model sent (parsed and validated at dispatch). */
export interface FunctionPayload {
  readonly kind: 'function';
  readonly arguments: string;
}

/** Freeform-tool input text. */
export interface CustomPayload {
  readonly kind: 'custom';
  readonly input: string;
}

/** Parsed `tool_search` arguments. */
export interface ToolSearchPayload {
  readonly kind: 'tool-search';
  readonly arguments: { readonly query: string; readonly limit?: number };
}

/** The payload kinds, as listed by executors. */
export type ToolPayloadKind = ToolPayload['kind'];
