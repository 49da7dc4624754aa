/**
 * @switchyard/kit — what a tool author builds on the `@switchyard/protocol` contract:
 * `defineFunctionTool` / `defineFreeformTool`, the output classes a handler may return, output
 * truncation with the one default output budget, and a step context for tests and single-call
 * hosts. Depends on `@switchyard/protocol` only.
 *
 * What only Switchyard's own packages use (event hub, option rules, backoff, the declaration
 * renderer, tool-table budget, store records, …) is `@switchyard/kit/internal`: not under semver.
 */
export { defineFunctionTool, defineFreeformTool, toToolOutput } from './define';
export type { DefineFunctionToolOptions, DefineFreeformToolOptions, JsonSerializable, ToolHandlerResult, NeedsApproval } from './define';
export type { StandardSchema, StandardSchemaResult, StandardSchemaOutput, InferJsonSchema, ToolParameters, ToolArguments } from './standard-schema';
export { FunctionToolOutput, JsonToolOutput } from './output';
export { DEFAULT_OUTPUT_TOKENS, approxTokenCount, truncateMiddle, truncateTextOutput, truncateContentItems } from './truncate';
export { createStepContext } from './step-context';
export { VERSION } from './version';
