// MCP servers as executors.
export { mcpTools } from './mcp-tools';
export type { McpTools, McpToolsOptions, McpToolsEvent, McpServerStatus } from './mcp-tools';
export type { McpServerState, McpWarning, McpProgress, McpLogMessage } from './server-connection';
export { READ_MCP_RESOURCE, LIST_MCP_RESOURCES } from './resource-tools';

// Bounded stdio transports (a message over the limit never closes the connection).
export { BoundedStdioClientTransport, BoundedStdioServerTransport } from './stdio-transports';
export type { BoundedStdioClientTransportOptions, BoundedStdioServerTransportOptions } from './stdio-transports';
export { DEFAULT_MAX_MESSAGE_BYTES } from './json-lines';

// Configuration.
export { resolveServerConfigs, DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TOOL_TIMEOUT_MS } from './config';
export type { McpServerConfig, McpStdioServerConfig, McpHttpServerConfig, ResolvedServerConfig } from './config';

// Results.
export {
  McpToolOutput,
  mcpCallToolResultOutputSchema,
  MCP_RESULT_SCHEMA_MARKER,
  normalizeCallToolResult,
  errorCallToolResult,
  callToolResultBody,
  checkStructuredContent,
  DEFAULT_MAX_OUTPUT_TOKENS,
} from './call-result';
export type { McpCallToolResult, McpToolOutputOptions, StructuredContentCheck } from './call-result';

// Names.
export { mcpNamespace, sanitizeToolName, createToolNamer, MAX_TOOL_NAME_LENGTH } from './tool-names';

// Code Mode served over MCP.
export { serveCodeModeOverMcp, toolOutputToCallToolResult, isFailedCodeModeOutput, codeModeMcpToolDefinitions } from './serve';
export type { CodeModeDispatchResult, CodeModeMcpHost, CodeModeMcpServer, CodeModeToolDescriptions, ServeCodeModeOverMcpOptions } from './serve';

export { VERSION } from './version';
