/**
 * @switchyard/kit — the helpers a tool author builds on the `@switchyard/protocol` contract:
 * `defineFunctionTool` / `defineFreeformTool`, the output classes, output truncation and the
 * default output budget, the JSON Schema → TypeScript declaration renderer, the tool-table budget,
 * strict option checks and a few small utilities. Depends on `@switchyard/protocol` only.
 */
export { defineFunctionTool, defineFreeformTool, toToolOutput, approvalRefusal, notJsonResultText } from './define';
export type { DefineFunctionToolOptions, DefineFreeformToolOptions, JsonSerializable, ToolHandlerResult, NeedsApproval } from './define';
export { isStandardSchema, describeStandardIssues } from './standard-schema';
export type { StandardSchema, StandardSchemaResult, StandardSchemaOutput, InferJsonSchema, ToolParameters, ToolArguments } from './standard-schema';
export { invocationArguments, parseFunctionArguments, parseObjectArguments } from './arguments';
export { serdeArgumentsParser, serdeJsonSyntaxError } from './serde-arguments';
export type { SerdeType } from './serde-arguments';
export {
  FunctionToolOutput,
  JsonToolOutput,
  ToolSearchOutput,
  AbortedToolOutput,
  FailureToolOutput,
  abortedMessage,
  contentItemsToText,
  previewText,
  PREVIEW_TRUNCATED_SUFFIX,
} from './output';
export {
  DEFAULT_OUTPUT_TOKENS,
  IMAGE_TOKENS,
  IMAGE_URL_BYTES_PER_TOKEN,
  approxTokenCount,
  contentItemTokens,
  countLines,
  truncateMiddle,
  truncateTextOutput,
  truncateContentItems,
} from './truncate';
export { codeModeDeclaration, augmentCodeModeDescription, isMcpOutputSchema } from './code-mode-declaration';
export { schemaToTypeScript } from './schema-typescript';
export { codeBlock, safeToolText } from './tool-text';
export type { CodeModeDeclarationInput } from './code-mode-declaration';
export { DEFAULT_TOOL_BUDGET_TOKENS, estimateTokens, createPriorityRanker, selectWithinBudget } from './tool-budget';
export type { BudgetCost } from './tool-budget';
export { flattenWireTools } from './flat-tools';
export type { FlatWireTool } from './flat-tools';
export { checkOptions, optionRules, closestName } from './options';
export { SessionPool } from './session-pool';
export type { Closeable } from './session-pool';
export type { OptionRule, OptionsShape } from './options';
export { backoffDelay, abortableSleep, BACKOFF_OPTION_RULES } from './backoff';
export type { BackoffOptions } from './backoff';
export { createStepContext } from './step-context';
export { nameHash, shortenName } from './shorten-name';
export type { ShortenNameOptions } from './shorten-name';
export { createCellIdGenerator } from './cell-id';
export { createEventHub, warnListenerError } from './event-hub';
export { elapsedMs } from './elapsed';
export { redactCredentials } from './redact';
export type { EventHub, EventHubOptions, ListenerErrorReport } from './event-hub';
export { VERSION } from './version';
/** Message tables (kinds, compiled validation, documentation) for Switchyard's process protocols. */
export * as messageTable from './message-table';
// Named at the root as well, so a package's declarations can name the kinds its tables infer.
export type { Field as MessageField, NamedKind as MessageNamedKind } from './message-table';
export { STORE_RECORD_VERSION, encodeStoreRecord, decodeStoreRecord, storeError, grantLease, checkLease, leaseFromJson } from './session-store-records';
