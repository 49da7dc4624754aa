// MCP servers as executors.
export { mcpTools } from './mcp-tools';
export type { McpTools, McpToolsOptions, McpToolsEvent, McpServerStatus } from './mcp-tools';
export type { McpWarning, McpTaskEvent } from './server-connection';
export type { McpServerConfig, McpStdioServerConfig, McpHttpServerConfig } from './config';
export type { McpAuthOptions, McpTokenStore, McpOAuthState, McpAuthorizationRequest, McpAuthorizationResponse } from './oauth';
export type { McpElicitationHandler, McpElicitationRequest, McpElicitationResult } from './elicitation';

// MCP tools as hook handlers (`mcp_tool` hooks of @switchyard/hooks).
export { createMcpToolCaller } from './hook-caller';
export type { McpToolCallerOptions } from './hook-caller';

// Code Mode served over MCP.
export { serveCodeModeOverMcp } from './serve';
export type { CodeModeDispatchResult, CodeModeMcpHost, CodeModeMcpServer, CodeModeToolDescriptions, ServeCodeModeOverMcpOptions } from './serve';

// Executors served over MCP.
export { serveToolsOverMcp } from './serve-tools';
export type { ServeToolsOverMcpOptions } from './serve-tools';
export type { ServedMcpServer } from './serve-eras';

export { VERSION } from './version';
