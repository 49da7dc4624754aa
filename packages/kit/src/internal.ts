/**
 * @switchyard/kit/internal — the helpers Switchyard's own packages share: strict option checks,
 * the event hub, backoff, the session pool, cell ids, the declaration renderer, the tool-table
 * budget, the sealed store records and the lower-level pieces of the define helpers and outputs.
 * For Switchyard's packages only, and not under semver: any release may change or remove a name.
 * A tool author or host uses the root entry, `@switchyard/kit`.
 */
export { approvalRefusal, notJsonResultText } from './define';
export { isStandardSchema, describeStandardIssues } from './standard-schema';
export { invocationArguments, parseFunctionArguments, parseObjectArguments } from './arguments';
export { serdeArgumentsParser, serdeJsonSyntaxError } from './serde-arguments';
export type { SerdeType } from './serde-arguments';
export { ToolSearchOutput, AbortedToolOutput, FailureToolOutput, abortedMessage, contentItemsToText, previewText, PREVIEW_TRUNCATED_SUFFIX } from './output';
export { IMAGE_TOKENS, IMAGE_URL_BYTES_PER_TOKEN, contentItemTokens, countLines } from './truncate';
export { codeModeDeclaration, augmentCodeModeDescription, isMcpOutputSchema } from './code-mode-declaration';
export type { CodeModeDeclarationInput } from './code-mode-declaration';
export { schemaToTypeScript } from './schema-typescript';
export { codeBlock, safeToolText } from './tool-text';
export { DEFAULT_TOOL_BUDGET_TOKENS, estimateTokens, createPriorityRanker, selectWithinBudget } from './tool-budget';
export type { BudgetCost } from './tool-budget';
export { flattenWireTools } from './flat-tools';
export type { FlatWireTool } from './flat-tools';
export { checkOptions, optionRules, closestName } from './options';
export type { OptionRule, OptionsShape } from './options';
export { SessionPool } from './session-pool';
export type { Closeable } from './session-pool';
export { backoffDelay, abortableSleep, BACKOFF_OPTION_RULES } from './backoff';
export type { BackoffOptions } from './backoff';
export { nameHash, shortenName } from './shorten-name';
export type { ShortenNameOptions } from './shorten-name';
export { createCellIdGenerator } from './cell-id';
export { createEventHub, warnListenerError } from './event-hub';
export type { EventHub, EventHubOptions, ListenerErrorReport } from './event-hub';
export { elapsedMs } from './elapsed';
export { redactCredentials } from './redact';
export { STORE_RECORD_VERSION, encodeStoreRecord, decodeStoreRecord, storeError, grantLease, checkLease, leaseFromJson } from './session-store-records';
/** Message tables (kinds, compiled validation, documentation) for Switchyard's process protocols. */
export * as messageTable from './message-table';
// Named as well, so a package's declarations can name the kinds its tables infer: without
// MessageNamedKind, tool-apply-patch's declaration build fails on HELPER_TO_HOST (TS4023, 'NamedKind
// cannot be named'), though no source file names it.
export type { Field as MessageField, NamedKind as MessageNamedKind } from './message-table';
