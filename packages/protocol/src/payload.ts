/**
 * What a tool call carries. The kind must match what the executor
 * accepts ({@link ToolExecutor.payloadKinds}), else the call is answered `aborted` (the error
 * `INCOMPATIBLE_PAYLOAD`, "tool X invoked with incompatible payload", goes to the host) and the
 * turn goes on.
 */
export type ToolPayload = FunctionPayload | CustomPayload | ToolSearchPayload;

/** Function-tool arguments as the raw JSON string the model sent (parsed and validated at dispatch). */
export interface FunctionPayload {
  /** Discriminant. */
  readonly kind: 'function';
  /** The arguments' raw JSON text as the model sent it; may be blank or malformed until parsed at dispatch. */
  readonly arguments: string;
}

/** Freeform-tool input text. */
export interface CustomPayload {
  /** Discriminant. */
  readonly kind: 'custom';
  /** The raw input text, verbatim. */
  readonly input: string;
}

/** Parsed `tool_search` arguments. */
export interface ToolSearchPayload {
  /** Discriminant. */
  readonly kind: 'tool-search';
  /** The search text, and the optional maximum number of results (the tool's default when absent). */
  readonly arguments: { readonly query: string; readonly limit?: number };
}

/** The payload kinds, as listed by executors. */
export type ToolPayloadKind = ToolPayload['kind'];
